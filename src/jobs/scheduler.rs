//! The job scheduler inside `sightline serve`, and the running of a job in the server
//! (for the scheduler and for `POST /admin/jobs/{name}/run`). Once a second (of real time) it reads the
//! server's `Clock` and starts every job of the registry that the server runs, that is
//! enabled and whose schedule is due (`Schedule::is_due`: once after downtime, nothing
//! at a first start), recording each run in `job_runs`. It also drives the upkeep that
//! is not one of the spec's jobs and leaves no `job_runs` row ([`UPKEEP`]): compaction of
//! old partitions (hourly), the transcript indexer's catch-up drain (every 5 minutes) and
//! the aggregates' refresh (every 15 seconds).
//!
//! Invariants: `job_runs` is written through the writer thread (main.db has one writer);
//! a job never runs twice at once, nor beside a job it excludes (`jobs::runs::start`);
//! runs a crash left `running` are closed as interrupted before the first tick; a run
//! records success only when the job itself reported it; each run is a task of its own,
//! so a long job does not hold back the others, and the tasks end with the scheduler.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::{AbortHandle, JoinSet};

use crate::db::{self, DbError};
use crate::events::writer::WriteError;
use crate::jobs::config;
use crate::jobs::registry::{Availability, JOBS, JobSpec, Tier};
use crate::jobs::runs::{self, Outcome, Started, Trigger};
use crate::jobs::schedule::Schedule;
use crate::state::AppState;

/// Upkeep the scheduler drives besides the spec's jobs: what, and how often (counted
/// from the epoch on the server's clock; each also runs once when the server starts).
pub const UPKEEP: [(&str, Duration); 3] = [
    ("compact-partitions", Duration::from_secs(3600)),
    ("drain-transcript-index", Duration::from_secs(300)),
    ("refresh-aggregates", Duration::from_secs(15)),
];

/// How often the scheduler looks at the clock.
const TICK: Duration = Duration::from_secs(1);

/// How long a job's schedule may go unread: `jobs set` and runs started elsewhere (`jobs
/// run`) are seen within this time.
const REREAD_MS: i64 = 60_000;

/// Closes interrupted runs, then ticks until the task is aborted (at shutdown, which
/// ends the runs it started too).
pub async fn run(state: Arc<AppState>) {
    let started_ms = state.clock.now_ms();
    match state.writer.transact(move |tx| runs::close_interrupted(tx, started_ms)).await {
        Ok(0) => {}
        Ok(closed) => tracing::warn!(closed, "closed job runs the last shutdown interrupted"),
        Err(err) => tracing::error!(error = %err, "cannot close interrupted job runs"),
    }
    let mut tasks = JoinSet::new();
    let mut next_look = HashMap::new();
    let mut upkeep = Upkeep { next_ms: [started_ms; UPKEEP.len()], running: Default::default() };
    loop {
        if let Err(err) = tick(&state, started_ms, &mut next_look, &mut tasks).await {
            tracing::error!(error = %err, "the job scheduler could not look at its jobs");
        }
        upkeep.tick(&state, &mut tasks);
        while tasks.try_join_next().is_some() {}
        tokio::time::sleep(TICK).await;
    }
}

/// Starts every scheduled job that is due now, each as a task of its own. A job's
/// schedule and last run are read again only when its next slot comes, or after
/// [`REREAD_MS`] (`next_look` remembers when), not on every tick.
async fn tick(
    state: &Arc<AppState>,
    started_ms: i64,
    next_look: &mut HashMap<&'static str, i64>,
    tasks: &mut JoinSet<()>,
) -> anyhow::Result<()> {
    for job in JOBS.iter().filter(|job| runs_in_the_server(job)) {
        let now_ms = state.clock.now_ms();
        if next_look.get(job.name).is_some_and(|at| now_ms < *at) {
            continue;
        }
        let pool = state.readers.clone();
        let (effective, last) = db::blocking(move || {
            let conn = pool.get()?;
            Ok::<_, DbError>((config::effective(&conn, job)?, runs::last_started(&conn, job.name)?))
        })
        .await?;
        let mut since = last.unwrap_or(started_ms);
        if effective.enabled
            && super::registry::switched_on(job, &state.config)
            && effective.schedule.is_due(last, started_ms, now_ms)
        {
            // A run that should have started long ago is a breach of its own (docs/jobs.md).
            if job.alert.missed_run
                && let Some(slot) = effective.schedule.next_after(since)
                && let Err(err) = state.writer.transact(move |tx| super::slo::missed(tx, job, slot, now_ms)).await
            {
                tracing::error!(job = job.name, error = %err, "cannot record a missed run");
            }
            match start_run(state, job, Trigger::Schedule).await? {
                Started::Started(run_id) => {
                    since = now_ms;
                    let state = state.clone();
                    tasks.spawn(async move {
                        if let Err(err) = finish_run(&state, job, run_id).await {
                            tracing::error!(job = job.name, error = %err, "cannot record the end of a job run");
                        }
                    });
                }
                // Due still: looked at again within REREAD_MS, and started once it may.
                refused => tracing::info!(job = job.name, reason = refused.refusal(job.name), "scheduled run waits"),
            }
        }
        let next_slot = effective.schedule.next_after(since).unwrap_or(i64::MAX);
        next_look.insert(job.name, next_slot.min(now_ms + REREAD_MS));
    }
    Ok(())
}

/// When each piece of [`UPKEEP`] runs next, and the task of the one running.
struct Upkeep {
    next_ms: [i64; UPKEEP.len()],
    running: [Option<AbortHandle>; UPKEEP.len()],
}

impl Upkeep {
    /// Starts each piece of upkeep whose time has come and that is not still running.
    fn tick(&mut self, state: &Arc<AppState>, tasks: &mut JoinSet<()>) {
        let now_ms = state.clock.now_ms();
        for (i, (name, every)) in UPKEEP.iter().enumerate() {
            // Further off than one period: the clock stepped back. Run it now rather than
            // wait for the clock to reach the old time (the refresh would stall).
            if self.next_ms[i] - now_ms > every.as_millis() as i64 {
                self.next_ms[i] = now_ms;
            }
            if now_ms < self.next_ms[i] || self.running[i].as_ref().is_some_and(|task| !task.is_finished()) {
                continue;
            }
            self.next_ms[i] = Schedule::Every(*every).next_after(now_ms).unwrap_or(i64::MAX);
            let state = state.clone();
            self.running[i] = Some(tasks.spawn(async move {
                match *name {
                    "compact-partitions" => compact_partitions(&state).await,
                    "refresh-aggregates" => refresh_aggregates(&state).await,
                    _ => {
                        if let Err(err) = state.indexer.drain_now().await {
                            tracing::error!(error = %err, "the transcript index could not catch up");
                        }
                    }
                }
            }));
        }
    }
}

/// Recomputes the aggregates' dirty hours (analytics::refresh), writing through the
/// writer thread.
async fn refresh_aggregates(state: &AppState) {
    let (data_dir, readers, writer) = (state.config.data_dir.clone(), state.readers.clone(), state.writer.clone());
    let refreshed = db::blocking(move || {
        let reads = readers.get()?;
        let change_main = |change: crate::events::writer::MainChange| {
            writer.change_main_blocking(change).map_err(|err| DbError::Io {
                context: "the aggregate refresh's main.db change".into(),
                source: std::io::Error::other(err.to_string()),
            })
        };
        crate::analytics::refresh::refresh(&data_dir, &reads, &change_main, usize::MAX)
    })
    .await;
    if let Err(err) = refreshed {
        tracing::error!(error = %err, "the aggregate refresh failed; the next one retries");
    }
}

/// Compacts partitions past their age (`storage.compact_after_days`).
async fn compact_partitions(state: &AppState) {
    let store = state.events.clone();
    let days = state.config.storage.compact_after_days;
    let now_ms = state.clock.now_ms();
    match db::blocking(move || store.rewriting("compact-partitions")?.compact_due(days, now_ms)).await {
        Ok(reports) => {
            for report in reports {
                tracing::info!(day = %report.day, rows = report.rows_compressed, before = report.file_bytes_before, after = report.file_bytes_after, "compacted event partition");
            }
        }
        Err(err) => tracing::error!(error = %err, "compaction failed"),
    }
}

/// Records the start of a run of `job` (or finds the one going).
pub async fn start_run(state: &AppState, job: &'static JobSpec, trigger: Trigger) -> Result<Started, WriteError> {
    let now_ms = state.clock.now_ms();
    state.writer.transact(move |tx| runs::start(tx, job.name, trigger, now_ms)).await
}

/// Does the work of a started run and records how it ended.
pub async fn finish_run(state: &Arc<AppState>, job: &'static JobSpec, run_id: String) -> Result<(), WriteError> {
    let started = std::time::Instant::now();
    let (outcome, done, error) = match super::in_server::execute(state, job).await {
        Ok(done) => (Outcome::Succeeded, done, None),
        Err(error) => {
            tracing::error!(job = job.name, %error, "job failed");
            (Outcome::Failed, Default::default(), Some(error.to_string()))
        }
    };
    let ended_ms = state.clock.now_ms();
    state.metrics.job_ran(job.name, outcome.as_str(), started.elapsed().as_secs_f64());
    let breach = state
        .writer
        .transact(move |tx| {
            if let Some(summary) = &done.summary {
                runs::set_summary(tx, &run_id, summary)?;
            }
            runs::finish_and_check(tx, job, &run_id, outcome, done.rows, error.as_deref(), ended_ms)
        })
        .await?;
    if let Some(breach) = breach {
        tracing::warn!(job = job.name, severity = breach.severity, reason = %breach.reason, "job breached its service level");
    }
    Ok(())
}

/// The jobs the server runs (on their schedule, or triggered over HTTP): the available
/// ones of tiers 1 and 2, and a one-shot job with an environment switch (scheduled
/// only, never triggered over HTTP).
pub fn runs_in_the_server(job: &JobSpec) -> bool {
    job.availability == Availability::Available && (job.tier != Tier::OneShot || job.switch.is_some())
}

//! The job scheduler inside `sightline serve`, and the running of a job in the server
//! (for the scheduler and for `POST /admin/jobs/{name}/run`). Once a second (of real time) it reads the
//! server's `Clock` and runs every job of the registry that this build can run, that is
//! enabled and whose schedule is due (`Schedule::is_due`: once after downtime, nothing
//! at a first start), recording each run in `job_runs`.
//!
//! Today it schedules `run-deletions` (it replaced the deletion timer) and
//! `sweep-scratch` (which took the abandoned-upload sweep over from the compaction timer). Transcript
//! indexing still runs inside the indexer thread (each upload, and every 5 minutes), and
//! compaction on its own hourly timer, until the rest of issue 15 moves them here.
//!
//! Invariants: `job_runs` is written through the writer thread (main.db has one writer);
//! a job never runs twice at once (`jobs::runs::start`); runs a crash left `running` are
//! closed as interrupted before the first tick; a run records success only when the job
//! itself reported it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::db::{self, DbError};
use crate::events::writer::WriteError;
use crate::jobs::config;
use crate::jobs::registry::{Availability, JOBS, JobSpec};
use crate::jobs::runs::{self, Outcome, Started, Trigger};
use crate::state::AppState;

/// The jobs the scheduler runs itself; the others are still driven elsewhere (see the
/// module documentation) or have not landed.
const SCHEDULED_HERE: &[&str] = &["run-deletions", "sweep-scratch"];

/// How often the scheduler looks at the clock.
const TICK: Duration = Duration::from_secs(1);

/// How long a job's schedule may go unread: `jobs set` and runs started elsewhere (`jobs
/// run`) are seen within this time.
const REREAD_MS: i64 = 60_000;

/// Closes interrupted runs, then ticks until the task is aborted (at shutdown).
pub async fn run(state: Arc<AppState>) {
    let started_ms = state.clock.now_ms();
    match state.writer.transact(move |tx| runs::close_interrupted(tx, started_ms)).await {
        Ok(0) => {}
        Ok(closed) => tracing::warn!(closed, "closed job runs the last shutdown interrupted"),
        Err(err) => tracing::error!(error = %err, "cannot close interrupted job runs"),
    }
    let mut next_look = HashMap::new();
    loop {
        if let Err(err) = tick(&state, started_ms, &mut next_look).await {
            tracing::error!(error = %err, "the job scheduler could not look at its jobs");
        }
        tokio::time::sleep(TICK).await;
    }
}

/// Runs every scheduled job that is due now. A job's schedule and last run are read
/// again only when its next slot comes, or after [`REREAD_MS`] (`next_look` remembers
/// when), not on every tick.
async fn tick(
    state: &Arc<AppState>,
    started_ms: i64,
    next_look: &mut HashMap<&'static str, i64>,
) -> anyhow::Result<()> {
    for job in JOBS.iter().filter(|job| SCHEDULED_HERE.contains(&job.name)) {
        let now_ms = state.clock.now_ms();
        if job.availability != Availability::Available || next_look.get(job.name).is_some_and(|at| now_ms < *at) {
            continue;
        }
        let pool = state.readers.clone();
        let (effective, last) = db::blocking(move || {
            let conn = pool.get()?;
            Ok::<_, DbError>((config::effective(&conn, job)?, runs::last_started(&conn, job.name)?))
        })
        .await?;
        let due = effective.enabled && effective.schedule.is_due(last, started_ms, now_ms);
        if due {
            run_job(state, job, Trigger::Schedule).await?;
        }
        let since = if due { state.clock.now_ms() } else { last.unwrap_or(started_ms) };
        let next_slot = effective.schedule.next_after(since).unwrap_or(i64::MAX);
        next_look.insert(job.name, next_slot.min(now_ms + REREAD_MS));
    }
    Ok(())
}

/// Runs `job` now unless a run of it is going; records the run and how it ended.
pub async fn run_job(state: &Arc<AppState>, job: &'static JobSpec, trigger: Trigger) -> Result<Started, WriteError> {
    let started = start_run(state, job, trigger).await?;
    if let Started::Started(run_id) = &started {
        finish_run(state, job, run_id.clone()).await?;
    }
    Ok(started)
}

/// Records the start of a run of `job` (or finds the one going).
pub async fn start_run(state: &AppState, job: &'static JobSpec, trigger: Trigger) -> Result<Started, WriteError> {
    let now_ms = state.clock.now_ms();
    state.writer.transact(move |tx| runs::start(tx, job.name, trigger, now_ms)).await
}

/// Does the work of a started run and records how it ended.
pub async fn finish_run(state: &Arc<AppState>, job: &'static JobSpec, run_id: String) -> Result<(), WriteError> {
    let (outcome, rows, error) = match execute(state, job).await {
        Ok(rows) => (Outcome::Succeeded, rows, None),
        Err(error) => {
            tracing::error!(job = job.name, %error, "job failed");
            (Outcome::Failed, None, Some(error))
        }
    };
    let ended_ms = state.clock.now_ms();
    let breach = state
        .writer
        .transact(move |tx| runs::finish_and_check(tx, job, &run_id, outcome, rows, error.as_deref(), ended_ms))
        .await?;
    if let Some(breach) = breach {
        tracing::warn!(job = job.name, severity = breach.severity, reason = %breach.reason, "job breached its service level");
    }
    Ok(())
}

/// The jobs a trigger over HTTP may start now: available ones the server knows how to run.
pub fn runs_in_the_server(job: &JobSpec) -> bool {
    SCHEDULED_HERE.contains(&job.name)
}

/// Does the job's work; the rows it touched, or why it failed.
async fn execute(state: &Arc<AppState>, job: &JobSpec) -> Result<Option<i64>, String> {
    match job.name {
        "run-deletions" => {
            let report = crate::deletion::server::run_once(state).await.map_err(|err| err.to_string())?;
            if let Some((request, error)) = report.failed.first() {
                return Err(format!("deletion request {request} stopped: {error} (the next run resumes it)"));
            }
            Ok(Some(report.sessions_deleted as i64 + report.events_deleted as i64))
        }
        "sweep-scratch" => sweep_scratch(state).await,
        other => Err(format!("{other} is not run by the scheduler yet")),
    }
}

/// `sweep-scratch`: transcript uploads abandoned for a day, device authorisations and
/// refresh tokens long expired, and ended sign-in throttle windows.
async fn sweep_scratch(state: &Arc<AppState>) -> Result<Option<i64>, String> {
    let data_dir = state.config.data_dir.clone();
    let uploads = db::blocking(move || {
        use crate::transcripts::upload;
        upload::expire_staged(&data_dir, upload::STAGING_MAX_AGE, std::time::SystemTime::now())
    })
    .await
    .map_err(|err| err.to_string())?;
    let now_ms = state.clock.now_ms();
    let rows = state
        .writer
        .transact(move |tx| crate::auth::delete_expired(tx, now_ms))
        .await
        .map_err(|err| err.to_string())?;
    let windows = state.login_throttle.prune(now_ms) + state.device_throttle.prune(now_ms);
    Ok(Some((uploads + rows + windows) as i64))
}

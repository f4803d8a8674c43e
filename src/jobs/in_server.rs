//! What each job does when the server runs it (its scheduler, or a trigger over HTTP):
//! the same work as `sightline jobs run`, through the server's own handles (the writer
//! thread for main.db, the indexer thread for the transcript index, the sign-in
//! throttles in memory).
//!
//! Invariant: a job answers the rows it touched only when its work is done; any error
//! is the run's failure, in words for `job_runs.error`.

use std::sync::Arc;

use crate::db;
use crate::jobs::registry::JobSpec;
use crate::state::AppState;

/// The jobs the server knows how to do.
const KNOWN: &[&str] = &[
    "run-deletions",
    "sweep-retention",
    "sweep-scratch",
    "sweep-abandoned",
    "index-transcripts",
    "backfill-redaction",
    "reprice-events",
    "reprice-events-apply",
    "sync-teams",
    "compute-trajectory-scores",
    "compute-effectiveness",
    "compute-subject-scores",
    "judge-sessions",
    "evaluate-alerts",
    "sync-jira",
    "reconcile-cost",
];

pub fn knows(job: &str) -> bool {
    KNOWN.contains(&job)
}

/// Held by whatever rewrites or removes partition files in the server (compaction,
/// retention, deletions, re-redaction, repricing), so one never removes or swaps a file
/// under another. Per process: two servers in one test process only wait for each other.
pub static PARTITION_REWRITES: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The jobs that rewrite or remove partition files.
const REWRITES_PARTITIONS: &[&str] =
    &["run-deletions", "sweep-retention", "backfill-redaction", "reprice-events-apply"];

/// What a run did: the rows it touched and, where a count says too little, a summary.
#[derive(Debug, Default)]
pub struct Done {
    pub rows: Option<i64>,
    pub summary: Option<String>,
}

/// Does the job's work; what it did, or why it failed.
pub async fn execute(state: &Arc<AppState>, job: &JobSpec) -> Result<Done, String> {
    let _rewriting = match REWRITES_PARTITIONS.contains(&job.name) {
        true => Some(PARTITION_REWRITES.lock().await),
        false => None,
    };
    match job.name {
        "reprice-events" => reprice(state, false).await,
        "reprice-events-apply" => reprice(state, true).await,
        "sync-teams" => sync_teams(state).await,
        "compute-trajectory-scores" => trajectories(state).await,
        "compute-effectiveness" | "compute-subject-scores" => outcomes(state, job.name).await,
        "judge-sessions" => judge(state).await,
        "evaluate-alerts" => alerts(state).await,
        "sync-jira" => sync_jira(state).await,
        "reconcile-cost" => reconcile_cost(state).await,
        _ => counted(state, job).await.map(|rows| Done { rows, summary: None }),
    }
}

/// The jobs whose work is a count of rows.
async fn counted(state: &Arc<AppState>, job: &JobSpec) -> Result<Option<i64>, String> {
    match job.name {
        "run-deletions" => {
            let report = crate::deletion::server::run_once(state).await.map_err(|err| err.to_string())?;
            if let Some((request, error)) = report.failed.first() {
                return Err(format!("deletion request {request} stopped: {error} (the next run resumes it)"));
            }
            Ok(Some(report.sessions_deleted as i64 + report.events_deleted as i64))
        }
        "sweep-retention" => Ok(Some(crate::deletion::server::sweep_retention(state).await?.rows())),
        "sweep-scratch" => sweep_scratch(state).await,
        "sweep-abandoned" => {
            let quiet_ms = state.config.jobs.abandon_after_mins * 60_000;
            let now_ms = state.clock.now_ms();
            let closed = state
                .writer
                .transact(move |tx| crate::sessions::abandon::close_abandoned(tx, quiet_ms, now_ms))
                .await
                .map_err(|err| err.to_string())?;
            Ok(Some(closed as i64))
        }
        "index-transcripts" => Ok(Some(state.indexer.drain_now().await? as i64)),
        "backfill-redaction" => backfill_redaction(state).await,
        other => Err(format!("{other} is not run by the server")),
    }
}

/// `evaluate-alerts`: every enabled rule measured and its events moved through the state
/// machine, in one writer transaction (docs/alerts.md).
async fn alerts(state: &Arc<AppState>) -> Result<Done, String> {
    use crate::alerts::{channels, store};
    let now_ms = state.clock.now_ms();
    let transitions =
        state.writer.transact(move |tx| store::evaluate(tx, now_ms)).await.map_err(|err| err.to_string())?;
    let described = store::describe(&transitions);
    // Channels are read when the job runs, so a changed credential needs no restart.
    let pool = state.readers.clone();
    let configured =
        db::blocking(move || crate::alerts::channel_configs::in_use(&*pool.get()?, |name| std::env::var(name).ok()))
            .await
            .map_err(|err| err.to_string())?
            .map_err(|err| format!("{described}; notifications not sent: {err}"))?;
    let (clock, rows) = (state.clock.clone(), transitions.len() as i64);
    let (attempts, summary) = tokio::task::spawn_blocking(move || {
        channels::notify(&configured, &transitions, &|| clock.now_ms(), &std::thread::sleep)
    })
    .await
    .map_err(|err| err.to_string())?;
    state.writer.transact(move |tx| channels::log(tx, &attempts)).await.map_err(|err| err.to_string())?;
    Ok(Done { rows: Some(rows), summary: Some(summary) })
}

/// `compute-trajectory-scores`: the due sessions' trajectory scores, written through the
/// writer thread (docs/scoring.md).
async fn trajectories(state: &Arc<AppState>) -> Result<Done, String> {
    let (data_dir, readers, writer, now_ms) =
        (state.config.data_dir.clone(), state.readers.clone(), state.writer.clone(), state.clock.now_ms());
    let report = tokio::task::spawn_blocking(move || {
        let reads = readers.get()?;
        let change_main = |change: crate::events::writer::MainChange| {
            writer.change_main_blocking(change).map_err(|err| db::DbError::Io {
                context: "writing trajectory scores".into(),
                source: std::io::Error::other(err.to_string()),
            })
        };
        crate::scoring::run::compute(&data_dir, &reads, &change_main, now_ms, false)
    })
    .await
    .map_err(|err| err.to_string())?
    .map_err(|err| err.to_string())?;
    Ok(Done { rows: Some(report.sessions as i64), summary: Some(crate::scoring::run::describe(&report)) })
}

/// `compute-effectiveness` and `compute-subject-scores`: outcome scores, recomputed whole
/// in one writer transaction (docs/scoring.md, "Outcomes").
async fn outcomes(state: &Arc<AppState>, job: &'static str) -> Result<Done, String> {
    let now_ms = state.clock.now_ms();
    let scored = state
        .writer
        .transact(move |tx| match job {
            "compute-effectiveness" => crate::scoring::outcomes::compute_effectiveness(tx, now_ms),
            _ => crate::scoring::outcomes::compute_subject_scores(tx, now_ms),
        })
        .await
        .map_err(|err| err.to_string())?;
    let what = if job == "compute-effectiveness" { "sessions" } else { "pull requests" };
    Ok(Done { rows: Some(scored as i64), summary: Some(format!("{scored} {what} scored")) })
}

/// `judge-sessions`: the LLM judge over opted-in owners' transcripts, on a connection of
/// its own (few, short writes between long API calls), as `sightline jobs run` does.
async fn judge(state: &Arc<AppState>) -> Result<Done, String> {
    let settings = crate::scoring::judge::JudgeSettings::from_env(|name| std::env::var(name).ok())?;
    let (path, data_dir, now_ms) = (state.config.main_db_path(), state.config.data_dir.clone(), state.clock.now_ms());
    let report = tokio::task::spawn_blocking(move || {
        let conn =
            db::open(&path, db::Durability::PowerSafe, db::Checkpointing::Background).map_err(|e| e.to_string())?;
        crate::scoring::judge::run(&conn, &data_dir, &settings, now_ms, &|body| {
            crate::scoring::judge::ask_api(&settings, body)
        })
    })
    .await
    .map_err(|err| err.to_string())??;
    Ok(Done { rows: Some(report.judged as i64), summary: Some(report.describe()) })
}

/// `sync-teams`: the organisation's teams and members from GitHub (docs/github-app.md).
async fn sync_teams(state: &Arc<AppState>) -> Result<Done, String> {
    if let Some(why) = crate::github::teams::not_configured(&state.config) {
        tracing::warn!("sync-teams: {why}");
        return Ok(Done { rows: Some(0), summary: Some(why.to_string()) });
    }
    let (config, now_ms) = (state.config.clone(), state.clock.now_ms());
    let teams = tokio::task::spawn_blocking(move || crate::github::teams::fetch(&config, now_ms / 1000))
        .await
        .map_err(|err| err.to_string())??;
    let summary = state
        .writer
        .transact(move |tx| {
            crate::access::teams::sync(tx, &teams, now_ms).map_err(|err| match err {
                crate::access::teams::TeamError::Db(db) => db,
                other => {
                    db::DbError::Io { context: "team sync".into(), source: std::io::Error::other(other.to_string()) }
                }
            })
        })
        .await
        .map_err(|err| err.to_string())?;
    let rows = (summary.teams_added + summary.teams_updated + summary.members_added + summary.members_removed) as i64;
    Ok(Done { rows: Some(rows), summary: Some(crate::github::teams::describe(&summary)) })
}

/// `sync-jira`: the issues pull requests name, read from Jira and stored with their
/// business value; without the four `SIGHTLINE_JIRA_*` variables it says so and does
/// nothing (docs/cost.md).
async fn sync_jira(state: &Arc<AppState>) -> Result<Done, String> {
    let Some(config) = crate::jira::from_env(|name| std::env::var(name).ok())? else {
        tracing::warn!("sync-jira: {}", crate::jira::NOT_CONFIGURED);
        return Ok(Done { rows: Some(0), summary: Some(crate::jira::NOT_CONFIGURED.into()) });
    };
    let pool = state.readers.clone();
    let keys =
        db::blocking(move || crate::github::pulls::issue_keys(&*pool.get()?)).await.map_err(|err| err.to_string())?;
    let fetched = tokio::task::spawn_blocking(move || crate::jira::client::fetch(&config, &keys))
        .await
        .map_err(|err| err.to_string())??;
    let now_ms = state.clock.now_ms();
    let stored = state
        .writer
        .transact(move |tx| crate::jira::store::upsert(tx, &fetched, now_ms))
        .await
        .map_err(|err| err.to_string())?;
    Ok(Done { rows: Some(stored.rows()), summary: Some(stored.describe()) })
}

/// `reconcile-cost`: the configured vendors' bills for the last complete days beside the
/// events' recomputed cost, stored with their drift in one writer transaction
/// (docs/cost.md). Without credentials every source is the null source and it says so.
async fn reconcile_cost(state: &Arc<AppState>) -> Result<Done, String> {
    let settings = crate::billing::Settings::from_env(|name| std::env::var(name).ok())?;
    let (data_dir, prices, now_ms) = (state.config.data_dir.clone(), state.prices.clone(), state.clock.now_ms());
    let today = crate::events::partitions::Day::of_ms(now_ms);
    let run = tokio::task::spawn_blocking(move || crate::billing::run::prepare(&data_dir, &prices, &settings, today))
        .await
        .map_err(|err| err.to_string())??;
    let stored = state
        .writer
        .transact(move |tx| crate::billing::store::replace(tx, &run, now_ms))
        .await
        .map_err(|err| err.to_string())?;
    Ok(Done { rows: Some(stored.drift_rows as i64), summary: Some(stored.summary) })
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

/// `backfill-redaction`: events stored under older rules, then transcripts, then the
/// index of the transcripts it changed (through the indexer). Re-redaction keeps its
/// resume point in main.db on a connection of its own, as `sightline backfill-redaction`
/// beside a server does: its writes are few and short, and SQLite's busy wait orders them
/// with the writer thread's.
async fn backfill_redaction(state: &Arc<AppState>) -> Result<Option<i64>, String> {
    let (path, data_dir, now_ms) = (state.config.main_db_path(), state.config.data_dir.clone(), state.clock.now_ms());
    let changed = db::blocking(move || {
        let conn = db::open(&path, db::Durability::PowerSafe, db::Checkpointing::Background)?;
        let events = crate::events::reredact::reredact_all(&data_dir, &conn, now_ms, |_| {})?;
        let transcripts = crate::transcripts::backfill::reredact_all(&conn, &data_dir, |_| {})?;
        Ok::<_, db::DbError>(events.rows_changed as i64 + transcripts.changed as i64)
    })
    .await
    .map_err(|err| err.to_string())?;
    state.indexer.drain_now().await?;
    Ok(Some(changed))
}

/// `reprice-events` (report only) and `reprice-events-apply`, under the server's price
/// tables; main.db changes go through the writer thread.
async fn reprice(state: &Arc<AppState>, apply: bool) -> Result<Done, String> {
    let (data_dir, prices, readers) = (state.config.data_dir.clone(), state.prices.clone(), state.readers.clone());
    let (writer, now_ms) = (state.writer.clone(), state.clock.now_ms());
    let report = tokio::task::spawn_blocking(move || {
        use crate::sessions::reprice;
        // The report shows what the tables on disk would do (an upload from
        // /admin/price-tables before the restart that puts it in force); applying is
        // only under the tables the server prices new events with.
        let on_disk = crate::pricing::PriceBook::load(&data_dir)
            .map_err(|err| db::DbError::Io { context: "the price tables on disk".into(), source: std::io::Error::other(err.to_string()) })?;
        if !apply {
            return reprice::report(&data_dir, &on_disk);
        }
        if on_disk.tables().zip(prices.tables()).any(|(disk, live)| disk.etag() != live.etag()) {
            return Err(db::DbError::Io {
                context: "reprice-events-apply".into(),
                source: std::io::Error::other(
                    "the price tables on disk are not the ones in force: restart the server first, so new events and history are priced alike",
                ),
            });
        }
        let reads = readers.get()?;
        let change_main = |change: crate::events::writer::MainChange| {
            writer.change_main_blocking(change).map_err(|err| db::DbError::Io {
                context: "repricing's main.db change".into(),
                source: std::io::Error::other(err.to_string()),
            })
        };
        reprice::apply(&data_dir, &reads, &prices, &change_main, now_ms)
    })
    .await
    .map_err(|err| format!("repricing stopped: {err}"))?
    .map_err(|err| err.to_string())?;
    let rows = if apply { report.rows_rewritten } else { report.changed() };
    Ok(Done { rows: Some(rows as i64), summary: Some(report.summary()) })
}

//! What an operator asks of every job at once: the schedule it runs on now (the
//! operator's or the default), its last run, its next scheduled time and the breach that
//! stands. One reading for `sightline jobs list`, `GET /admin/jobs` and `/metrics`, so
//! the three never disagree.
//!
//! Invariant: a job that cannot run (unavailable, disabled or only triggered) has no
//! next run.

use rusqlite::Connection;

use super::config::{self, Effective};
use super::registry::{Availability, JOBS, JobSpec, switched_on};
use super::runs::{self, JobRun, Outcome};
use super::slo::{self, Breach};
use crate::config::Config;
use crate::db::DbError;

/// One job as it stands.
#[derive(Clone, Debug)]
pub struct JobStatus {
    pub job: &'static JobSpec,
    pub effective: Effective,
    pub last: Option<JobRun>,
    /// When it last succeeded: the `/metrics` staleness figure.
    pub last_success_ms: Option<i64>,
    pub next_run_ms: Option<i64>,
    pub breach: Option<Breach>,
}

/// Every job of the registry, as it stands at `now_ms`.
pub fn all(conn: &Connection, config: &Config, now_ms: i64) -> Result<Vec<JobStatus>, DbError> {
    JOBS.iter().map(|job| one(conn, config, job, now_ms)).collect()
}

/// One job, as it stands at `now_ms`.
pub fn one(conn: &Connection, settings: &Config, job: &'static JobSpec, now_ms: i64) -> Result<JobStatus, DbError> {
    let effective = config::effective(conn, job)?;
    // A switch that is off holds the job whatever is stored.
    let effective = Effective { enabled: effective.enabled && switched_on(job, settings), ..effective };
    let last = runs::history(conn, Some(job.name), 1)?.pop();
    let next_run_ms = match (job.availability, effective.enabled) {
        (Availability::Available, true) => {
            let since = last.as_ref().map_or(now_ms, |run| run.started_at_ms.max(now_ms));
            effective.schedule.next_after(since)
        }
        _ => None,
    };
    let last_success_ms = match &last {
        Some(run) if run.outcome == Outcome::Succeeded => run.ended_at_ms,
        _ => runs::last_succeeded(conn, job.name)?,
    };
    Ok(JobStatus { job, effective, last, last_success_ms, next_run_ms, breach: slo::standing(conn, job.name)? })
}

/// What `/metrics` shows of a job: whether its latest ended run breached its service
/// level, and when it last succeeded.
#[derive(Clone, Debug)]
pub struct Figures {
    pub job: &'static JobSpec,
    pub breached: bool,
    pub last_success_ms: Option<i64>,
}

/// Every job's [`Figures`], by indexed lookups only (`job_runs_by_job` for the latest
/// ended run, `job_runs_by_outcome` for the last success, `job_alerts_by_run` for its
/// breach): a scrape never reads a job's history, however long it is.
pub fn figures(conn: &Connection) -> Result<Vec<Figures>, DbError> {
    JOBS.iter()
        .map(|job| {
            Ok(Figures {
                job,
                breached: slo::standing(conn, job.name)?.is_some(),
                last_success_ms: runs::last_succeeded(conn, job.name)?,
            })
        })
        .collect()
}

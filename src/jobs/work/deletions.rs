//! `run-deletions` and `sweep-retention`: the privacy deletions and the retention
//! sweep, through the host as their deletion target (docs/access.md, docs/jobs.md).

use crate::jobs::context::{Done, JobContext, JobError};

/// `run-deletions`: the open deletion requests, each to its end or to its first error
/// (the next run resumes it).
pub fn run_deletions(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let reads = ctx.reader()?;
    if crate::deletion::open_requests(&reads)?.is_empty() {
        return Ok(Done::rows(0));
    }
    let rewrite = ctx.rewriting("run-deletions")?;
    let report = crate::deletion::runner::run(&reads, &rewrite, ctx.host.target())?;
    if let Some((request, error)) = report.failed.first() {
        return Err(JobError::stopped(format!(
            "deletion request {request} stopped: {error} (the next run resumes it)"
        )));
    }
    Ok(Done::rows(report.sessions_deleted as i64 + report.events_deleted as i64))
}

/// `sweep-retention`: raw events past `jobs.retention_days`.
pub fn sweep_retention(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let reads = ctx.reader()?;
    let rewrite = ctx.rewriting("sweep-retention")?;
    let report = crate::deletion::retention::sweep(&reads, &rewrite, ctx.host.target(), ctx.config.jobs.retention_days)
        .map_err(JobError::stopped)?;
    Ok(Done::rows(report.rows()))
}

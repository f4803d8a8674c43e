//! `sweep-scratch` and `sweep-abandoned`: housekeeping of short-lived state.

use crate::jobs::context::{Done, JobContext, JobError};

/// `sweep-scratch`: transcript uploads abandoned for a day, device authorisations and
/// refresh tokens long expired, and ended sign-in throttle windows.
pub fn sweep_scratch(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    use crate::transcripts::upload;
    let uploads = upload::expire_staged(ctx.data_dir(), upload::STAGING_MAX_AGE, std::time::SystemTime::now())?;
    let now_ms = ctx.now_ms();
    let rows = ctx.write(move |tx| crate::auth::delete_expired(tx, now_ms))?;
    let windows = ctx.host.prune_throttles(now_ms);
    Ok(Done::rows((uploads + rows + windows) as i64))
}

/// `sweep-abandoned`: sessions quiet for `jobs.abandon_after_mins` are closed.
pub fn sweep_abandoned(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let (quiet_ms, now_ms) = (ctx.config.jobs.abandon_after_mins * 60_000, ctx.now_ms());
    let closed = ctx.write(move |tx| crate::sessions::abandon::close_abandoned(tx, quiet_ms, now_ms))?;
    Ok(Done::rows(closed as i64))
}

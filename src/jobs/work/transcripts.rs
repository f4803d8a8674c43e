//! `index-transcripts` and `backfill-redaction`: the transcript index kept up with the
//! store, and stored events and transcripts re-redacted under the current rules.

use crate::jobs::context::{Done, JobContext, JobError};

/// `index-transcripts`: the stored transcripts not yet in the index.
pub fn index_transcripts(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    Ok(Done::rows(ctx.host.index_transcripts()? as i64))
}

/// `backfill-redaction`: events stored under older rules, then transcripts, then the
/// index of the transcripts it changed. Re-redaction keeps its resume point in main.db
/// on a connection of its own: its writes are few and short.
pub fn backfill_redaction(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let conn = ctx.host.own_connection()?;
    let events = ctx.rewriting("backfill-redaction")?.reredact_all(&conn, ctx.now_ms(), |_| {})?;
    let transcripts = crate::transcripts::backfill::reredact_all(&conn, ctx.data_dir(), |_| {})?;
    ctx.host.index_transcripts()?;
    Ok(Done::rows(events.rows_changed as i64 + transcripts.changed as i64))
}

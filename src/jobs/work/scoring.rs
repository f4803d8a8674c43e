//! The scoring jobs: trajectory scores, outcome scores (effectiveness per session,
//! subject scores per pull request) and the LLM judge (docs/scoring.md).

use crate::jobs::context::{Done, JobContext, JobError};
use crate::scoring::{bands, outcomes, registry, store};

/// `compute-trajectory-scores`: the due sessions' trajectory scores.
pub fn trajectory_scores(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    trajectories(ctx, false)
}

/// `rescore-trajectory`: every session again under the current version, and no score
/// of an older version left behind.
pub fn rescore_trajectory(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    trajectories(ctx, true)
}

fn trajectories(ctx: &JobContext<'_>, all: bool) -> Result<Done, JobError> {
    let reads = ctx.reader()?;
    let report =
        crate::scoring::run::compute(ctx.data_dir(), &reads, &|change| ctx.change_main(change), ctx.now_ms(), all)?;
    if all {
        ctx.write(|tx| store::sweep_old_versions(tx))?;
    }
    bands::refresh(&reads, &|change| ctx.change_main(change), ctx.now_ms())?;
    Ok(Done::described(report.sessions as i64, crate::scoring::run::describe(&report)))
}

/// `compute-effectiveness` and `compute-effectiveness-backfill`: outcome scores of
/// sessions, recomputed whole in one transaction.
pub fn effectiveness(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let now_ms = ctx.now_ms();
    let scored = ctx.write(move |tx| outcomes::compute_effectiveness(tx, now_ms))?;
    bands::refresh(&*ctx.reader()?, &|change| ctx.change_main(change), now_ms)?;
    Ok(Done::described(scored as i64, format!("{scored} sessions scored")))
}

/// `rescore-effectiveness`: as `compute-effectiveness`, and no effectiveness score of
/// an older version outlives the rescoring.
pub fn rescore_effectiveness(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let now_ms = ctx.now_ms();
    let scored = ctx.write(move |tx| {
        let scored = outcomes::compute_effectiveness(tx, now_ms)?;
        store::sweep_old_versions_of(tx, &[registry::EFFECTIVENESS])?;
        Ok(scored)
    })?;
    Ok(Done::described(scored as i64, format!("{scored} sessions scored")))
}

/// `compute-subject-scores`: outcome scores of pull requests.
pub fn subject_scores(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let now_ms = ctx.now_ms();
    let scored = ctx.write(move |tx| outcomes::compute_subject_scores(tx, now_ms))?;
    Ok(Done::described(scored as i64, format!("{scored} pull requests scored")))
}

/// `judge-sessions`: the LLM judge over opted-in owners' transcripts, on a connection
/// of its own (few, short writes between long API calls).
pub fn judge_sessions(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let settings =
        crate::scoring::judge::JudgeSettings::from_config(&ctx.config.judge).map_err(JobError::Configuration)?;
    let conn = ctx.host.own_connection()?;
    let report = crate::scoring::judge::run(&conn, ctx.data_dir(), &settings, ctx.now_ms(), &|body| {
        crate::scoring::judge::ask_api(&settings, body)
    })
    .map_err(|err| JobError::remote("the judge", err))?;
    Ok(Done::described(report.judged as i64, report.describe()))
}

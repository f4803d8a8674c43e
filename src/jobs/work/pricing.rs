//! `reprice-events` (a report) and `reprice-events-apply`: history under the price
//! tables (docs/cost.md).

use crate::jobs::context::{Done, JobContext, JobError};
use crate::sessions::reprice::{self, RepriceReport};

/// `reprice-events`: what the price tables on disk would change (an upload from
/// /admin/price-tables before the restart that puts it in force), changing nothing.
pub fn reprice_report(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let report = reprice::report(ctx.data_dir(), &on_disk(ctx)?)?;
    Ok(reported(report.changed(), &report))
}

/// `reprice-events-apply`: history repriced under the tables new events are priced
/// with, refused while the tables on disk differ from them (restart first, so new
/// events and history are priced alike).
pub fn reprice_apply(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let (on_disk, in_force) = (on_disk(ctx)?, ctx.host.prices()?);
    if on_disk.tables().zip(in_force.tables()).any(|(disk, live)| disk.etag() != live.etag()) {
        return Err(JobError::stopped(
            "the price tables on disk are not the ones in force: restart the server first, so new events and history are priced alike",
        ));
    }
    let reads = ctx.reader()?;
    let rewrite = ctx.rewriting("reprice-events-apply")?;
    let report = reprice::apply(
        &rewrite,
        &reads,
        &in_force,
        &|change| ctx.change_main(change),
        crate::analytics::partials::force_rebuild,
        ctx.now_ms(),
    )?;
    Ok(reported(report.rows_rewritten, &report))
}

fn on_disk(ctx: &JobContext<'_>) -> Result<crate::pricing::PriceBook, JobError> {
    crate::pricing::PriceBook::load(ctx.data_dir())
        .map_err(|err| JobError::Configuration(format!("the price tables on disk: {err}")))
}

/// The report's summary and its table, one row per agent and model.
fn reported(rows: u64, report: &RepriceReport) -> Done {
    let usd = |nusd: i64| format!("{:.4}", crate::model::nusd_to_usd(nusd));
    let lines = report
        .lines
        .iter()
        .map(|line| {
            vec![
                line.agent.clone(),
                line.model.clone(),
                line.events.to_string(),
                line.changed.to_string(),
                usd(line.cost_before_nusd),
                usd(line.cost_after_nusd),
            ]
        })
        .collect();
    Done {
        rows: Some(rows as i64),
        summary: Some(report.summary()),
        table: Some((vec!["agent", "model", "events", "would change", "cost before $", "cost after $"], lines)),
    }
}

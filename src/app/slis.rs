//! Every minute (`SIGHTLINE_SLI_FLUSH_SECS`, for tests), the server samples how far the
//! aggregates are behind, adds the recorder's counts to today's `sli_daily` rows and
//! recomputes today's and yesterday's GitHub-delivery and job rows from
//! `webhook_deliveries` and `job_runs` (`slo::store`), and adds what the agents sent that
//! no mapping uses to `adapter_unmapped` (`sessions::drift`), through the writer. A failed flush puts
//! nothing back: the counts of that minute are lost and the log says so, which is the
//! price of never blocking a request on the indicators.

use std::sync::Arc;
use std::time::Duration;

use rusqlite::Connection;

use crate::db::{self, DbError};
use crate::jobs::registry;
use crate::jobs::runs::{self, Outcome};
use crate::slo::Tally;
use crate::slo::store::{self, DAY_MS};
use crate::state::AppState;

pub async fn run(state: Arc<AppState>) {
    let mut ticks = tokio::time::interval(Duration::from_secs(state.config.server.sli_flush_secs.max(1)));
    ticks.tick().await;
    loop {
        ticks.tick().await;
        flush(&state).await;
    }
}

/// One flush: the lag sample, the counts and the derived rows.
pub async fn flush(state: &Arc<AppState>) {
    let (pool, now_ms) = (state.readers.clone(), state.clock.now_ms());
    match db::blocking(move || crate::analytics::refresh::lag_ms(&*pool.get()?, now_ms)).await {
        Ok(lag_ms) => state.slis.aggregate_lag(lag_ms),
        Err(err) => tracing::warn!(error = %err, "cannot read the aggregate lag for the service levels"),
    }
    let tallies = state.slis.take();
    let unmapped = state.unmapped.take();
    let flushed = state
        .writer
        .transact(move |tx| {
            crate::sessions::drift::merge(tx, &unmapped)?;
            crate::slo::store::merge(tx, now_ms, &tallies)?;
            derive(tx, now_ms)?;
            crate::slo::store::prune(tx, now_ms)
        })
        .await;
    if let Err(err) = flushed {
        tracing::warn!(error = %err, "the service-level counts of the last minute are lost");
    }
}

/// The GitHub-delivery and job indicators of today and yesterday, from their tables: a
/// delivery is good unless it failed, timed from receipt to upsert; a job run is good
/// when it succeeded within its target duration.
fn derive(conn: &Connection, now_ms: i64) -> Result<(), DbError> {
    let today = now_ms.div_euclid(DAY_MS) * DAY_MS;
    // A delivery still pending after 5 s (the upsert objective) counts as bad.
    let stuck_before = now_ms - 5_000;
    for day in [today - DAY_MS, today] {
        let mut deliveries = Tally::default();
        for (failed, processing_ms) in
            crate::github::deliveries::settled_between(conn, day, day + DAY_MS, stuck_before)?
        {
            // A failed or stuck delivery is counted but untimed: it never reached an upsert.
            deliveries.add(!failed, processing_ms);
        }
        store::replace_day(conn, day, "github_delivery", &[(String::new(), deliveries)])?;
        let mut jobs: std::collections::BTreeMap<String, Tally> = std::collections::BTreeMap::new();
        for run in runs::ended_between(conn, day, day + DAY_MS)? {
            let Some(ended) = run.ended_at_ms else { continue };
            let took_ms = ended - run.started_at_ms;
            let target_ms = registry::find(&run.job).and_then(|job| job.target).map(|t| t.as_millis() as i64);
            let good = run.outcome == Outcome::Succeeded && target_ms.is_none_or(|t| took_ms <= t);
            jobs.entry(run.job).or_default().add(good, Some(took_ms));
        }
        store::replace_day(conn, day, "job", &jobs.into_iter().collect::<Vec<_>>())?;
    }
    Ok(())
}

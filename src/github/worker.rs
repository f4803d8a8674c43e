//! The delivery worker: applies pending deliveries in the order they arrived, in batches
//! of one writer transaction, each delivery in a savepoint with its outcome, then publishes what is due outside it (the
//! bot comment of a merged pull request). It wakes when the receiver stores a delivery,
//! and every few seconds anyway, so deliveries a crash left pending are applied after
//! a restart without waiting for the next one.
//!
//! Invariants: a delivery is applied at most once (the transaction checks it is still
//! pending before applying it, and marks it done in the same commit); a storage error
//! rolls the delivery back and counts an attempt; a payload that cannot be applied is
//! `failed` at once, with the reason, and never retried.

use std::sync::Arc;
use std::time::Duration;

use super::apply::{self, ApplyError, Outcome, Rules};
use super::{deliveries, rollups};
use crate::db::{self, DbError};
use crate::state::AppState;

/// How often the worker looks for work without being woken.
const POLL: Duration = Duration::from_secs(5);
/// Deliveries applied in one writer transaction (the body bytes are capped too).
const BATCH: usize = 100;

pub fn rules(state: &AppState) -> Result<Rules, regex::Error> {
    Ok(Rules {
        host_prefix: super::links::host_prefix(&state.config.auth.github_url),
        issue_key: regex::Regex::new(&state.config.github.issue_key_pattern)?,
    })
}

/// Runs until the task is aborted (server shutdown).
pub async fn run(state: Arc<AppState>) {
    if !state.config.github.process_deliveries {
        tracing::warn!("github.process_deliveries is false: webhook deliveries are stored, not applied");
        return;
    }
    let rules = match rules(&state) {
        Ok(rules) => Arc::new(rules),
        Err(err) => {
            tracing::error!(%err, "github.issue_key_pattern is not a regular expression; webhooks are not processed");
            return;
        }
    };
    let mut polls: u64 = 0;
    loop {
        if let Err(err) = drain(&state, &rules).await {
            tracing::warn!(%err, "webhook deliveries: a pass failed; retrying shortly");
        }
        polls += 1;
        if polls.is_multiple_of(12)
            && let Err(err) = refresh_stale_rollups(&state).await
        {
            tracing::warn!(%err, "pull-request rollups: refresh failed");
        }
        // Hourly: comments whose people changed their minds about being shown.
        if polls.is_multiple_of(720)
            && let Err(err) = super::comment::recheck_consent(&state).await
        {
            tracing::warn!(%err, "bot comments: consent recheck failed");
        }
        super::comment::publish_due(&state).await;
        tokio::select! {
            _ = state.webhook_arrivals.notified() => {}
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Applies every pending delivery; answers how many it settled.
pub async fn drain(state: &Arc<AppState>, rules: &Arc<Rules>) -> Result<usize, DbError> {
    let mut settled = 0;
    loop {
        let pool = state.readers.clone();
        let now_ms = state.clock.now_ms();
        let batch = db::blocking(move || deliveries::pending(&*pool.get()?, BATCH, now_ms)).await?;
        if batch.is_empty() {
            return Ok(settled);
        }
        let report = apply_batch(state, rules, batch).await?;
        settled += report.settled;
        // A storage error waits for the next pass rather than spinning on it.
        if report.settled == 0 || report.retrying {
            return Ok(settled);
        }
    }
}

#[derive(Default)]
struct BatchReport {
    settled: usize,
    retrying: bool,
}

/// Applies a batch of deliveries in one writer transaction (one commit for all of
/// them), each inside a savepoint, so one that fails is rolled back alone and recorded.
async fn apply_batch(
    state: &Arc<AppState>,
    rules: &Arc<Rules>,
    batch: Vec<deliveries::Pending>,
) -> Result<BatchReport, DbError> {
    let rules = rules.clone();
    let clock = state.clock.clone();
    state
        .writer
        .transact(move |tx| {
            let mut report = BatchReport::default();
            for delivery in &batch {
                if !deliveries::is_pending(tx, &delivery.delivery_id)? {
                    continue;
                }
                let started_ms = clock.now_ms();
                tx.execute_batch("SAVEPOINT delivery")?;
                let body = match &delivery.body {
                    Ok(body) => body,
                    Err(why) => {
                        deliveries::fail(tx, &delivery.delivery_id, why, true, started_ms)?;
                        report.settled += 1;
                        continue;
                    }
                };
                tx.execute_batch("SAVEPOINT delivery")?;
                match apply::apply(tx, &delivery.event, body, &rules, started_ms) {
                    Ok(outcome) => {
                        let (state, note) = match &outcome {
                            Outcome::Applied => ("applied", None),
                            Outcome::Ignored(why) => ("ignored", Some(why.as_str())),
                        };
                        // Processing time runs to the end of the upsert (receipt to upsert).
                        deliveries::finish(tx, &delivery.delivery_id, state, note, clock.now_ms())?;
                        tx.execute_batch("RELEASE delivery")?;
                        report.settled += 1;
                    }
                    Err(ApplyError::Payload(why)) => {
                        tx.execute_batch("ROLLBACK TO delivery; RELEASE delivery")?;
                        tracing::warn!(delivery = %delivery.delivery_id, %why, "webhook delivery failed: its payload cannot be applied");
                        deliveries::fail(tx, &delivery.delivery_id, &why, true, clock.now_ms())?;
                        report.settled += 1;
                    }
                    Err(ApplyError::Db(err)) => {
                        tx.execute_batch("ROLLBACK TO delivery; RELEASE delivery")?;
                        tracing::warn!(delivery = %delivery.delivery_id, %err, "webhook delivery not applied; it will be retried");
                        deliveries::fail(tx, &delivery.delivery_id, &err.to_string(), false, clock.now_ms())?;
                        report.retrying = true;
                    }
                }
            }
            Ok(report)
        })
        .await
        .map_err(|err| DbError::Io { context: "applying webhook deliveries".into(), source: std::io::Error::other(err.to_string()) })
}

/// Recomputes rollups that lost a linked session (a deletion request carried out).
async fn refresh_stale_rollups(state: &Arc<AppState>) -> Result<(), DbError> {
    let pool = state.readers.clone();
    let stale = db::blocking(move || rollups::stale(&*pool.get()?)).await?;
    if stale.is_empty() {
        return Ok(());
    }
    let now_ms = state.clock.now_ms();
    state
        .writer
        .transact(move |tx| {
            for pr in &stale {
                rollups::compute(tx, pr, now_ms)?;
            }
            Ok(())
        })
        .await
        .map_err(|err| DbError::Io {
            context: "recomputing rollups".into(),
            source: std::io::Error::other(err.to_string()),
        })
}

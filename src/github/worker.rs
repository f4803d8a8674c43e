//! The delivery worker: applies pending deliveries in the order they arrived, each in
//! one writer transaction with its outcome, then publishes what is due outside it (the
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
/// Deliveries read at a time (bodies may be up to 25 MB each).
const BATCH: usize = 8;

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
        let batch = db::blocking(move || deliveries::pending(&*pool.get()?, BATCH)).await?;
        if batch.is_empty() {
            return Ok(settled);
        }
        let mut progressed = false;
        for delivery in batch {
            if process(state, rules, delivery).await {
                progressed = true;
                settled += 1;
            }
        }
        if !progressed {
            return Ok(settled);
        }
    }
}

/// Applies one delivery; answers whether it was settled (applied, ignored or failed).
async fn process(state: &Arc<AppState>, rules: &Arc<Rules>, delivery: deliveries::Pending) -> bool {
    let now_ms = state.clock.now_ms();
    let id = delivery.delivery_id.clone();
    let work_rules = rules.clone();
    let clock = state.clock.clone();
    let applied = state
        .writer
        .transact(move |tx| {
            if !deliveries::is_pending(tx, &delivery.delivery_id)? {
                return Ok(None);
            }
            match apply::apply(tx, &delivery.event, &delivery.body, &work_rules, now_ms) {
                Ok(outcome) => {
                    // Processing time runs to the end of the upsert (receipt to upsert).
                    let now_ms = clock.now_ms();
                    let (state, note) = match &outcome {
                        Outcome::Applied { .. } => ("applied", None),
                        Outcome::Ignored(why) => ("ignored", Some(why.as_str())),
                    };
                    deliveries::finish(tx, &delivery.delivery_id, state, note, now_ms)?;
                    Ok(Some(Ok(outcome)))
                }
                Err(ApplyError::Payload(why)) => {
                    deliveries::fail(tx, &delivery.delivery_id, &why, true, now_ms)?;
                    Ok(Some(Err(why)))
                }
                Err(ApplyError::Db(err)) => Err(err),
            }
        })
        .await;
    match applied {
        Ok(None) => false,
        Ok(Some(Ok(outcome))) => {
            if let Outcome::Applied { rolled_up, installation } = outcome
                && !rolled_up.is_empty()
            {
                super::comment::publish_all(state, &rolled_up, installation).await;
            }
            true
        }
        Ok(Some(Err(why))) => {
            tracing::warn!(delivery = %id, %why, "webhook delivery failed: its payload cannot be applied");
            true
        }
        Err(err) => {
            tracing::warn!(delivery = %id, %err, "webhook delivery not applied; it will be retried");
            let error = err.to_string();
            let _ = state.writer.transact(move |tx| deliveries::fail(tx, &id, &error, false, now_ms)).await;
            false
        }
    }
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

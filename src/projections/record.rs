//! Recording and removing a projection: the administrator's prediction checked, its
//! baseline measured over the whole days before the period, the price tables and
//! scorers in force stamped on it, and the row stored with its audit entry in the same
//! transaction (docs/cost.md, "Projections").
//!
//! Invariants: the baseline is whole past days (it ends where the period starts, and
//! yesterday at the latest), so it is measured on a reader before the write and no
//! write changes it meanwhile; no projection is stored or removed without its audit row.

use rusqlite::Connection;

use super::Metric;
use super::measure::measure;
use super::store::{self, Projection};
use crate::analytics::query::Period;
use crate::audit::{Action, Entry};
use crate::db::DbError;
use crate::events::partitions::Day;

const DAY_MS: i64 = 86_400_000;

/// What an administrator predicts, as the form gives it.
pub struct Prediction {
    pub title: String,
    pub metric: Metric,
    pub saving_low: f64,
    pub saving_high: f64,
    pub period_from: Day,
    /// Inclusive.
    pub period_to: Day,
    pub baseline_days: i64,
}

/// Why a prediction cannot be recorded: the field at fault and what is wrong.
#[derive(Debug, PartialEq)]
pub struct Refusal {
    pub field: &'static str,
    pub message: String,
}

impl Prediction {
    /// The rules a prediction keeps.
    pub fn check(&self) -> Result<(), Refusal> {
        let refuse = |field, message: String| Err(Refusal { field, message });
        let title = self.title.trim();
        if title.is_empty() || title.chars().count() > 200 {
            return refuse("title", "title must say what is predicted, in at most 200 characters".into());
        }
        if self.saving_low > self.saving_high {
            return refuse(
                "saving_high",
                format!("saving_high ({}) is below saving_low ({})", self.saving_high, self.saving_low),
            );
        }
        if self.period_to.next().start_ms() <= self.period_from.start_ms() {
            return refuse("period_to", "period_to must be on or after period_from".into());
        }
        if !(7..=365).contains(&self.baseline_days) {
            return refuse("baseline_days", "baseline_days must be 7 to 365".into());
        }
        Ok(())
    }
}

/// The projection `prediction` makes at `now_ms`, its baseline measured on `reads`, or
/// why it breaks a rule ([`Prediction::check`]).
/// `price_tables` are the tables in force, as the projection keeps them; the scorers'
/// versions are read here.
pub fn prepare(
    reads: &Connection,
    prediction: Prediction,
    price_tables: String,
    now_ms: i64,
) -> Result<Result<Projection, Refusal>, DbError> {
    if let Err(refusal) = prediction.check() {
        return Ok(Err(refusal));
    }
    let (period_from_ms, period_to_ms) = (prediction.period_from.start_ms(), prediction.period_to.next().start_ms());
    let baseline_to_ms = period_from_ms.min(Day::of_ms(now_ms).start_ms());
    let baseline = Period { from_ms: baseline_to_ms - prediction.baseline_days * DAY_MS, to_ms: baseline_to_ms };
    let scorers = crate::scoring::registry::ALL
        .iter()
        .map(|s| format!("{}@{}", s.name, s.version))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Ok(Projection {
        id: uuid::Uuid::now_v7().to_string(),
        title: prediction.title.trim().to_string(),
        metric: prediction.metric,
        saving_low: prediction.saving_low,
        saving_high: prediction.saving_high,
        baseline_from_ms: baseline.from_ms,
        baseline_to_ms: baseline.to_ms,
        baseline: measure(reads, prediction.metric, baseline)?,
        period_from_ms,
        period_to_ms,
        price_tables,
        scorers,
        recorded_at_ms: now_ms,
    }))
}

/// Stores `projection` with its audit entry.
pub fn record(conn: &Connection, projection: &Projection, actor_id: &str, now_ms: i64) -> Result<(), DbError> {
    store::insert(conn, projection)?;
    let entry = Entry {
        actor_id: Some(actor_id),
        action: Action::ProjectionRecorded,
        subject_user_id: None,
        target: Some(&projection.id),
        detail: serde_json::json!({
            "metric": projection.metric.as_str(), "saving_low": projection.saving_low,
            "saving_high": projection.saving_high, "baseline_value": projection.baseline.value,
            "period_from_ms": projection.period_from_ms, "period_to_ms": projection.period_to_ms,
        }),
    };
    crate::audit::record(conn, &entry, now_ms)?;
    Ok(())
}

/// Removes the projection `id` with its audit entry; false when there is none.
pub fn remove(conn: &Connection, id: &str, actor_id: &str, now_ms: i64) -> Result<bool, DbError> {
    if !store::remove(conn, id)? {
        return Ok(false);
    }
    let entry = Entry {
        actor_id: Some(actor_id),
        action: Action::ProjectionRemoved,
        subject_user_id: None,
        target: Some(id),
        detail: serde_json::json!({}),
    };
    crate::audit::record(conn, &entry, now_ms)?;
    Ok(true)
}

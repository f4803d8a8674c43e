//! A projection's figures over a window, from the aggregates and the GitHub tables
//! through `analytics::query` (interactive runs only: CI and EVAL never count).

use rusqlite::Connection;

use super::{Measured, Metric};
use crate::analytics::query::delivery::MergedPulls;
use crate::analytics::query::{self, Period, Subject};
use crate::db::DbError;

const WEEK_MS: f64 = 7.0 * 86_400_000.0;
const NUSD_PER_USD: f64 = 1e9;

/// The organisation's `metric` and outcome guards over `period`.
pub fn measure(conn: &Connection, metric: Metric, period: Period) -> Result<Measured, DbError> {
    let outcome = MergedPulls::read(conn, &Subject::Organisation, period)?.outcome();
    let value = match metric {
        Metric::CostPerMergedPr => {
            (outcome.merged > 0).then(|| outcome.cost_nusd as f64 / NUSD_PER_USD / outcome.merged as f64)
        }
        Metric::SpendPerWeek => {
            let totals = query::totals(conn, &Subject::Organisation, period)?;
            let weeks = (period.to_ms - period.from_ms) as f64 / WEEK_MS;
            (totals.events > 0).then(|| totals.cost_nusd as f64 / NUSD_PER_USD / weeks)
        }
        Metric::CostPerValueUnit => (outcome.value_milli > 0)
            .then(|| outcome.valued_cost_nusd as f64 / NUSD_PER_USD / (outcome.value_milli as f64 / 1000.0)),
    };
    Ok(Measured {
        value,
        friction: query::organisation_friction(conn, period)?,
        revert_rate: (outcome.merged > 0).then(|| outcome.reverted as f64 / outcome.merged as f64),
    })
}

/// A projection with what happened in its period so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Graded {
    pub projection: super::store::Projection,
    pub actual: Measured,
    pub grade: super::Grade,
    /// Baseline minus actual, in the metric's unit (`None` while pending).
    pub saving: Option<f64>,
    /// The outcome guards that rose with a gain: `friction`, `reverts`.
    pub flags: Vec<&'static str>,
    /// False while the period runs (the grade is provisional).
    pub complete: bool,
}

/// Every projection graded at `now_ms`: measured over its period up to now.
pub fn graded(conn: &Connection, now_ms: i64) -> Result<Vec<Graded>, DbError> {
    super::store::list(conn)?
        .into_iter()
        .map(|projection| {
            let to_ms = projection.period_to_ms.min(now_ms);
            let actual = if to_ms > projection.period_from_ms {
                measure(conn, projection.metric, Period { from_ms: projection.period_from_ms, to_ms })?
            } else {
                Measured::default()
            };
            let (grade, saving, flags) =
                super::grade(projection.saving_low, projection.saving_high, &projection.baseline, &actual);
            let complete = now_ms >= projection.period_to_ms;
            Ok(Graded { projection, actual, grade, saving, flags, complete })
        })
        .collect()
}

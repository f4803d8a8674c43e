//! `projections` (owned here): recorded once, never edited (a changed prediction is a new
//! projection), removable by an administrator; graded when read.

use rusqlite::{Connection, params};

use super::{Measured, Metric};
use crate::db::DbError;

/// What an administrator records, and what was measured and in force when they did.
#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    pub id: String,
    pub title: String,
    pub metric: Metric,
    pub saving_low: f64,
    pub saving_high: f64,
    pub baseline_from_ms: i64,
    pub baseline_to_ms: i64,
    pub baseline: Measured,
    pub period_from_ms: i64,
    pub period_to_ms: i64,
    /// Each agent's price table in force: `agent revision etag-prefix`, comma-separated.
    pub price_tables: String,
    /// Each scorer in force: `name@version`, comma-separated.
    pub scorers: String,
    pub recorded_at_ms: i64,
}

pub fn insert(conn: &Connection, p: &Projection) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO projections (id, title, metric, saving_low, saving_high, baseline_from_ms, baseline_to_ms,
             baseline_value, baseline_friction, baseline_revert_rate, period_from_ms, period_to_ms, price_tables,
             scorers, recorded_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        params![
            p.id,
            p.title,
            p.metric.as_str(),
            p.saving_low,
            p.saving_high,
            p.baseline_from_ms,
            p.baseline_to_ms,
            p.baseline.value,
            p.baseline.friction,
            p.baseline.revert_rate,
            p.period_from_ms,
            p.period_to_ms,
            p.price_tables,
            p.scorers,
            p.recorded_at_ms
        ],
    )?;
    Ok(())
}

/// Every projection, the latest period first (at most 200).
pub fn list(conn: &Connection) -> Result<Vec<Projection>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, metric, saving_low, saving_high, baseline_from_ms, baseline_to_ms, baseline_value,
                baseline_friction, baseline_revert_rate, period_from_ms, period_to_ms, price_tables, scorers,
                recorded_at_ms
         FROM projections ORDER BY period_from_ms DESC, recorded_at_ms DESC LIMIT 200",
    )?;
    let rows = stmt.query_map([], |row| {
        let metric: String = row.get(2)?;
        Ok(Projection {
            id: row.get(0)?,
            title: row.get(1)?,
            metric: Metric::parse(&metric).unwrap_or(Metric::CostPerMergedPr),
            saving_low: row.get(3)?,
            saving_high: row.get(4)?,
            baseline_from_ms: row.get(5)?,
            baseline_to_ms: row.get(6)?,
            baseline: Measured { value: row.get(7)?, friction: row.get(8)?, revert_rate: row.get(9)? },
            period_from_ms: row.get(10)?,
            period_to_ms: row.get(11)?,
            price_tables: row.get(12)?,
            scorers: row.get(13)?,
            recorded_at_ms: row.get(14)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Removes one; whether it existed.
pub fn remove(conn: &Connection, id: &str) -> Result<bool, DbError> {
    Ok(conn.execute("DELETE FROM projections WHERE id = ?1", [id])? > 0)
}

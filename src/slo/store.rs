//! `sli_daily`: one row per UTC day, indicator and key. The recorder's counts are merged
//! into today's rows; a derived indicator's rows (GitHub deliveries, job runs, computed
//! by the caller from their own tables) are replaced whole for a day; rows older than
//! 12 months are removed.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::Tally;
use super::recorder::Key;
use crate::db::DbError;

pub const DAY_MS: i64 = 86_400_000;
/// How long daily rows are kept (docs/slo.md: 12 months).
pub const KEEP_DAYS: i64 = 366;

fn buckets_text(tally: &Tally) -> String {
    if tally.buckets.is_empty() { String::new() } else { serde_json::to_string(&tally.buckets).unwrap_or_default() }
}

fn parse_buckets(text: &str) -> Vec<i64> {
    if text.is_empty() { Vec::new() } else { serde_json::from_str(text).unwrap_or_default() }
}

fn write(conn: &Connection, day_start_ms: i64, indicator: &str, key: &str, tally: &Tally) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO sli_daily (day_start_ms, indicator, key, total, good, latency_buckets) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (day_start_ms, indicator, key) DO UPDATE SET total = excluded.total, good = excluded.good,
             latency_buckets = excluded.latency_buckets",
        params![day_start_ms, indicator, key, tally.total, tally.good, buckets_text(tally)],
    )?;
    Ok(())
}

/// Adds the recorder's counts to the rows of the day of `now_ms`.
pub fn merge(conn: &Connection, now_ms: i64, tallies: &HashMap<Key, Tally>) -> Result<(), DbError> {
    let day = now_ms.div_euclid(DAY_MS) * DAY_MS;
    for ((indicator, key), tally) in tallies {
        let stored = conn
            .query_row(
                "SELECT total, good, latency_buckets FROM sli_daily WHERE day_start_ms = ?1 AND indicator = ?2 AND key = ?3",
                params![day, indicator, key],
                |row| Ok(Tally { total: row.get(0)?, good: row.get(1)?, buckets: parse_buckets(&row.get::<_, String>(2)?) }),
            )
            .optional()?;
        let mut sum = stored.unwrap_or_default();
        sum.merge(tally);
        write(conn, day, indicator, key, &sum)?;
    }
    Ok(())
}

/// Replaces every row of `indicator` on the day starting at `day_start_ms` with
/// `tallies` (by key): a derived indicator is recomputed whole from its own table.
pub fn replace_day(
    conn: &Connection,
    day_start_ms: i64,
    indicator: &str,
    tallies: &[(String, Tally)],
) -> Result<(), DbError> {
    conn.execute("DELETE FROM sli_daily WHERE day_start_ms = ?1 AND indicator = ?2", params![day_start_ms, indicator])?;
    for (key, tally) in tallies.iter().filter(|(_, tally)| tally.total > 0) {
        write(conn, day_start_ms, indicator, key, tally)?;
    }
    Ok(())
}

/// Removes the rows older than 12 months before `now_ms`.
pub fn prune(conn: &Connection, now_ms: i64) -> Result<(), DbError> {
    let today = now_ms.div_euclid(DAY_MS) * DAY_MS;
    conn.execute("DELETE FROM sli_daily WHERE day_start_ms < ?1", [today - KEEP_DAYS * DAY_MS])?;
    Ok(())
}

/// One stored row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DayRow {
    pub day_start_ms: i64,
    pub indicator: String,
    pub key: String,
    pub tally: Tally,
}

/// The rows of the days in `[from_ms, to_ms)`.
pub fn rows(conn: &Connection, from_ms: i64, to_ms: i64) -> Result<Vec<DayRow>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT day_start_ms, indicator, key, total, good, latency_buckets FROM sli_daily
         WHERE day_start_ms >= ?1 AND day_start_ms < ?2 ORDER BY day_start_ms",
    )?;
    let rows = stmt.query_map(params![from_ms, to_ms], |row| {
        Ok(DayRow {
            day_start_ms: row.get(0)?,
            indicator: row.get(1)?,
            key: row.get(2)?,
            tally: Tally { total: row.get(3)?, good: row.get(4)?, buckets: parse_buckets(&row.get::<_, String>(5)?) },
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

//! The usage aggregates (`agg_usage_hourly` and `agg_usage_daily`, owned here): per hour
//! and per UTC day, user, agent and model, the events, prompts, sessions started, each
//! kind of token and the cost of `INTERACTIVE` runs.
//!
//! Invariant: a day's row is the sum of its hours' rows. Both are written here, in the
//! caller's transaction, from the same rows; the hourly table serves periods that are not
//! whole days (alerts), the daily one every page (their periods are whole days), so a
//! 90-day page reads one row a day instead of one an hour. [`table_for`] picks.

use rusqlite::{Connection, params};

use super::query::Period;
use crate::db::DbError;
use crate::events::partitions::HourlyUsage;

const DAY_MS: i64 = 86_400_000;

/// The usage table to read a period from: the daily one when the period is whole UTC days.
pub fn table_for(period: Period) -> &'static str {
    if period.from_ms.rem_euclid(DAY_MS) == 0 && period.to_ms.rem_euclid(DAY_MS) == 0 {
        "agg_usage_daily"
    } else {
        "agg_usage_hourly"
    }
}

/// Replaces a day's rows (its 24 hours and the day) with `rows`, all of which fall in it.
pub fn replace_day(conn: &Connection, day_start_ms: i64, rows: &[HourlyUsage]) -> Result<usize, DbError> {
    conn.prepare_cached("DELETE FROM agg_usage_hourly WHERE bucket_start_ms >= ?1 AND bucket_start_ms < ?2")?
        .execute([day_start_ms, day_start_ms + DAY_MS])?;
    conn.prepare_cached("DELETE FROM agg_usage_daily WHERE bucket_start_ms = ?1")?.execute([day_start_ms])?;
    // The day is empty now, so adding is inserting.
    add_rows(conn, rows)?;
    Ok(rows.len())
}

const ADD_SQL: &str = "(bucket_start_ms, user_id, agent_type, model, events, prompts,
         sessions_started, input_tokens, output_tokens, cache_read_tokens, cache_write_5m_tokens,
         cache_write_1h_tokens, reasoning_tokens, cost_nusd)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
     ON CONFLICT (bucket_start_ms, user_id, agent_type, model) DO UPDATE SET
         events = events + excluded.events, prompts = prompts + excluded.prompts,
         sessions_started = sessions_started + excluded.sessions_started,
         input_tokens = input_tokens + excluded.input_tokens,
         output_tokens = output_tokens + excluded.output_tokens,
         cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
         cache_write_5m_tokens = cache_write_5m_tokens + excluded.cache_write_5m_tokens,
         cache_write_1h_tokens = cache_write_1h_tokens + excluded.cache_write_1h_tokens,
         reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
         cost_nusd = cost_nusd + excluded.cost_nusd";

/// Adds `rows` (new events' sums) to their hours' rows and to their days' rows: the
/// upsert adds into the day as into the hour, so a day is its hours' sum.
pub fn add_rows(conn: &Connection, rows: &[HourlyUsage]) -> Result<(), DbError> {
    let mut hourly = conn.prepare_cached(&format!("INSERT INTO agg_usage_hourly {ADD_SQL}"))?;
    let mut daily = conn.prepare_cached(&format!("INSERT INTO agg_usage_daily {ADD_SQL}"))?;
    for row in rows {
        add(&mut hourly, row.bucket_start_ms, row)?;
        add(&mut daily, row.bucket_start_ms.div_euclid(DAY_MS) * DAY_MS, row)?;
    }
    Ok(())
}

/// Adds `row`'s figures to the row of `bucket_start_ms` (its hour or its day).
fn add(stmt: &mut rusqlite::CachedStatement<'_>, bucket_start_ms: i64, row: &HourlyUsage) -> Result<(), DbError> {
    stmt.execute(params![
        bucket_start_ms,
        row.user_id,
        row.agent_type,
        row.model,
        row.events,
        row.prompts,
        row.sessions_started,
        row.usage.input_tokens,
        row.usage.output_tokens,
        row.usage.cache_read_tokens,
        row.usage.cache_write_5m_tokens,
        row.usage.cache_write_1h_tokens,
        row.usage.reasoning_tokens,
        row.cost_nusd,
    ])?;
    Ok(())
}

//! The hourly usage aggregate (`agg_usage_hourly`, owned here): per hour, user, agent and
//! model, the events, prompts, sessions started, each kind of token and the cost of
//! `INTERACTIVE` runs.

use rusqlite::{Connection, params};

use crate::db::DbError;
use crate::events::partitions::HourlyUsage;

/// Replaces the rows of `hours` with `rows` (all of which fall in those hours).
pub fn replace_hours(conn: &Connection, hours: &[i64], rows: &[HourlyUsage]) -> Result<usize, DbError> {
    let mut clear = conn.prepare_cached("DELETE FROM agg_usage_hourly WHERE bucket_start_ms = ?1")?;
    for hour in hours {
        clear.execute([hour])?;
    }
    // The hours are empty now, so adding is inserting.
    add_rows(conn, rows)?;
    Ok(rows.len())
}

/// Adds `rows` (new events' sums) to their hours' rows.
pub fn add_rows(conn: &Connection, rows: &[HourlyUsage]) -> Result<(), DbError> {
    let mut add = conn.prepare_cached(
        "INSERT INTO agg_usage_hourly (bucket_start_ms, user_id, agent_type, model, events, prompts,
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
             cost_nusd = cost_nusd + excluded.cost_nusd",
    )?;
    for row in rows {
        add.execute(params![
            row.bucket_start_ms,
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
    }
    Ok(())
}

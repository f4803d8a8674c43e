//! The daily tools aggregate (`agg_tools_daily`, owned here): per day, user, agent, tool,
//! tool server, skill and slash command, the finished calls of `INTERACTIVE` runs with
//! their errors, denials, time and bytes in and out.

use rusqlite::{Connection, params};

use crate::db::DbError;
use crate::events::partitions::DailyTools;

/// Replaces the rows of the day starting at `day_start_ms` with `rows`.
pub fn replace_day(conn: &Connection, day_start_ms: i64, rows: &[DailyTools]) -> Result<usize, DbError> {
    conn.prepare_cached("DELETE FROM agg_tools_daily WHERE day_start_ms = ?1")?.execute([day_start_ms])?;
    // The day is empty now, so adding is inserting.
    add_rows(conn, day_start_ms, rows)?;
    Ok(rows.len())
}

/// Adds `rows` (new calls' sums) to the day's rows.
pub fn add_rows(conn: &Connection, day_start_ms: i64, rows: &[DailyTools]) -> Result<(), DbError> {
    let mut add = conn.prepare_cached(
        "INSERT INTO agg_tools_daily (day_start_ms, user_id, agent_type, tool_name, tool_server, skill,
             slash_command, calls, errors, denials, duration_ms, input_bytes, output_bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (day_start_ms, user_id, agent_type, tool_name, tool_server, skill, slash_command) DO UPDATE SET
             calls = calls + excluded.calls, errors = errors + excluded.errors, denials = denials + excluded.denials,
             duration_ms = duration_ms + excluded.duration_ms, input_bytes = input_bytes + excluded.input_bytes,
             output_bytes = output_bytes + excluded.output_bytes",
    )?;
    for row in rows {
        add.execute(params![
            day_start_ms,
            row.user_id,
            row.agent_type,
            row.tool_name,
            row.tool_server,
            row.skill,
            row.slash_command,
            row.calls,
            row.errors,
            row.denials,
            row.duration_ms,
            row.input_bytes,
            row.output_bytes,
        ])?;
    }
    Ok(())
}

/// A skill's or a tool server's calls over a period, organisation-wide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubjectCalls {
    pub name: String,
    pub calls: i64,
    pub errors: i64,
    pub denials: i64,
    /// How many people used it (a subject used by fewer than five is not scored: it
    /// would describe those people).
    pub people: i64,
}

/// Calls per skill (`by_skill`) or per tool server, for days in `[from_ms, to_ms)`.
pub fn calls_by_subject(
    conn: &Connection,
    by_skill: bool,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<SubjectCalls>, DbError> {
    let column = if by_skill { "skill" } else { "tool_server" };
    let mut stmt = conn.prepare(&format!(
        "SELECT {column}, sum(calls), sum(errors), sum(denials), count(DISTINCT user_id) FROM agg_tools_daily
         WHERE {column} <> '' AND day_start_ms >= ?1 AND day_start_ms < ?2 GROUP BY {column} ORDER BY {column}"
    ))?;
    let rows = stmt.query_map(params![from_ms, to_ms], |r| {
        Ok(SubjectCalls { name: r.get(0)?, calls: r.get(1)?, errors: r.get(2)?, denials: r.get(3)?, people: r.get(4)? })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Tool calls and failed calls over every row of the aggregate on the days from `first_day_ms` to
/// `last_day_ms` (both day starts, inclusive).
pub fn calls_and_errors(conn: &Connection, first_day_ms: i64, last_day_ms: i64) -> Result<(i64, i64), DbError> {
    Ok(conn.query_row(
        "SELECT coalesce(sum(calls), 0), coalesce(sum(errors), 0) FROM agg_tools_daily
         WHERE day_start_ms >= ?1 AND day_start_ms <= ?2",
        params![first_day_ms, last_day_ms],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?)
}

//! The daily tools aggregate (`agg_tools_daily`, owned here): per day, user, agent, tool,
//! tool server, skill and slash command, the finished calls of `INTERACTIVE` runs with
//! their errors, denials, time and bytes in and out.

use rusqlite::{Connection, params};

use crate::db::DbError;
use crate::events::partitions::DailyTools;

/// Replaces the rows of the day starting at `day_start_ms` with `rows`.
pub fn replace_day(conn: &Connection, day_start_ms: i64, rows: &[DailyTools]) -> Result<usize, DbError> {
    conn.prepare_cached("DELETE FROM agg_tools_daily WHERE day_start_ms = ?1")?.execute([day_start_ms])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO agg_tools_daily (day_start_ms, user_id, agent_type, tool_name, tool_server, skill,
             slash_command, calls, errors, denials, duration_ms, input_bytes, output_bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?;
    for row in rows {
        insert.execute(params![
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
    Ok(rows.len())
}

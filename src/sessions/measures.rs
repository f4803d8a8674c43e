//! Organisation-wide measures over interactive sessions that the alert rules watch:
//! events of models no price table knows, and the spend that went to small work.
//!
//! Invariant: only `INTERACTIVE` sessions are counted (CI and EVAL runs never reach a
//! developer-behaviour figure).

use rusqlite::Connection;

use crate::db::DbError;

/// Events of unknown models in interactive sessions active since `since_ms`.
pub fn unknown_model_events_since(conn: &Connection, since_ms: i64) -> Result<i64, DbError> {
    Ok(conn.query_row(
        "SELECT coalesce(sum(unknown_model_events), 0) FROM sessions
         WHERE last_event_ms >= ?1 AND run_kind = 'INTERACTIVE'",
        [since_ms],
        |row| row.get(0),
    )?)
}

/// The spend of interactive sessions started since `since_ms` that were questions or
/// single edits, and the spend of all of them, in nano-dollars.
pub fn small_work_spend_since(conn: &Connection, since_ms: i64) -> Result<(i64, i64), DbError> {
    Ok(conn.query_row(
        "SELECT coalesce(sum(CASE WHEN shape_label IN ('question', 'single_edit') THEN cost_nusd END), 0),
                coalesce(sum(cost_nusd), 0)
         FROM sessions WHERE first_event_ms >= ?1 AND run_kind = 'INTERACTIVE'",
        [since_ms],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?)
}

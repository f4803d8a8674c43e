//! Abandoned sessions (the `sweep-abandoned` job): a session with no event for a quiet
//! time and no end is closed with `end_reason = 'abandoned'`, ending at its last event.
//!
//! Invariants: only open sessions are touched, and an abandoned session is not final: the
//! fold reopens it when a later event arrives (`fold::UPSERT_SQL`), or marks it `ended`
//! when its end arrives. Nothing else of the row changes, so the sweep never alters a
//! session's figures.

use rusqlite::Connection;

use crate::db::DbError;

/// Closes every open session whose last event is older than `quiet_ms` before `now_ms`;
/// returns how many.
pub fn close_abandoned(conn: &Connection, quiet_ms: i64, now_ms: i64) -> Result<usize, DbError> {
    Ok(conn.execute(
        "UPDATE sessions SET ended_at_ms = last_event_ms, end_reason = 'abandoned'
         WHERE ended_at_ms IS NULL AND last_event_ms < ?1",
        [now_ms.saturating_sub(quiet_ms)],
    )?)
}

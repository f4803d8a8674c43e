//! The owner's sharing switch for one session's transcript (`sessions.transcript_shared`):
//! shared, not shared, or following their `share_transcripts` flag. The audited read
//! (`read::authorize`) takes the switch before the flag.
//!
//! Invariant: only the session's owner changes it (the owner is in the `WHERE`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::db::DbError;

/// Sets the switch of the owner's session; whether it is theirs.
pub fn set(conn: &Connection, owner_id: &str, session_id: &str, shared: Option<bool>) -> Result<bool, DbError> {
    Ok(conn.execute(
        "UPDATE sessions SET transcript_shared = ?3 WHERE id = ?1 AND user_id = ?2",
        params![session_id, owner_id, shared],
    )? == 1)
}

/// The switch of a session: `Some(None)` when it follows the owner's flag, `None` when
/// there is no such session of this owner.
pub fn get(conn: &Connection, owner_id: &str, session_id: &str) -> Result<Option<Option<bool>>, DbError> {
    Ok(conn
        .query_row(
            "SELECT transcript_shared FROM sessions WHERE id = ?1 AND user_id = ?2",
            params![session_id, owner_id],
            |row| row.get::<_, Option<bool>>(0),
        )
        .optional()?)
}

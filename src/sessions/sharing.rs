//! The owner's sharing switch for one session's transcript (`sessions.transcript_shared`):
//! shared, not shared, or following their `share_transcripts` flag. The audited read
//! (`read::authorize`) takes the switch before the flag. And the other people's shared
//! transcripts a caller may search (`/org/search`).
//!
//! Invariant: only the session's owner changes it (the owner is in the `WHERE`).

use rusqlite::{Connection, OptionalExtension, params};

use crate::access::roles::OrgRole;
use crate::db::DbError;

/// Sets the switch of the owner's session; whether it is theirs.
pub fn set(conn: &Connection, owner_id: &str, session_id: &str, shared: Option<bool>) -> Result<bool, DbError> {
    Ok(conn.execute(
        "UPDATE sessions SET transcript_shared = ?3 WHERE id = ?1 AND user_id = ?2",
        params![session_id, owner_id, shared],
    )? == 1)
}

/// Whose session it is (for a grant asked on a session: the owner is not shown to the
/// requester until an administrator approves).
pub fn owner_of(conn: &Connection, session_id: &str) -> Result<Option<String>, DbError> {
    Ok(conn.query_row("SELECT user_id FROM sessions WHERE id = ?1", [session_id], |row| row.get(0)).optional()?)
}

/// Whether the session is the person's.
pub fn is_owned_by(conn: &Connection, session_id: &str, user_id: &str) -> Result<bool, DbError> {
    Ok(get(conn, user_id, session_id)?.is_some())
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

/// The sessions of other people whose transcript the caller could open and whose owner
/// shared it (the session's switch, else the owner's `share_transcripts`): the scope of
/// `/org/search` beside the caller's own. The same rules as `read::authorize`
/// for a transcript: never for `VIEWER_AGGREGATE`; a grant (the person's, or this
/// session's) held by a role that may request grants, or team lead over the owner with
/// their `team_drill_in` on. Each hit shown is still read through `authorize`, which
/// audits it.
pub fn shared_transcript_sessions(
    conn: &Connection,
    caller_id: &str,
    role: OrgRole,
    now_ms: i64,
) -> Result<Vec<String>, DbError> {
    if !role.may_reach_individual_sessions() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "WITH RECURSIVE {}
         SELECT s.id FROM sessions s LEFT JOIN visibility_policies v ON v.user_id = s.user_id
         WHERE s.user_id <> ?2 AND s.transcript_path IS NOT NULL
           AND coalesce(s.transcript_shared, v.share_transcripts, 0) = 1
           AND ((coalesce(v.team_drill_in, 1) = 1 AND s.user_id IN led_people)
                OR (?3 AND EXISTS (SELECT 1 FROM access_grants g
                                   WHERE g.requester_id = ?2 AND g.subject_id = s.user_id AND g.status = 'APPROVED'
                                     AND g.expires_at_ms > ?1 AND (g.scope = 'USER' OR g.session_id = s.id))))",
        crate::access::drill_in::LED
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let ids = stmt.query_map(params![now_ms, caller_id, role.may_request_grants()], |row| row.get(0))?;
    Ok(ids.collect::<Result<_, _>>()?)
}

//! Which sessions are due for trajectory scoring, and the two figures scoring writes on
//! the session row (`friction_score`, `shape_label`).
//!
//! Invariant: only ended `INTERACTIVE` sessions are scored; a session is due again when
//! its event count changed since it was scored, or the scorers' version did.

use rusqlite::{Connection, params};

use crate::db::DbError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToScore {
    pub id: String,
    pub user_id: String,
    pub agent_type: String,
    pub agent_session_id: String,
    pub first_event_ms: i64,
    pub last_event_ms: i64,
    /// The session's event count when it was found due (recorded with its scores).
    pub event_count: i64,
    /// Its stored transcript (relative to the data directory), if it has one.
    pub transcript_path: Option<String>,
}

/// Ended interactive sessions not scored at `version`, or with events added since they
/// were (every ended interactive session when `all`).
pub fn due(conn: &Connection, version: &str, all: bool) -> Result<Vec<ToScore>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT s.id, s.user_id, s.agent_type, s.agent_session_id, s.first_event_ms, s.last_event_ms, s.event_count,
                s.transcript_path
         FROM sessions s
         WHERE s.run_kind = 'INTERACTIVE' AND s.ended_at_ms IS NOT NULL
           AND (?2 OR s.scored_version IS NOT ?1 OR s.scored_event_count IS NOT s.event_count)
         ORDER BY s.first_event_ms",
    )?;
    let rows = stmt.query_map(params![version, all], |r| {
        Ok(ToScore {
            id: r.get(0)?,
            user_id: r.get(1)?,
            agent_type: r.get(2)?,
            agent_session_id: r.get(3)?,
            first_event_ms: r.get(4)?,
            last_event_ms: r.get(5)?,
            event_count: r.get(6)?,
            transcript_path: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Each person's scored interactive sessions that started in `[from_ms, to_ms)`: the sum
/// of their friction and how many there were (for the daily aggregate).
pub fn friction_by_person(conn: &Connection, from_ms: i64, to_ms: i64) -> Result<Vec<(String, f64, i64)>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT user_id, sum(friction_score), count(*) FROM sessions
         WHERE first_event_ms >= ?1 AND first_event_ms < ?2 AND run_kind = 'INTERACTIVE' AND friction_score IS NOT NULL
         GROUP BY user_id",
    )?;
    let rows = stmt.query_map(params![from_ms, to_ms], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Records a session's friction and shape, and what the scoring saw (the version and
/// the event count it was found due with: events that arrived since make it due again).
pub fn set_trajectory(
    conn: &Connection,
    session: &ToScore,
    version: &str,
    friction: f64,
    shape: &str,
) -> Result<(), DbError> {
    conn.prepare_cached(
        "UPDATE sessions SET friction_score = ?2, shape_label = ?3, scored_version = ?4, scored_event_count = ?5
         WHERE id = ?1",
    )?
    .execute(params![session.id, friction, shape, version, session.event_count])?;
    Ok(())
}

//! What the incremental aggregate refresh (`analytics::refresh`) reads of a partition:
//! the interactive events committed after a sequence (through the partial index
//! `events_by_commit`), one session's event times, and every session's last time and
//! active time for a whole-day rebuild.
//!
//! Invariant: [`snapshot`] runs its reads in one read transaction with the partition's
//! `last_seq`, so the rows and the sequence they reach are the same instant; the refresh
//! records that sequence as folded, and the next increment starts after it.

use std::collections::BTreeMap;

use rusqlite::Connection;

use super::ACTIVE_GAP_CAP_MS;
use crate::db::DbError;
use crate::model::Usage;

/// Runs `reads` on one snapshot of the partition, handing it the snapshot's last
/// commit sequence.
pub fn snapshot<T>(
    conn: &Connection,
    reads: impl FnOnce(&Connection, i64) -> Result<T, DbError>,
) -> Result<T, DbError> {
    conn.execute_batch("BEGIN")?;
    let result = super::last_seq(conn).and_then(|last_seq| reads(conn, last_seq));
    // A read transaction has nothing to keep; ending it is what matters.
    let _ = conn.execute_batch("COMMIT");
    result
}

/// One interactive event, reduced to what the aggregates add up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AggregateRow {
    pub ts_ms: i64,
    pub user_id: String,
    pub agent_type: String,
    pub session_id: String,
    pub event_type: String,
    pub model: String,
    pub notification_kind: Option<String>,
    pub permission_mode: Option<String>,
    pub response_ms: Option<i64>,
    pub tool_name: String,
    pub tool_server: String,
    pub tool_skill: String,
    pub tool_slash_command: String,
    pub tool_status: Option<String>,
    pub tool_duration_ms: i64,
    pub tool_input_bytes: i64,
    pub tool_output_bytes: i64,
    pub usage: Usage,
    pub cost_nusd: i64,
}

/// The `INTERACTIVE` events committed after `after_seq`.
pub fn interactive_after_seq(conn: &Connection, after_seq: i64) -> Result<Vec<AggregateRow>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT ts_ms, user_id, agent_type, session_id, type, coalesce(model, ''), notification_kind,
                permission_mode, response_ms, coalesce(tool_name, ''), coalesce(tool_server, ''),
                coalesce(tool_skill, ''), coalesce(tool_slash_command, ''), tool_status,
                coalesce(tool_duration_ms, 0), coalesce(tool_input_bytes, 0), coalesce(tool_output_bytes, 0),
                input_tokens, output_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens,
                reasoning_tokens, cost_nusd
         FROM events
         WHERE commit_seq > ?1 AND run_kind = 'INTERACTIVE'",
    )?;
    let rows = stmt.query_map([after_seq], |row| {
        Ok(AggregateRow {
            ts_ms: row.get(0)?,
            user_id: row.get(1)?,
            agent_type: row.get(2)?,
            session_id: row.get(3)?,
            event_type: row.get(4)?,
            model: row.get(5)?,
            notification_kind: row.get(6)?,
            permission_mode: row.get(7)?,
            response_ms: row.get(8)?,
            tool_name: row.get(9)?,
            tool_server: row.get(10)?,
            tool_skill: row.get(11)?,
            tool_slash_command: row.get(12)?,
            tool_status: row.get(13)?,
            tool_duration_ms: row.get(14)?,
            tool_input_bytes: row.get(15)?,
            tool_output_bytes: row.get(16)?,
            usage: Usage {
                input_tokens: row.get(17)?,
                output_tokens: row.get(18)?,
                cache_read_tokens: row.get(19)?,
                cache_write_5m_tokens: row.get(20)?,
                cache_write_1h_tokens: row.get(21)?,
                reasoning_tokens: row.get(22)?,
            },
            cost_nusd: row.get(23)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The times of one session's interactive events in this day, in order.
pub fn session_times(
    conn: &Connection,
    user_id: &str,
    agent_type: &str,
    session_id: &str,
) -> Result<Vec<i64>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT ts_ms FROM events
         WHERE user_id = ?1 AND agent_type = ?2 AND session_id = ?3 AND run_kind = 'INTERACTIVE' ORDER BY ts_ms",
    )?;
    let rows = stmt.query_map([user_id, agent_type, session_id], |row| row.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One session's day: its last event's time and its active time (the gaps between its
/// events, each counted up to [`ACTIVE_GAP_CAP_MS`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionDay {
    pub user_id: String,
    pub agent_type: String,
    pub session_id: String,
    pub last_ts_ms: i64,
    pub active_ms: i64,
}

/// The active time of a session whose events, in order, are `times`.
pub fn active_ms(times: &[i64]) -> i64 {
    times.windows(2).map(|pair| (pair[1] - pair[0]).clamp(0, ACTIVE_GAP_CAP_MS)).sum()
}

/// Every interactive session of the partition (a partition holds one day), in the
/// order of the session index.
pub fn session_days(conn: &Connection) -> Result<Vec<SessionDay>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT user_id, agent_type, session_id, ts_ms FROM events WHERE run_kind = 'INTERACTIVE'
         ORDER BY user_id, agent_type, session_id, ts_ms",
    )?;
    let mut rows = stmt.query([])?;
    let mut sessions: Vec<SessionDay> = Vec::new();
    while let Some(row) = rows.next()? {
        let (user_id, agent_type, session_id, ts_ms): (String, String, String, i64) =
            (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
        match sessions.last_mut() {
            Some(last)
                if (last.user_id.as_str(), last.agent_type.as_str(), last.session_id.as_str())
                    == (user_id.as_str(), agent_type.as_str(), session_id.as_str()) =>
            {
                last.active_ms += (ts_ms - last.last_ts_ms).clamp(0, ACTIVE_GAP_CAP_MS);
                last.last_ts_ms = ts_ms;
            }
            _ => sessions.push(SessionDay { user_id, agent_type, session_id, last_ts_ms: ts_ms, active_ms: 0 }),
        }
    }
    Ok(sessions)
}

/// Active time per person, summed over their sessions.
pub fn active_by_person(sessions: &[SessionDay]) -> BTreeMap<&str, i64> {
    let mut active = BTreeMap::new();
    for session in sessions {
        *active.entry(session.user_id.as_str()).or_default() += session.active_ms;
    }
    active
}

//! Reads of one session's events: the event store's narrow seam for readers (a
//! ClickHouse back end would replace this file and `partitions`, not its callers).
//!
//! Invariant: every read takes a [`SessionScope`], implemented only by the audited
//! read's proof (`sessions::read::SessionRead`), so events are read only for a
//! session the caller was allowed to read (the layering test checks there is one
//! implementor).

use std::path::Path;

use rusqlite::{Connection, params};
use uuid::Uuid;

use super::partitions::{Day, SELECT_COLUMNS, StoredEvent, dictionary, open_for_read, read_row};
use crate::db::DbError;
use crate::model::AgentType;

/// The key of one session a reader may read.
pub trait SessionScope {
    fn owner_id(&self) -> &str;
    fn agent_type(&self) -> AgentType;
    fn agent_session_id(&self) -> &str;
}

/// One session's events in this partition, ordered by (time, id), strictly after
/// `cursor` when given, at most `limit`. The proof (`sessions::read`) is the caller's
/// right to read this session.
pub fn session_events_after(
    conn: &Connection,
    proof: &impl SessionScope,
    cursor: Option<(i64, Uuid)>,
    limit: usize,
) -> Result<Vec<StoredEvent>, DbError> {
    let dictionary = dictionary(conn)?;
    let (after_ts, after_id) = cursor.unwrap_or((i64::MIN, Uuid::nil()));
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {SELECT_COLUMNS} FROM events
         WHERE user_id = ?1 AND agent_type = ?2 AND session_id = ?3
           AND (ts_ms > ?4 OR (ts_ms = ?4 AND event_id > ?5))
         ORDER BY ts_ms, event_id LIMIT ?6"
    ))?;
    let rows = stmt.query_map(
        params![
            proof.owner_id(),
            proof.agent_type().as_str(),
            proof.agent_session_id(),
            after_ts,
            after_id.as_bytes().as_slice(),
            limit as i64
        ],
        |row| read_row(row, dictionary.as_deref()),
    )?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// [`session_events_after`] over every day partition from `first_ms` to `last_ms` (the
/// session's span), in order, at most `limit` events in all.
pub fn session_events_across(
    data_dir: &Path,
    proof: &impl SessionScope,
    first_ms: i64,
    last_ms: i64,
    cursor: Option<(i64, Uuid)>,
    limit: usize,
) -> Result<Vec<StoredEvent>, DbError> {
    let mut out = Vec::new();
    let mut day = Day::of_ms(first_ms);
    let last_day = Day::of_ms(last_ms);
    while day <= last_day && out.len() < limit {
        if let Some(conn) = open_for_read(data_dir, day)? {
            out.extend(session_events_after(&conn, proof, cursor, limit - out.len())?);
        }
        if day.next() == day {
            break;
        }
        day = day.next();
    }
    Ok(out)
}

/// One page of a session's events, and the cursor that continues after it.
pub struct EventPage {
    pub events: Vec<StoredEvent>,
    /// `<ts_ms>_<event_id>` of the page's last event when more follow.
    pub next_cursor: Option<String>,
}

/// Reads a cursor this module issued ([`EventPage::next_cursor`]); `None` for anything
/// else, which the API answers with 400 rather than silently starting over.
pub fn parse_event_cursor(text: &str) -> Option<(i64, Uuid)> {
    let (ts, id) = text.split_once('_')?;
    Some((ts.parse().ok()?, Uuid::parse_str(id).ok()?))
}

/// A page of at most `limit` of a session's events strictly after `cursor`: the one
/// paging of both event routes (the hook's own and the audited web read).
pub fn session_events_page(
    data_dir: &Path,
    proof: &impl SessionScope,
    first_ms: i64,
    last_ms: i64,
    cursor: Option<(i64, Uuid)>,
    limit: usize,
) -> Result<EventPage, DbError> {
    // Days before the cursor's hold nothing after it; a cursor past the session's end
    // (no cursor we issue) has nothing after it at all, and must not walk the calendar.
    if cursor.is_some_and(|(ts, _)| ts > last_ms) {
        return Ok(EventPage { events: Vec::new(), next_cursor: None });
    }
    let from_ms = cursor.map_or(first_ms, |(ts, _)| ts.max(first_ms));
    let mut events = session_events_across(data_dir, proof, from_ms, last_ms, cursor, limit + 1)?;
    let more = events.len() > limit;
    events.truncate(limit);
    let next_cursor =
        if more { events.last().map(|e| format!("{}_{}", e.event.ts_ms, e.event.event_id)) } else { None };
    Ok(EventPage { events, next_cursor })
}

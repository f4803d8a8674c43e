//! What the agents send that no mapping uses, so the next vendor change is visible the
//! day it arrives: per agent and agent version, the OTLP event names we skip and the
//! attributes of mapped events no mapping reads, each with how many records carried it
//! and when it was first and last seen. Owns `adapter_unmapped`.
//!
//! The OTLP path notes what an export held in memory ([`Recorder::note`], one lock per
//! export, nothing written); the service-level flush (`app::slis`) merges the counts into
//! the table through the writer every minute, so the ingest path never waits on it.
//!
//! Invariants: every name is a client's text, so it is kept printable and short
//! ([`MAX_NAME_CHARS`]); what is held in memory is bounded ([`MAX_PENDING`] keys, the
//! rest of a minute dropped) and so is the table ([`MAX_ROWS`], the longest unseen going
//! first): an exporter inventing names cannot grow either without end.

use std::collections::HashMap;
use std::sync::Mutex;

use rusqlite::{Connection, params};

use crate::db::DbError;
pub use crate::model::sightings::{MAX_NAME_CHARS, Unmapped, UnmappedKind as Kind};

/// The most distinct names held between two flushes.
pub const MAX_PENDING: usize = 2_000;
/// The most rows kept.
pub const MAX_ROWS: i64 = 5_000;

#[derive(Debug, Clone, Copy)]
struct Seen {
    records: u64,
    first_ms: i64,
    last_ms: i64,
}

/// The counts since the last flush.
#[derive(Debug, Default)]
pub struct Recorder {
    pending: Mutex<HashMap<Unmapped, Seen>>,
}

impl Recorder {
    /// Adds one export's sightings, each with its record count.
    pub fn note(&self, sightings: Vec<(Unmapped, u64)>, now_ms: i64) {
        if sightings.is_empty() {
            return;
        }
        let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for (key, records) in sightings {
            if let Some(seen) = pending.get_mut(&key) {
                seen.records += records;
                seen.last_ms = now_ms;
            } else if pending.len() < MAX_PENDING {
                pending.insert(key, Seen { records, first_ms: now_ms, last_ms: now_ms });
            }
        }
    }

    /// The counts held, leaving none.
    pub fn take(&self) -> Vec<(Unmapped, u64, i64, i64)> {
        let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        pending.drain().map(|(key, seen)| (key, seen.records, seen.first_ms, seen.last_ms)).collect()
    }
}

/// Adds `taken` ([`Recorder::take`]) to the table and bounds it.
pub fn merge(tx: &Connection, taken: &[(Unmapped, u64, i64, i64)]) -> Result<(), DbError> {
    if taken.is_empty() {
        return Ok(());
    }
    let mut upsert = tx.prepare_cached(
        "INSERT INTO adapter_unmapped (agent_type, agent_version, kind, event_name, name, records, first_seen_ms, last_seen_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (agent_type, agent_version, kind, event_name, name) DO UPDATE SET
             records = records + excluded.records,
             first_seen_ms = min(first_seen_ms, excluded.first_seen_ms),
             last_seen_ms = max(last_seen_ms, excluded.last_seen_ms)",
    )?;
    for (key, records, first_ms, last_ms) in taken {
        upsert.execute(params![
            key.agent.as_str(),
            key.version,
            key.kind.as_str(),
            key.event,
            key.name,
            *records as i64,
            first_ms,
            last_ms
        ])?;
    }
    // The longest unseen rows beyond the bound go (the table has no rowid: by its key).
    tx.execute(
        "DELETE FROM adapter_unmapped WHERE (agent_type, agent_version, kind, event_name, name) IN (
             SELECT agent_type, agent_version, kind, event_name, name FROM adapter_unmapped
             ORDER BY last_seen_ms DESC LIMIT -1 OFFSET ?1)",
        [MAX_ROWS],
    )?;
    Ok(())
}

/// One row of the drift view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmappedLine {
    pub agent_type: String,
    pub agent_version: String,
    pub kind: String,
    pub event_name: String,
    pub name: String,
    pub records: i64,
    pub first_seen_ms: i64,
    pub last_seen_ms: i64,
    /// The earliest other version of the agent this name was also seen in, if any: a
    /// name no earlier version sent is what changed.
    pub also_in: Option<String>,
}

/// What was seen in the last 30 days, newest first (at most 500 rows).
pub fn recent(conn: &Connection, now_ms: i64) -> Result<Vec<UnmappedLine>, DbError> {
    let since = now_ms - 30 * 86_400_000;
    let mut stmt = conn.prepare_cached(
        "SELECT u.agent_type, u.agent_version, u.kind, u.event_name, u.name, u.records, u.first_seen_ms, u.last_seen_ms,
                (SELECT min(o.agent_version) FROM adapter_unmapped o
                  WHERE o.agent_type = u.agent_type AND o.kind = u.kind AND o.event_name = u.event_name
                    AND o.name = u.name AND o.agent_version <> u.agent_version AND o.first_seen_ms <= u.first_seen_ms)
         FROM adapter_unmapped u WHERE u.last_seen_ms >= ?1
         ORDER BY u.first_seen_ms DESC, u.agent_type, u.agent_version, u.kind, u.event_name, u.name LIMIT 500",
    )?;
    let rows = stmt.query_map([since], |row| {
        Ok(UnmappedLine {
            agent_type: row.get(0)?,
            agent_version: row.get(1)?,
            kind: row.get(2)?,
            event_name: row.get(3)?,
            name: row.get(4)?,
            records: row.get(5)?,
            first_seen_ms: row.get(6)?,
            last_seen_ms: row.get(7)?,
            also_in: row.get(8)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AgentType;

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::migrate_by_ladder(&mut conn).unwrap();
        conn
    }

    #[test]
    fn sightings_add_up_across_flushes_and_say_which_version_sent_them_first() {
        let conn = db();
        let recorder = Recorder::default();
        let old = Unmapped::new(AgentType::ClaudeCode, Some("2.1.300"), Kind::Attribute, "api_request", "speed");
        recorder.note(vec![(old, 3)], 1_000);
        merge(&conn, &recorder.take()).unwrap();
        let new = Unmapped::new(AgentType::ClaudeCode, Some("2.1.332"), Kind::Attribute, "api_request", "speed");
        let event = Unmapped::new(AgentType::ClaudeCode, Some("2.1.332"), Kind::Event, "fast_mode", "fast_mode");
        recorder.note(vec![(new.clone(), 2), (event.clone(), 1)], 2_000);
        recorder.note(vec![(new, 5)], 3_000);
        merge(&conn, &recorder.take()).unwrap();
        assert!(recorder.take().is_empty(), "a flush leaves nothing behind");
        let lines = recent(&conn, 4_000).unwrap();
        let speed = lines.iter().find(|l| l.name == "speed" && l.agent_version == "2.1.332").unwrap();
        assert_eq!((speed.records, speed.first_seen_ms, speed.last_seen_ms), (7, 2_000, 3_000));
        assert_eq!(speed.also_in.as_deref(), Some("2.1.300"), "an earlier version sent it too");
        let fast = lines.iter().find(|l| l.name == "fast_mode").unwrap();
        assert_eq!((fast.kind.as_str(), fast.also_in.as_deref()), ("event", None), "new in 2.1.332");
    }

    #[test]
    fn names_are_kept_short_and_printable_and_memory_and_table_are_bounded() {
        let conn = db();
        let long = Unmapped::new(AgentType::Codex, Some("0.1\u{7}"), Kind::Event, &"x".repeat(10_000), "y\nz");
        assert_eq!(long.event.chars().count(), MAX_NAME_CHARS);
        assert_eq!((long.version.as_str(), long.name.as_str()), ("0.1?", "y?z"));
        let recorder = Recorder::default();
        let many = (0..MAX_PENDING + 50)
            .map(|i| (Unmapped::new(AgentType::Codex, None, Kind::Event, &format!("e{i}"), &format!("e{i}")), 1))
            .collect();
        recorder.note(many, 10);
        let taken = recorder.take();
        assert_eq!(taken.len(), MAX_PENDING, "at most MAX_PENDING names between flushes");
        merge(&conn, &taken).unwrap();
        for round in 0..3 {
            let batch: Vec<_> = (0..MAX_PENDING)
                .map(|i| {
                    let name = format!("r{round}-{i}");
                    (Unmapped::new(AgentType::Codex, None, Kind::Event, &name, &name), 1, 20 + round, 20 + round)
                })
                .collect();
            merge(&conn, &batch).unwrap();
        }
        let rows: i64 = conn.query_row("SELECT count(*) FROM adapter_unmapped", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, MAX_ROWS);
        let oldest_left: i64 =
            conn.query_row("SELECT min(last_seen_ms) FROM adapter_unmapped", [], |r| r.get(0)).unwrap();
        assert!(oldest_left > 10, "the longest unseen went first");
    }
}

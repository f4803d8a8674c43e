//! Event partitions: one SQLite file per UTC day of event time under
//! `<data_dir>/events/`, created on first use from `schema-events.sql`.
//!
//! Invariants: an event's own timestamp picks its file, so a retried event always
//! meets its first copy; rows are inserted only by the writer's connection (the
//! deletion runner deletes from a connection of its own, serialised with the writer
//! by SQLite's locks); readers open files read-only and see compacted rows (metadata
//! in `metadata_zst`) and fresh rows alike through [`read_row`].

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Row, params};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::db::{self, Checkpointing, DbError, Durability};
use crate::model::eval_cell::EvalTag;
use crate::model::wire::{Event, GitContext, ToolFields};
use crate::model::{AgentType, EventType, NotificationKind, PermissionMode, RunKind, ToolStatus, Usage};

pub const SCHEMA_SQL: &str = include_str!("../../schema-events.sql");
pub const SCHEMA_VERSION: i64 = 4;

/// What each schema version adds to the one before, applied in order to older files
/// when the writer opens them (version 1 is `schema-events.sql` without these).
const UPGRADES: [(i64, &str); 3] = [
    (2, "CREATE INDEX IF NOT EXISTS events_by_commit ON events(commit_seq) WHERE run_kind = 'INTERACTIVE';"),
    (
        3,
        "CREATE TABLE IF NOT EXISTS join_keys (
            user_id TEXT NOT NULL, agent_type TEXT NOT NULL, session_id TEXT NOT NULL, key TEXT NOT NULL,
            from_otlp INTEGER NOT NULL, event_id BLOB NOT NULL,
            PRIMARY KEY (user_id, agent_type, session_id, key, from_otlp)) WITHOUT ROWID;",
    ),
    (
        4,
        "CREATE TABLE IF NOT EXISTS eval_tags (
            user_id TEXT NOT NULL, agent_type TEXT NOT NULL, session_id TEXT NOT NULL,
            cell_id TEXT NOT NULL, run_name TEXT, phase TEXT,
            PRIMARY KEY (user_id, agent_type, session_id)) WITHOUT ROWID;",
    ),
];

/// A UTC calendar day, the partition key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Day(pub Date);

impl Day {
    pub fn of_ms(ts_ms: i64) -> Day {
        let seconds = ts_ms.div_euclid(1000);
        // Validated timestamps are within years of now, far inside time's range.
        let date = OffsetDateTime::from_unix_timestamp(seconds).map(|t| t.date()).unwrap_or(Date::MIN);
        Day(date)
    }

    pub fn parse(text: &str) -> Option<Day> {
        let format = time::macros::format_description!("[year]-[month]-[day]");
        Date::parse(text, &format).ok().map(Day)
    }

    pub fn start_ms(self) -> i64 {
        self.0.midnight().assume_utc().unix_timestamp() * 1000
    }

    pub fn next(self) -> Day {
        Day(self.0.next_day().unwrap_or(self.0))
    }
}

impl std::fmt::Display for Day {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.0.year(), u8::from(self.0.month()), self.0.day())
    }
}

pub fn events_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("events")
}

pub fn partition_path(data_dir: &Path, day: Day) -> PathBuf {
    events_dir(data_dir).join(format!("{day}.db"))
}

/// Every partition file present, oldest first.
pub fn list_days(data_dir: &Path) -> Result<Vec<Day>, DbError> {
    let dir = events_dir(data_dir);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(DbError::Io { context: format!("cannot list {}", dir.display()), source }),
    };
    let mut days: Vec<Day> = entries
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| entry.file_name().to_str().and_then(|name| name.strip_suffix(".db")).and_then(Day::parse))
        .collect();
    days.sort();
    Ok(days)
}

/// Opens (creating if needed) a partition for writing. Returns the connection and
/// the file's last commit sequence.
pub fn open_for_write(data_dir: &Path, day: Day) -> Result<(Connection, i64), DbError> {
    db::ensure_dir(&events_dir(data_dir))?;
    let conn = db::open(&partition_path(data_dir, day), Durability::PowerSafe, Checkpointing::Background)?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version == 0 {
        let tx = conn.unchecked_transaction()?;
        tx.execute_batch(SCHEMA_SQL)?;
        tx.execute("INSERT INTO partition_meta (singleton, day, last_seq) VALUES (1, ?1, 0)", [day.to_string()])?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        tx.commit()?;
    } else if version > SCHEMA_VERSION {
        return Err(DbError::TooNew { path: partition_path(data_dir, day), found: version, supported: SCHEMA_VERSION });
    } else if version < SCHEMA_VERSION {
        upgrade(&conn, version)?;
    }
    let last_seq = last_seq(&conn)?;
    Ok((conn, last_seq))
}

/// Brings an older partition file to [`SCHEMA_VERSION`] in one transaction.
fn upgrade(conn: &Connection, version: i64) -> Result<(), DbError> {
    let tx = conn.unchecked_transaction()?;
    for (to_version, sql) in UPGRADES.iter().filter(|(to_version, _)| *to_version > version) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", to_version)?;
    }
    tx.commit()?;
    Ok(())
}

/// Opens an existing partition read-only, or `None` if the day has no file.
pub fn open_for_read(data_dir: &Path, day: Day) -> Result<Option<Connection>, DbError> {
    let path = partition_path(data_dir, day);
    if !path.exists() {
        return Ok(None);
    }
    db::open(&path, Durability::ReadOnly, Checkpointing::Automatic).map(Some)
}

pub fn last_seq(conn: &Connection) -> Result<i64, DbError> {
    Ok(conn.query_row("SELECT last_seq FROM partition_meta WHERE singleton = 1", [], |row| row.get(0))?)
}

pub fn set_last_seq(conn: &Connection, seq: i64) -> Result<(), DbError> {
    conn.execute("UPDATE partition_meta SET last_seq = ?1 WHERE singleton = 1", [seq])?;
    Ok(())
}

const INSERT_SQL: &str = "INSERT OR IGNORE INTO events (
    event_id, ts_ms, received_ms, commit_seq, user_id, agent_type, session_id, type, run_kind, model,
    permission_mode, notification_kind, tool_name, tool_server, tool_skill, tool_slash_command,
    tool_use_id, tool_status, tool_duration_ms, tool_input_sha256, tool_input_bytes, tool_output_sha256,
    tool_output_bytes, tool_target_hash, tool_action, input_tokens, output_tokens, cache_read_tokens,
    cache_write_5m_tokens, cache_write_1h_tokens, reasoning_tokens, cost_nusd, client_cost_nusd,
    response_ms, git_branch, git_commit, git_remote, git_dirty, metadata)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,
    ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39)";

/// Inserts one event inside the caller's transaction. Returns false when the
/// `event_id` is already stored (a duplicate, which changes nothing).
pub fn insert_event(
    conn: &Connection,
    event: &Event,
    user_id: &str,
    received_ms: i64,
    commit_seq: i64,
) -> Result<bool, DbError> {
    let mut stmt = conn.prepare_cached(INSERT_SQL)?;
    let tool = event.tool.as_ref();
    let git = event.git.as_ref();
    let changed = stmt.execute(params![
        event.event_id.as_bytes().as_slice(),
        event.ts_ms,
        received_ms,
        commit_seq,
        user_id,
        event.agent_type.as_str(),
        event.session_id,
        event.event_type.as_str(),
        event.run_kind.as_str(),
        event.model,
        event.permission_mode.map(PermissionMode::as_str),
        event.notification_kind.map(NotificationKind::as_str),
        tool.map(|t| t.name.as_str()),
        tool.and_then(|t| t.server.as_deref()),
        tool.and_then(|t| t.skill.as_deref()),
        tool.and_then(|t| t.slash_command.as_deref()),
        tool.and_then(|t| t.use_id.as_deref()),
        tool.and_then(|t| t.status).map(ToolStatus::as_str),
        tool.and_then(|t| t.duration_ms),
        tool.and_then(|t| t.input_sha256.as_ref()).map(|d| d.as_slice()),
        tool.and_then(|t| t.input_bytes),
        tool.and_then(|t| t.output_sha256.as_ref()).map(|d| d.as_slice()),
        tool.and_then(|t| t.output_bytes),
        tool.and_then(|t| t.target_hash.as_ref()).map(|d| d.as_slice()),
        tool.and_then(|t| t.action.as_deref()),
        event.usage.input_tokens,
        event.usage.output_tokens,
        event.usage.cache_read_tokens,
        event.usage.cache_write_5m_tokens,
        event.usage.cache_write_1h_tokens,
        event.usage.reasoning_tokens,
        event.cost_nusd,
        event.client_cost_nusd,
        event.response_ms,
        git.and_then(|g| g.branch.as_deref()),
        git.and_then(|g| g.commit.as_deref()),
        git.and_then(|g| g.remote.as_deref()),
        git.and_then(|g| g.dirty),
        event.metadata,
    ])?;
    if changed == 1
        && let Some(tag) = &event.eval
    {
        // The session's first tag in this file wins: a session names one cell.
        conn.prepare_cached(
            "INSERT OR IGNORE INTO eval_tags (user_id, agent_type, session_id, cell_id, run_name, phase)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            user_id,
            event.agent_type.as_str(),
            event.session_id,
            tag.cell_id,
            tag.run_name,
            tag.phase
        ])?;
    }
    Ok(changed == 1)
}

/// An event as read back, with who owns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEvent {
    pub user_id: String,
    pub received_ms: i64,
    pub commit_seq: i64,
    pub event: Event,
}

pub(super) const SELECT_COLUMNS: &str =
    "event_id, ts_ms, received_ms, commit_seq, user_id, agent_type, session_id, type,
    run_kind, model, permission_mode, notification_kind, tool_name, tool_server, tool_skill,
    tool_slash_command, tool_use_id, tool_status, tool_duration_ms, tool_input_sha256, tool_input_bytes,
    tool_output_sha256, tool_output_bytes, tool_target_hash, tool_action, input_tokens, output_tokens,
    cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens, reasoning_tokens, cost_nusd,
    client_cost_nusd, response_ms, git_branch, git_commit, git_remote, git_dirty, metadata, metadata_zst";

fn bad_column(index: usize, what: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, what.to_string().into())
}

fn digest(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<[u8; 32]>> {
    let bytes: Option<Vec<u8>> = row.get(index)?;
    bytes
        .map(|b| <[u8; 32]>::try_from(b.as_slice()).map_err(|_| bad_column(index, "digest is not 32 bytes")))
        .transpose()
}

fn enum_col<T>(row: &Row<'_>, index: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<Option<T>> {
    let text: Option<String> = row.get(index)?;
    text.map(|t| parse(&t).ok_or_else(|| bad_column(index, "unknown enumeration value"))).transpose()
}

/// Decodes a row selected with `SELECT_COLUMNS`. `dictionary` is the partition's
/// compaction dictionary, needed only for compacted rows.
pub fn read_row(row: &Row<'_>, dictionary: Option<&[u8]>) -> rusqlite::Result<StoredEvent> {
    let id_bytes: Vec<u8> = row.get(0)?;
    let event_id = Uuid::from_slice(&id_bytes).map_err(|_| bad_column(0, "event_id is not 16 bytes"))?;
    let tool_name: Option<String> = row.get(12)?;
    let tool = match tool_name {
        None => None,
        Some(name) => Some(ToolFields {
            name,
            server: row.get(13)?,
            skill: row.get(14)?,
            slash_command: row.get(15)?,
            use_id: row.get(16)?,
            status: enum_col(row, 17, ToolStatus::parse)?,
            duration_ms: row.get(18)?,
            input_sha256: digest(row, 19)?,
            input_bytes: row.get(20)?,
            output_sha256: digest(row, 21)?,
            output_bytes: row.get(22)?,
            target_hash: digest(row, 23)?,
            action: row.get(24)?,
        }),
    };
    let (branch, commit, remote, dirty): (Option<String>, Option<String>, Option<String>, Option<bool>) =
        (row.get(34)?, row.get(35)?, row.get(36)?, row.get(37)?);
    let event_type = enum_col(row, 7, EventType::parse)?.ok_or_else(|| bad_column(7, "type is null"))?;
    // A session's start and its end carry git (what it found, what it left).
    let git = (matches!(event_type, EventType::SessionStart | EventType::SessionEnd)
        && (branch.is_some() || commit.is_some() || remote.is_some() || dirty.is_some()))
    .then_some(GitContext { branch, commit, remote, dirty });
    let plain_metadata: Option<String> = row.get(38)?;
    let metadata = match plain_metadata {
        Some(text) => Some(text),
        None => {
            let compressed: Option<Vec<u8>> = row.get(39)?;
            compressed
                .map(|blob| super::metadata::decompress_metadata(&blob, dictionary))
                .transpose()
                .map_err(|err| bad_column(39, &err))?
        }
    };
    Ok(StoredEvent {
        received_ms: row.get(2)?,
        commit_seq: row.get(3)?,
        user_id: row.get(4)?,
        event: Event {
            event_id,
            event_type,
            ts_ms: row.get(1)?,
            agent_type: enum_col(row, 5, AgentType::parse)?.ok_or_else(|| bad_column(5, "agent_type is null"))?,
            session_id: row.get(6)?,
            run_kind: enum_col(row, 8, RunKind::parse)?.ok_or_else(|| bad_column(8, "run_kind is null"))?,
            model: row.get(9)?,
            agent_version: None,
            permission_mode: enum_col(row, 10, PermissionMode::parse)?,
            notification_kind: enum_col(row, 11, NotificationKind::parse)?,
            tool,
            usage: Usage {
                input_tokens: row.get(25)?,
                output_tokens: row.get(26)?,
                cache_read_tokens: row.get(27)?,
                cache_write_5m_tokens: row.get(28)?,
                cache_write_1h_tokens: row.get(29)?,
                reasoning_tokens: row.get(30)?,
            },
            cost_nusd: row.get(31)?,
            client_cost_nusd: row.get(32)?,
            response_ms: row.get(33)?,
            git,
            // Kept beside the event (`eval_tags`), read back only where it matters.
            eval: None,
            metadata,
        },
    })
}

pub(super) fn dictionary(conn: &Connection) -> Result<Option<Vec<u8>>, DbError> {
    Ok(conn
        .query_row("SELECT zstd_dictionary FROM partition_meta WHERE singleton = 1", [], |row| row.get(0))
        .optional()?
        .flatten())
}

/// Events committed after `after_seq`, in commit order: what main.db has not folded
/// into session aggregates yet.
pub fn events_after_seq(conn: &Connection, after_seq: i64) -> Result<Vec<StoredEvent>, DbError> {
    let dictionary = dictionary(conn)?;
    let mut stmt =
        conn.prepare(&format!("SELECT {SELECT_COLUMNS} FROM events WHERE commit_seq > ?1 ORDER BY commit_seq"))?;
    let rows = stmt.query_map([after_seq], |row| read_row(row, dictionary.as_deref()))?;
    let mut events = rows.collect::<Result<Vec<_>, _>>()?;
    // The fold keeps a session's evaluation cell, so what it folds again carries it.
    let tags = eval_tags(conn)?;
    if !tags.is_empty() {
        for stored in &mut events {
            let key =
                (stored.user_id.clone(), stored.event.agent_type.as_str().to_string(), stored.event.session_id.clone());
            stored.event.eval = tags.get(&key).cloned();
        }
    }
    Ok(events)
}

type SessionOfFile = (String, String, String);

/// Every session's evaluation cell recorded in this file.
fn eval_tags(conn: &Connection) -> Result<std::collections::HashMap<SessionOfFile, EvalTag>, DbError> {
    let mut stmt = conn.prepare("SELECT user_id, agent_type, session_id, cell_id, run_name, phase FROM eval_tags")?;
    let rows = stmt.query_map([], |row| {
        Ok((
            (row.get(0)?, row.get(1)?, row.get(2)?),
            EvalTag { cell_id: row.get(3)?, run_name: row.get(4)?, phase: row.get(5)? },
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Number of rows in a partition (tests, benchmarks, operators).
pub fn count_events(conn: &Connection) -> Result<i64, DbError> {
    Ok(conn.query_row("SELECT count(*) FROM events", [], |row| row.get(0))?)
}

mod deletes;
mod increments;
mod joins;
mod repricing;
mod scans;

pub use deletes::{delete_session_events, delete_user_events, delete_user_events_before};
pub(in crate::events) use deletes::{open_for_delete, remove};
pub use repricing::{PricedRow, for_each_priced_row, set_costs};

pub use joins::{
    fill_from, hook_reports, join_key, mark_hook_reports, mark_paired, near_window_ms, other_report, other_report_near,
    record_join_key, record_session_join_keys,
};

pub use increments::{
    AggregateRow, SessionDay, active_ms, interactive_after_seq, session_days, session_times, snapshot,
};
pub use scans::{
    ACTIVE_GAP_CAP_MS, DailyModelCost, DailySessions, DailyTools, HourlyUsage, StepRow, daily_model_costs,
    daily_sessions, daily_tools, for_each_interactive_step, hourly_usage,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::wire::{EventLimits, parse_event};

    /// What the crash-recovery fold reads back: a session's evaluation cell, kept beside
    /// its events (the first named in the file wins), and gone with them.
    #[test]
    fn a_sessions_cell_survives_the_round_trip_and_goes_with_its_events() {
        let dir = tempfile::tempdir().unwrap();
        let day = Day::of_ms(crate::clock::system_now_ms());
        let (conn, _) = open_for_write(dir.path(), day).unwrap();
        let now = crate::clock::system_now_ms();
        for (i, (session, cell)) in
            [("s1", Some("h__m__t__r0")), ("s1", Some("h__m__t__r1")), ("s2", None)].iter().enumerate()
        {
            let mut json = serde_json::json!({
                "event_id": uuid::Uuid::now_v7().to_string(), "type": "prompt_submit", "ts": crate::model::rfc3339_ms(now + i as i64),
                "agent_type": "claude_code", "session_id": session,
            });
            if let Some(cell) = cell {
                json["eval"] = serde_json::json!({"cell_id": cell, "run_name": "nightly"});
            }
            let raw = serde_json::value::to_raw_value(&json).unwrap();
            let parsed = parse_event(&raw, &EventLimits::default(), now).unwrap();
            insert_event(&conn, &parsed.event, "ada", now, 1).unwrap();
        }
        let cells: Vec<Option<String>> = events_after_seq(&conn, 0)
            .unwrap()
            .iter()
            .map(|e| e.event.eval.as_ref().map(|tag| tag.cell_id.clone()))
            .collect();
        assert_eq!(cells, [Some("h__m__t__r0".to_string()), Some("h__m__t__r0".to_string()), None]);
        delete_session_events(&conn, "ada", "claude_code", "s1").unwrap();
        let left: i64 = conn.query_row("SELECT count(*) FROM eval_tags", [], |row| row.get(0)).unwrap();
        assert_eq!(left, 0);
    }

    /// What the crash-recovery fold reads back: a session's end keeps its git context
    /// (what the session left), as its start does.
    #[test]
    fn an_events_git_context_survives_the_round_trip_at_start_and_end() {
        let dir = tempfile::tempdir().unwrap();
        let day = Day::of_ms(crate::clock::system_now_ms());
        let (conn, _) = open_for_write(dir.path(), day).unwrap();
        let now = crate::clock::system_now_ms();
        for (i, kind) in ["session_start", "session_end", "prompt_submit"].iter().enumerate() {
            let mut json = serde_json::json!({
                "event_id": uuid::Uuid::now_v7().to_string(), "type": kind, "ts": crate::model::rfc3339_ms(now + i as i64),
                "agent_type": "claude_code", "session_id": "s1",
            });
            if *kind != "prompt_submit" {
                json["git"] = serde_json::json!({"branch": "feat/x", "commit": format!("{i}").repeat(40), "remote": "git@github.com:a/b.git"});
            }
            let raw = serde_json::value::to_raw_value(&json).unwrap();
            let parsed = parse_event(&raw, &EventLimits::default(), now).unwrap();
            insert_event(&conn, &parsed.event, "ada", now, 1).unwrap();
        }
        let read = events_after_seq(&conn, 0).unwrap();
        let commits: Vec<Option<String>> =
            read.iter().map(|e| e.event.git.as_ref().and_then(|g| g.commit.clone())).collect();
        assert_eq!(commits, [Some("0".repeat(40)), Some("1".repeat(40)), None]);
    }
}

//! Deleting from the event store: a session's or a person's events (deletion requests,
//! retention), with their join keys and evaluation tags, and a whole day's file with its ledger entry.
//! Deleted rows are overwritten (`secure_delete`), so they do not linger in free pages.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};

use super::{Day, SCHEMA_VERSION, partition_path, upgrade};
use crate::db::{self, Checkpointing, DbError, Durability};

/// Opens an existing partition to delete rows from (the deletion runner), or `None` if
/// the day has no file or a crash left it without its schema. `secure_delete` makes
/// SQLite overwrite what it deletes, so deleted events do not linger in free pages.
pub(in crate::events) fn open_for_delete(data_dir: &Path, day: Day) -> Result<Option<Connection>, DbError> {
    let path = partition_path(data_dir, day);
    if !path.exists() {
        return Ok(None);
    }
    let conn = db::open(&path, Durability::PowerSafe, Checkpointing::Automatic)?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version == 0 {
        return Ok(None);
    }
    if version < SCHEMA_VERSION {
        // A deletion also clears the join keys and evaluation tags, which an older file lacks.
        upgrade(&conn, version)?;
    }
    conn.execute_batch("PRAGMA secure_delete = ON;")?;
    Ok(Some(conn))
}

/// Deletes one session's events (compacted rows too: the key columns are never
/// compressed). Returns how many rows went.
pub fn delete_session_events(
    conn: &Connection,
    user_id: &str,
    agent_type: &str,
    session_id: &str,
) -> Result<u64, DbError> {
    conn.prepare_cached("DELETE FROM join_keys WHERE user_id = ?1 AND agent_type = ?2 AND session_id = ?3")?
        .execute(params![user_id, agent_type, session_id])?;
    conn.prepare_cached("DELETE FROM eval_tags WHERE user_id = ?1 AND agent_type = ?2 AND session_id = ?3")?
        .execute(params![user_id, agent_type, session_id])?;
    let mut stmt =
        conn.prepare_cached("DELETE FROM events WHERE user_id = ?1 AND agent_type = ?2 AND session_id = ?3")?;
    Ok(stmt.execute(params![user_id, agent_type, session_id])? as u64)
}

/// Removes a day's partition file with its WAL and shared-memory files, then its ledger
/// entry in `main.db` (`event_partitions`), in that order: a crash between the two leaves
/// a ledger entry for a missing file, which the writer already treats as a file made
/// anew. Returns whether there was a file. The caller makes sure nothing writes the day
/// (the server's writer closes its connection first).
pub(in crate::events) fn remove(data_dir: &Path, main: &Connection, day: Day) -> Result<bool, DbError> {
    let path = partition_path(data_dir, day);
    let existed = path.exists();
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.clone().into_os_string();
        name.push(suffix);
        let file = PathBuf::from(name);
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(DbError::Io { context: format!("cannot remove {}", file.display()), source }),
        }
    }
    main.execute("DELETE FROM event_partitions WHERE day = ?1", [day.to_string()])?;
    Ok(existed)
}

/// Deletes a user's events older than `before_ms` (retention). Returns how many went.
pub fn delete_user_events_before(conn: &Connection, user_id: &str, before_ms: i64) -> Result<u64, DbError> {
    let mut delete = conn.prepare_cached("DELETE FROM events WHERE user_id = ?1 AND ts_ms < ?2")?;
    let deleted = delete.execute(rusqlite::params![user_id, before_ms])? as u64;
    // The keys of what went (a key names the event it belongs to).
    conn.prepare_cached(
        "DELETE FROM join_keys WHERE user_id = ?1
           AND event_id NOT IN (SELECT event_id FROM events WHERE user_id = ?1)",
    )?
    .execute([user_id])?;
    conn.prepare_cached(
        "DELETE FROM eval_tags WHERE user_id = ?1 AND NOT EXISTS (SELECT 1 FROM events e
           WHERE e.user_id = ?1 AND e.agent_type = eval_tags.agent_type AND e.session_id = eval_tags.session_id)",
    )?
    .execute([user_id])?;
    Ok(deleted)
}

/// Deletes every event of a user, whatever session it names. Returns how many rows went.
pub fn delete_user_events(conn: &Connection, user_id: &str) -> Result<u64, DbError> {
    conn.execute("DELETE FROM join_keys WHERE user_id = ?1", [user_id])?;
    conn.execute("DELETE FROM eval_tags WHERE user_id = ?1", [user_id])?;
    Ok(conn.execute("DELETE FROM events WHERE user_id = ?1", [user_id])? as u64)
}

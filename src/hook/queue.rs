//! The local durable queue of wire events, a SQLite file written by every hook process
//! and drained by the flusher.
//!
//! Invariants: hooks append without fsync (WAL, `synchronous=NORMAL`, no checkpoint on
//! close), so a hook costs a couple of milliseconds even on a busy disk; an OS crash
//! can lose the last few appended events but never corrupts the queue (WAL recovery).
//! Rows leave `queue` only when the server acknowledged them; rejected rows move to
//! `rejected` with the server's reason in the same transaction.

use std::path::Path;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, params};

use crate::db::{self, Checkpointing, DbError, Durability};

const SCHEMA_VERSION: i64 = 1;
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS queue (
    id          INTEGER PRIMARY KEY,
    event       TEXT NOT NULL,
    enqueued_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tool_starts (
    use_id     TEXT PRIMARY KEY,
    started_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rejected (
    id          INTEGER PRIMARY KEY,
    event       TEXT NOT NULL,
    field       TEXT NOT NULL,
    reason      TEXT NOT NULL,
    rejected_ms INTEGER NOT NULL
);";

pub struct Queue {
    conn: Connection,
}

/// One queued event: its row id and its wire JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub id: i64,
    pub event: String,
}

impl Queue {
    pub fn open(path: &Path) -> Result<Queue, DbError> {
        if let Some(dir) = path.parent() {
            db::ensure_dir(dir)?;
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| DbError::Open { path: path.to_path_buf(), source })?;
        db::apply_pragmas(&conn, Durability::CrashSafe, Checkpointing::Automatic)?;
        // The last connection to close would checkpoint (and fsync); hooks must not.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        // Every hook opens the queue; only the first creates it (one cheap pragma read
        // instead of DDL on the hot path).
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != SCHEMA_VERSION {
            let tx = conn.unchecked_transaction()?;
            tx.execute_batch(SCHEMA)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
            tx.commit()?;
        }
        Ok(Queue { conn })
    }

    pub fn push(&self, events: &[String], now_ms: i64) -> Result<(), DbError> {
        let tx = self.conn.unchecked_transaction()?;
        {
            let mut insert = tx.prepare_cached("INSERT INTO queue (event, enqueued_ms) VALUES (?1, ?2)")?;
            for event in events {
                insert.execute(params![event, now_ms])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The oldest `limit` events, in queue order.
    pub fn peek(&self, limit: usize) -> Result<Vec<Queued>, DbError> {
        let mut stmt = self.conn.prepare_cached("SELECT id, event FROM queue ORDER BY id LIMIT ?1")?;
        let rows = stmt.query_map([limit as i64], |r| Ok(Queued { id: r.get(0)?, event: r.get(1)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn len(&self) -> Result<i64, DbError> {
        Ok(self.conn.query_row("SELECT count(*) FROM queue", [], |r| r.get(0))?)
    }

    pub fn is_empty(&self) -> Result<bool, DbError> {
        Ok(self.len()? == 0)
    }

    pub fn rejected_len(&self) -> Result<i64, DbError> {
        Ok(self.conn.query_row("SELECT count(*) FROM rejected", [], |r| r.get(0))?)
    }

    /// Settles a shipped batch in one transaction: acknowledged rows leave, rejected
    /// rows move aside with `(field, reason)`.
    pub fn settle(&self, acknowledged: &[i64], rejected: &[(i64, String, String)], now_ms: i64) -> Result<(), DbError> {
        let tx = self.conn.unchecked_transaction()?;
        {
            let mut delete = tx.prepare_cached("DELETE FROM queue WHERE id = ?1")?;
            for id in acknowledged {
                delete.execute([id])?;
            }
            let mut aside = tx.prepare_cached(
                "INSERT INTO rejected (event, field, reason, rejected_ms) SELECT event, ?2, ?3, ?4 FROM queue WHERE id = ?1",
            )?;
            for (id, field, reason) in rejected {
                aside.execute(params![id, field, reason, now_ms])?;
                delete.execute([id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}

/// Tool start times live beside the queue, so a `PostToolUse` in another process finds
/// its `PreToolUse`. A failed write only costs the duration, never the event.
impl crate::hook::adapters::common::ToolClock for Queue {
    fn started(&mut self, use_id: &str, at_ms: i64) {
        let _ = self
            .conn
            .execute("INSERT OR REPLACE INTO tool_starts (use_id, started_ms) VALUES (?1, ?2)", params![use_id, at_ms]);
    }

    fn finished(&mut self, use_id: &str) -> Option<i64> {
        self.conn
            .query_row("DELETE FROM tool_starts WHERE use_id = ?1 RETURNING started_ms", [use_id], |r| r.get(0))
            .ok()
    }
}

impl Queue {
    /// Age in milliseconds of the oldest queued event.
    pub fn oldest_ms(&self) -> Result<Option<i64>, DbError> {
        Ok(self.conn.query_row("SELECT min(enqueued_ms) FROM queue", [], |r| r.get(0))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_leave_only_when_settled_and_rejections_move_aside() {
        let dir = tempfile::tempdir().unwrap();
        let queue = Queue::open(&dir.path().join("q.db")).unwrap();
        queue.push(&["a".into(), "b".into(), "c".into()], 1).unwrap();
        let batch = queue.peek(2).unwrap();
        assert_eq!(batch.iter().map(|q| q.event.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        queue.settle(&[batch[0].id], &[(batch[1].id, "ts".into(), "bad".into())], 2).unwrap();
        assert_eq!(queue.len().unwrap(), 1);
        assert_eq!(queue.rejected_len().unwrap(), 1);
        assert_eq!(queue.peek(10).unwrap()[0].event, "c");
    }

    #[test]
    fn a_second_process_sees_what_the_first_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        Queue::open(&path).unwrap().push(&["x".into()], 1).unwrap();
        assert_eq!(Queue::open(&path).unwrap().len().unwrap(), 1);
    }
}

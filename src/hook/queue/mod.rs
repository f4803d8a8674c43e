//! The local durable queue of wire events, a SQLite file written by every hook process
//! and drained by the flusher.
//!
//! Invariants: hooks append without fsync (WAL, `synchronous=NORMAL`, no checkpoint on
//! close or on commit: [`Queue::open_for_hook`]), so a hook costs a couple of milliseconds
//! even on a busy disk; the flusher's connection checkpoints instead; an OS crash
//! can lose the last few appended events but never corrupts the queue (WAL recovery).
//! Rows leave `queue` only when the server acknowledged them; rejected rows move to
//! `rejected` with the server's reason in the same transaction. A hook's whole effect —
//! its events, tool start times and transcript offsets — is one transaction ([`HookTx`]),
//! so a transcript offset never advances without the usage it read being queued.

use std::path::Path;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::db::{self, Checkpointing, DbError, Durability};

mod hook_tx;
mod uploads;

pub use hook_tx::{HookTx, TranscriptMark};
pub use uploads::PendingUpload;

const SCHEMA_VERSION: i64 = 4;
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS queue (
    id          INTEGER PRIMARY KEY,
    event       TEXT NOT NULL,
    enqueued_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tool_starts (
    session    TEXT NOT NULL,
    use_id     TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    tool       TEXT NOT NULL,
    PRIMARY KEY (session, use_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS transcript_offsets (
    path       TEXT PRIMARY KEY,
    offset     INTEGER NOT NULL,
    model      TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_groups (
    path       TEXT NOT NULL,
    group_key  TEXT NOT NULL,
    counts     TEXT NOT NULL,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (path, group_key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS marks (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS transcript_uploads (
    agent       TEXT NOT NULL,
    session     TEXT NOT NULL,
    path        TEXT NOT NULL,
    queued_ms   INTEGER NOT NULL,
    ended       INTEGER NOT NULL DEFAULT 0,
    shipped_len INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    next_try_ms INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT,
    PRIMARY KEY (agent, session)
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
    /// The queue as the flusher and the other commands use it: SQLite checkpoints the WAL
    /// when it passes 1000 pages, on this connection's commits.
    pub fn open(path: &Path) -> Result<Queue, DbError> {
        Queue::open_with(path, Checkpointing::Automatic)
    }

    /// The queue as a hook uses it: it never checkpoints (a checkpoint fsyncs, which would
    /// cost the agent tens of milliseconds on a busy disk); the flusher, which starts
    /// whenever something is queued, does.
    pub fn open_for_hook(path: &Path) -> Result<Queue, DbError> {
        Queue::open_with(path, Checkpointing::Background)
    }

    /// Opens, retrying while another process is switching a new queue to WAL (SQLite
    /// answers BUSY at once there, without its busy handler, to avoid a deadlock).
    fn open_with(path: &Path, checkpointing: Checkpointing) -> Result<Queue, DbError> {
        let mut attempt = 0;
        loop {
            match Queue::try_open(path, checkpointing) {
                Err(err) if attempt < 400 && err.is_busy() => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_micros(500));
                }
                other => return other,
            }
        }
    }

    fn try_open(path: &Path, checkpointing: Checkpointing) -> Result<Queue, DbError> {
        if let Some(dir) = path.parent() {
            db::ensure_dir(dir)?;
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| DbError::Open { path: path.to_path_buf(), source })?;
        db::apply_pragmas(&conn, Durability::CrashSafe, checkpointing)?;
        // Hooks firing together hold the write lock for a fraction of a millisecond each;
        // SQLite's default busy handler sleeps 1, 2, 5, 10 … ms between tries, which would
        // cost a waiting hook far more than the wait. Retry every 100 µs instead, for up
        // to 5 s.
        conn.busy_handler(Some(|attempt: i32| {
            std::thread::sleep(std::time::Duration::from_micros(100));
            attempt < 50_000
        }))?;
        // The last connection to close would checkpoint (and fsync); hooks must not.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        // Every hook opens the queue; only the first creates it (one cheap pragma read
        // instead of DDL on the hot path).
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version != SCHEMA_VERSION {
            // IMMEDIATE, and the version read again inside: two processes opening a new
            // queue at once must take turns (a deferred transaction upgrading to write
            // would fail at once instead of waiting).
            conn.execute_batch("BEGIN IMMEDIATE")?;
            let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let created = (|| {
                if version != SCHEMA_VERSION {
                    // Tool start times are transient (a lost one costs a duration), so an
                    // older layout is dropped rather than migrated.
                    conn.execute_batch("DROP TABLE IF EXISTS tool_starts")?;
                    conn.execute_batch(SCHEMA)?;
                    conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
                }
                conn.execute_batch("COMMIT")
            })();
            if let Err(err) = created {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(err.into());
            }
        }
        Ok(Queue { conn })
    }

    /// Starts the one write transaction of a hook invocation. `IMMEDIATE`, so hooks
    /// firing together queue on the busy timeout instead of failing to upgrade a read.
    pub fn begin(&mut self) -> Result<HookTx<'_>, DbError> {
        Ok(HookTx { tx: self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)? })
    }

    pub fn push(&mut self, events: &[String], now_ms: i64) -> Result<(), DbError> {
        let tx = self.begin()?;
        tx.push(events, now_ms)?;
        tx.commit()
    }

    /// The oldest `limit` events, in queue order.
    pub fn peek(&self, limit: usize) -> Result<Vec<Queued>, DbError> {
        let mut stmt = self.conn.prepare_cached("SELECT id, event FROM queue ORDER BY id LIMIT ?1")?;
        let rows = stmt.query_map([limit as i64], |r| Ok(Queued { id: r.get(0)?, event: r.get(1)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn queued_count(&self) -> Result<i64, DbError> {
        Ok(self.conn.query_row("SELECT count(*) FROM queue", [], |r| r.get(0))?)
    }

    pub fn rejected_count(&self) -> Result<i64, DbError> {
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

impl Queue {
    /// A mark outside a hook's transaction (the flusher's last flush and last error).
    pub fn set_mark(&self, key: &str, value: &str, now_ms: i64) -> Result<(), DbError> {
        write_mark(&self.conn, key, value, now_ms)
    }

    pub fn mark(&self, key: &str) -> Result<Option<(String, i64)>, DbError> {
        read_mark(&self.conn, key)
    }

    /// Forgets usage groups untouched for `max_age_ms`: a request still streaming is
    /// minutes old at most, so old groups can no longer grow.
    pub fn prune_usage_groups(&self, now_ms: i64, max_age_ms: i64) -> Result<(), DbError> {
        // Running totals (keys starting with U+0001) are kept: a resumed session continues them.
        self.conn.execute(
            "DELETE FROM usage_groups WHERE updated_ms < ?1 AND substr(group_key, 1, 1) <> char(1)",
            [now_ms - max_age_ms],
        )?;
        Ok(())
    }

    /// How far a transcript has been read (0: never).
    pub fn transcript_offset(&self, path: &str) -> Result<u64, DbError> {
        let offset: Option<i64> = self
            .conn
            .query_row("SELECT offset FROM transcript_offsets WHERE path = ?1", [path], |r| r.get(0))
            .optional()?;
        Ok(offset.unwrap_or(0) as u64)
    }

    /// Folds the WAL back into the database without waiting for readers (hooks never
    /// checkpoint, so the flusher does).
    pub fn checkpoint(&self) -> Result<(), DbError> {
        self.conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Folds the WAL back and empties the file, when the flusher leaves: the next hook
    /// to open the queue alone rebuilds SQLite's WAL index by reading the whole WAL, so
    /// an empty one makes that free.
    pub fn checkpoint_truncate(&self) -> Result<(), DbError> {
        self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Deletes every queued and rejected event and the tool start times (and with
    /// `everything`, the transcript positions too). Returns (queued, rejected) removed.
    pub fn purge(&self, everything: bool) -> Result<(i64, i64), DbError> {
        let tx = self.conn.unchecked_transaction()?;
        let queued = tx.execute("DELETE FROM queue", [])? as i64;
        let rejected = tx.execute("DELETE FROM rejected", [])? as i64;
        tx.execute("DELETE FROM tool_starts", [])?;
        tx.execute("DELETE FROM transcript_uploads", [])?;
        if everything {
            tx.execute("DELETE FROM transcript_offsets", [])?;
            tx.execute("DELETE FROM usage_groups", [])?;
            tx.execute("DELETE FROM marks", [])?;
        }
        tx.commit()?;
        self.conn.execute_batch("VACUUM")?;
        Ok((queued, rejected))
    }

    /// How many events are queued, and when the oldest was queued (one query: the
    /// flusher asks every 100 ms).
    pub fn backlog(&self) -> Result<(i64, Option<i64>), DbError> {
        Ok(self.conn.query_row("SELECT count(*), min(enqueued_ms) FROM queue", [], |r| Ok((r.get(0)?, r.get(1)?)))?)
    }
}

/// Reads a small piece of state from `marks` (on a plain connection or in a hook's
/// transaction).
fn read_mark(conn: &Connection, key: &str) -> Result<Option<(String, i64)>, DbError> {
    Ok(conn
        .query_row("SELECT value, updated_ms FROM marks WHERE key = ?1", [key], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

fn write_mark(conn: &Connection, key: &str, value: &str, now_ms: i64) -> Result<(), DbError> {
    conn.execute(
        "INSERT OR REPLACE INTO marks (key, value, updated_ms) VALUES (?1, ?2, ?3)",
        params![key, value, now_ms],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_leave_only_when_settled_and_rejections_move_aside() {
        let dir = tempfile::tempdir().unwrap();
        let mut queue = Queue::open(&dir.path().join("q.db")).unwrap();
        queue.push(&["a".into(), "b".into(), "c".into()], 1).unwrap();
        let batch = queue.peek(2).unwrap();
        assert_eq!(batch.iter().map(|q| q.event.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        queue.settle(&[batch[0].id], &[(batch[1].id, "ts".into(), "bad".into())], 2).unwrap();
        assert_eq!(queue.queued_count().unwrap(), 1);
        assert_eq!(queue.rejected_count().unwrap(), 1);
        assert_eq!(queue.peek(10).unwrap()[0].event, "c");
    }

    #[test]
    fn processes_creating_a_new_queue_at_once_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        let openers: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || Queue::open_for_hook(&path).unwrap().push(&[format!("e{i}")], 1).unwrap())
            })
            .collect();
        openers.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(Queue::open(&path).unwrap().queued_count().unwrap(), 8);
    }

    #[test]
    fn a_second_process_sees_what_the_first_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        Queue::open(&path).unwrap().push(&["x".into()], 1).unwrap();
        assert_eq!(Queue::open(&path).unwrap().queued_count().unwrap(), 1);
    }
}

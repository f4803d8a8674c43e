//! The side door of `main.db`: the one way code outside the server's writer thread
//! writes it. Through it go the commands an operator runs beside a running server
//! (`sightline jobs run`, `run-deletions`, `people`, `prices`, `tokens`), the demo's
//! scoring, and the server's own few writes between long waits (the judge between its
//! API calls, re-redaction's resume point). Handlers and jobs in the server write
//! through the writer (`AppState::write`, a job's host).
//!
//! The rules written on the door:
//! 1. A write is one `IMMEDIATE` transaction ([`write`]): the write lock is taken before
//!    the first read, so a transaction never tries to upgrade a snapshot another commit
//!    made stale (SQLite answers that with `SQLITE_BUSY` at once, and no busy wait helps).
//! 2. It waits for the lock up to [`WAIT`], far longer than the writer's own
//!    [`super::BUSY_TIMEOUT`]: beside a server ingesting a large organisation the writer
//!    holds `main.db` for seconds at a time (an aggregate refresh of a busy day), and a
//!    command must queue behind it, not fail with "database is locked".
//! 3. A write is short: the long reads come before it, on the same connection or
//!    another, and the write hands over what they found. The writer thread, which
//!    waits only [`super::BUSY_TIMEOUT`] for the door's transactions, never waits long.
//! 4. The door's connection ([`open`]) keeps no read open between writes: a statement
//!    that is stepped is finished before the next write begins.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::{Checkpointing, DbError, Durability};

/// How long a write through the side door waits for the writer to let go of `main.db`.
pub const WAIT: Duration = Duration::from_secs(180);

/// Opens `main.db` for reads and side-door writes (automatic checkpoints, as a
/// command's connection has).
pub fn open(main_db: &Path) -> Result<Connection, DbError> {
    let conn = super::open(main_db, Durability::PowerSafe, Checkpointing::Automatic)?;
    wait_long(&conn)?;
    Ok(conn)
}

/// Opens `main.db` for the side door leaving checkpoints to the server's checkpointer
/// (a connection the server itself opens).
pub fn open_in_server(main_db: &Path) -> Result<Connection, DbError> {
    let conn = super::open(main_db, Durability::PowerSafe, Checkpointing::Background)?;
    wait_long(&conn)?;
    Ok(conn)
}

/// Gives a connection the door's wait for the write lock.
fn wait_long(conn: &Connection) -> Result<(), DbError> {
    Ok(conn.busy_timeout(WAIT)?)
}

/// Runs `work` in one `IMMEDIATE` transaction on `conn` and commits it; the work's value.
/// Nothing is written if `work` fails. The error is the caller's own (a command's
/// `anyhow`, a store's `DbError`), as long as SQLite's converts into it.
pub fn write<T, E: From<rusqlite::Error>>(
    conn: &Connection,
    work: impl FnOnce(&Transaction<'_>) -> Result<T, E>,
) -> Result<T, E> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let value = work(&tx)?;
    tx.commit()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short stand-in for [`super::super::BUSY_TIMEOUT`] (5 s).
    const BUSY_TIMEOUT_FOR_TEST: Duration = Duration::from_millis(300);

    /// A write that meets a lock held for longer than the writer's own busy timeout
    /// waits for it rather than failing.
    #[test]
    fn a_write_waits_out_a_lock_held_past_the_writers_busy_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("main.db");
        let door = open(&path).unwrap();
        door.execute_batch("CREATE TABLE t (n INTEGER)").unwrap();

        let holder = super::super::open(&path, Durability::PowerSafe, Checkpointing::Automatic).unwrap();
        let (locked, lock) = std::sync::mpsc::channel();
        let held = BUSY_TIMEOUT_FOR_TEST + Duration::from_millis(500);
        let thread = std::thread::spawn(move || {
            let tx = Transaction::new_unchecked(&holder, TransactionBehavior::Immediate).unwrap();
            tx.execute("INSERT INTO t VALUES (1)", []).unwrap();
            locked.send(()).unwrap();
            std::thread::sleep(held);
            tx.commit().unwrap();
        });
        lock.recv().unwrap();
        // A connection with the ordinary wait gives up while the lock is held.
        let ordinary = super::super::open(&path, Durability::PowerSafe, Checkpointing::Automatic).unwrap();
        ordinary.busy_timeout(BUSY_TIMEOUT_FOR_TEST).unwrap();
        assert!(write(&ordinary, |tx| tx.execute("INSERT INTO t VALUES (2)", [])).is_err());
        // The door waits, then writes after the holder's row.
        write(&door, |tx| tx.execute("INSERT INTO t VALUES (3)", [])).unwrap();
        thread.join().unwrap();
        let rows: Vec<i64> = door
            .prepare("SELECT n FROM t ORDER BY rowid")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows, vec![1, 3]);
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let door = open(&dir.path().join("main.db")).unwrap();
        door.execute_batch("CREATE TABLE t (n INTEGER)").unwrap();
        let failed = write(&door, |tx| {
            tx.execute("INSERT INTO t VALUES (1)", [])?;
            Err::<(), _>(DbError::Io { context: "stop".into(), source: std::io::Error::other("stop") })
        });
        assert!(failed.is_err());
        assert_eq!(door.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0)).unwrap(), 0);
    }
}

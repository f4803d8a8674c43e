//! Storage plumbing shared by every module that owns tables: opening SQLite files
//! with one set of pragmas, the reader pool of `main.db`, migrations, and the storage
//! error. The event store (partitions, the writer, checkpoints) is `crate::events`.
//!
//! Invariants: every connection goes through [`open`], so pragmas never differ
//! between callers; the server writes each file from exactly one connection (the
//! writer), and anything else writes `main.db` only through its [`side_door`];
//! handlers never see a `rusqlite::Connection` — modules expose functions that run on
//! the blocking pool.

pub mod migrations;
pub mod side_door;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// How hard a connection's commits push data to stable storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=FULL`: a commit survives power loss. The server's files.
    PowerSafe,
    /// `synchronous=NORMAL`: a commit survives a process crash, not an OS crash.
    /// The hook's local queue, where an fsync per event would blow the latency budget.
    CrashSafe,
    /// Read-only use; no writes are made.
    ReadOnly,
}

/// Who checkpoints the WAL of a connection's file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checkpointing {
    /// SQLite's automatic checkpoint after commits (operator verbs, the hook).
    Automatic,
    /// None in the commit path: the background checkpointer and the writer's hard
    /// cap take care of it (the server's writer connections).
    Background,
}

pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot open database {path}: {source}")]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error("database {path} has schema version {found}, newer than this binary's {supported}; refusing to downgrade")]
    TooNew { path: PathBuf, found: i64, supported: i64 },
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
    #[error("connection pool: {0}")]
    Pool(#[from] r2d2::Error),
}

impl DbError {
    /// Whether the failure is the storage's (disk full, I/O error, read-only file,
    /// lock held too long) rather than ours: such failures answer 503, try again.
    pub fn is_storage_unavailable(&self) -> bool {
        use rusqlite::ErrorCode::*;
        match self.sqlite_code() {
            Some(code) => matches!(
                code,
                DiskFull | SystemIoFailure | ReadOnly | DatabaseBusy | DatabaseLocked | CannotOpen | OutOfMemory
            ),
            None => matches!(self, DbError::Io { .. } | DbError::Pool(_)),
        }
    }

    /// Whether another connection held a lock SQLite would not wait for.
    pub fn is_busy(&self) -> bool {
        matches!(self.sqlite_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
    }

    fn sqlite_code(&self) -> Option<rusqlite::ErrorCode> {
        match self {
            DbError::Sqlite(rusqlite::Error::SqliteFailure(err, _))
            | DbError::Open { source: rusqlite::Error::SqliteFailure(err, _), .. } => Some(err.code),
            _ => None,
        }
    }
}

/// Opens a SQLite file and applies the pragmas every connection gets, in order:
/// busy_timeout first (so the WAL switch itself waits for locks), WAL, synchronous,
/// foreign keys.
pub fn open(path: &Path, durability: Durability, checkpointing: Checkpointing) -> Result<Connection, DbError> {
    let flags = match durability {
        Durability::ReadOnly => OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        _ => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    };
    let conn = Connection::open_with_flags(path, flags)
        .map_err(|source| DbError::Open { path: path.to_path_buf(), source })?;
    apply_pragmas(&conn, durability, checkpointing)
        .map_err(|source| DbError::Open { path: path.to_path_buf(), source })?;
    Ok(conn)
}

/// The one pragma function. Read-only connections skip what would write.
pub fn apply_pragmas(conn: &Connection, durability: Durability, checkpointing: Checkpointing) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    if durability != Durability::ReadOnly {
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(rusqlite::Error::InvalidParameterName(format!("journal_mode stayed {mode}, expected wal")));
        }
    }
    let synchronous = match durability {
        Durability::PowerSafe => "FULL",
        Durability::CrashSafe | Durability::ReadOnly => "NORMAL",
    };
    conn.execute_batch(&format!("PRAGMA synchronous = {synchronous}; PRAGMA foreign_keys = ON;"))?;
    if checkpointing == Checkpointing::Background {
        conn.execute_batch("PRAGMA wal_autocheckpoint = 0;")?;
    }
    // Prepared statements are reused on the hot path; give the cache room.
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

/// How thoroughly [`with_secure_delete`] overwrites what a change deletes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecureDelete {
    /// Deleted cells are zeroed in their b-tree pages, at no extra I/O; a page freed
    /// whole keeps its old bytes on the freelist (SQLite's `FAST`).
    Fast,
    /// Freed pages are zeroed too (SQLite's `ON`): for a deletion, which must leave nothing.
    On,
}

/// Runs `work` with `secure_delete` at `level` (deleted rows are overwritten, not left
/// readable in the file), then puts the connection's setting back: on the server this is
/// the writer's connection, whose ingest commits need not pay for it. For changes that
/// delete or rewrite rows naming a person or a session.
pub fn with_secure_delete<T>(
    conn: &Connection,
    level: SecureDelete,
    work: impl FnOnce() -> Result<T, DbError>,
) -> Result<T, DbError> {
    let before: i64 = conn.query_row("PRAGMA secure_delete", [], |row| row.get(0))?;
    let pragma = match level {
        SecureDelete::Fast => "PRAGMA secure_delete = FAST;",
        SecureDelete::On => "PRAGMA secure_delete = ON;",
    };
    conn.execute_batch(pragma)?;
    let result = work();
    conn.execute_batch(&format!("PRAGMA secure_delete = {before};"))?;
    result
}

pub type MainPool = r2d2::Pool<r2d2_sqlite::SqliteConnectionManager>;

/// A pool of read connections to `main.db` for request handlers.
pub fn reader_pool(path: &Path, size: u32) -> Result<MainPool, DbError> {
    let manager = r2d2_sqlite::SqliteConnectionManager::file(path)
        .with_flags(OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .with_init(|conn| apply_pragmas(conn, Durability::ReadOnly, Checkpointing::Automatic));
    Ok(r2d2::Pool::builder().max_size(size).min_idle(Some(1)).build(manager)?)
}

/// Creates a directory (and parents), naming it in the error.
pub fn ensure_dir(path: &Path) -> Result<(), DbError> {
    std::fs::create_dir_all(path)
        .map_err(|source| DbError::Io { context: format!("cannot create directory {}", path.display()), source })
}

/// Runs a blocking storage call on tokio's blocking pool.
pub async fn blocking<T, F>(f: F) -> Result<T, DbError>
where
    F: FnOnce() -> Result<T, DbError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|join| {
        Err(DbError::Io { context: "storage task panicked".into(), source: std::io::Error::other(join.to_string()) })
    })
}

/// A fresh in-memory `main.db` at the current schema, and the steps of a statement's
/// plan (`EXPLAIN QUERY PLAN`), for the tests that hold a hot statement to its index:
/// Sightline never runs `ANALYZE`, so a plan is checked rather than trusted.
#[cfg(test)]
pub mod plans {
    use rusqlite::{Connection, Params};

    pub fn main_db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        super::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
        conn
    }

    pub fn plan(conn: &Connection, sql: &str, params: impl Params) -> Vec<String> {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        stmt.query_map(params, |row| row.get::<_, String>(3)).unwrap().collect::<Result<_, _>>().unwrap()
    }
}

//! The record of backups taken (`backups` in `main.db`): when, where, how much, so the
//! administrator's pages can say how old the last one is without reading the backup disk.
//!
//! Invariant: a row is written only for a backup that completed (its manifest is on
//! disk); a failed backup is a failed job run, not a row here.

use rusqlite::{Connection, OptionalExtension, params};

use super::Taken;
use crate::db::DbError;

/// A completed backup as recorded.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Recorded {
    pub started_at_ms: i64,
    pub finished_at_ms: i64,
    pub location: String,
    pub files: i64,
    pub bytes: i64,
    pub copied_bytes: i64,
    pub index_state: String,
}

impl Recorded {
    pub fn of(taken: &Taken) -> Recorded {
        Recorded {
            started_at_ms: taken.manifest.started_at_ms,
            finished_at_ms: taken.manifest.finished_at_ms,
            location: taken.dir.display().to_string(),
            files: taken.manifest.files.len() as i64,
            bytes: taken.manifest.total_bytes() as i64,
            copied_bytes: taken.copied_bytes as i64,
            index_state: taken.manifest.index.clone(),
        }
    }
}

pub fn record(conn: &Connection, backup: &Recorded) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO backups (started_at_ms, finished_at_ms, location, files, bytes, copied_bytes, index_state)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            backup.started_at_ms,
            backup.finished_at_ms,
            backup.location,
            backup.files,
            backup.bytes,
            backup.copied_bytes,
            backup.index_state
        ],
    )?;
    Ok(())
}

/// The most recent completed backup, if any.
pub fn last(conn: &Connection) -> Result<Option<Recorded>, DbError> {
    Ok(conn
        .query_row(
            "SELECT started_at_ms, finished_at_ms, location, files, bytes, copied_bytes, index_state
             FROM backups ORDER BY started_at_ms DESC, id DESC LIMIT 1",
            [],
            |row| {
                Ok(Recorded {
                    started_at_ms: row.get(0)?,
                    finished_at_ms: row.get(1)?,
                    location: row.get(2)?,
                    files: row.get(3)?,
                    bytes: row.get(4)?,
                    copied_bytes: row.get(5)?,
                    index_state: row.get(6)?,
                })
            },
        )
        .optional()?)
}

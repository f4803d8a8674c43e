//! Stored transcripts: `<data_dir>/transcripts/<session id>.jsonl.zst`, one per session,
//! redacted and compressed, and the rows that point at them (`sessions.transcript_*`,
//! `transcript_index`).
//!
//! Invariants: files are written to a temporary name, synced and renamed, so a reader
//! sees a whole file or none; the session row is updated only after the rename.

use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use crate::db::DbError;

/// The directory of stored transcripts (and of uploads in progress, under `incoming/`).
pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("transcripts")
}

/// The stored file of a session, relative to the data directory (what `sessions` keeps).
pub fn relative_path(session_id: &str) -> String {
    format!("transcripts/{session_id}.jsonl.zst")
}

/// Maps an I/O failure to a storage error that says what was being done.
pub fn io_error(context: String) -> impl FnOnce(std::io::Error) -> DbError {
    move |source| DbError::Io { context, source }
}

/// Compresses and stores a redacted transcript. Returns its path relative to `data_dir`.
pub fn write(data_dir: &Path, session_id: &str, redacted: &str) -> Result<String, DbError> {
    let relative = relative_path(session_id);
    let target = data_dir.join(&relative);
    let folder = dir(data_dir);
    std::fs::create_dir_all(&folder).map_err(io_error(format!("cannot create {}", folder.display())))?;
    let compressed = zstd::bulk::compress(redacted.as_bytes(), 9)
        .map_err(io_error(format!("cannot compress the transcript of {session_id}")))?;
    let temporary = folder.join(format!(".{session_id}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let written = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(&compressed)?;
        file.sync_all()?;
        std::fs::rename(&temporary, &target)?;
        std::fs::File::open(&folder)?.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written.map_err(io_error(format!("cannot store {}", target.display())))?;
    Ok(relative)
}

/// A stored transcript's text.
pub fn read(data_dir: &Path, relative: &str) -> Result<String, DbError> {
    let path = data_dir.join(relative);
    let compressed = std::fs::read(&path).map_err(io_error(format!("cannot read {}", path.display())))?;
    let text = zstd::stream::decode_all(compressed.as_slice())
        .map_err(io_error(format!("{} is not a zstd transcript", path.display())))?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// Removes a session's stored file (absent is fine: removal is re-runnable).
pub fn remove(data_dir: &Path, session_id: &str) -> Result<(), DbError> {
    let path = data_dir.join(relative_path(session_id));
    match std::fs::remove_file(&path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(io_error(format!("cannot remove {}", path.display()))(err))
        }
        _ => Ok(()),
    }
}

/// Points the session at its stored transcript and queues it for indexing.
pub fn record_stored(
    conn: &Connection,
    session_id: &str,
    relative: &str,
    bytes: i64,
    upload_sha256: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.execute(
        "UPDATE sessions SET transcript_path = ?2, transcript_bytes = ?3, transcript_rules_version = ?4 WHERE id = ?1",
        params![session_id, relative, bytes, crate::redact::RULES_VERSION],
    )?;
    conn.execute(
        "INSERT INTO transcript_index (session_id, upload_sha256, stored_ms, indexed_ms, message_count)
         VALUES (?1, ?2, ?3, NULL, NULL)
         ON CONFLICT (session_id) DO UPDATE SET upload_sha256 = ?2, stored_ms = ?3, indexed_ms = NULL",
        params![session_id, upload_sha256, now_ms],
    )?;
    Ok(())
}

/// The whole-upload digest of the session's stored transcript, if it has one.
pub fn stored_upload(conn: &Connection, session_id: &str) -> Result<Option<String>, DbError> {
    Ok(conn
        .query_row("SELECT upload_sha256 FROM transcript_index WHERE session_id = ?1", [session_id], |r| r.get(0))
        .optional()?)
}

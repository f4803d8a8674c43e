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

/// The transcript of the session a proof covers (`access::read`), as normalised
/// messages; `None` if the session has none. A proof for the session alone does not
/// cover its transcript.
pub fn read_for(
    conn: &Connection,
    data_dir: &Path,
    proof: &crate::access::read::SessionRead,
) -> Result<Option<Vec<crate::transcripts::model::Message>>, DbError> {
    if !proof.covers_transcript() {
        return Ok(None);
    }
    let relative: Option<String> = conn
        .query_row("SELECT transcript_path FROM sessions WHERE id = ?1", [proof.session_id()], |row| row.get(0))
        .optional()?
        .flatten();
    let Some(relative) = relative else { return Ok(None) };
    let text = read(data_dir, &relative)?;
    Ok(Some(crate::transcripts::parse::parse(proof.agent_type().as_str(), &text)))
}

/// A stored transcript's text, for the system's own jobs (indexing, re-redaction).
/// People's reads go through [`read_for`] and its access proof.
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

/// A stored transcript and what the index records about its session.
#[derive(Debug, Clone)]
pub struct StoredTranscript {
    pub session_id: String,
    pub upload_sha256: String,
    pub relative_path: String,
    pub owner_id: String,
    pub agent_type: String,
    pub started_ms: i64,
    /// The model that priced most of the session's events, for messages naming none.
    pub model: Option<String>,
}

const STORED_COLUMNS: &str = "t.session_id, t.upload_sha256, s.transcript_path, s.user_id, s.agent_type,
    COALESCE(s.started_at_ms, s.first_event_ms),
    (SELECT model FROM session_models m WHERE m.session_id = s.id ORDER BY event_count DESC, model LIMIT 1)";

fn stored_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredTranscript> {
    Ok(StoredTranscript {
        session_id: row.get(0)?,
        upload_sha256: row.get(1)?,
        relative_path: row.get(2)?,
        owner_id: row.get(3)?,
        agent_type: row.get(4)?,
        started_ms: row.get(5)?,
        model: row.get(6)?,
    })
}

/// Up to `limit` stored transcripts waiting for the index, oldest upload first.
pub fn unindexed(conn: &Connection, limit: usize) -> Result<Vec<StoredTranscript>, DbError> {
    let sql = format!(
        "SELECT {STORED_COLUMNS} FROM transcript_index t JOIN sessions s ON s.id = t.session_id
         WHERE t.indexed_ms IS NULL AND s.transcript_path IS NOT NULL ORDER BY t.stored_ms, t.session_id LIMIT ?1"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map([limit as i64], stored_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// How many stored transcripts wait for the index.
pub fn unindexed_count(conn: &Connection) -> Result<i64, DbError> {
    Ok(conn.query_row("SELECT count(*) FROM transcript_index WHERE indexed_ms IS NULL", [], |r| r.get(0))?)
}

/// Records that the index holds this upload of the session. A row whose upload changed
/// meanwhile (a newer transcript arrived while this one was indexed) stays waiting.
pub fn mark_indexed(
    conn: &Connection,
    session_id: &str,
    upload_sha256: &str,
    message_count: usize,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.execute(
        "UPDATE transcript_index SET indexed_ms = ?3, message_count = ?4 WHERE session_id = ?1 AND upload_sha256 = ?2",
        params![session_id, upload_sha256, now_ms, message_count as i64],
    )?;
    Ok(())
}

/// Queues every stored transcript for indexing again (the index was rebuilt or lost).
pub fn mark_all_unindexed(conn: &Connection) -> Result<usize, DbError> {
    Ok(conn.execute("UPDATE transcript_index SET indexed_ms = NULL WHERE indexed_ms IS NOT NULL", [])?)
}

/// A stored transcript written under older redaction rules than this binary's.
#[derive(Debug, Clone)]
pub struct OutdatedTranscript {
    pub session_id: String,
    pub relative_path: String,
}

/// Up to `limit` stored transcripts redacted under rules older than `rules_version`.
pub fn redacted_before(
    conn: &Connection,
    rules_version: u32,
    limit: usize,
) -> Result<Vec<OutdatedTranscript>, DbError> {
    let mut statement = conn.prepare_cached(
        "SELECT id, transcript_path FROM sessions
         WHERE transcript_path IS NOT NULL AND COALESCE(transcript_rules_version, 0) < ?1 ORDER BY id LIMIT ?2",
    )?;
    let rows = statement.query_map(params![rules_version, limit as i64], |row| {
        Ok(OutdatedTranscript { session_id: row.get(0)?, relative_path: row.get(1)? })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Records a transcript re-redacted under `rules_version` and queues it for indexing.
pub fn record_reredacted(conn: &Connection, session_id: &str, bytes: i64, rules_version: u32) -> Result<(), DbError> {
    conn.execute(
        "UPDATE sessions SET transcript_bytes = ?2, transcript_rules_version = ?3 WHERE id = ?1",
        params![session_id, bytes, rules_version],
    )?;
    conn.execute("UPDATE transcript_index SET indexed_ms = NULL WHERE session_id = ?1", [session_id])?;
    Ok(())
}

/// How many stored transcripts are redacted under rules older than `rules_version`.
pub fn redacted_before_count(conn: &Connection, rules_version: u32) -> Result<i64, DbError> {
    Ok(conn.query_row(
        "SELECT count(*) FROM sessions WHERE transcript_path IS NOT NULL AND COALESCE(transcript_rules_version, 0) < ?1",
        [rules_version],
        |r| r.get(0),
    )?)
}

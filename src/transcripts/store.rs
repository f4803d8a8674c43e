//! Stored transcripts: `<data_dir>/transcripts/<session id>.jsonl.zst`, one per session,
//! redacted and compressed, and the rows that point at them (`sessions.transcript_*`,
//! `transcript_index`).
//!
//! Invariants: files are written to a temporary name, synced and renamed, so a reader
//! sees a whole file or none; the session row is updated only after the rename. Both
//! directions stream: a transcript is compressed as it is written and decompressed as it
//! is read, through a zstd window of at most 2^[`MAX_WINDOW_LOG`] bytes and at most
//! [`MAX_TRANSCRIPT_BYTES`] of text, so memory never grows with a transcript's size.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
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

/// Largest transcript text, decompressed (uploads and stored files alike): room for a
/// long session with its tool output, and a bound on what a job that reads a transcript
/// whole (the judge, re-redaction) holds.
pub const MAX_TRANSCRIPT_BYTES: u64 = 128 << 20;
/// Largest zstd window a transcript may need to be decompressed: 2^25 = 32 MiB. zstd's
/// own limit is 2^27; every compression level up to 19 stays within 2^23.
pub const MAX_WINDOW_LOG: u32 = 25;
/// zstd level of stored transcripts (the shipper's too).
const LEVEL: i32 = 9;

/// The streaming compressor a transcript is written through.
pub type TranscriptWriter = zstd::stream::write::Encoder<'static, std::io::BufWriter<std::fs::File>>;

/// Compresses and stores a redacted transcript. Returns its path relative to `data_dir`.
pub fn write(data_dir: &Path, session_id: &str, redacted: &str) -> Result<String, DbError> {
    write_with(data_dir, session_id, |out| {
        out.write_all(redacted.as_bytes()).map_err(io_error(format!("cannot compress the transcript of {session_id}")))
    })
}

/// Stores a transcript that `fill` writes into the compressor piece by piece, so it is
/// never whole in memory. On any failure (of `fill` too) nothing is stored and the
/// previous file, if any, is untouched. Returns the path relative to `data_dir`.
pub fn write_with<E: From<DbError>>(
    data_dir: &Path,
    session_id: &str,
    fill: impl FnOnce(&mut TranscriptWriter) -> Result<(), E>,
) -> Result<String, E> {
    let relative = relative_path(session_id);
    let target = data_dir.join(&relative);
    let folder = dir(data_dir);
    std::fs::create_dir_all(&folder).map_err(io_error(format!("cannot create {}", folder.display())))?;
    let temporary = folder.join(format!(".{session_id}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let stored = (|| -> Result<(), E> {
        let cannot = || io_error(format!("cannot store {}", target.display()));
        let file = std::fs::File::create(&temporary).map_err(cannot())?;
        let mut encoder = zstd::stream::write::Encoder::new(std::io::BufWriter::with_capacity(1 << 16, file), LEVEL)
            .map_err(cannot())?;
        fill(&mut encoder)?;
        let file = encoder.finish().and_then(|w| w.into_inner().map_err(|e| e.into_error())).map_err(cannot())?;
        file.sync_all().map_err(cannot())?;
        std::fs::rename(&temporary, &target).map_err(cannot())?;
        std::fs::File::open(&folder).and_then(|dir| dir.sync_all()).map_err(cannot())?;
        Ok(())
    })();
    if stored.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    stored.map(|()| relative)
}

/// Why a transcript stream stopped: it grew past [`MAX_TRANSCRIPT_BYTES`].
#[derive(Debug, thiserror::Error)]
#[error("a transcript may hold at most {MAX_TRANSCRIPT_BYTES} bytes uncompressed")]
pub struct TranscriptTooLarge;

/// A reader that fails with [`TranscriptTooLarge`] once more than `left` bytes pass.
pub struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Capped<R> {
    pub fn new(inner: R, limit: u64) -> Capped<R> {
        Capped { inner, left: limit }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(std::io::Error::other(TranscriptTooLarge));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Whether an I/O error is a [`Capped`] reader's refusal.
pub fn is_too_large(err: &std::io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<TranscriptTooLarge>())
}

/// Decompresses zstd data as it is read, with the window and size bounds of this module.
pub fn decompress<R: Read>(compressed: R) -> std::io::Result<BufReader<Capped<impl Read>>> {
    let mut decoder = zstd::stream::read::Decoder::new(compressed)?;
    decoder.window_log_max(MAX_WINDOW_LOG)?;
    Ok(BufReader::with_capacity(1 << 16, Capped::new(decoder, MAX_TRANSCRIPT_BYTES)))
}

/// A stored transcript as a stream of text, for the system's own jobs.
pub fn open(data_dir: &Path, relative: &str) -> Result<impl BufRead, DbError> {
    let path = data_dir.join(relative);
    let file = std::fs::File::open(&path).map_err(io_error(format!("cannot read {}", path.display())))?;
    decompress(BufReader::new(file)).map_err(io_error(format!("{} is not a zstd transcript", path.display())))
}

/// Where the transcript of the session a proof covers is stored (relative to the data
/// directory); `None` when the session has none, or the proof does not cover its
/// transcript (a proof for the session alone does not).
pub fn path_for(conn: &Connection, proof: &crate::sessions::read::SessionRead) -> Result<Option<String>, DbError> {
    if !proof.covers_transcript() {
        return Ok(None);
    }
    Ok(conn
        .query_row("SELECT transcript_path FROM sessions WHERE id = ?1", [proof.session_id()], |row| row.get(0))
        .optional()?
        .flatten())
}

/// The transcript of the session a proof covers (`sessions::read`), as normalised
/// messages; `None` if the session has none. A proof for the session alone does not
/// cover its transcript.
pub fn read_for(
    conn: &Connection,
    data_dir: &Path,
    proof: &crate::sessions::read::SessionRead,
) -> Result<Option<Vec<crate::transcripts::model::Message>>, DbError> {
    let Some(relative) = path_for(conn, proof)? else { return Ok(None) };
    let text = read(data_dir, &relative)?;
    Ok(Some(crate::transcripts::parse::parse(proof.agent_type().as_str(), &text)))
}

/// A stored transcript's text, whole, for the system's own jobs (re-redaction).
/// People's reads go through [`read_for`] and its access proof.
pub fn read(data_dir: &Path, relative: &str) -> Result<String, DbError> {
    let mut text = Vec::new();
    open(data_dir, relative)?
        .read_to_end(&mut text)
        .map_err(io_error(format!("{} is not a zstd transcript", data_dir.join(relative).display())))?;
    // Copied only when it is not UTF-8 (it always is: the server wrote it).
    Ok(String::from_utf8(text).unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned()))
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

/// Forgets that a session has a stored transcript (its file and documents are gone):
/// the pointer on the session and its `transcript_index` row.
pub fn forget_stored(conn: &Connection, session_id: &str) -> Result<(), DbError> {
    conn.execute(
        "UPDATE sessions SET transcript_path = NULL, transcript_bytes = NULL, transcript_rules_version = NULL
         WHERE id = ?1",
        [session_id],
    )?;
    conn.execute("DELETE FROM transcript_index WHERE session_id = ?1", [session_id])?;
    Ok(())
}

/// Sessions with a stored transcript (or an index row) whose last event is before
/// `before_ms`, with their owner and last event: what retention may sweep.
pub fn stored_before(conn: &Connection, before_ms: i64) -> Result<Vec<(String, String, i64)>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT s.id, s.user_id, s.last_event_ms FROM sessions s
         WHERE s.last_event_ms < ?1
           AND (s.transcript_path IS NOT NULL OR EXISTS (SELECT 1 FROM transcript_index t WHERE t.session_id = s.id))",
    )?;
    let rows = stmt.query_map([before_ms], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
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
         ON CONFLICT (session_id) DO UPDATE SET upload_sha256 = ?2, stored_ms = ?3, indexed_ms = NULL, title = NULL",
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

/// A `transcript_index` row the indexer still has to read: never indexed (or queued
/// again), or stored before names were kept. [`unindexed`] and [`unindexed_count`] share
/// it, so a drain starts whenever there is work for it.
const WAITING_FOR_INDEXER: &str = "(indexed_ms IS NULL OR title IS NULL)";

/// Up to `limit` stored transcripts waiting for the index or for their name (stored
/// before names were kept), oldest upload first.
pub fn unindexed(conn: &Connection, limit: usize) -> Result<Vec<StoredTranscript>, DbError> {
    let sql = format!(
        "SELECT {STORED_COLUMNS} FROM transcript_index t JOIN sessions s ON s.id = t.session_id
         WHERE {WAITING_FOR_INDEXER} AND s.transcript_path IS NOT NULL
         ORDER BY t.stored_ms, t.session_id LIMIT ?1"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map([limit as i64], stored_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// How many stored transcripts wait for the index or for their name.
pub fn unindexed_count(conn: &Connection) -> Result<i64, DbError> {
    let sql = format!("SELECT count(*) FROM transcript_index WHERE {WAITING_FOR_INDEXER}");
    Ok(conn.query_row(&sql, [], |r| r.get(0))?)
}

/// The index's lag for `/metrics`: how many stored transcripts were never indexed (or
/// were queued again), and when the oldest of them was stored. Both read only the
/// partial index `transcript_index_unindexed`, which holds just those rows.
pub fn index_backlog(conn: &Connection) -> Result<(i64, Option<i64>), DbError> {
    let sql = "SELECT count(*), min(stored_ms) FROM transcript_index INDEXED BY transcript_index_unindexed
               WHERE indexed_ms IS NULL";
    Ok(conn.query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?)))?)
}

/// Records that the index holds this upload of the session, and the session's name
/// found in it ('' when none: a NULL name queues the row for the indexer, which is how
/// transcripts stored before names existed get theirs). A row whose upload changed meanwhile (a newer transcript arrived while
/// this one was indexed) stays waiting.
pub fn mark_indexed(conn: &Connection, done: &super::indexing::Indexed, now_ms: i64) -> Result<(), DbError> {
    conn.execute(
        "UPDATE transcript_index SET indexed_ms = ?3, message_count = ?4, title = ?5
         WHERE session_id = ?1 AND upload_sha256 = ?2",
        params![
            done.session_id,
            done.upload_sha256,
            now_ms,
            done.message_count as i64,
            done.title.as_deref().unwrap_or("")
        ],
    )?;
    Ok(())
}

/// The names (`super::title`) of those of `session_ids` that `owner_id` owns and whose
/// transcript gave one (a title of '' records that the indexer found none). A name is
/// transcript content, so it is read for its owner only: the owner's own pages, or a
/// transcript read the access rules already allowed (pass the session's owner).
pub fn titles(conn: &Connection, owner_id: &str, session_ids: &[&str]) -> Result<HashMap<String, String>, DbError> {
    let mut titles = HashMap::new();
    let mut statement = conn.prepare_cached(
        "SELECT t.title FROM transcript_index t JOIN sessions s ON s.id = t.session_id
         WHERE t.session_id = ?1 AND s.user_id = ?2 AND t.title <> ''",
    )?;
    for id in session_ids {
        if let Some(title) = statement.query_row(params![id, owner_id], |row| row.get::<_, String>(0)).optional()? {
            titles.insert(id.to_string(), title);
        }
    }
    Ok(titles)
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
    // Its name was found in the old text: gone with it until the indexer reads the new.
    conn.execute("UPDATE transcript_index SET indexed_ms = NULL, title = NULL WHERE session_id = ?1", [session_id])?;
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

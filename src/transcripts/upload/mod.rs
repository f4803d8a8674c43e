//! The chunked, resumable upload of one transcript (`POST /v1/transcripts/{session}`,
//! wire contract "Transcript upload"). Chunks wait under
//! `<data_dir>/transcripts/incoming/<person>/<session id>-<whole sha256>/<index>` until
//! all are there; then the whole is checked against its digest and, in one streaming
//! pass, decompressed, redacted again with the current rules line by line, and stored.
//!
//! Invariants: a chunk file appears only whole (written to a temporary name, then
//! renamed) and only when its digest matched, so a repeated chunk is idempotent and a
//! dropped connection leaves nothing half-written; an upload whose whole digest does not
//! match is discarded, not stored; the limits are checked on the bytes actually held
//! before anything is kept: at most [`MAX_UPLOAD_BYTES`] per upload and
//! [`MAX_STAGED_BYTES_PER_PERSON`] of unfinished uploads per person. Memory is bounded
//! whatever the upload: the whole is never in memory, only one line of it (at most
//! [`MAX_LINE_BYTES`]), and the zstd window is capped (`store::MAX_WINDOW_LOG`).
//! Unfinished uploads untouched for [`STAGING_MAX_AGE`] are removed
//! ([`expire_staged`]), and a new upload of a session replaces its unfinished older ones.

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::store::{self, io_error};
use crate::db::DbError;
use crate::model::sha256_hex;

/// Largest chunk accepted (the shipper sends 1 MiB).
pub const MAX_CHUNK_BYTES: usize = 8 << 20;
/// Largest compressed upload: the sum of its chunks as received.
pub const MAX_UPLOAD_BYTES: u64 = 256 << 20;
/// Most chunks in one upload.
pub const MAX_CHUNKS: u32 = 4096;
/// Largest transcript once decompressed.
pub const MAX_TRANSCRIPT_BYTES: u64 = store::MAX_TRANSCRIPT_BYTES;
/// Most lines (not counting blank ones) of a transcript: far more than a person reads
/// (200 messages a page), and a bound on what a small upload of tiny lines can make
/// every later read parse.
pub const MAX_TRANSCRIPT_LINES: u64 = 100_000;
/// Longest line of a transcript once decompressed (a JSON line is parsed whole to be
/// redacted, so this bounds the memory one upload takes).
pub const MAX_LINE_BYTES: usize = 16 << 20;
/// Bytes of unfinished uploads one person may have staged at once (four uploads of the
/// largest size); a chunk past it is refused until uploads finish or expire.
pub const MAX_STAGED_BYTES_PER_PERSON: u64 = 1 << 30;
/// An unfinished upload untouched this long is abandoned: the shipper retries within an
/// hour at most, so a day leaves it every chance.
pub const STAGING_MAX_AGE: Duration = Duration::from_secs(24 * 3600);

/// What a chunk's headers say about it.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub index: u32,
    pub total: u32,
    pub sha256: String,
    pub whole_sha256: String,
}

#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("{message}")]
    Invalid { field: &'static str, message: String },
    #[error("{0}")]
    TooLarge(String),
    #[error(transparent)]
    Storage(#[from] DbError),
}

fn invalid(field: &'static str, message: impl Into<String>) -> UploadError {
    UploadError::Invalid { field, message: message.into() }
}

/// A whole upload, checked, redacted and written to its file.
#[derive(Debug)]
pub struct Stored {
    pub relative_path: String,
    pub bytes: i64,
}

pub fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn incoming(data_dir: &Path) -> PathBuf {
    store::dir(data_dir).join("incoming")
}

fn person_dir(data_dir: &Path, owner_id: &str) -> PathBuf {
    incoming(data_dir).join(owner_id)
}

fn staging(data_dir: &Path, owner_id: &str, session_id: &str, whole_sha256: &str) -> PathBuf {
    person_dir(data_dir, owner_id).join(format!("{session_id}-{whole_sha256}"))
}

/// Every staging folder: `incoming/<person>/<upload>`, and `incoming/<upload>` as
/// servers before per-person staging laid them out.
fn staging_folders(data_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(incoming(data_dir)) else { return out };
    for entry in entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())) {
        let path = entry.path();
        let is_upload =
            entry.file_name().to_str().is_some_and(|name| name.len() > 65 && name.as_bytes()[name.len() - 65] == b'-');
        if is_upload {
            out.push(path);
        } else if let Ok(uploads) = std::fs::read_dir(&path) {
            out.extend(uploads.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()));
        }
    }
    out
}

/// The staging folders of a session's uploads still in progress (any whole digest).
pub fn staged(data_dir: &Path, session_id: &str) -> Vec<PathBuf> {
    let prefix = format!("{session_id}-");
    staging_folders(data_dir)
        .into_iter()
        .filter(|folder| folder.file_name().and_then(|n| n.to_str()).is_some_and(|name| name.starts_with(&prefix)))
        .collect()
}

/// Removes unfinished uploads whose last chunk arrived more than `max_age` before
/// `now` (a folder's modification time moves with every chunk renamed into it), and
/// the people's folders left empty. Returns how many uploads it removed. Run at start
/// and by the scheduled scratch sweep; a chunk racing it just fails and is sent again.
pub fn expire_staged(data_dir: &Path, max_age: Duration, now: SystemTime) -> Result<usize, DbError> {
    let mut removed = 0;
    for folder in staging_folders(data_dir) {
        removed += usize::from(remove_if_stale(&folder, max_age, now)?);
    }
    if let Ok(people) = std::fs::read_dir(incoming(data_dir)) {
        for person in people.flatten() {
            // Fails, harmlessly, unless empty.
            let _ = std::fs::remove_dir(person.path());
        }
    }
    Ok(removed)
}

/// Bytes staged by one person, in all and in `upload` (one of their folders), leaving
/// out the file `except` (a chunk being sent again), from one walk of their folder.
fn staged_bytes(person: &Path, upload: &Path, except: &Path) -> (u64, u64) {
    let size = |entry: &std::fs::DirEntry| {
        if entry.path() == except { 0 } else { entry.metadata().map(|m| m.len()).unwrap_or(0) }
    };
    let (mut all, mut this) = (0, 0);
    let Ok(uploads) = std::fs::read_dir(person) else { return (0, 0) };
    for folder in uploads.flatten() {
        let Ok(files) = std::fs::read_dir(folder.path()) else { continue };
        let bytes: u64 = files.flatten().map(|file| size(&file)).sum();
        all += bytes;
        if folder.path() == upload {
            this = bytes;
        }
    }
    (all, this)
}

/// Removes a session's uploads in progress: their chunks are the transcript before
/// the server redacted it. Absent is fine (re-runnable).
pub fn discard_staged(data_dir: &Path, session_id: &str) -> Result<(), DbError> {
    for folder in staged(data_dir, session_id) {
        match std::fs::remove_dir_all(&folder) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                return Err(io_error(format!("cannot remove {}", folder.display()))(err));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Checks a chunk's headers against the limits and its bytes against its digest.
pub fn check(chunk: &Chunk, bytes: &[u8]) -> Result<(), UploadError> {
    if !is_sha256(&chunk.whole_sha256) {
        return Err(invalid("X-Transcript-Sha256", "must be the lowercase hex SHA-256 of the whole upload"));
    }
    if !is_sha256(&chunk.sha256) {
        return Err(invalid("X-Chunk-Sha256", "must be the lowercase hex SHA-256 of this chunk"));
    }
    if chunk.total == 0 || chunk.total > MAX_CHUNKS {
        return Err(UploadError::TooLarge(format!("X-Chunk-Total must be between 1 and {MAX_CHUNKS}")));
    }
    if chunk.index >= chunk.total {
        return Err(invalid("X-Chunk-Index", format!("{} is not below X-Chunk-Total {}", chunk.index, chunk.total)));
    }
    if bytes.len() > MAX_CHUNK_BYTES {
        return Err(UploadError::TooLarge(format!("a chunk may hold at most {MAX_CHUNK_BYTES} bytes")));
    }
    if sha256_hex(bytes) != chunk.sha256 {
        return Err(invalid("X-Chunk-Sha256", "does not match the chunk's bytes (sent again, it will be taken)"));
    }
    Ok(())
}

/// The chunks of an upload the server holds, in order.
pub fn received(data_dir: &Path, owner_id: &str, session_id: &str, whole_sha256: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(staging(data_dir, owner_id, session_id, whole_sha256)) else {
        return Vec::new();
    };
    let mut indexes: Vec<u32> =
        entries.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok())).collect();
    indexes.sort_unstable();
    indexes
}

/// The byte limits an upload is held to (the constants of this module; tests use
/// smaller ones).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub upload_bytes: u64,
    pub staged_bytes_per_person: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { upload_bytes: MAX_UPLOAD_BYTES, staged_bytes_per_person: MAX_STAGED_BYTES_PER_PERSON }
    }
}

/// Keeps one checked chunk of `owner_id`'s session. Returns the whole upload, stored,
/// once every chunk is there.
pub fn receive(
    data_dir: &Path,
    owner_id: &str,
    session_id: &str,
    chunk: &Chunk,
    bytes: &[u8],
) -> Result<Option<Stored>, UploadError> {
    receive_within(&Limits::default(), data_dir, owner_id, session_id, chunk, bytes)
}

/// [`receive`] held to `limits`.
pub fn receive_within(
    limits: &Limits,
    data_dir: &Path,
    owner_id: &str,
    session_id: &str,
    chunk: &Chunk,
    bytes: &[u8],
) -> Result<Option<Stored>, UploadError> {
    check(chunk, bytes)?;
    let folder = staging(data_dir, owner_id, session_id, &chunk.whole_sha256);
    let person = person_dir(data_dir, owner_id);
    if !folder.exists() {
        // A new digest for the session: the shipper re-uploads a transcript that grew,
        // so the session's unfinished older uploads will never complete.
        for older in staged(data_dir, session_id).into_iter().filter(|older| *older != folder) {
            let _ = std::fs::remove_dir_all(older);
        }
        expire_staged_of(&person)?;
    }
    let (person_bytes, upload_bytes) = staged_bytes(&person, &folder, &folder.join(chunk.index.to_string()));
    let upload_bytes = upload_bytes + bytes.len() as u64;
    if upload_bytes > limits.upload_bytes {
        return Err(UploadError::TooLarge(format!(
            "an upload may hold at most {} bytes of chunks; this one would hold {upload_bytes}",
            limits.upload_bytes
        )));
    }
    let staged_bytes = person_bytes + bytes.len() as u64;
    if staged_bytes > limits.staged_bytes_per_person {
        return Err(UploadError::TooLarge(format!(
            "unfinished uploads may hold at most {} bytes per person, and yours would hold {staged_bytes}; \
             finish them, or they expire {} hours after their last chunk",
            limits.staged_bytes_per_person,
            STAGING_MAX_AGE.as_secs() / 3600
        )));
    }
    std::fs::create_dir_all(&folder).map_err(io_error(format!("cannot create {}", folder.display())))?;
    let total_file = folder.join("total");
    match std::fs::read_to_string(&total_file) {
        Ok(total) if total.trim() != chunk.total.to_string() => {
            return Err(invalid(
                "X-Chunk-Total",
                format!("this upload has {} chunks, not {}", total.trim(), chunk.total),
            ));
        }
        Ok(_) => {}
        Err(_) => write_whole(&folder, "total", chunk.total.to_string().as_bytes())?,
    }
    write_whole(&folder, &chunk.index.to_string(), bytes)?;
    if received(data_dir, owner_id, session_id, &chunk.whole_sha256).len() < chunk.total as usize {
        return Ok(None);
    }
    let stored = assemble(data_dir, session_id, chunk, &folder);
    // A whole that did not match its digest is dropped: the shipper starts over.
    let _ = std::fs::remove_dir_all(&folder);
    // The person's folder goes with their last unfinished upload (fails unless empty).
    let _ = std::fs::remove_dir(&person);
    crate::memory::return_freed_memory();
    stored.map(Some)
}

/// [`expire_staged`] over one person's folder (before a new upload is counted).
fn expire_staged_of(person: &Path) -> Result<(), DbError> {
    let Ok(uploads) = std::fs::read_dir(person) else { return Ok(()) };
    let now = SystemTime::now();
    for upload in uploads.flatten() {
        remove_if_stale(&upload.path(), STAGING_MAX_AGE, now)?;
    }
    Ok(())
}

/// Removes an upload's folder if its last chunk arrived more than `max_age` before
/// `now`. Returns whether it did.
fn remove_if_stale(folder: &Path, max_age: Duration, now: SystemTime) -> Result<bool, DbError> {
    let touched = std::fs::metadata(folder).and_then(|m| m.modified());
    if !touched.is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > max_age)) {
        return Ok(false);
    }
    match std::fs::remove_dir_all(folder) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(err) => Err(io_error(format!("cannot remove {}", folder.display()))(err)),
    }
}

fn write_whole(folder: &Path, name: &str, bytes: &[u8]) -> Result<(), UploadError> {
    let temporary = folder.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    std::fs::write(&temporary, bytes)
        .and_then(|()| std::fs::rename(&temporary, folder.join(name)))
        .map_err(io_error(format!("cannot keep chunk {name} in {}", folder.display())))?;
    Ok(())
}

/// The chunk files of an upload read one after another, as one stream.
struct ChunkFiles<'a> {
    folder: &'a Path,
    next: u32,
    total: u32,
    current: Option<std::io::BufReader<std::fs::File>>,
}

impl Read for ChunkFiles<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if let Some(file) = self.current.as_mut() {
                let n = file.read(buf)?;
                if n > 0 || buf.is_empty() {
                    return Ok(n);
                }
                self.current = None;
            }
            if self.next == self.total {
                return Ok(0);
            }
            let file = std::fs::File::open(self.folder.join(self.next.to_string()))?;
            self.current = Some(std::io::BufReader::with_capacity(1 << 16, file));
            self.next += 1;
        }
    }
}

fn chunks(folder: &Path, total: u32) -> ChunkFiles<'_> {
    ChunkFiles { folder, next: 0, total, current: None }
}

/// Checks the whole digest, then decompresses, redacts and stores the upload line by
/// line: memory holds one line (and its JSON), never the transcript.
fn assemble(data_dir: &Path, session_id: &str, chunk: &Chunk, folder: &Path) -> Result<Stored, UploadError> {
    let unreadable = || io_error(format!("cannot read the chunks in {}", folder.display()));
    let mut digest = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buffer = vec![0u8; 1 << 16];
    let mut whole = chunks(folder, chunk.total);
    loop {
        let n = whole.read(&mut buffer).map_err(unreadable())?;
        if n == 0 {
            break;
        }
        digest.update(&buffer[..n]);
    }
    if hex::encode(digest.finish()) != chunk.whole_sha256 {
        return Err(invalid("X-Transcript-Sha256", "the chunks put together do not match it; upload again"));
    }
    let not_zstd = |err: std::io::Error| {
        if store::is_too_large(&err) {
            UploadError::TooLarge(format!("a transcript may hold at most {MAX_TRANSCRIPT_BYTES} bytes uncompressed"))
        } else {
            invalid("body", format!("the upload is not zstd-compressed data this server accepts: {err}"))
        }
    };
    let mut text = store::decompress(chunks(folder, chunk.total)).map_err(not_zstd)?;
    let (mut line, mut redacted, mut bytes, mut lines) = (Vec::new(), String::new(), 0i64, 0u64);
    let relative_path = store::write_with(data_dir, session_id, |out| -> Result<(), UploadError> {
        loop {
            line.clear();
            let read = (&mut text).take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut line).map_err(not_zstd)?;
            if read == 0 {
                return Ok(());
            }
            if line.len() > MAX_LINE_BYTES {
                return Err(UploadError::TooLarge(format!(
                    "a transcript line may hold at most {MAX_LINE_BYTES} bytes"
                )));
            }
            // As `str::lines` ends a line: at `\n`, and a `\r` before it.
            let end = line.strip_suffix(b"\n").unwrap_or(&line);
            let end = end.strip_suffix(b"\r").unwrap_or(end);
            if !end.trim_ascii().is_empty() {
                lines += 1;
                if lines > MAX_TRANSCRIPT_LINES {
                    return Err(UploadError::TooLarge(format!(
                        "a transcript may hold at most {MAX_TRANSCRIPT_LINES} lines (blank lines aside)"
                    )));
                }
            }
            redacted.clear();
            crate::redact::redact_transcript_line(&String::from_utf8_lossy(end), &mut redacted);
            out.write_all(redacted.as_bytes())
                .map_err(io_error(format!("cannot compress the transcript of {session_id}")))?;
            bytes += redacted.len() as i64;
        }
    })?;
    Ok(Stored { relative_path, bytes })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod fuzz;

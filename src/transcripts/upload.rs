//! The chunked, resumable upload of one transcript (`POST /v1/transcripts/{session}`,
//! wire contract "Transcript upload"). Chunks wait under
//! `<data_dir>/transcripts/incoming/<session id>-<whole sha256>/<index>` until all are
//! there; then the whole is checked against its digest, decompressed (bounded),
//! redacted again with the current rules and stored.
//!
//! Invariants: a chunk file appears only whole (written to a temporary name, then
//! renamed) and only when its digest matched, so a repeated chunk is idempotent and a
//! dropped connection leaves nothing half-written; an upload whose whole digest does not
//! match is discarded, not stored; the limits are checked before anything is kept.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::store::{self, io_error};
use crate::db::DbError;
use crate::model::sha256_hex;

/// Largest chunk accepted (the shipper sends 1 MiB).
pub const MAX_CHUNK_BYTES: usize = 8 << 20;
/// Largest compressed upload.
pub const MAX_UPLOAD_BYTES: u64 = 256 << 20;
/// Most chunks in one upload.
pub const MAX_CHUNKS: u32 = 4096;
/// Largest transcript once decompressed.
pub const MAX_TRANSCRIPT_BYTES: u64 = 512 << 20;

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

fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn staging(data_dir: &Path, session_id: &str, whole_sha256: &str) -> PathBuf {
    store::dir(data_dir).join("incoming").join(format!("{session_id}-{whole_sha256}"))
}

/// The staging folders of a session's uploads still in progress (any whole digest).
pub fn staged(data_dir: &Path, session_id: &str) -> Vec<PathBuf> {
    let prefix = format!("{session_id}-");
    let Ok(entries) = std::fs::read_dir(store::dir(data_dir).join("incoming")) else { return Vec::new() };
    entries
        .flatten()
        .filter(|entry| entry.file_name().to_str().is_some_and(|name| name.starts_with(&prefix)))
        .map(|entry| entry.path())
        .collect()
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
    if u64::from(chunk.total.saturating_sub(1)) * MAX_CHUNK_BYTES as u64 > MAX_UPLOAD_BYTES {
        return Err(UploadError::TooLarge(format!("an upload may hold at most {MAX_UPLOAD_BYTES} bytes")));
    }
    if sha256_hex(bytes) != chunk.sha256 {
        return Err(invalid("X-Chunk-Sha256", "does not match the chunk's bytes (sent again, it will be taken)"));
    }
    Ok(())
}

/// The chunks of an upload the server holds, in order.
pub fn received(data_dir: &Path, session_id: &str, whole_sha256: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(staging(data_dir, session_id, whole_sha256)) else { return Vec::new() };
    let mut indexes: Vec<u32> =
        entries.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok())).collect();
    indexes.sort_unstable();
    indexes
}

/// Keeps one checked chunk. Returns the whole upload, stored, once every chunk is there.
pub fn receive(data_dir: &Path, session_id: &str, chunk: &Chunk, bytes: &[u8]) -> Result<Option<Stored>, UploadError> {
    check(chunk, bytes)?;
    let folder = staging(data_dir, session_id, &chunk.whole_sha256);
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
    if received(data_dir, session_id, &chunk.whole_sha256).len() < chunk.total as usize {
        return Ok(None);
    }
    let stored = assemble(data_dir, session_id, chunk, &folder);
    // A whole that did not match its digest is dropped: the shipper starts over.
    let _ = std::fs::remove_dir_all(&folder);
    stored.map(Some)
}

fn write_whole(folder: &Path, name: &str, bytes: &[u8]) -> Result<(), UploadError> {
    let temporary = folder.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    std::fs::write(&temporary, bytes)
        .and_then(|()| std::fs::rename(&temporary, folder.join(name)))
        .map_err(io_error(format!("cannot keep chunk {name} in {}", folder.display())))?;
    Ok(())
}

fn assemble(data_dir: &Path, session_id: &str, chunk: &Chunk, folder: &Path) -> Result<Stored, UploadError> {
    let mut whole = Vec::new();
    for index in 0..chunk.total {
        let path = folder.join(index.to_string());
        whole.extend(std::fs::read(&path).map_err(io_error(format!("cannot read {}", path.display())))?);
    }
    if sha256_hex(&whole) != chunk.whole_sha256 {
        return Err(invalid("X-Transcript-Sha256", "the chunks put together do not match it; upload again"));
    }
    let mut text = Vec::new();
    zstd::stream::read::Decoder::new(whole.as_slice())
        .and_then(|decoder| decoder.take(MAX_TRANSCRIPT_BYTES + 1).read_to_end(&mut text))
        .map_err(|err| invalid("body", format!("the upload is not zstd-compressed data: {err}")))?;
    if text.len() as u64 > MAX_TRANSCRIPT_BYTES {
        return Err(UploadError::TooLarge(format!(
            "a transcript may hold at most {MAX_TRANSCRIPT_BYTES} bytes uncompressed"
        )));
    }
    let redacted = crate::redact::redact_transcript(&String::from_utf8_lossy(&text));
    let relative_path = store::write(data_dir, session_id, &redacted)?;
    Ok(Stored { relative_path, bytes: redacted.len() as i64 })
}

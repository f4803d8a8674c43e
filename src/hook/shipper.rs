//! The shipper: uploads a session's transcript, redacted on the laptop with the
//! rules and compressed with zstd, in chunks to `POST /v1/transcripts/{session}`, after
//! the session ended or went quiet (end hooks are unreliable). The flusher runs it after
//! the session's events are shipped.
//!
//! Wire (see docs/wire-contract.md, "Transcript upload"): the whole upload is identified
//! by the SHA-256 of the compressed, redacted transcript; each chunk carries its index,
//! the total, its own SHA-256 and the whole's. `GET /v1/transcripts/{session}` with the
//! same agent and whole-digest answers which chunks the server holds, so an interrupted
//! upload resumes with the missing ones; a repeated chunk is idempotent.
//!
//! Invariants: raw secrets never leave the machine (the server redacts again); a
//! transcript is shipped again only when it grew; a failed upload stays pending with
//! its error and is retried on the flusher's next round, with the attempt count kept.

use std::time::Duration;

use serde_json::Value;

use super::adapters::common::sha256_hex;
use super::local::{self, ClientConfig};
use super::queue::{PendingUpload, Queue};
use crate::redact;

/// Chunks of the compressed transcript (the server documents its own limit).
pub const CHUNK_BYTES: usize = 1 << 20;
/// A session with no turn end for this long is taken as over.
pub const QUIET_MS: i64 = 30 * 60 * 1000;
/// Transcripts larger than this are not uploaded (logged instead).
const MAX_TRANSCRIPT_BYTES: u64 = 128 << 20;

/// Uploads one transcript, resuming from what the server already holds. Returns the
/// transcript's size in bytes as shipped.
pub fn upload(
    config: &ClientConfig,
    agent: &ureq::Agent,
    pending: &PendingUpload,
    chunk_bytes: usize,
) -> Result<i64, String> {
    let meta = std::fs::metadata(&pending.path).map_err(|e| format!("cannot read {}: {e}", pending.path))?;
    if meta.len() > MAX_TRANSCRIPT_BYTES {
        return Err(format!("{} is {} bytes, over the {} byte limit", pending.path, meta.len(), MAX_TRANSCRIPT_BYTES));
    }
    let text = std::fs::read(&pending.path).map_err(|e| format!("cannot read {}: {e}", pending.path))?;
    let compressed = zstd::bulk::compress(redact::redact_transcript(&String::from_utf8_lossy(&text)).as_bytes(), 9)
        .map_err(|e| format!("cannot compress: {e}"))?;
    let whole = sha256_hex(&compressed);
    let chunks: Vec<&[u8]> = compressed.chunks(chunk_bytes.max(1)).collect();
    let base = format!(
        "{}/v1/transcripts/{}?agent_type={}",
        config.server.trim_end_matches('/'),
        urlencode(&pending.session),
        urlencode(&pending.agent)
    );
    let held = match agent
        .get(format!("{base}&sha256={whole}"))
        .header("Authorization", format!("Bearer {}", config.token))
        .call()
    {
        Ok(mut response) if response.status() == 200 => {
            let body = response.body_mut().read_to_string().map_err(|e| format!("bad upload state: {e}"))?;
            let state: Value = serde_json::from_str(&body).map_err(|e| format!("bad upload state: {e}"))?;
            if state.get("complete") == Some(&Value::Bool(true)) {
                return Ok(text.len() as i64);
            }
            state.get("received").and_then(Value::as_array).cloned().unwrap_or_default()
        }
        Ok(response) if response.status() == 404 => Vec::new(),
        Ok(response) => return Err(format!("upload state: server answered {}", response.status())),
        Err(err) => return Err(format!("server unreachable: {err}")),
    };
    for (index, chunk) in chunks.iter().enumerate() {
        if held.iter().any(|i| i.as_u64() == Some(index as u64)) {
            continue;
        }
        let response = agent
            .post(&base)
            .header("Authorization", format!("Bearer {}", config.token))
            .header("Content-Type", "application/zstd")
            .header("X-Chunk-Index", index.to_string())
            .header("X-Chunk-Total", chunks.len().to_string())
            .header("X-Chunk-Sha256", sha256_hex(chunk))
            .header("X-Transcript-Sha256", &whole)
            .send(*chunk)
            .map_err(|e| format!("server unreachable: {e}"))?;
        if response.status() != 200 {
            return Err(format!("chunk {index}: server answered {}", response.status()));
        }
    }
    Ok(text.len() as i64)
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// Uploads every due transcript that changed since it was last shipped. Returns how
/// many were shipped and how many failed (left pending with their error).
pub fn ship_due(
    queue: &Queue,
    config: &ClientConfig,
    agent: &ureq::Agent,
    chunk_bytes: usize,
    retry_now: bool,
) -> Result<(usize, usize), crate::db::DbError> {
    let (mut shipped, mut failed) = (0, 0);
    for pending in queue.pending_uploads(crate::clock::system_now_ms(), QUIET_MS, retry_now)? {
        let size = std::fs::metadata(&pending.path).map(|m| m.len() as i64).unwrap_or(-1);
        if size == pending.shipped_len || size < 0 {
            continue;
        }
        let outcome = upload(config, agent, &pending, chunk_bytes);
        match &outcome {
            Ok(_) => shipped += 1,
            Err(error) => {
                failed += 1;
                local::log(&format!("shipper: {} {}: {error}", pending.agent, pending.session));
            }
        }
        queue.settle_upload(&pending, outcome)?;
    }
    Ok((shipped, failed))
}

/// Whole-request timeout for uploads, generous enough for a chunk on a slow link.
pub const UPLOAD_TIMEOUT: Duration = Duration::from_secs(120);

//! `POST /v1/events`, the hook's listener: the body read and decompressed within the
//! size limits (`ingest::body`), the envelope parsed, each event decoded to its draft,
//! and the batch handed to the pipeline (`ingest::pipeline::accept`), which checks,
//! redacts, prices and stores it.
//!
//! Invariants: 400 only for a malformed envelope (a bad event is reported by index and
//! field in the answer); 413 past the documented limits; the answer comes after the
//! writer's COMMIT.

use std::sync::Arc;

use axum::body::Body;
use axum::http::HeaderMap;

use super::body::{decode, read_body};
use super::error::IngestError;
use super::pipeline::{self, Accepted, Batch};
use crate::model::wire::{self, Envelope};
use crate::state::AppState;

pub async fn ingest(
    state: &Arc<AppState>,
    user: &crate::state::caller::HookUser,
    headers: &HeaderMap,
    body: Body,
) -> Result<Accepted, IngestError> {
    let received = std::time::Instant::now();
    let limits = &state.config.ingest;
    let raw = read_body(headers, body, limits.max_body_bytes).await?;
    let decoded = decode(headers, &raw, limits.max_decoded_bytes)?;
    let envelope = parse_envelope(&decoded, limits.max_events_per_batch)?;
    let drafts = envelope.events.iter().map(|raw| wire::decode_draft(raw));
    let batch =
        Batch { user_id: &user.user_id, fixed_run_kind: user.run_kind, client: &envelope.client, drafts, received };
    pipeline::accept(state, batch).await
}

/// The batch envelope, its client checked and its size within the limit.
fn parse_envelope(decoded: &[u8], max_events: usize) -> Result<Envelope<'_>, IngestError> {
    let envelope: Envelope<'_> = serde_json::from_slice(decoded).map_err(|err| {
        let message = err.to_string();
        if message.starts_with(wire::TOO_MANY_EVENTS) {
            return IngestError::TooLarge(format!("{message}; the limit is {max_events}"));
        }
        IngestError::Malformed { field: None, message: format!("body is not a valid batch envelope: {message}") }
    })?;
    envelope.client.validate()?;
    if envelope.events.len() > max_events {
        return Err(IngestError::TooLarge(format!(
            "batch has {} events; the limit is {max_events}",
            envelope.events.len()
        )));
    }
    Ok(envelope)
}

#[cfg(test)]
mod fuzz;

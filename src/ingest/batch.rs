//! One `POST /v1/events` batch: read and decode the body within the size limits,
//! parse the envelope, validate each event on its own, redact its metadata with
//! the redaction rules, recompute its cost, and hand the good events to the writer.
//!
//! Invariants: one bad event never blocks the batch (it is reported by index and
//! field); 400 only for a malformed envelope; 413 past the documented limits; the
//! answer is given only after the writer's COMMIT, and any storage failure is a 503
//! (never a 2xx without a commit).

use std::io::Read;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, header};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::events::writer::WriteRequest;
use crate::http::errors::AppError;
use crate::model::wire::{self, Envelope, Event, Rejection};
use crate::state::AppState;

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct BatchOutcome {
    pub accepted: usize,
    pub duplicates: usize,
    pub rejected: Vec<RejectedEvent>,
    /// Events that named an evaluation cell and were stored without the link: only a
    /// harness's token (fixed to EVAL) links a session to a cell.
    #[serde(skip_serializing_if = "is_zero")]
    pub unlinked_eval_events: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct RejectedEvent {
    pub index: usize,
    pub field: String,
    pub reason: String,
}

pub async fn ingest(
    state: &Arc<AppState>,
    user: &crate::state::caller::HookUser,
    headers: &HeaderMap,
    body: Body,
) -> Result<BatchOutcome, AppError> {
    let received = std::time::Instant::now();
    let limits = &state.config.ingest;
    let raw = read_body(headers, body, limits.max_body_bytes).await?;
    let decoded = decode(headers, &raw, limits.max_decoded_bytes)?;
    let envelope = parse_envelope(&decoded, limits.max_events_per_batch)?;
    store(state, &user.user_id, user.run_kind, &envelope.client, &envelope.events, received).await
}

/// Validates, redacts and prices `raw_events` and stores the good ones for `user_id`
/// (the answer comes after the writer's commit); the hook's batches and the events
/// mapped from an OTLP export take this one path. `fixed_run_kind`, from a harness's
/// token, replaces every event's run kind.
pub(crate) async fn store(
    state: &Arc<AppState>,
    user_id: &str,
    fixed_run_kind: Option<crate::model::RunKind>,
    client: &wire::ClientInfo,
    raw_events: &[&RawValue],
    received: std::time::Instant,
) -> Result<BatchOutcome, AppError> {
    let mut prepared = prepare_events(state, raw_events);
    if let Some(kind) = fixed_run_kind {
        prepared.events.iter_mut().for_each(|event| event.run_kind = kind);
    }
    // A cell's link is the harness's to make: a person's token (or a collector's, for
    // anyone it maps) naming a cell would hand that session to every eval engineer.
    let mut unlinked_eval_events = 0;
    if fixed_run_kind != Some(crate::model::RunKind::Eval) {
        for event in prepared.events.iter_mut().filter(|event| event.eval.is_some()) {
            event.eval = None;
            unlinked_eval_events += 1;
        }
    }
    let stored = prepared.events.len();
    let (mut accepted, mut duplicates) = (0, 0);
    if stored > 0 {
        let (events, known_models, redactions) = (prepared.events, prepared.known_models, prepared.redactions);
        let request =
            WriteRequest { user_id: user_id.to_string(), client: client.clone(), events, known_models, redactions };
        let written = state.writer.write(request).await;
        state.slis.event_write(stored, written.is_ok(), received.elapsed().as_millis() as i64);
        let outcome = written?;
        accepted = outcome.inserted.iter().filter(|inserted| **inserted).count();
        duplicates = outcome.inserted.len() - accepted;
    }
    debug_assert_eq!(stored, accepted + duplicates);
    state.metrics.count_events(accepted as u64, duplicates as u64, prepared.rejected.len() as u64);
    for rejected in &prepared.rejected {
        state.metrics.count_rejected_event(&rejected.field);
    }
    Ok(BatchOutcome { accepted, duplicates, rejected: prepared.rejected, unlinked_eval_events })
}

/// The request body, refused with 413 past `max_body_bytes` (declared or read).
pub(crate) async fn read_body(
    headers: &HeaderMap,
    body: Body,
    max_body_bytes: usize,
) -> Result<axum::body::Bytes, AppError> {
    if let Some(length) = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
        && length > max_body_bytes
    {
        return Err(too_large_body(max_body_bytes));
    }
    axum::body::to_bytes(body, max_body_bytes).await.map_err(|err| {
        // to_bytes fails on the limit, on a body past its deadline, or on a broken connection.
        if crate::http::body_deadline::is_timeout(&err) {
            AppError::TimedOut(err.to_string())
        } else if err.to_string().contains("length limit") {
            too_large_body(max_body_bytes)
        } else {
            AppError::bad_request("body", format!("could not read the request body: {err}"))
        }
    })
}

/// The batch envelope, its client checked and its size within the limit.
fn parse_envelope(decoded: &[u8], max_events: usize) -> Result<Envelope<'_>, AppError> {
    let envelope: Envelope<'_> = serde_json::from_slice(decoded).map_err(|err| {
        let message = err.to_string();
        if message.starts_with(wire::TOO_MANY_EVENTS) {
            return AppError::TooLarge(format!("{message}; the limit is {max_events}"));
        }
        AppError::BadRequest { field: None, message: format!("body is not a valid batch envelope: {message}") }
    })?;
    envelope.client.validate()?;
    if envelope.events.len() > max_events {
        return Err(AppError::TooLarge(format!(
            "batch has {} events; the limit is {max_events}",
            envelope.events.len()
        )));
    }
    Ok(envelope)
}

/// A batch's events, parsed, redacted and priced, and the ones refused.
struct Prepared {
    events: Vec<Event>,
    /// Per event: whether the price table knew its model.
    known_models: Vec<bool>,
    redactions: Vec<crate::redact::Hits>,
    rejected: Vec<RejectedEvent>,
}

fn prepare_events(state: &AppState, raw_events: &[&RawValue]) -> Prepared {
    let now_ms = state.clock.now_ms();
    let mut prepared = Prepared {
        events: Vec::with_capacity(raw_events.len()),
        known_models: Vec::with_capacity(raw_events.len()),
        redactions: Vec::with_capacity(raw_events.len()),
        rejected: Vec::new(),
    };
    for (index, raw_event) in raw_events.iter().enumerate() {
        match wire::parse_event(raw_event, &state.event_limits, now_ms) {
            Ok(parsed) => {
                let (mut event, hits) = redacted(parsed);
                prepared.redactions.push(hits);
                let priced = state.prices.price(event.agent_type, event.model.as_deref(), &event.usage);
                event.cost_nusd = priced.cost_nusd;
                prepared.known_models.push(priced.known_model);
                prepared.events.push(event);
            }
            Err(Rejection { field, reason }) => prepared.rejected.push(RejectedEvent { index, field, reason }),
        }
    }
    prepared
}

/// The event with its metadata and git remote and branch redacted: the hook strips
/// secrets before sending, and ingest does not trust it to. With the metadata's secrets
/// by rule, the hook's apart from ingest's.
fn redacted(parsed: wire::ParsedEvent) -> (Event, crate::redact::Hits) {
    let mut event = parsed.event;
    let mut hits = crate::redact::Hits::default();
    if let Some(mut metadata) = parsed.unredacted_metadata {
        hits = crate::redact::redact_json_counted(&mut metadata);
        event.metadata = Some(metadata.to_string());
    }
    if let Some(git) = &mut event.git {
        for field in [&mut git.remote, &mut git.branch] {
            if let Some(text) = field.as_deref()
                && let std::borrow::Cow::Owned(redacted) = crate::redact::redact_text(text)
            {
                *field = Some(redacted);
            }
        }
    }
    (event, hits)
}

fn too_large_body(limit: usize) -> AppError {
    AppError::TooLarge(format!("request body is larger than {limit} bytes"))
}

/// Decodes `Content-Encoding: zstd | gzip | identity`, refusing to inflate past
/// `max_decoded` bytes (a decompression bomb gets 413, not our memory).
pub(crate) fn decode<'a>(
    headers: &HeaderMap,
    raw: &'a [u8],
    max_decoded: usize,
) -> Result<std::borrow::Cow<'a, [u8]>, AppError> {
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase())
        .unwrap_or_default();
    decode_named(&encoding, raw, max_decoded)
}

/// [`decode`] for an encoding named elsewhere (gRPC's `grpc-encoding`).
pub(crate) fn decode_named<'a>(
    encoding: &str,
    raw: &'a [u8],
    max_decoded: usize,
) -> Result<std::borrow::Cow<'a, [u8]>, AppError> {
    let reader: Box<dyn Read + 'a> = match encoding {
        "" | "identity" => {
            if raw.len() > max_decoded {
                return Err(too_large_body(max_decoded));
            }
            return Ok(std::borrow::Cow::Borrowed(raw));
        }
        "zstd" => Box::new(
            zstd::stream::read::Decoder::new(raw)
                .map_err(|err| AppError::bad_request("body", format!("zstd body cannot be decoded: {err}")))?,
        ),
        "gzip" | "x-gzip" => Box::new(flate2::read::GzDecoder::new(raw)),
        other => {
            return Err(AppError::UnsupportedEncoding(format!(
                "Content-Encoding {other:?} is not supported; use zstd, gzip or none"
            )));
        }
    };
    let mut decoded = Vec::with_capacity(raw.len() * 4);
    reader
        .take(max_decoded as u64 + 1)
        .read_to_end(&mut decoded)
        .map_err(|err| AppError::bad_request("body", format!("{encoding} body cannot be decoded: {err}")))?;
    if decoded.len() > max_decoded {
        return Err(AppError::TooLarge(format!("decoded request body is larger than {max_decoded} bytes")));
    }
    Ok(std::borrow::Cow::Owned(decoded))
}

#[cfg(test)]
mod fuzz;

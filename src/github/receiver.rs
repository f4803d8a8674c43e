//! `POST /github/webhooks` on the GitHub App listener.
//!
//! Invariants: the signature is checked over the raw body before anything else is
//! read (401, nothing stored); a delivery is committed to `webhook_deliveries` before
//! the 202 is sent, so a delivery GitHub saw acknowledged survives a crash; a
//! redelivery (same `X-GitHub-Delivery`) is acknowledged and not stored again.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::deliveries::{self, Incoming, Recorded};
use super::signature;
use crate::http::errors::AppError;
use crate::http::extract::Json;
use crate::state::AppState;

/// GitHub caps a webhook payload at 25 MB.
pub const MAX_BODY_BYTES: usize = 25 << 20;

/// The events the worker applies; others are recorded and ignored.
const HANDLED: &[&str] = &["pull_request", "check_run", "pull_request_review", "push"];

fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty())
}

pub async fn receive(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let secret = state.config.github.webhook_secret.0.clone();
    if secret.is_empty() {
        return Ok((
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"error": {"code": "unavailable", "message": "the webhook receiver is off: github.webhook_secret is not set"}})),
        )
            .into_response());
    }
    if let Err(err) = signature::verify(secret.as_bytes(), &body, header_text(&headers, "x-hub-signature-256")) {
        tracing::warn!(reason = %err, "webhook refused");
        return Err(AppError::Unauthorized);
    }
    let event = header_text(&headers, "x-github-event")
        .ok_or_else(|| AppError::bad_request("X-GitHub-Event", "the X-GitHub-Event header is missing"))?
        .to_string();
    let delivery_id = header_text(&headers, "x-github-delivery")
        .filter(|id| id.len() <= 100)
        .ok_or_else(|| {
            AppError::bad_request("X-GitHub-Delivery", "the X-GitHub-Delivery header is missing or too long")
        })?
        .to_string();
    let json_body = json_of(&headers, body)?;
    let value: serde_json::Value = serde_json::from_slice(&json_body)
        .map_err(|err| AppError::bad_request("body", format!("the payload is not JSON: {err}")))?;
    let action = value.get("action").and_then(|a| a.as_str()).map(str::to_string);
    let settled = match event.as_str() {
        "ping" => Some("applied"),
        e if HANDLED.contains(&e) => None,
        _ => Some("ignored"),
    };
    let received_at_ms = state.clock.now_ms();
    let recorded = {
        let (delivery_id, event) = (delivery_id.clone(), event.clone());
        state
            .writer
            .transact(move |tx| {
                let incoming = Incoming {
                    delivery_id: &delivery_id,
                    event: &event,
                    action: action.as_deref(),
                    received_at_ms,
                    body: &json_body,
                };
                deliveries::record(tx, &incoming, settled)
            })
            .await?
    };
    if matches!(recorded, Recorded::New | Recorded::Retried) && settled.is_none() {
        state.webhook_arrivals.notify_one();
    }
    let answer = match (event.as_str(), &recorded) {
        ("ping", _) => json!({"ok": true, "zen": "pong", "delivery": delivery_id}),
        (_, Recorded::Duplicate) => json!({"ok": true, "delivery": delivery_id, "duplicate": true}),
        (_, Recorded::New) => json!({"ok": true, "delivery": delivery_id, "handled": settled.is_none()}),
        (_, Recorded::Retried) => json!({"ok": true, "delivery": delivery_id, "retried": true}),
    };
    let status = if event == "ping" { StatusCode::OK } else { StatusCode::ACCEPTED };
    Ok((status, Json(answer)).into_response())
}

/// The JSON payload: the body itself, or its `payload` field when the App delivers
/// `application/x-www-form-urlencoded` (the signature covers the raw body either way).
fn json_of(headers: &HeaderMap, body: Bytes) -> Result<Vec<u8>, AppError> {
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
    if !form {
        return Ok(body.to_vec());
    }
    form_urlencoded::parse(&body)
        .find(|(key, _)| key == "payload")
        .map(|(_, value)| value.into_owned().into_bytes())
        .ok_or_else(|| AppError::bad_request("payload", "a form-encoded delivery has no payload field"))
}

//! `POST /v1/logs`, `/v1/metrics`, `/v1/traces` (and the same under the configured
//! prefix, `/otel/v1/...` by default): the agents' own OTLP/HTTP export. The
//! credential is read before the body (401 first); the body is read within the
//! ingest limits, decoded by its `Content-Type`, and a logs export's records become
//! events on the hook's path (`otlp::logs`, `batch::store`). Records refused are
//! counted in `partial_success`, as OTLP asks, never a retryable error.
//!
//! A metrics export adds what no event carries (lines of code, commits, active time)
//! to its sessions (`ingest::otlp_metrics`); a traces export's spans (Copilot's and
//! opencode's, whose telemetry is spans) become events as log records do.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use axum::response::Response;
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsPartialSuccess, ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use serde_json::value::RawValue;

use super::batch;
use super::otlp_senders;
use crate::http::body_deadline::BodyDeadline;
use crate::http::cookies::bearer;
use crate::http::errors::AppError;
use crate::metrics::{BatchOutcome, Signal};
use crate::model::RunKind;
use crate::model::wire::ClientInfo;
use crate::otlp::attributes::Attributes;
use crate::otlp::bounds::{Limits, Msg};
use crate::otlp::wire::Encoding;
use crate::otlp::{logs, traces};
use crate::state::AppState;

pub async fn post_logs(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let parts = &parts;
    let metrics = state.metrics.clone();
    answer(&metrics, Signal::Logs, &parts.headers, |encoding| async move {
        let received = std::time::Instant::now();
        let sender = otlp_sender(&state, parts).await?;
        let export: ExportLogsServiceRequest = read_decoded(&state, parts, body, encoding, Msg::LogsRequest).await?;
        Ok(encoding.answer(&otlp_senders::logs(&state, &sender, &export, received).await?))
    })
    .await
}

pub async fn post_metrics(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let parts = &parts;
    let metrics = state.metrics.clone();
    answer(&metrics, Signal::Metrics, &parts.headers, |encoding| async move {
        let sender = otlp_sender(&state, parts).await?;
        let export: ExportMetricsServiceRequest =
            read_decoded(&state, parts, body, encoding, Msg::MetricsRequest).await?;
        Ok(encoding.answer(&otlp_senders::metrics(&state, &sender, &export).await?))
    })
    .await
}

pub async fn post_traces(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let parts = &parts;
    let metrics = state.metrics.clone();
    answer(&metrics, Signal::Traces, &parts.headers, |encoding| async move {
        let received = std::time::Instant::now();
        let sender = otlp_sender(&state, parts).await?;
        let export: ExportTraceServiceRequest = read_decoded(&state, parts, body, encoding, Msg::TracesRequest).await?;
        Ok(encoding.answer(&otlp_senders::traces(&state, &sender, &export, received).await?))
    })
    .await
}

/// What one OTLP export may hold (`[ingest]`): its records and attribute lists, and its
/// decoded form at most three times the largest decoded body.
pub(crate) fn export_limits(config: &crate::config::Config) -> Limits {
    Limits {
        max_records: config.ingest.max_otlp_records,
        max_attributes: config.ingest.max_otlp_attributes,
        max_decoded_memory: 3 * config.ingest.max_decoded_bytes as u64,
    }
}

/// Runs `receive` with the request's encoding and answers its error in that encoding;
/// counts the export by how it ended (`sightline_otlp_exports_total`).
async fn answer<F, Fut>(metrics: &crate::metrics::Metrics, signal: Signal, headers: &HeaderMap, receive: F) -> Response
where
    F: FnOnce(Encoding) -> Fut,
    Fut: std::future::Future<Output = Result<Response, AppError>>,
{
    use axum::response::IntoResponse;
    let (answer, outcome) = match Encoding::of(headers) {
        Ok(encoding) => match receive(encoding).await {
            Ok(answer) => (answer, BatchOutcome::Accepted),
            Err(err) => {
                let outcome = BatchOutcome::of_http_status(err.status_and_message().0.as_u16());
                (encoding.error(err), outcome)
            }
        },
        Err(err) => (Encoding::Json.error(err).into_response(), BatchOutcome::UnsupportedEncoding),
    };
    metrics.count_export(signal, outcome);
    answer
}

/// Maps a logs export for `user_id` and stores its events on the hook's path; the answer
/// counts the records refused (by the mapping or by the wire contract) with the first
/// reasons. What no mapping used is noted for the drift view, and inventory reports are
/// stored as the person's capability sightings. OTLP/HTTP and OTLP/gRPC share it.
pub(crate) async fn store_logs(
    state: &Arc<AppState>,
    user_id: &str,
    fixed_run_kind: Option<RunKind>,
    request: &ExportLogsServiceRequest,
    received: std::time::Instant,
) -> Result<ExportLogsServiceResponse, AppError> {
    let resource = request.resource_logs.first().and_then(|logs| logs.resource.as_ref());
    let attributes = resource.map(|r| r.attributes.as_slice()).unwrap_or_default();
    let (client, agent) = (client_of(attributes), agent_of(attributes));
    let mut mapped = logs::map(request, user_id);
    state.unmapped.note(std::mem::take(&mut mapped.unmapped), state.clock.now_ms());
    let capabilities = std::mem::take(&mut mapped.capabilities);
    let refused = store_events(state, user_id, fixed_run_kind, client, mapped, received, (Signal::Logs, agent)).await?;
    if !capabilities.is_empty() {
        let (user_id, now_ms) = (user_id.to_string(), state.clock.now_ms());
        state.write(move |tx| crate::sessions::capabilities::record(tx, &user_id, &capabilities, now_ms)).await?;
    }
    let partial_success = refused.map(|(rejected, error_message)| ExportLogsPartialSuccess {
        rejected_log_records: rejected as i64,
        error_message: format!("{rejected} log records refused: {error_message}"),
    });
    Ok(ExportLogsServiceResponse { partial_success })
}

/// Maps a traces export (Copilot's and opencode's spans) for `user_id` and stores its
/// events as [`store_logs`] does.
pub(crate) async fn store_traces(
    state: &Arc<AppState>,
    user_id: &str,
    fixed_run_kind: Option<RunKind>,
    request: &ExportTraceServiceRequest,
    received: std::time::Instant,
) -> Result<ExportTraceServiceResponse, AppError> {
    let resource = request.resource_spans.first().and_then(|spans| spans.resource.as_ref());
    let attributes = resource.map(|r| r.attributes.as_slice()).unwrap_or_default();
    let (client, agent) = (client_of(attributes), agent_of(attributes));
    let mapped = {
        let mut sessions = state.trace_sessions.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        traces::map(request, user_id, &mut sessions)
    };
    let refused =
        store_events(state, user_id, fixed_run_kind, client, mapped, received, (Signal::Traces, agent)).await?;
    let partial_success = refused.map(|(rejected, error_message)| ExportTracePartialSuccess {
        rejected_spans: rejected as i64,
        error_message: format!("{rejected} spans refused: {error_message}"),
    });
    Ok(ExportTraceServiceResponse { partial_success })
}

/// Stores mapped events on the hook's path; answers how many records were refused (by
/// the mapping or by the wire contract) and the first reasons, if any were. The records
/// are counted under `signal` and the exporter's `agent` ([`agent_of`]).
async fn store_events(
    state: &Arc<AppState>,
    user_id: &str,
    fixed_run_kind: Option<RunKind>,
    client: ClientInfo,
    mapped: logs::Mapped,
    received: std::time::Instant,
    (signal, agent): (Signal, &'static str),
) -> Result<Option<(u64, String)>, AppError> {
    let raw: Vec<Box<RawValue>> = mapped
        .events
        .iter()
        .map(|event| serde_json::value::to_raw_value(event).map_err(|err| AppError::Internal(err.to_string())))
        .collect::<Result<_, _>>()?;
    let refs: Vec<&RawValue> = raw.iter().map(|event| event.as_ref()).collect();
    let outcome = batch::store(state, user_id, fixed_run_kind, &client, &refs, received).await?;
    let mut reasons = mapped.reasons;
    for rejected in outcome.rejected.iter().take(5usize.saturating_sub(reasons.len())) {
        reasons.push(format!("{}: {}", rejected.field, rejected.reason));
    }
    let rejected = mapped.refused + outcome.rejected.len() as u64;
    let accepted = (mapped.events.len() - outcome.rejected.len()) as u64;
    state.metrics.count_otlp_records(signal, agent, accepted, mapped.skipped, rejected);
    Ok((rejected > 0).then(|| (rejected, reasons.join("; "))))
}

async fn read_decoded<T>(
    state: &Arc<AppState>,
    parts: &Parts,
    body: Body,
    encoding: Encoding,
    root: Msg,
) -> Result<T, AppError>
where
    T: prost::Message + Default + serde::de::DeserializeOwned,
{
    // Exporters seldom compress (gzip is opt-in), so the raw body may be as large as
    // a decoded hook batch.
    let limit = state.config.ingest.max_decoded_bytes;
    let raw = batch::read_body(&parts.headers, body, limit).await?;
    let decoded = batch::decode(&parts.headers, &raw, limit)?;
    encoding.decode_bounded(&decoded, root, &export_limits(&state.config))
}

/// Who an OTLP credential is: a person (an OTLP or hook token) or a service account.
/// Known before the body is read, which may then take an upload's time.
async fn otlp_sender(state: &Arc<AppState>, parts: &Parts) -> Result<otlp_senders::Sender, AppError> {
    let secret = bearer(&parts.headers).ok_or(AppError::Unauthorized)?.to_string();
    let sender = otlp_senders::sender_of(state, secret).await?;
    BodyDeadline::authenticated(&parts.extensions);
    Ok(sender)
}

/// The `agent` label of an export's records: its first resource's `service.name`, mapped
/// onto the fixed list of `metrics::OTLP_AGENTS` (`other` for any name not an agent's).
pub(crate) fn agent_of(resource: &[opentelemetry_proto::tonic::common::v1::KeyValue]) -> &'static str {
    let service = Attributes::of(resource, &[]).text("service.name").unwrap_or_default();
    crate::metrics::otlp_agent(&service)
}

/// The sending machine as the export's first resource describes it.
fn client_of(resource: &[opentelemetry_proto::tonic::common::v1::KeyValue]) -> ClientInfo {
    let attributes = Attributes::of(resource, &[]);
    let clip = |text: String, max: usize| text.chars().take(max).collect::<String>();
    let service = attributes.text("service.name").unwrap_or_else(|| "otlp".into());
    let version = attributes.text("service.version").unwrap_or_else(|| "unknown".into());
    ClientInfo {
        machine_id: clip(attributes.first_text(&["host.name", "host.id"]).unwrap_or_else(|| "otlp".into()), 128),
        cli_version: clip(format!("{service} {version}"), 64),
        os: clip(attributes.first_text(&["os.type", "os"]).unwrap_or_else(|| "unknown".into()), 64),
    }
}

//! `POST /v1/logs`, `/v1/metrics`, `/v1/traces` (and the same under the configured
//! prefix, `/otel/v1/...` by default): the agents' own OTLP/HTTP export. The
//! credential is read before the body (401 first); the body is read within the
//! ingest limits (`ingest::body`), decoded by its `Content-Type`, and handed to the
//! export's sender (`ingest::otlp_senders`), whose records take the pipeline's path;
//! a refusal is answered in the request's encoding.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use axum::response::Response;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;

use super::body::{decode, export_limits, read_body};
use super::error::IngestError;
use super::otlp_senders;
use crate::http::body_deadline::BodyDeadline;
use crate::http::cookies::bearer;
use crate::metrics::{BatchOutcome, Signal};
use crate::otlp::bounds::Msg;
use crate::otlp::wire::Encoding;
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

/// Runs `receive` with the request's encoding and answers its error in that encoding;
/// counts the export by how it ended (`sightline_otlp_exports_total`).
async fn answer<F, Fut>(metrics: &crate::metrics::Metrics, signal: Signal, headers: &HeaderMap, receive: F) -> Response
where
    F: FnOnce(Encoding) -> Fut,
    Fut: std::future::Future<Output = Result<Response, IngestError>>,
{
    let (answer, outcome) = match Encoding::of(headers) {
        Ok(encoding) => match receive(encoding).await {
            Ok(answer) => (answer, BatchOutcome::Accepted),
            Err(err) => {
                let outcome = err.outcome();
                (encoding.error(err.into()), outcome)
            }
        },
        Err(refusal) => {
            let err = IngestError::from(refusal);
            let outcome = err.outcome();
            (Encoding::Json.error(err.into()), outcome)
        }
    };
    metrics.count_export(signal, outcome);
    answer
}

async fn read_decoded<T>(
    state: &Arc<AppState>,
    parts: &Parts,
    body: Body,
    encoding: Encoding,
    root: Msg,
) -> Result<T, IngestError>
where
    T: prost::Message + Default + serde::de::DeserializeOwned,
{
    // Exporters seldom compress (gzip is opt-in), so the raw body may be as large as
    // a decoded hook batch.
    let limit = state.config.ingest.max_decoded_bytes;
    let raw = read_body(&parts.headers, body, limit).await?;
    let decoded = decode(&parts.headers, &raw, limit)?;
    Ok(encoding.decode_bounded(&decoded, root, &export_limits(&state.config))?)
}

/// Who an OTLP credential is: a person (an OTLP or hook token) or a service account.
/// Known before the body is read, which may then take an upload's time.
async fn otlp_sender(state: &Arc<AppState>, parts: &Parts) -> Result<otlp_senders::Sender, IngestError> {
    let secret = bearer(&parts.headers).ok_or(IngestError::Unauthorized)?.to_string();
    let sender = otlp_senders::sender_of(state, secret).await?;
    BodyDeadline::authenticated(&parts.extensions);
    Ok(sender)
}

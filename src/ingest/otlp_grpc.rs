//! OTLP/gRPC on its own listener (`listen.otlp_grpc`, HTTP/2 served by `http::serve`
//! with the same connection limits as every listener; mounted in `app::routes`): the
//! collector services' three unary `Export` calls, for exporters whose default is gRPC (Gemini CLI; Claude Code
//! with `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`). Exports take the same path as over HTTP
//! (`otlp_senders`), framed by `otlp::grpc`; a refusal (`ingest::error::IngestError`)
//! is answered in gRPC's codes by its own `From` impl.
//!
//! Invariants: the credential (`authorization: Bearer …` metadata) is checked from the
//! headers before a byte of the body is read, so an unauthenticated request costs no
//! body; the body is read within the ingest limits, decompressed within
//! `ingest.max_decoded_bytes`, and walked within the export limits (`otlp::bounds`)
//! before it is decoded; errors are the codes OTLP names (`otlp::grpc`).

use std::borrow::Cow;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::Response;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;

use super::body::{decode_named, export_limits, read_body};
use super::error::IngestError;
use super::otlp_senders::{self, Sender, sender_of};
use crate::http::body_deadline::BodyDeadline;
use crate::metrics::{BatchOutcome, Signal};
use crate::otlp::bounds::Msg;
use crate::otlp::grpc::{self, Code, Status};
pub use crate::otlp::grpc::{LOGS_PATH, METRICS_PATH, TRACES_PATH};
use crate::otlp::wire::Encoding;
use crate::state::AppState;

/// Answers a call of a service this listener does not serve.
pub async fn unimplemented() -> Response {
    Status::new(Code::Unimplemented, "this listener serves OTLP's logs, metrics and trace services only")
        .into_response()
}

pub async fn export_logs(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let received = std::time::Instant::now();
    unary(
        &state,
        request,
        Msg::LogsRequest,
        async |state: &Arc<AppState>, sender: Sender, export: ExportLogsServiceRequest| {
            otlp_senders::logs(state, &sender, &export, received).await
        },
    )
    .await
}

pub async fn export_metrics(State(state): State<Arc<AppState>>, request: Request) -> Response {
    unary(
        &state,
        request,
        Msg::MetricsRequest,
        async |state: &Arc<AppState>, sender: Sender, export: ExportMetricsServiceRequest| {
            otlp_senders::metrics(state, &sender, &export).await
        },
    )
    .await
}

pub async fn export_traces(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let received = std::time::Instant::now();
    unary(
        &state,
        request,
        Msg::TracesRequest,
        async |state: &Arc<AppState>, sender: Sender, export: ExportTraceServiceRequest| {
            otlp_senders::traces(state, &sender, &export, received).await
        },
    )
    .await
}

/// One unary call: the caller from the headers, then the body, the export, the answer.
async fn unary<T, R>(
    state: &Arc<AppState>,
    request: Request,
    root: Msg,
    handle: impl AsyncFnOnce(&Arc<AppState>, Sender, T) -> Result<R, IngestError>,
) -> Response
where
    T: prost::Message + Default + serde::de::DeserializeOwned,
    R: prost::Message,
{
    if !grpc::is_grpc(request.headers()) {
        return grpc::not_grpc();
    }
    let (parts, body) = request.into_parts();
    let received = async {
        let sender = caller(state, &parts.headers).await?;
        BodyDeadline::authenticated(&parts.extensions);
        let compression = grpc::encoding(&parts.headers)?;
        let limit = state.config.ingest.max_decoded_bytes;
        // The 5-byte prefix and the message as sent (compressed or not).
        let raw = read_body(&parts.headers, body, limit + 5).await?;
        let (compressed, message) = grpc::message(&raw)?;
        let message = match (compressed, compression) {
            (false, _) => Cow::Borrowed(message),
            (true, Some(name)) => decode_named(name, message, limit)?,
            (true, None) => {
                return Err(Status::new(
                    Code::Internal,
                    "the message is flagged compressed and grpc-encoding names none",
                ));
            }
        };
        let export: T = Encoding::Protobuf
            .decode_bounded(&message, root, &export_limits(&state.config))
            .map_err(IngestError::from)?;
        let answer = handle(state, sender, export).await?;
        Ok(grpc::ok(&answer))
    };
    let signal = match root {
        Msg::MetricsRequest => Signal::Metrics,
        Msg::TracesRequest => Signal::Traces,
        _ => Signal::Logs,
    };
    match received.await {
        Ok(answer) => {
            state.metrics.count_export(signal, BatchOutcome::Accepted);
            answer
        }
        Err(refused) => {
            state.metrics.count_export(signal, outcome_of(&refused));
            refused.into_response()
        }
    }
}

/// How an export refused over gRPC counts (`sightline_otlp_exports_total`).
fn outcome_of(refused: &Status) -> BatchOutcome {
    match refused.code {
        Code::Unauthenticated => BatchOutcome::Unauthorized,
        Code::ResourceExhausted => BatchOutcome::TooLarge,
        Code::Unavailable => BatchOutcome::StorageUnavailable,
        Code::DeadlineExceeded => BatchOutcome::TimedOut,
        Code::InvalidArgument => BatchOutcome::Malformed,
        Code::Unimplemented | Code::Internal => BatchOutcome::Internal,
    }
}

/// Who sent the call, from its `authorization` metadata alone.
async fn caller(state: &Arc<AppState>, headers: &axum::http::HeaderMap) -> Result<Sender, Status> {
    let secret = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .and_then(|value| value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")))
        .map(|secret| secret.trim().to_string())
        .ok_or_else(|| {
            Status::new(Code::Unauthenticated, "missing credentials: send authorization: Bearer <OTLP or hook token>")
        })?;
    Ok(sender_of(state, secret).await?)
}

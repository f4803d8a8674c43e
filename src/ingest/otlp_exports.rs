//! An OTLP export's records, stored for one person: a logs or traces export mapped to
//! drafts (`otlp::logs`, `otlp::traces`) and accepted by the pipeline
//! (`ingest::pipeline`) like a hook's batch, with what no mapping used noted for the
//! drift view and the agents' inventory reports stored as the person's capability
//! sightings. OTLP/HTTP and OTLP/gRPC share it (through `ingest::otlp_senders`, which
//! first splits a collector's export by person). Records refused are counted in
//! `partial_success`, as OTLP asks, never as a retryable error.

use std::sync::Arc;

use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsPartialSuccess, ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};

use super::error::IngestError;
use super::pipeline::{self, Batch};
use crate::metrics::Signal;
use crate::model::RunKind;
use crate::model::wire::ClientInfo;
use crate::otlp::attributes::Attributes;
use crate::otlp::{logs, traces};
use crate::state::AppState;

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
) -> Result<ExportLogsServiceResponse, IngestError> {
    let (client, agent) = origin(request.resource_logs.first().and_then(|logs| logs.resource.as_ref()));
    let mut mapped = logs::map(request, user_id);
    state.unmapped.note(std::mem::take(&mut mapped.unmapped), state.clock.now_ms());
    let capabilities = std::mem::take(&mut mapped.capabilities);
    let refused = store_events(state, user_id, fixed_run_kind, client, mapped, received, (Signal::Logs, agent)).await?;
    if !capabilities.is_empty() {
        let (user_id, now_ms) = (user_id.to_string(), state.clock.now_ms());
        state
            .writer
            .transact(move |tx| crate::sessions::capabilities::record(tx, &user_id, &capabilities, now_ms))
            .await?;
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
) -> Result<ExportTraceServiceResponse, IngestError> {
    let (client, agent) = origin(request.resource_spans.first().and_then(|spans| spans.resource.as_ref()));
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

/// Stores mapped events through the pipeline; answers how many records were refused (by
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
) -> Result<Option<(u64, String)>, IngestError> {
    let mapped_events = mapped.events.len();
    let drafts = mapped.events.into_iter().map(Ok);
    let batch = Batch { user_id, fixed_run_kind, client: &client, drafts, received };
    let outcome = pipeline::accept(state, batch).await?;
    let mut reasons = mapped.reasons;
    for rejected in outcome.rejected.iter().take(5usize.saturating_sub(reasons.len())) {
        reasons.push(format!("{}: {}", rejected.field, rejected.reason));
    }
    let rejected = mapped.refused + outcome.rejected.len() as u64;
    let accepted = (mapped_events - outcome.rejected.len()) as u64;
    state.metrics.count_otlp_records(signal, agent, accepted, mapped.skipped, rejected);
    Ok((rejected > 0).then(|| (rejected, reasons.join("; "))))
}

/// The `agent` label of an export's records: its first resource's `service.name`, mapped
/// onto the fixed list of `metrics::OTLP_AGENTS` (`other` for any name not an agent's).
pub(crate) fn agent_of(resource: &[opentelemetry_proto::tonic::common::v1::KeyValue]) -> &'static str {
    let service = Attributes::of(resource, &[]).text("service.name").unwrap_or_default();
    crate::metrics::otlp_agent(&service)
}

/// The sending machine and the `agent` label, from an export's first resource.
fn origin(resource: Option<&opentelemetry_proto::tonic::resource::v1::Resource>) -> (ClientInfo, &'static str) {
    let attributes = resource.map(|r| r.attributes.as_slice()).unwrap_or_default();
    (client_of(attributes), agent_of(attributes))
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

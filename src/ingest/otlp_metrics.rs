//! An OTLP metrics export, stored: the data points `otlp::metrics` keeps (lines of
//! code, commits, pull requests, active time) are added to their sessions' reported
//! totals (`sessions::reported`) in one main.db transaction. OTLP/HTTP and OTLP/gRPC
//! share it. Points refused (no session, no time, a negative value) are counted in
//! `partial_success`; series we do not keep (tokens and cost, which the log events
//! carry exactly) are accepted and not stored.

use std::sync::Arc;

use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsPartialSuccess, ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};

use super::error::IngestError;
use crate::metrics::Signal;
use crate::otlp::metrics::{self, Measure};
use crate::sessions::reported::{self, Column, Reading};
use crate::state::AppState;

/// Maps and stores a metrics export for `user_id`.
pub(crate) async fn store_metrics(
    state: &Arc<AppState>,
    user_id: &str,
    request: &ExportMetricsServiceRequest,
) -> Result<ExportMetricsServiceResponse, IngestError> {
    let mapped = metrics::map(request, user_id);
    let resource = request.resource_metrics.first().and_then(|r| r.resource.as_ref());
    let agent = super::otlp_exports::agent_of(resource.map(|r| r.attributes.as_slice()).unwrap_or_default());
    let accepted = mapped.points.len() as u64;
    let (points, owner, now_ms) = (mapped.points, user_id.to_string(), state.clock.now_ms());
    if !points.is_empty() {
        state
            .writer
            .transact(move |tx| {
                let readings: Vec<Reading<'_>> = points
                    .iter()
                    .map(|point| Reading {
                        agent_type: point.agent.as_str(),
                        session_id: &point.session_id,
                        column: column(point.measure),
                        series: &point.series,
                        start_nanos: point.start_nanos,
                        time_nanos: point.time_nanos,
                        value: point.value,
                        cumulative: point.cumulative,
                    })
                    .collect();
                reported::apply(tx, &owner, &readings, now_ms)
            })
            .await?;
    }
    state.metrics.count_otlp_records(Signal::Metrics, agent, accepted, mapped.skipped, mapped.refused);
    let partial_success = (mapped.refused > 0).then(|| ExportMetricsPartialSuccess {
        rejected_data_points: mapped.refused as i64,
        error_message: format!("{} data points refused: {}", mapped.refused, mapped.reasons.join("; ")),
    });
    Ok(ExportMetricsServiceResponse { partial_success })
}

fn column(measure: Measure) -> Column {
    match measure {
        Measure::LinesAdded => Column::LinesAdded,
        Measure::LinesRemoved => Column::LinesRemoved,
        Measure::Commits => Column::Commits,
        Measure::PullRequests => Column::PullRequests,
        Measure::ActiveUserSeconds => Column::ActiveUserSeconds,
        Measure::ActiveAgentSeconds => Column::ActiveAgentSeconds,
    }
}

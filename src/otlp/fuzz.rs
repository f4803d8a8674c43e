//! Generated OTLP exports (`fuzz_otlp_*`, see `model::arbitrary`): the vendors' fixtures
//! bent by edits (any node replaced by JSON of another type or removed) and their bytes
//! cut or flipped, as OTLP/JSON and as protobuf. Whatever arrives, decoding never panics
//! and a body that cannot be read is a bad request naming it; every record of an export
//! that decodes is mapped, skipped or refused with a reason; every event the mapping makes
//! is either a valid wire event or refused naming its field, and carries no prompt text.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use proptest::prelude::*;
use prost::Message;
use serde_json::Value;

use super::bounds::Refusal;
use super::logs::map;
use super::wire::Encoding;
use crate::model::arbitrary::{damage, damaged, edited, edits};
use crate::model::wire::{EventLimits, validate};

const FIXTURES: [&str; 5] = [
    include_str!("../../tests/fixtures/otlp/claude_code_logs.json"),
    include_str!("../../tests/fixtures/otlp/claude_code_logs_numeric.json"),
    include_str!("../../tests/fixtures/otlp/codex_logs.json"),
    include_str!("../../tests/fixtures/otlp/gemini_cli_logs.json"),
    include_str!("../../tests/fixtures/otlp/qwen_code_logs.json"),
];

/// The fixtures' records are from 2026; the wire contract is checked as of then.
const THEN_MS: i64 = 1_778_400_000_000;

fn check(request: &ExportLogsServiceRequest) -> Result<(), TestCaseError> {
    let records: usize =
        request.resource_logs.iter().flat_map(|r| &r.scope_logs).map(|scope| scope.log_records.len()).sum();
    let mapped = map(request, "user-1");
    prop_assert_eq!(mapped.events.len() as u64 + mapped.skipped + mapped.refused, records as u64);
    prop_assert!(mapped.reasons.iter().all(|reason| !reason.is_empty()));
    let limits = EventLimits { max_age_ms: i64::MAX / 4, max_future_skew_ms: i64::MAX / 4, ..EventLimits::default() };
    for event in &mapped.events {
        let text = serde_json::to_string(event).unwrap();
        prop_assert!(!text.contains("AKIAIOSFODNN7EXAMPLE") && !text.contains("dark mode"), "content: {text}");
        if let Err(rejection) = validate(event.clone(), &limits, THEN_MS) {
            prop_assert!(!rejection.field.is_empty() && !rejection.reason.is_empty(), "{rejection:?}");
        }
    }
    Ok(())
}

fn refused_as_bad(error: Refusal) -> Result<(), TestCaseError> {
    match error {
        Refusal::Malformed(message) => prop_assert!(!message.is_empty()),
        other => prop_assert!(false, "an export that cannot be read is a bad request, not {other:?}"),
    }
    Ok(())
}

proptest! {
    #[test]
    fn fuzz_otlp_json_exports(which in 0usize..5, edits in edits(), (cut, flips) in damage()) {
        let fixture: Value = serde_json::from_str(FIXTURES[which]).unwrap();
        let body = serde_json::to_vec(&edited(&fixture, &edits)).unwrap();
        let body = damaged(&body, cut, &flips);
        match Encoding::Json.decode::<ExportLogsServiceRequest>(&body, "logs") {
            Ok(request) => check(&request)?,
            Err(error) => refused_as_bad(error)?,
        }
    }

    #[test]
    fn fuzz_otlp_protobuf_exports(which in 0usize..5, (cut, flips) in damage()) {
        let request: ExportLogsServiceRequest = serde_json::from_str(FIXTURES[which]).unwrap();
        let body = damaged(&request.encode_to_vec(), cut, &flips);
        match Encoding::Protobuf.decode::<ExportLogsServiceRequest>(&body, "logs") {
            Ok(request) => check(&request)?,
            Err(error) => refused_as_bad(error)?,
        }
    }
}

const SPAN_FIXTURES: [&str; 2] = [
    include_str!("../../tests/fixtures/otlp/copilot_cli_traces.json"),
    include_str!("../../tests/fixtures/otlp/opencode_traces.json"),
];

const METRIC_FIXTURE: &str = include_str!("../../tests/fixtures/otlp/claude_code_metrics.json");

proptest! {
    /// Traces: every span is mapped, skipped or refused with a reason, and every event is
    /// valid or refused naming its field, whatever the edits.
    #[test]
    fn fuzz_otlp_trace_exports(which in 0usize..2, edits in edits(), (cut, flips) in damage()) {
        use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
        let fixture: Value = serde_json::from_str(SPAN_FIXTURES[which]).unwrap();
        let body = damaged(&serde_json::to_vec(&edited(&fixture, &edits)).unwrap(), cut, &flips);
        match Encoding::Json.decode::<ExportTraceServiceRequest>(&body, "traces") {
            Ok(request) => {
                let spans: usize = request.resource_spans.iter().flat_map(|r| &r.scope_spans).map(|s| s.spans.len()).sum();
                let mapped = super::traces::map(&request, "user-1", &mut Default::default());
                prop_assert_eq!(mapped.events.len() as u64 + mapped.skipped + mapped.refused, spans as u64);
                let limits = EventLimits { max_age_ms: i64::MAX / 4, max_future_skew_ms: i64::MAX / 4, ..EventLimits::default() };
                for event in &mapped.events {
                    let text = serde_json::to_string(event).unwrap();
                    prop_assert!(!text.contains("export const app"), "content: {text}");
                    if let Err(rejection) = validate(event.clone(), &limits, THEN_MS) {
                        prop_assert!(!rejection.field.is_empty() && !rejection.reason.is_empty(), "{rejection:?}");
                    }
                }
            }
            Err(error) => refused_as_bad(error)?,
        }
    }

    /// Metrics: every kept point has a finite, non-negative value and a session.
    #[test]
    fn fuzz_otlp_metric_exports(edits in edits(), (cut, flips) in damage()) {
        use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
        let fixture: Value = serde_json::from_str(METRIC_FIXTURE).unwrap();
        let body = damaged(&serde_json::to_vec(&edited(&fixture, &edits)).unwrap(), cut, &flips);
        match Encoding::Json.decode::<ExportMetricsServiceRequest>(&body, "metrics") {
            Ok(request) => {
                let mapped = super::metrics::map(&request, "user-1");
                for point in &mapped.points {
                    prop_assert!(point.value.is_finite() && point.value >= 0.0 && !point.session_id.is_empty());
                }
                prop_assert_eq!(mapped.refused == 0, mapped.reasons.is_empty());
            }
            Err(error) => refused_as_bad(error)?,
        }
    }
}

//! The walk against the vendors' fixtures (`tests/fixtures/otlp/`), against hostile
//! bodies (millions of empty records, one huge attribute list, deep nesting, cut-short
//! protobuf), and, over generated exports, against what decoding really allocates: the
//! walk's figure is never below the decoded value's size.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, ArrayValue, KeyValue, KeyValueList, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use proptest::prelude::*;
use prost::Message;

use super::*;
use crate::otlp::tests::attribute;

const LIMITS: Limits = Limits { max_records: 20_000, max_attributes: 1024, max_decoded_memory: 24 << 20 };

fn fixture(name: &str) -> &'static str {
    match name {
        "claude_code_logs" => include_str!("../../../tests/fixtures/otlp/claude_code_logs.json"),
        "codex_logs" => include_str!("../../../tests/fixtures/otlp/codex_logs.json"),
        "gemini_cli_logs" => include_str!("../../../tests/fixtures/otlp/gemini_cli_logs.json"),
        "claude_code_metrics" => include_str!("../../../tests/fixtures/otlp/claude_code_metrics.json"),
        "copilot_cli_traces" => include_str!("../../../tests/fixtures/otlp/copilot_cli_traces.json"),
        "opencode_traces" => include_str!("../../../tests/fixtures/otlp/opencode_traces.json"),
        other => panic!("no fixture {other}"),
    }
}

fn log_records(request: &ExportLogsServiceRequest) -> u64 {
    request.resource_logs.iter().flat_map(|r| &r.scope_logs).map(|s| s.log_records.len() as u64).sum()
}

#[test]
fn the_vendors_exports_pass_in_both_encodings_with_their_records_counted() {
    for name in ["claude_code_logs", "codex_logs", "gemini_cli_logs"] {
        let text = fixture(name);
        let request: ExportLogsServiceRequest = serde_json::from_str(text).unwrap();
        let from_json = check_json(text.as_bytes(), Msg::LogsRequest, &LIMITS).unwrap();
        let from_protobuf = check_protobuf(&request.encode_to_vec(), Msg::LogsRequest, &LIMITS).unwrap();
        assert_eq!(
            (from_json.records, from_protobuf.records),
            (log_records(&request), log_records(&request)),
            "{name}"
        );
        assert!(from_json.largest_list >= 5, "{name}: the records' attributes are counted");
    }
    let text = fixture("claude_code_metrics");
    let request: ExportMetricsServiceRequest = serde_json::from_str(text).unwrap();
    let points = check_protobuf(&request.encode_to_vec(), Msg::MetricsRequest, &LIMITS).unwrap().records;
    assert_eq!(check_json(text.as_bytes(), Msg::MetricsRequest, &LIMITS).unwrap().records, points);
    assert!(points > 0);
    for name in ["copilot_cli_traces", "opencode_traces"] {
        let text = fixture(name);
        let request: ExportTraceServiceRequest = serde_json::from_str(text).unwrap();
        let spans: u64 = request.resource_spans.iter().flat_map(|r| &r.scope_spans).map(|s| s.spans.len() as u64).sum();
        assert_eq!(check_protobuf(&request.encode_to_vec(), Msg::TracesRequest, &LIMITS).unwrap().records, spans);
        assert_eq!(check_json(text.as_bytes(), Msg::TracesRequest, &LIMITS).unwrap().records, spans, "{name}");
    }
}

/// The body of the finding: four million empty log records, two bytes each.
fn empty_records(count: usize) -> Vec<u8> {
    let mut scope = Vec::with_capacity(count * 2 + 16);
    for _ in 0..count {
        scope.extend_from_slice(&[0x12, 0x00]); // ScopeLogs.log_records (2), empty
    }
    let mut resource = Vec::new();
    resource.push(0x12); // ResourceLogs.scope_logs (2)
    push_varint(&mut resource, scope.len() as u64);
    resource.extend_from_slice(&scope);
    let mut request = vec![0x0a]; // ExportLogsServiceRequest.resource_logs (1)
    push_varint(&mut request, resource.len() as u64);
    request.extend_from_slice(&resource);
    request
}

fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[test]
fn millions_of_empty_records_are_refused_at_the_record_limit() {
    let body = empty_records(4_000_000);
    assert_eq!(ExportLogsServiceRequest::decode(&body[..]).map(|r| log_records(&r)).ok(), Some(4_000_000));
    match check_protobuf(&body, Msg::LogsRequest, &LIMITS) {
        Err(Refusal::TooLarge(message)) => assert!(message.contains("more than 20000 records"), "{message}"),
        other => panic!("{other:?}"),
    }
    let json = format!("{{\"resourceLogs\":[{{\"scopeLogs\":[{{\"logRecords\":[{}{{}}]}}]}}]}}", "{},".repeat(30_000));
    match check_json(json.as_bytes(), Msg::LogsRequest, &LIMITS) {
        Err(Refusal::TooLarge(message)) => assert!(message.contains("records"), "{message}"),
        other => panic!("{other:?}"),
    }
    let within = empty_records(20_000);
    assert_eq!(check_protobuf(&within, Msg::LogsRequest, &LIMITS).unwrap().records, 20_000);
}

fn one_record(attributes: Vec<KeyValue>, body: Option<AnyValue>) -> ExportLogsServiceRequest {
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            scope_logs: vec![ScopeLogs {
                log_records: vec![LogRecord { attributes, body, ..Default::default() }],
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

#[test]
fn an_attribute_list_past_the_limit_is_refused_and_one_at_it_passes() {
    let many = |n: usize| (0..n).map(|i| attribute(&format!("k{i}"), any_value::Value::IntValue(1))).collect();
    let at_limit = one_record(many(1024), None);
    assert_eq!(check_protobuf(&at_limit.encode_to_vec(), Msg::LogsRequest, &LIMITS).unwrap().largest_list, 1024);
    let json = serde_json::to_vec(&at_limit).unwrap();
    assert_eq!(check_json(&json, Msg::LogsRequest, &LIMITS).unwrap().largest_list, 1024);
    let past = one_record(many(1025), None);
    for refused in [
        check_protobuf(&past.encode_to_vec(), Msg::LogsRequest, &LIMITS),
        check_json(&serde_json::to_vec(&past).unwrap(), Msg::LogsRequest, &LIMITS),
    ] {
        assert!(matches!(&refused, Err(Refusal::TooLarge(m)) if m.contains("1024 attributes")), "{refused:?}");
    }
}

#[test]
fn a_flood_of_tiny_attributes_is_refused_by_its_decoded_size() {
    // Empty key-value pairs spread over many records: within the attribute and record
    // limits, but each two wire bytes decode to a whole KeyValue.
    let mut body = Vec::new();
    let record = {
        let mut record = Vec::new();
        for _ in 0..1000 {
            record.extend_from_slice(&[0x32, 0x00]); // LogRecord.attributes (6), empty
        }
        record
    };
    let mut scope = Vec::new();
    for _ in 0..2000 {
        scope.push(0x12);
        push_varint(&mut scope, record.len() as u64);
        scope.extend_from_slice(&record);
    }
    let mut resource = vec![0x12];
    push_varint(&mut resource, scope.len() as u64);
    resource.extend_from_slice(&scope);
    body.push(0x0a);
    push_varint(&mut body, resource.len() as u64);
    body.extend_from_slice(&resource);
    assert!(body.len() < 8 << 20);
    match check_protobuf(&body, Msg::LogsRequest, &LIMITS) {
        Err(Refusal::TooLarge(message)) => assert!(message.contains("bytes of memory"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn nesting_past_the_depth_is_malformed_and_cut_short_protobuf_too() {
    let mut value = AnyValue { value: Some(any_value::Value::IntValue(1)) };
    for _ in 0..60 {
        value = AnyValue { value: Some(any_value::Value::ArrayValue(ArrayValue { values: vec![value] })) };
    }
    let deep = one_record(Vec::new(), Some(value));
    assert!(matches!(check_protobuf(&deep.encode_to_vec(), Msg::LogsRequest, &LIMITS), Err(Refusal::Malformed(_))));
    assert!(matches!(
        check_json(&serde_json::to_vec(&deep).unwrap(), Msg::LogsRequest, &LIMITS),
        Err(Refusal::Malformed(_))
    ));
    let whole = one_record(vec![attribute("a", any_value::Value::StringValue("b".into()))], None).encode_to_vec();
    for cut in 1..whole.len() {
        assert!(check_protobuf(&whole[..cut], Msg::LogsRequest, &LIMITS).is_err(), "cut at {cut}");
    }
    assert!(matches!(check_json(b"{\"resourceLogs\": [", Msg::LogsRequest, &LIMITS), Err(Refusal::Malformed(_))));
    assert!(matches!(check_json(b"[1, 2]", Msg::LogsRequest, &LIMITS), Err(Refusal::Malformed(_))));
}

#[test]
fn every_shape_fits_the_walks_per_field_counts() {
    use schema::Msg::*;
    for msg in [
        LogsRequest,
        ResourceLogs,
        ScopeLogs,
        LogRecord,
        TracesRequest,
        ResourceSpans,
        ScopeSpans,
        Span,
        SpanEvent,
        SpanLink,
        SpanStatus,
        MetricsRequest,
        ResourceMetrics,
        ScopeMetrics,
        Metric,
        Gauge,
        Sum,
        Histogram,
        ExponentialHistogram,
        Summary,
        NumberPoint,
        HistogramPoint,
        ExponentialHistogramPoint,
        Buckets,
        SummaryPoint,
        Quantile,
        Exemplar,
        Resource,
        Scope,
        EntityRef,
        KeyValue,
        AnyValue,
        ArrayValue,
        KeyValueList,
    ] {
        assert!(schema::shape(msg).fields.len() <= 8, "{msg:?}");
    }
}

/// What a decoded logs export holds on the heap and inline, element by element: the
/// figure the walk must never fall below.
fn decoded_size(request: &ExportLogsServiceRequest) -> u64 {
    use std::mem::size_of;
    fn value(v: &AnyValue) -> u64 {
        match &v.value {
            Some(any_value::Value::StringValue(s)) => s.len() as u64,
            Some(any_value::Value::BytesValue(b)) => b.len() as u64,
            Some(any_value::Value::ArrayValue(a)) => {
                a.values.iter().map(|v| size_of::<AnyValue>() as u64 + value(v)).sum()
            }
            Some(any_value::Value::KvlistValue(KeyValueList { values })) => values.iter().map(pair).sum(),
            _ => 0,
        }
    }
    fn pair(kv: &KeyValue) -> u64 {
        size_of::<KeyValue>() as u64 + kv.key.len() as u64 + kv.value.as_ref().map_or(0, value)
    }
    let mut total = size_of::<ExportLogsServiceRequest>() as u64;
    for resource in &request.resource_logs {
        total += size_of::<ResourceLogs>() as u64;
        total += resource.resource.as_ref().map_or(0, |r| r.attributes.iter().map(pair).sum());
        for scope in &resource.scope_logs {
            total += size_of::<ScopeLogs>() as u64;
            for record in &scope.log_records {
                total += size_of::<LogRecord>() as u64 + record.severity_text.len() as u64;
                total += record.attributes.iter().map(pair).sum::<u64>() + record.body.as_ref().map_or(0, value);
                total += (record.trace_id.len() + record.span_id.len() + record.event_name.len()) as u64;
            }
        }
    }
    total
}

fn any_value_strategy() -> impl Strategy<Value = AnyValue> {
    let leaf = prop_oneof![
        any::<String>().prop_map(any_value::Value::StringValue),
        any::<i64>().prop_map(any_value::Value::IntValue),
        any::<bool>().prop_map(any_value::Value::BoolValue),
        proptest::collection::vec(any::<u8>(), 0..8).prop_map(any_value::Value::BytesValue),
    ]
    .prop_map(|value| AnyValue { value: Some(value) });
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4)
                .prop_map(|values| AnyValue { value: Some(any_value::Value::ArrayValue(ArrayValue { values })) }),
            proptest::collection::vec(("[a-z.]{0,8}", inner), 0..4).prop_map(|pairs| AnyValue {
                value: Some(any_value::Value::KvlistValue(KeyValueList {
                    values: pairs
                        .into_iter()
                        .map(|(key, v)| KeyValue { key, value: Some(v), ..Default::default() })
                        .collect(),
                })),
            }),
        ]
    })
}

fn logs_strategy() -> impl Strategy<Value = ExportLogsServiceRequest> {
    let record = (
        proptest::collection::vec(("[a-z._]{0,12}", any_value_strategy()), 0..6),
        proptest::option::of(any_value_strategy()),
        "[A-Z]{0,5}",
    )
        .prop_map(|(attributes, body, severity_text)| LogRecord {
            attributes: attributes
                .into_iter()
                .map(|(key, v)| KeyValue { key, value: Some(v), ..Default::default() })
                .collect(),
            body,
            severity_text,
            ..Default::default()
        });
    proptest::collection::vec(proptest::collection::vec(record, 0..5), 0..3).prop_map(|scopes| {
        ExportLogsServiceRequest {
            resource_logs: vec![ResourceLogs {
                scope_logs: scopes
                    .into_iter()
                    .map(|log_records| ScopeLogs { log_records, ..Default::default() })
                    .collect(),
                ..Default::default()
            }],
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever the export, in either encoding, the walk counts its records exactly and
    /// never reckons less than the decoded value holds.
    #[test]
    fn the_walk_never_reckons_less_than_decoding_holds(request in logs_strategy()) {
        let records = log_records(&request);
        let floor = decoded_size(&request);
        let protobuf = check_protobuf(&request.encode_to_vec(), Msg::LogsRequest, &LIMITS).unwrap();
        prop_assert_eq!(protobuf.records, records);
        prop_assert!(protobuf.decoded_memory >= floor, "{} < {}", protobuf.decoded_memory, floor);
        let json = serde_json::to_vec(&request).unwrap();
        let from_json = check_json(&json, Msg::LogsRequest, &LIMITS).unwrap();
        prop_assert_eq!(from_json.records, records);
        prop_assert!(from_json.decoded_memory >= floor, "{} < {}", from_json.decoded_memory, floor);
    }
}

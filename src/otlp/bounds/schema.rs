//! The shape of OTLP's three export requests as far as their cost in memory goes: for
//! each message, the fields that hold another message (by protobuf number and by its
//! OTLP/JSON name), the fields that are packed varints (one wire byte can become an
//! eight-byte integer), and how large the decoded Rust value is (`opentelemetry-proto`'s
//! prost types). Every other field is a scalar, a string or bytes, whose decoded size
//! the walkers take from the wire.
//!
//! Invariant: a field holding a message is listed under the message that holds it, with
//! the same number and JSON name as `opentelemetry-proto`'s `.proto` files; a field not
//! listed costs at most its own bytes.

use std::mem::size_of;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1 as common;
use opentelemetry_proto::tonic::logs::v1 as logs;
use opentelemetry_proto::tonic::metrics::v1 as metrics;
use opentelemetry_proto::tonic::resource::v1 as resource;
use opentelemetry_proto::tonic::trace::v1 as trace;

/// Every OTLP message an export request can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
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
}

/// What a field holds, where it matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holds {
    Message(Msg),
    /// Packed varints on the wire, a `Vec<u64>` decoded.
    PackedVarints,
    /// An array of numbers in OTLP/JSON (a packed field on the wire, at most one
    /// decoded byte per wire byte there).
    Numbers,
}

pub struct Field {
    pub number: u32,
    pub json: &'static str,
    pub holds: Holds,
}

const fn message(number: u32, json: &'static str, msg: Msg) -> Field {
    Field { number, json, holds: Holds::Message(msg) }
}

/// How one message decodes.
pub struct Shape {
    /// The decoded value's own size (a repeated field's elements are stored inline).
    pub size: usize,
    /// A log record, a span or a metric data point: what `ingest.max_otlp_records` counts.
    pub record: bool,
    pub fields: &'static [Field],
}

use Msg::*;

/// A `'static` list of fields (a `const`, so the `const fn` calls are evaluated at compile time).
macro_rules! fields {
    ($($field:expr),* $(,)?) => {{
        const FIELDS: &[Field] = &[$($field),*];
        FIELDS
    }};
}

const RESOURCE: Field = message(1, "resource", Resource);
const ATTRIBUTES_1: Field = message(1, "attributes", KeyValue);

pub fn shape(msg: Msg) -> Shape {
    let (size, record, fields): (usize, bool, &'static [Field]) = match msg {
        LogsRequest => {
            (size_of::<ExportLogsServiceRequest>(), false, fields![message(1, "resourceLogs", ResourceLogs)])
        }
        ResourceLogs => (size_of::<logs::ResourceLogs>(), false, fields![RESOURCE, message(2, "scopeLogs", ScopeLogs)]),
        ScopeLogs => (
            size_of::<logs::ScopeLogs>(),
            false,
            fields![message(1, "scope", Scope), message(2, "logRecords", LogRecord)],
        ),
        LogRecord => (
            size_of::<logs::LogRecord>(),
            true,
            fields![message(5, "body", AnyValue), message(6, "attributes", KeyValue)],
        ),
        TracesRequest => {
            (size_of::<ExportTraceServiceRequest>(), false, fields![message(1, "resourceSpans", ResourceSpans)])
        }
        ResourceSpans => {
            (size_of::<trace::ResourceSpans>(), false, fields![RESOURCE, message(2, "scopeSpans", ScopeSpans)])
        }
        ScopeSpans => {
            (size_of::<trace::ScopeSpans>(), false, fields![message(1, "scope", Scope), message(2, "spans", Span)])
        }
        Span => (
            size_of::<trace::Span>(),
            true,
            fields![
                message(9, "attributes", KeyValue),
                message(11, "events", SpanEvent),
                message(13, "links", SpanLink),
                message(15, "status", SpanStatus),
            ],
        ),
        SpanEvent => (size_of::<trace::span::Event>(), false, fields![message(3, "attributes", KeyValue)]),
        SpanLink => (size_of::<trace::span::Link>(), false, fields![message(4, "attributes", KeyValue)]),
        SpanStatus => (size_of::<trace::Status>(), false, fields![]),
        MetricsRequest => {
            (size_of::<ExportMetricsServiceRequest>(), false, fields![message(1, "resourceMetrics", ResourceMetrics)])
        }
        ResourceMetrics => {
            (size_of::<metrics::ResourceMetrics>(), false, fields![RESOURCE, message(2, "scopeMetrics", ScopeMetrics)])
        }
        ScopeMetrics => (
            size_of::<metrics::ScopeMetrics>(),
            false,
            fields![message(1, "scope", Scope), message(2, "metrics", Metric)],
        ),
        Metric => (
            size_of::<metrics::Metric>(),
            false,
            fields![
                message(5, "gauge", Gauge),
                message(7, "sum", Sum),
                message(9, "histogram", Histogram),
                message(10, "exponentialHistogram", ExponentialHistogram),
                message(11, "summary", Summary),
                message(12, "metadata", KeyValue),
            ],
        ),
        Gauge => (size_of::<metrics::Gauge>(), false, fields![message(1, "dataPoints", NumberPoint)]),
        Sum => (size_of::<metrics::Sum>(), false, fields![message(1, "dataPoints", NumberPoint)]),
        Histogram => (size_of::<metrics::Histogram>(), false, fields![message(1, "dataPoints", HistogramPoint)]),
        ExponentialHistogram => (
            size_of::<metrics::ExponentialHistogram>(),
            false,
            fields![message(1, "dataPoints", ExponentialHistogramPoint)],
        ),
        Summary => (size_of::<metrics::Summary>(), false, fields![message(1, "dataPoints", SummaryPoint)]),
        NumberPoint => (
            size_of::<metrics::NumberDataPoint>(),
            true,
            fields![message(7, "attributes", KeyValue), message(5, "exemplars", Exemplar)],
        ),
        HistogramPoint => (
            size_of::<metrics::HistogramDataPoint>(),
            true,
            fields![
                message(9, "attributes", KeyValue),
                message(8, "exemplars", Exemplar),
                Field { number: 6, json: "bucketCounts", holds: Holds::Numbers },
                Field { number: 7, json: "explicitBounds", holds: Holds::Numbers },
            ],
        ),
        ExponentialHistogramPoint => (
            size_of::<metrics::ExponentialHistogramDataPoint>(),
            true,
            fields![
                ATTRIBUTES_1,
                message(8, "positive", Buckets),
                message(9, "negative", Buckets),
                message(11, "exemplars", Exemplar),
            ],
        ),
        Buckets => (
            size_of::<metrics::exponential_histogram_data_point::Buckets>(),
            false,
            fields![Field { number: 2, json: "bucketCounts", holds: Holds::PackedVarints }],
        ),
        SummaryPoint => (
            size_of::<metrics::SummaryDataPoint>(),
            true,
            fields![message(7, "attributes", KeyValue), message(6, "quantileValues", Quantile)],
        ),
        Quantile => (size_of::<metrics::summary_data_point::ValueAtQuantile>(), false, fields![]),
        Exemplar => (size_of::<metrics::Exemplar>(), false, fields![message(7, "filteredAttributes", KeyValue)]),
        Resource => {
            (size_of::<resource::Resource>(), false, fields![ATTRIBUTES_1, message(3, "entityRefs", EntityRef)])
        }
        Scope => (size_of::<common::InstrumentationScope>(), false, fields![message(3, "attributes", KeyValue)]),
        EntityRef => (size_of::<common::EntityRef>(), false, fields![]),
        KeyValue => (size_of::<common::KeyValue>(), false, fields![message(2, "value", AnyValue)]),
        AnyValue => (
            size_of::<common::AnyValue>(),
            false,
            fields![message(5, "arrayValue", ArrayValue), message(6, "kvlistValue", KeyValueList)],
        ),
        ArrayValue => (size_of::<common::ArrayValue>(), false, fields![message(1, "values", AnyValue)]),
        KeyValueList => (size_of::<common::KeyValueList>(), false, fields![message(1, "values", KeyValue)]),
    };
    Shape { size, record, fields }
}

impl Msg {
    /// The signal of an export request, as error messages name it.
    pub fn signal(self) -> &'static str {
        match self {
            TracesRequest => "traces",
            MetricsRequest => "metrics",
            _ => "logs",
        }
    }
}

impl Shape {
    pub fn by_number(&self, number: u32) -> Option<&'static Field> {
        self.fields.iter().find(|field| field.number == number)
    }
}

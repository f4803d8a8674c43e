//! From an OTLP metrics export to the few measures no event carries: lines of code
//! added and removed, commits, pull requests and active time, per agent session.
//!
//! Tokens and cost are never read from metrics: the per-request log events carry them
//! exactly, and counting both would count twice. Every other series is skipped.
//!
//! A data point is not an event. It becomes a [`Point`]: the measure, the session, a
//! key naming its series (the person, the metric and the point's attributes) and the
//! value with its temporality. The store (`sessions::reported`) turns a cumulative
//! series into deltas per series key (a new start time is a reset) and ignores a point
//! it has already applied (an exporter's retry), so the mapping here keeps no state.

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value::Value as AnyValue};
use opentelemetry_proto::tonic::metrics::v1::{AggregationTemporality, metric::Data, number_data_point};

use super::attributes::Attributes;
use crate::model::AgentType;

/// What a data point measures (a column of `session_reported`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    LinesAdded,
    LinesRemoved,
    Commits,
    PullRequests,
    /// Seconds the person was active in the session (typing, reading).
    ActiveUserSeconds,
    /// Seconds the agent was working.
    ActiveAgentSeconds,
}

/// One data point we keep, before its series' history is applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub agent: AgentType,
    pub session_id: String,
    pub measure: Measure,
    /// Hex digest of the person, the metric and the point's attributes.
    pub series: String,
    pub start_nanos: u64,
    pub time_nanos: u64,
    pub value: f64,
    /// A cumulative sum (the total since `start_nanos`) rather than a delta.
    pub cumulative: bool,
}

/// The points of one export, and what became of the others.
#[derive(Debug, Default)]
pub struct Mapped {
    pub points: Vec<Point>,
    /// Data points of series we do not keep (tokens, cost, durations, …).
    pub skipped: u64,
    pub refused: u64,
    pub reasons: Vec<String>,
}

/// Maps every data point of `request` for the person `user_id`.
/// The largest value a kept data point may have: no session writes 10^12 lines or
/// commits, or is active for 10^12 seconds; a larger one is a broken or hostile exporter.
const MAX_POINT: f64 = 1e12;

pub fn map(request: &ExportMetricsServiceRequest, user_id: &str) -> Mapped {
    let mut mapped = Mapped::default();
    for resource_metrics in &request.resource_metrics {
        let resource = resource_metrics.resource.as_ref().map(|r| r.attributes.as_slice()).unwrap_or_default();
        for metric in resource_metrics.scope_metrics.iter().flat_map(|scope| &scope.metrics) {
            let Some(Data::Sum(sum)) = &metric.data else {
                mapped.skipped += data_points(&metric.data);
                continue;
            };
            let Some(agent) = kept(&metric.name) else {
                mapped.skipped += sum.data_points.len() as u64;
                continue;
            };
            let cumulative = sum.aggregation_temporality == AggregationTemporality::Cumulative as i32;
            for point in &sum.data_points {
                let attributes = Attributes::of(resource, &point.attributes);
                let Some(measure) = measure(&metric.name, &attributes) else {
                    mapped.skipped += 1;
                    continue;
                };
                let value = match point.value {
                    Some(number_data_point::Value::AsDouble(value)) => value,
                    Some(number_data_point::Value::AsInt(value)) => value as f64,
                    None => f64::NAN,
                };
                let refuse = |reason: &str| format!("{}: {reason}", metric.name);
                if !value.is_finite() || value < 0.0 {
                    mapped.refuse(refuse("a data point has no value, or a negative one"));
                    continue;
                }
                if value > MAX_POINT {
                    mapped.refuse(refuse("a data point's value is beyond any session's (at most 10^12)"));
                    continue;
                }
                let Some(session_id) = attributes.text("session.id") else {
                    mapped.refuse(refuse("session.id is missing (OTEL_METRICS_INCLUDE_SESSION_ID=false?)"));
                    continue;
                };
                if point.time_unix_nano == 0 {
                    mapped.refuse(refuse("a data point has no time (timeUnixNano)"));
                    continue;
                }
                mapped.points.push(Point {
                    agent,
                    series: series_key(user_id, &metric.name, resource, &point.attributes),
                    session_id,
                    measure,
                    start_nanos: point.start_time_unix_nano,
                    time_nanos: point.time_unix_nano,
                    value,
                    cumulative,
                });
            }
        }
    }
    mapped
}

impl Mapped {
    fn refuse(&mut self, reason: String) {
        self.refused += 1;
        if self.reasons.len() < 5 && !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }
}

/// The agent whose metric `name` is one we keep.
fn kept(name: &str) -> Option<AgentType> {
    match name {
        "claude_code.lines_of_code.count"
        | "claude_code.commit.count"
        | "claude_code.pull_request.count"
        | "claude_code.active_time.total" => Some(AgentType::ClaudeCode),
        "gemini_cli.lines.changed" => Some(AgentType::GeminiCli),
        _ => None,
    }
}

fn measure(name: &str, attributes: &Attributes<'_>) -> Option<Measure> {
    let kind = attributes.text("type");
    match (name, kind.as_deref()) {
        ("claude_code.lines_of_code.count" | "gemini_cli.lines.changed", Some("added")) => Some(Measure::LinesAdded),
        ("claude_code.lines_of_code.count" | "gemini_cli.lines.changed", Some("removed")) => {
            Some(Measure::LinesRemoved)
        }
        ("claude_code.commit.count", _) => Some(Measure::Commits),
        ("claude_code.pull_request.count", _) => Some(Measure::PullRequests),
        ("claude_code.active_time.total", Some("user")) => Some(Measure::ActiveUserSeconds),
        ("claude_code.active_time.total", Some("cli")) => Some(Measure::ActiveAgentSeconds),
        _ => None,
    }
}

fn data_points(data: &Option<Data>) -> u64 {
    (match data {
        Some(Data::Gauge(gauge)) => gauge.data_points.len(),
        Some(Data::Sum(sum)) => sum.data_points.len(),
        Some(Data::Histogram(histogram)) => histogram.data_points.len(),
        Some(Data::ExponentialHistogram(histogram)) => histogram.data_points.len(),
        Some(Data::Summary(summary)) => summary.data_points.len(),
        None => 0,
    }) as u64
}

/// A series is the person, the metric, and every attribute of the point and of its
/// resource's session (sorted, so an exporter that orders them differently names the
/// same series).
fn series_key(user_id: &str, metric: &str, resource: &[KeyValue], point: &[KeyValue]) -> String {
    let mut pairs: Vec<(&str, String)> = point.iter().map(|pair| (pair.key.as_str(), shown(pair))).collect();
    if !pairs.iter().any(|(key, _)| *key == "session.id")
        && let Some(session) = resource.iter().find(|pair| pair.key == "session.id")
    {
        pairs.push(("session.id", shown(session)));
    }
    pairs.sort();
    let mut material = format!("{user_id}\u{1f}{metric}");
    for (key, value) in pairs {
        material.push('\u{1f}');
        material.push_str(key);
        material.push('=');
        material.push_str(&value);
    }
    crate::model::sha256_hex(material.as_bytes())
}

fn shown(pair: &KeyValue) -> String {
    match pair.value.as_ref().and_then(|value| value.value.as_ref()) {
        Some(AnyValue::StringValue(text)) => text.clone(),
        Some(AnyValue::IntValue(number)) => number.to_string(),
        Some(AnyValue::DoubleValue(number)) => number.to_string(),
        Some(AnyValue::BoolValue(flag)) => flag.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

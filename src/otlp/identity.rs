//! Who each record of an export is, for a service account's token: the identities a
//! record carries (`user.email`, `user.account_uuid`, `user.id`, the record's own over
//! its resource's), and an export split into one export per identity, so each part is
//! mapped and stored as its person's (the ids derived per person, as for a person's own
//! token). The resolution of an identity to a person is the receiver's
//! (`auth::otlp_identities`); nothing here guesses.

use std::collections::BTreeMap;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::logs::v1::{ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::metrics::v1::{Metric, ResourceMetrics, ScopeMetrics, Sum, metric::Data};
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans};

use super::attributes::Attributes;

/// The identity attributes a record carries, in the order they are tried
/// (`auth::otlp_identities::ATTRIBUTES`); empty when it carries none.
pub type Identity = Vec<(&'static str, String)>;

const ATTRIBUTES: [&str; 3] = ["user.email", "user.account_uuid", "user.id"];

fn identity_of(resource: &[KeyValue], record: &[KeyValue]) -> Identity {
    let attributes = Attributes::of(resource, record);
    ATTRIBUTES.iter().filter_map(|key| attributes.text(key).map(|value| (*key, value))).collect()
}

/// Where a record was in its export (resource, scope, and metric for a data point),
/// with the records of one identity found there, in order.
type Groups<T> = Vec<((usize, usize, usize), Vec<T>)>;

/// Adds `record`, found at `place`, to `identity`'s groups.
fn add<T: Clone>(
    parts: &mut BTreeMap<Identity, Groups<T>>,
    identity: Identity,
    place: (usize, usize, usize),
    record: &T,
) {
    let groups = parts.entry(identity).or_default();
    match groups.last_mut() {
        Some((last, records)) if *last == place => records.push(record.clone()),
        _ => groups.push((place, vec![record.clone()])),
    }
}

/// The parts of a logs export by identity, each with its record count.
pub fn split_logs(request: &ExportLogsServiceRequest) -> Vec<(Identity, ExportLogsServiceRequest, u64)> {
    let mut parts = BTreeMap::new();
    for (r, resource_logs) in request.resource_logs.iter().enumerate() {
        let resource = resource_logs.resource.as_ref().map(|r| r.attributes.as_slice()).unwrap_or_default();
        for (s, scope_logs) in resource_logs.scope_logs.iter().enumerate() {
            for record in &scope_logs.log_records {
                add(&mut parts, identity_of(resource, &record.attributes), (r, s, 0), record);
            }
        }
    }
    parts
        .into_iter()
        .map(|(identity, groups)| {
            let mut part = ExportLogsServiceRequest::default();
            let (mut count, mut last_resource) = (0, None);
            for ((r, s, _), records) in groups {
                count += records.len() as u64;
                let source = &request.resource_logs[r];
                if last_resource != Some(r) {
                    last_resource = Some(r);
                    part.resource_logs.push(ResourceLogs {
                        resource: source.resource.clone(),
                        scope_logs: Vec::new(),
                        schema_url: source.schema_url.clone(),
                    });
                }
                let scope = &source.scope_logs[s];
                let shell = ScopeLogs {
                    scope: scope.scope.clone(),
                    log_records: records,
                    schema_url: scope.schema_url.clone(),
                };
                part.resource_logs.last_mut().expect("pushed above").scope_logs.push(shell);
            }
            (identity, part, count)
        })
        .collect()
}

/// The parts of a traces export by identity, each with its span count.
pub fn split_traces(request: &ExportTraceServiceRequest) -> Vec<(Identity, ExportTraceServiceRequest, u64)> {
    let mut parts = BTreeMap::new();
    for (r, resource_spans) in request.resource_spans.iter().enumerate() {
        let resource = resource_spans.resource.as_ref().map(|r| r.attributes.as_slice()).unwrap_or_default();
        for (s, scope_spans) in resource_spans.scope_spans.iter().enumerate() {
            for span in &scope_spans.spans {
                add(&mut parts, identity_of(resource, &span.attributes), (r, s, 0), span);
            }
        }
    }
    parts
        .into_iter()
        .map(|(identity, groups)| {
            let mut part = ExportTraceServiceRequest::default();
            let (mut count, mut last_resource) = (0, None);
            for ((r, s, _), spans) in groups {
                count += spans.len() as u64;
                let source = &request.resource_spans[r];
                if last_resource != Some(r) {
                    last_resource = Some(r);
                    part.resource_spans.push(ResourceSpans {
                        resource: source.resource.clone(),
                        scope_spans: Vec::new(),
                        schema_url: source.schema_url.clone(),
                    });
                }
                let scope = &source.scope_spans[s];
                let shell = ScopeSpans { scope: scope.scope.clone(), spans, schema_url: scope.schema_url.clone() };
                part.resource_spans.last_mut().expect("pushed above").scope_spans.push(shell);
            }
            (identity, part, count)
        })
        .collect()
}

/// The parts of a metrics export by identity, each with its data point count. Only
/// sums are split (the only series kept; every other would be skipped anyway).
pub fn split_metrics(request: &ExportMetricsServiceRequest) -> Vec<(Identity, ExportMetricsServiceRequest, u64)> {
    let mut parts = BTreeMap::new();
    for (r, resource_metrics) in request.resource_metrics.iter().enumerate() {
        let resource = resource_metrics.resource.as_ref().map(|r| r.attributes.as_slice()).unwrap_or_default();
        for (s, scope_metrics) in resource_metrics.scope_metrics.iter().enumerate() {
            for (m, metric) in scope_metrics.metrics.iter().enumerate() {
                let Some(Data::Sum(sum)) = &metric.data else { continue };
                for point in &sum.data_points {
                    add(&mut parts, identity_of(resource, &point.attributes), (r, s, m), point);
                }
            }
        }
    }
    parts
        .into_iter()
        .map(|(identity, groups)| {
            let mut part = ExportMetricsServiceRequest::default();
            let (mut count, mut last_resource, mut last_scope) = (0, None, None);
            for ((r, s, m), points) in groups {
                count += points.len() as u64;
                let source = &request.resource_metrics[r];
                if last_resource != Some(r) {
                    (last_resource, last_scope) = (Some(r), None);
                    part.resource_metrics.push(ResourceMetrics {
                        resource: source.resource.clone(),
                        scope_metrics: Vec::new(),
                        schema_url: source.schema_url.clone(),
                    });
                }
                let resource_part = part.resource_metrics.last_mut().expect("pushed above");
                let scope = &source.scope_metrics[s];
                if last_scope != Some(s) {
                    last_scope = Some(s);
                    resource_part.scope_metrics.push(ScopeMetrics {
                        scope: scope.scope.clone(),
                        metrics: Vec::new(),
                        schema_url: scope.schema_url.clone(),
                    });
                }
                let metric = &scope.metrics[m];
                let Some(Data::Sum(sum)) = &metric.data else { continue };
                let data = Data::Sum(Sum {
                    data_points: points,
                    aggregation_temporality: sum.aggregation_temporality,
                    is_monotonic: sum.is_monotonic,
                });
                resource_part.scope_metrics.last_mut().expect("pushed above").metrics.push(Metric {
                    name: metric.name.clone(),
                    description: metric.description.clone(),
                    unit: metric.unit.clone(),
                    metadata: metric.metadata.clone(),
                    data: Some(data),
                });
            }
            (identity, part, count)
        })
        .collect()
}

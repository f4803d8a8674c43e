//! Prometheus metrics of one server instance: per-route request counts and latency,
//! event outcomes, writer queue depth, commit latency, WAL sizes and checkpoints, and
//! each job's standing breach and last success.
//!
//! Invariants: one [`Metrics`] per server, passed by `Arc` (no global registry, so
//! tests can run several servers in one process); routes are labelled by their
//! matched pattern, never the raw path, so label cardinality stays bounded.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub listener: &'static str,
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobLabels {
    pub job: &'static str,
    /// The severity a breach of this job has (`critical` for `run-deletions`).
    pub severity: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StepLabels {
    /// A step of the writer's commit of a group: `partition_rows`, `partition_commit`,
    /// `fold_<name>` per fold, `main_commit`, `wal_cap`.
    pub step: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub outcome: &'static str,
}

/// Step buckets from 20 µs to ~4 s: a fold of a small group takes tens of microseconds.
fn step_buckets() -> Vec<f64> {
    vec![0.00002, 0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0, 4.0]
}

/// Latency buckets from 0.5 ms to ~4 s: ingest lives in single milliseconds, and
/// the SLO edges (50 ms, 200 ms) must fall near a bucket boundary.
fn latency_buckets() -> Vec<f64> {
    vec![0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 4.0]
}

pub struct Metrics {
    registry: Mutex<Registry>,
    pub requests: Family<RouteLabels, Counter>,
    pub request_seconds: Family<RouteLabels, Histogram, fn() -> Histogram>,
    pub events: Family<OutcomeLabels, Counter>,
    pub unknown_model_events: Counter,
    /// OTLP log records by outcome: mapped (to an event), skipped, refused.
    pub otlp_records: Family<OutcomeLabels, Counter>,
    pub commit_latency: Histogram,
    /// Where a commit's time goes, step by step (each fold apart).
    pub writer_step_seconds: Family<StepLabels, Histogram, fn() -> Histogram>,
    pub writer_queue_depth: Gauge,
    pub wal_bytes_main: Gauge,
    pub wal_bytes_events: Gauge,
    pub blocking_checkpoints: Counter,
    pub background_checkpoints: Counter,
    pub job_breach: Family<JobLabels, Gauge>,
    /// How long the oldest change not yet in the aggregates has waited, in seconds.
    pub aggregate_refresh_lag: Gauge,
    pub job_last_success: Family<JobLabels, Gauge>,
    /// Share of the last 24 hours' settled webhook deliveries that did not fail.
    pub webhook_delivery_success: Gauge<f64, std::sync::atomic::AtomicU64>,
    /// Webhook deliveries received in the last 24 hours and still pending.
    pub webhook_deliveries_pending: Gauge,
    /// Source of the queue depth, read at scrape time.
    queue_depth_source: Mutex<Option<Arc<AtomicI64>>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("sightline");
        let requests = Family::<RouteLabels, Counter>::default();
        let request_seconds: Family<RouteLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(latency_buckets()));
        let events = Family::<OutcomeLabels, Counter>::default();
        let unknown_model_events = Counter::default();
        let otlp_records = Family::<OutcomeLabels, Counter>::default();
        let commit_latency = Histogram::new(latency_buckets());
        let writer_step_seconds: Family<StepLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(step_buckets()));
        let writer_queue_depth = Gauge::default();
        let wal_bytes_main = Gauge::default();
        let wal_bytes_events = Gauge::default();
        let blocking_checkpoints = Counter::default();
        let background_checkpoints = Counter::default();
        registry.register("http_requests", "HTTP requests by listener, route and status", requests.clone());
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by listener, route and status",
            request_seconds.clone(),
        );
        registry.register("ingest_events", "Events by outcome: accepted, duplicate, rejected", events.clone());
        registry.register(
            "ingest_unknown_model_events",
            "Events with token usage whose model no price table knows (priced at 0)",
            unknown_model_events.clone(),
        );
        registry.register(
            "otlp_log_records",
            "OTLP log records by outcome: mapped (to an event), skipped (not used), refused",
            otlp_records.clone(),
        );
        registry.register(
            "writer_commit_duration_seconds",
            "Time to commit one group of ingest batches (partitions and main.db)",
            commit_latency.clone(),
        );
        registry.register(
            "writer_step_duration_seconds",
            "Time of each step of the writer's commit of a group: the partitions' rows and commit, each fold, main.db's commit, the WAL cap",
            writer_step_seconds.clone(),
        );
        registry.register("writer_queue_depth", "Ingest batches waiting for the writer", writer_queue_depth.clone());
        registry.register("wal_main_bytes", "Size of main.db's write-ahead log", wal_bytes_main.clone());
        registry.register(
            "wal_events_bytes",
            "Size of the write-ahead log of the event partition written last",
            wal_bytes_events.clone(),
        );
        registry.register(
            "wal_blocking_checkpoints",
            "Checkpoints the writer ran itself because a WAL passed its hard cap",
            blocking_checkpoints.clone(),
        );
        registry.register(
            "wal_background_checkpoints",
            "Passive checkpoints run by the background checkpointer",
            background_checkpoints.clone(),
        );
        let job_breach = Family::<JobLabels, Gauge>::default();
        let job_last_success = Family::<JobLabels, Gauge>::default();
        registry.register(
            "job_breach",
            "1 while a job's latest run breached its service level (spec 8), else 0",
            job_breach.clone(),
        );
        registry.register(
            "job_last_success_timestamp_seconds",
            "When a job's latest successful run ended (absent if it never succeeded)",
            job_last_success.clone(),
        );
        let aggregate_refresh_lag = Gauge::default();
        registry.register(
            "aggregate_refresh_lag_seconds",
            "How long the oldest change not yet in the continuous aggregates has waited",
            aggregate_refresh_lag.clone(),
        );
        let webhook_delivery_success = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        registry.register(
            "webhook_delivery_success_ratio",
            "Share of the last 24 hours' settled GitHub webhook deliveries that did not fail (target 0.99)",
            webhook_delivery_success.clone(),
        );
        let webhook_deliveries_pending = Gauge::default();
        registry.register(
            "webhook_deliveries_pending",
            "GitHub webhook deliveries of the last 24 hours not yet applied",
            webhook_deliveries_pending.clone(),
        );
        Metrics {
            registry: Mutex::new(registry),
            requests,
            request_seconds,
            events,
            unknown_model_events,
            otlp_records,
            commit_latency,
            writer_step_seconds,
            writer_queue_depth,
            wal_bytes_main,
            wal_bytes_events,
            blocking_checkpoints,
            background_checkpoints,
            job_breach,
            aggregate_refresh_lag,
            job_last_success,
            webhook_delivery_success,
            webhook_deliveries_pending,
            queue_depth_source: Mutex::new(None),
        }
    }

    /// The histogram of one writer step, for the writer to keep (a labelled lookup once,
    /// not on every commit).
    pub fn writer_step(&self, step: &'static str) -> Histogram {
        self.writer_step_seconds.get_or_create(&StepLabels { step }).clone()
    }

    pub fn observe_request(&self, listener: &'static str, route: &str, status: u16, seconds: f64) {
        let labels = RouteLabels { listener, route: route.to_string(), status };
        self.requests.get_or_create(&labels).inc();
        self.request_seconds.get_or_create(&labels).observe(seconds);
    }

    pub fn count_events(&self, accepted: u64, duplicates: u64, rejected: u64) {
        for (outcome, n) in [("accepted", accepted), ("duplicate", duplicates), ("rejected", rejected)] {
            if n > 0 {
                self.events.get_or_create(&OutcomeLabels { outcome }).inc_by(n);
            }
        }
    }

    pub fn count_otlp_records(&self, mapped: u64, skipped: u64, refused: u64) {
        for (outcome, n) in [("mapped", mapped), ("skipped", skipped), ("refused", refused)] {
            if n > 0 {
                self.otlp_records.get_or_create(&OutcomeLabels { outcome }).inc_by(n);
            }
        }
    }

    pub fn watch_queue_depth(&self, depth: Arc<AtomicI64>) {
        *self.queue_depth_source.lock().unwrap_or_else(|p| p.into_inner()) = Some(depth);
    }

    /// Records a job as it stands (read from `job_runs` and `job_alerts` at scrape time).
    pub fn set_job(&self, labels: JobLabels, breached: bool, last_success_ms: Option<i64>) {
        self.job_breach.get_or_create(&labels).set(i64::from(breached));
        if let Some(ms) = last_success_ms {
            self.job_last_success.get_or_create(&labels).set(ms.div_euclid(1000));
        }
    }

    /// Renders the OpenMetrics text exposition.
    pub fn render(&self) -> String {
        if let Some(depth) = self.queue_depth_source.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            self.writer_queue_depth.set(depth.load(Ordering::Relaxed));
        }
        let mut text = String::new();
        let registry = self.registry.lock().unwrap_or_else(|p| p.into_inner());
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
        text
    }
}

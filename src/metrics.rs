//! Prometheus metrics of one server instance: per-route request counts and latency,
//! ingest batches, events and OTLP records by outcome, the writer's queue and commits,
//! WAL sizes and checkpoints, job runs and each job's standing breach and last success,
//! the aggregates' and the transcript index's lag, the process (`process_*`) and the
//! build. Served as Prometheus text 0.0.4 (`exposition`); docs/operations.md lists
//! every family.
//!
//! Invariants: one [`Metrics`] per server, passed by `Arc` (no global registry, so
//! tests can run several servers in one process); every label has a bounded set of
//! values: routes are labelled by their matched pattern, never the raw path; reasons,
//! signals, agents, outcomes and jobs are fixed lists of the code, and whatever a
//! client sends (a `service.name`) maps onto them or onto `other`. The counters of the
//! ingest path are made once here and kept, so counting there is an atomic add.

pub mod exposition;
mod labels;
pub mod process;

pub use labels::*;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The version and commit this binary was built from (`SIGHTLINE_COMMIT` at build time;
/// `packaging/build-release.sh` sets it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub const COMMIT: &str = match option_env!("SIGHTLINE_COMMIT") {
    Some(commit) => commit,
    None => "unknown",
};

/// Step buckets from 20 µs to ~4 s: a fold of a small group takes tens of microseconds.
fn step_buckets() -> Vec<f64> {
    vec![0.00002, 0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0, 4.0]
}

/// Latency buckets from 0.5 ms to ~4 s: ingest lives in single milliseconds, and
/// the SLO edges (50 ms, 200 ms) must fall near a bucket boundary.
fn latency_buckets() -> Vec<f64> {
    vec![0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 4.0]
}

/// Job durations from 10 ms to 6 hours (the longest jobs' targets are hours).
fn job_buckets() -> Vec<f64> {
    vec![0.01, 0.1, 1.0, 10.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 21600.0]
}

pub struct Metrics {
    registry: Mutex<Registry>,
    pub requests: Family<RouteLabels, Counter>,
    pub request_seconds: Family<RouteLabels, Histogram, fn() -> Histogram>,
    pub events: Family<OutcomeLabels, Counter>,
    /// `accepted`, `duplicate`, `rejected`, made once (the ingest path only adds).
    event_counters: [Counter; 3],
    /// Rejected events by field, indexed as [`EVENT_FIELDS`].
    rejected_by_field: Vec<Counter>,
    /// `POST /v1/events` batches, indexed as [`BatchOutcome::ALL`].
    batch_counters: Vec<Counter>,
    /// OTLP exports by signal, then outcome as [`BatchOutcome::ALL`].
    export_counters: Vec<Vec<Counter>>,
    /// OTLP records by signal, agent ([`OTLP_AGENTS`]) and outcome ([`OTLP_OUTCOMES`]).
    otlp_counters: Vec<Vec<[Counter; 3]>>,
    pub unknown_model_events: Counter,
    pub commit_latency: Histogram,
    /// Where a commit's time goes, step by step (each fold apart).
    pub writer_step_seconds: Family<StepLabels, Histogram, fn() -> Histogram>,
    pub writer_queue_depth: Gauge,
    pub writer_queue_capacity: Gauge,
    pub wal_bytes_main: Gauge,
    pub wal_bytes_events: Gauge,
    pub blocking_checkpoints: Counter,
    pub background_checkpoints: Counter,
    pub job_breach: Family<JobLabels, Gauge>,
    /// How long the oldest change not yet in the aggregates has waited, in seconds.
    pub aggregate_refresh_lag: Gauge,
    pub job_last_success: Family<JobLabels, Gauge>,
    pub job_runs: Family<JobRunLabels, Counter>,
    pub job_run_seconds: Family<JobNameLabels, Histogram, fn() -> Histogram>,
    /// Stored transcripts the indexer has not indexed yet, and the oldest one's wait.
    pub transcript_index_pending: Gauge,
    pub transcript_index_lag: Gauge,
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
        let mut root = Registry::default();
        root.register_collector(Box::new(process::ProcessCollector));
        let registry = root.sub_registry_with_prefix("sightline");
        let build_info = Family::<BuildLabels, Gauge>::default();
        build_info.get_or_create(&BuildLabels { version: VERSION, commit: COMMIT }).set(1);
        registry.register("build_info", "The version and commit of the running binary (always 1)", build_info.clone());
        let requests = Family::<RouteLabels, Counter>::default();
        let request_seconds: Family<RouteLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(latency_buckets()));
        let events = Family::<OutcomeLabels, Counter>::default();
        let event_counters = ["accepted", "duplicate", "rejected"]
            .map(|outcome| events.get_or_create(&OutcomeLabels { outcome }).clone());
        let rejected_events = Family::<FieldLabels, Counter>::default();
        let rejected_by_field =
            EVENT_FIELDS.iter().map(|field| rejected_events.get_or_create(&FieldLabels { field }).clone()).collect();
        let batches = Family::<OutcomeLabels, Counter>::default();
        let batch_counters = BatchOutcome::ALL
            .iter()
            .map(|outcome| batches.get_or_create(&OutcomeLabels { outcome: outcome.as_str() }).clone())
            .collect();
        let exports = Family::<OtlpExportLabels, Counter>::default();
        let export_counters = Signal::ALL
            .iter()
            .map(|signal| {
                BatchOutcome::ALL
                    .iter()
                    .map(|outcome| {
                        exports
                            .get_or_create(&OtlpExportLabels { signal: signal.as_str(), outcome: outcome.as_str() })
                            .clone()
                    })
                    .collect()
            })
            .collect();
        let otlp_records = Family::<OtlpLabels, Counter>::default();
        let otlp_counters = Signal::ALL
            .iter()
            .map(|signal| {
                OTLP_AGENTS
                    .iter()
                    .map(|agent| {
                        OTLP_OUTCOMES.map(|outcome| {
                            otlp_records.get_or_create(&OtlpLabels { signal: signal.as_str(), agent, outcome }).clone()
                        })
                    })
                    .collect()
            })
            .collect();
        let unknown_model_events = Counter::default();
        let commit_latency = Histogram::new(latency_buckets());
        let writer_step_seconds: Family<StepLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(step_buckets()));
        let writer_queue_depth = Gauge::default();
        let writer_queue_capacity = Gauge::default();
        let wal_bytes_main = Gauge::default();
        let wal_bytes_events = Gauge::default();
        let blocking_checkpoints = Counter::default();
        let background_checkpoints = Counter::default();
        registry.register("http_requests", "HTTP requests by listener, route pattern and status", requests.clone());
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by listener, route pattern and status",
            request_seconds.clone(),
        );
        registry.register(
            "ingest_batches",
            "POST /v1/events batches by outcome: accepted, or the reason it was refused",
            batches.clone(),
        );
        registry.register(
            "ingest_events",
            "Events of batches by outcome: accepted (stored), duplicate (already stored), rejected (invalid)",
            events.clone(),
        );
        registry.register(
            "ingest_rejected_events",
            "Events rejected as invalid, by the top-level field at fault",
            rejected_events.clone(),
        );
        registry.register(
            "ingest_unknown_model_events",
            "Events with token usage whose model no price table knows (priced at 0)",
            unknown_model_events.clone(),
        );
        registry.register(
            "otlp_exports",
            "OTLP exports (HTTP and gRPC) by signal and outcome: accepted, or the reason it was refused",
            exports.clone(),
        );
        registry.register(
            "otlp_records",
            "OTLP log records, spans and data points by signal, agent (by service.name) and outcome: accepted, skipped (not used), refused",
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
        registry.register(
            "writer_queue_capacity",
            "Ingest batches the writer's queue holds before a batch waits for room",
            writer_queue_capacity.clone(),
        );
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
        let job_runs = Family::<JobRunLabels, Counter>::default();
        registry.register(
            "job_runs",
            "Job runs this server ran or refused, by job and outcome: succeeded, failed, refused",
            job_runs.clone(),
        );
        let job_run_seconds: Family<JobNameLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(job_buckets()));
        registry.register(
            "job_run_duration_seconds",
            "Time of each job run this server ran, by job",
            job_run_seconds.clone(),
        );
        let aggregate_refresh_lag = Gauge::default();
        registry.register(
            "aggregate_refresh_lag_seconds",
            "How long the oldest change not yet in the continuous aggregates has waited",
            aggregate_refresh_lag.clone(),
        );
        let transcript_index_pending = Gauge::default();
        registry.register(
            "transcript_index_pending",
            "Stored transcripts the search index has not indexed yet",
            transcript_index_pending.clone(),
        );
        let transcript_index_lag = Gauge::default();
        registry.register(
            "transcript_index_lag_seconds",
            "How long the oldest stored transcript not yet indexed has waited (0 when none waits)",
            transcript_index_lag.clone(),
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
            registry: Mutex::new(root),
            requests,
            request_seconds,
            events,
            event_counters,
            rejected_by_field,
            batch_counters,
            export_counters,
            otlp_counters,
            unknown_model_events,
            commit_latency,
            writer_step_seconds,
            writer_queue_depth,
            writer_queue_capacity,
            wal_bytes_main,
            wal_bytes_events,
            blocking_checkpoints,
            background_checkpoints,
            job_breach,
            aggregate_refresh_lag,
            job_last_success,
            job_runs,
            job_run_seconds,
            transcript_index_pending,
            transcript_index_lag,
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

    /// A batch's events (atomic adds, no lookup).
    pub fn count_events(&self, accepted: u64, duplicates: u64, rejected: u64) {
        for (counter, n) in self.event_counters.iter().zip([accepted, duplicates, rejected]) {
            if n > 0 {
                counter.inc_by(n);
            }
        }
    }

    /// One rejected event, by the field its rejection names.
    pub fn count_rejected_event(&self, field: &str) {
        self.rejected_by_field[event_field(field)].inc();
    }

    /// How one `POST /v1/events` batch ended.
    pub fn count_batch(&self, outcome: BatchOutcome) {
        self.batch_counters[outcome as usize].inc();
    }

    /// How one OTLP export ended.
    pub fn count_export(&self, signal: Signal, outcome: BatchOutcome) {
        self.export_counters[signal as usize][outcome as usize].inc();
    }

    /// What became of an export's records of one agent (an `agent` of [`otlp_agent`]).
    pub fn count_otlp_records(&self, signal: Signal, agent: &str, accepted: u64, skipped: u64, refused: u64) {
        let agent = OTLP_AGENTS.iter().position(|known| *known == agent).unwrap_or(OTLP_AGENTS.len() - 1);
        for (counter, n) in self.otlp_counters[signal as usize][agent].iter().zip([accepted, skipped, refused]) {
            if n > 0 {
                counter.inc_by(n);
            }
        }
    }

    /// Makes the run counters (at 0) and time histogram of each job this server runs, so
    /// `rate()` and `increase()` see a job's first run.
    pub fn declare_jobs(&self, jobs: impl IntoIterator<Item = &'static str>) {
        for job_name in jobs {
            for outcome in ["succeeded", "failed", "refused"] {
                drop(self.job_runs.get_or_create(&JobRunLabels { job_name, outcome }));
            }
            drop(self.job_run_seconds.get_or_create(&JobNameLabels { job_name }));
        }
    }

    /// A job run this server ran to its end (`succeeded` or `failed`), and its time.
    pub fn job_ran(&self, job: &'static str, outcome: &'static str, seconds: f64) {
        self.job_runs.get_or_create(&JobRunLabels { job_name: job, outcome }).inc();
        self.job_run_seconds.get_or_create(&JobNameLabels { job_name: job }).observe(seconds);
    }

    /// A job run this server refused to start.
    pub fn job_refused(&self, job: &'static str) {
        self.job_runs.get_or_create(&JobRunLabels { job_name: job, outcome: "refused" }).inc();
    }

    pub fn watch_queue_depth(&self, depth: Arc<AtomicI64>, capacity: usize) {
        self.writer_queue_capacity.set(capacity as i64);
        *self.queue_depth_source.lock().unwrap_or_else(|p| p.into_inner()) = Some(depth);
    }

    /// Records a job as it stands (read from `job_runs` and `job_alerts` at scrape time).
    pub fn set_job(&self, labels: JobLabels, breached: bool, last_success_ms: Option<i64>) {
        self.job_breach.get_or_create(&labels).set(i64::from(breached));
        if let Some(ms) = last_success_ms {
            self.job_last_success.get_or_create(&labels).set(ms.div_euclid(1000));
        }
    }

    /// Renders the Prometheus text exposition, format 0.0.4 ([`exposition::CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        exposition::from_openmetrics(&self.render_openmetrics())
    }

    /// Renders the OpenMetrics text, as `prometheus-client` writes it.
    pub fn render_openmetrics(&self) -> String {
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

#[cfg(test)]
mod tests;

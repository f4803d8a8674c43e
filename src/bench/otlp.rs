//! `sightline bench otlp`: load on a running server's OTLP receiver. Simulated
//! developers export Claude Code log records as its exporter does (an export every few
//! seconds, protobuf or OTLP/JSON, optionally gzip): per turn a prompt, a model request
//! with its tokens, three tool results, an accepted tool decision and a hook record
//! (the last two are records the receiver skips, as it skips them from real exporters).
//! Reports log records per second and each export's latency; with `--verify-data-dir`,
//! the events stored against those the records should make.

use std::io::Write;
use std::time::{Duration, Instant};

use clap::Args;
use opentelemetry_proto::tonic::collector::logs::v1::{ExportLogsServiceRequest, ExportLogsServiceResponse};
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;
use serde_json::json;

use super::{Load, ThreadResult, answered, drive, nearest_rank, parse_duration};

#[derive(Debug, Clone, Args)]
pub struct OtlpBenchArgs {
    /// Base URL of the ingest listener, e.g. http://127.0.0.1:4000.
    #[arg(long)]
    pub url: String,
    /// An OTLP or hook token.
    #[arg(long, env = "SIGHTLINE_BENCH_TOKEN")]
    pub token: String,
    /// Simulated developers, each with its own Claude Code session.
    #[arg(long, default_value_t = 200)]
    pub developers: usize,
    /// Target log records per second over all developers, or "max".
    #[arg(long, default_value = "max")]
    pub rate: String,
    /// How long to run: seconds, or with a unit (90s, 2m).
    #[arg(long, default_value = "60s")]
    pub duration: String,
    /// Log records per export.
    #[arg(long, default_value_t = 100)]
    pub records: usize,
    /// Concurrent connections (default: 32 paced, 8 in max mode).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Send OTLP/JSON instead of protobuf.
    #[arg(long)]
    pub json: bool,
    /// Gzip each export (OTEL_EXPORTER_OTLP_COMPRESSION=gzip).
    #[arg(long)]
    pub gzip: bool,
    /// After the run, count the events this run stored and compare with the records
    /// that make events.
    #[arg(long)]
    pub verify_data_dir: Option<std::path::PathBuf>,
}

/// Of every turn's seven records, these five make events.
const MAPPED_PER_TURN: u64 = 5;
const RECORDS_PER_TURN: u64 = 7;

struct Exporter {
    session_id: String,
    sequence: i64,
}

fn text(key: &str, value: impl Into<String>) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(any_value::Value::StringValue(value.into())) }),
        ..Default::default()
    }
}

impl Exporter {
    fn record(&mut self, name: &str, mut attributes: Vec<KeyValue>) -> LogRecord {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let sequence = self.sequence;
        self.sequence += 1;
        attributes.extend([
            text("session.id", self.session_id.clone()),
            text("user.id", "bench-install"),
            text("terminal.type", "tmux"),
            text("event.name", name),
            KeyValue {
                key: "event.sequence".into(),
                value: Some(AnyValue { value: Some(any_value::Value::IntValue(sequence)) }),
                ..Default::default()
            },
        ]);
        LogRecord {
            time_unix_nano: now.as_nanos() as u64,
            observed_time_unix_nano: now.as_nanos() as u64,
            body: Some(AnyValue { value: Some(any_value::Value::StringValue(format!("claude_code.{name}"))) }),
            attributes,
            ..Default::default()
        }
    }

    /// The next record of the session's turn cycle.
    fn next(&mut self) -> LogRecord {
        let step = self.sequence as u64 % RECORDS_PER_TURN;
        let id = format!("{}-{}", self.session_id, self.sequence);
        match step {
            0 => self.record("user_prompt", vec![text("prompt_length", "120"), text("prompt", "<REDACTED>")]),
            1 => self.record(
                "api_request",
                vec![
                    text("model", "claude-sonnet-4-5-20250929"),
                    text("input_tokens", "1200"),
                    text("output_tokens", "350"),
                    text("cache_read_tokens", "9000"),
                    text("cache_creation_tokens", "400"),
                    text("cost_usd", "0.0123"),
                    text("duration_ms", "2500"),
                    text("request_id", format!("req_{id}")),
                ],
            ),
            2..=4 => self.record(
                "tool_result",
                vec![
                    text("tool_name", ["Read", "Edit", "Bash"][step as usize - 2]),
                    text("tool_use_id", format!("toolu_{id}")),
                    text("success", "true"),
                    text("duration_ms", "40"),
                    text("decision_type", "accept"),
                    text("decision_source", "config"),
                    text("tool_result_size_bytes", "2048"),
                ],
            ),
            5 => self.record("tool_decision", vec![text("tool_name", "Bash"), text("decision", "accept")]),
            _ => self.record("hook_execution_complete", vec![text("hook_event", "PostToolUse")]),
        }
    }

    fn export(&mut self, records: usize) -> ExportLogsServiceRequest {
        ExportLogsServiceRequest {
            resource_logs: vec![ResourceLogs {
                resource: Some(Resource {
                    attributes: vec![text("service.name", "claude-code"), text("service.version", "2.1.112")],
                    ..Default::default()
                }),
                scope_logs: vec![ScopeLogs {
                    scope: Some(InstrumentationScope {
                        name: "com.anthropic.claude_code.events".into(),
                        ..Default::default()
                    }),
                    log_records: (0..records).map(|_| self.next()).collect(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
    }
}

fn send_export(agent: &ureq::Agent, args: &OtlpBenchArgs, exporter: &mut Exporter, result: &mut ThreadResult) {
    let first = exporter.sequence as u64;
    let export = exporter.export(args.records);
    let mapped = (first..first + args.records as u64).filter(|n| n % RECORDS_PER_TURN < MAPPED_PER_TURN).count() as u64;
    let (content_type, mut body) = if args.json {
        ("application/json", serde_json::to_vec(&export).unwrap_or_default())
    } else {
        ("application/x-protobuf", export.encode_to_vec())
    };
    if args.gzip {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        if encoder.write_all(&body).is_ok()
            && let Ok(compressed) = encoder.finish()
        {
            body = compressed;
        }
    }
    let mut request = agent
        .post(format!("{}/v1/logs", args.url.trim_end_matches('/')))
        .header("Authorization", format!("Bearer {}", args.token))
        .header("Content-Type", content_type);
    if args.gzip {
        request = request.header("Content-Encoding", "gzip");
    }
    let started = Instant::now();
    if let Some(bytes) = answered(result, started, request.send(&body[..])) {
        let rejected = if args.json {
            serde_json::from_slice::<serde_json::Value>(&bytes).ok().and_then(|answer| {
                let count = &answer["partialSuccess"]["rejectedLogRecords"];
                count.as_str().and_then(|text| text.parse().ok()).or(count.as_u64())
            })
        } else {
            ExportLogsServiceResponse::decode(&bytes[..])
                .ok()
                .and_then(|answer| answer.partial_success)
                .map(|partial| partial.rejected_log_records.max(0) as u64)
        };
        let rejected = rejected.unwrap_or(0);
        result.rejected += rejected;
        result.accepted += args.records as u64 - rejected.min(args.records as u64);
        if rejected == 0 {
            result.events_expected += mapped;
        }
    }
}

pub fn run(args: &OtlpBenchArgs) -> anyhow::Result<i32> {
    let duration = parse_duration(&args.duration)?;
    let max_mode = args.rate.eq_ignore_ascii_case("max");
    let rate: f64 = if max_mode {
        0.0
    } else {
        args.rate.parse().map_err(|_| anyhow::anyhow!("--rate must be log records per second or \"max\""))?
    };
    anyhow::ensure!(args.developers >= 1 && args.records >= 1, "--developers and --records must be at least 1");
    anyhow::ensure!(max_mode || rate > 0.0, "--rate must be positive");
    let concurrency = args.concurrency.unwrap_or(if max_mode { 8 } else { 32 }).clamp(1, 1024);
    let developers = if max_mode { concurrency.max(args.developers.min(concurrency)) } else { args.developers };
    let threads = concurrency.min(developers);
    let interval =
        if max_mode { Duration::ZERO } else { Duration::from_secs_f64(developers as f64 * args.records as f64 / rate) };
    let run_id = uuid::Uuid::new_v4().simple().to_string();
    let session_run = run_id.clone();
    let send_args = std::sync::Arc::new(args.clone());
    let (mut total, elapsed) = drive(
        Load { threads, developers, max_mode, interval, duration },
        move |d| Exporter { session_id: format!("bench-otlp-{session_run}-{d}"), sequence: 0 },
        move |agent, exporter, result| send_export(agent, &send_args, exporter, result),
    )?;
    total.latencies_us.sort_unstable();
    let pct = |p: f64| nearest_rank(&total.latencies_us, p).map_or(0.0, |us| us as f64 / 1000.0);
    let expected_events = total.events_expected;
    let stored = match &args.verify_data_dir {
        Some(dir) => Some(super::count_events_like(dir, &format!("bench-otlp-{run_id}-%"))?),
        None => None,
    };
    let report = json!({
        "mode": if max_mode { "max".to_string() } else { format!("{rate} records/s target") },
        "developers": developers, "concurrency": threads, "records_per_export": args.records,
        "encoding": if args.json { "json" } else { "protobuf" }, "gzip": args.gzip,
        "seconds": elapsed, "exports": total.batches, "records_accepted": total.accepted,
        "records_rejected": total.rejected, "errors": total.errors,
        "records_per_second": total.accepted as f64 / elapsed,
        "latency_ms": {"p50": pct(0.50), "p95": pct(0.95), "p99": pct(0.99), "max": pct(1.0)},
        "events_expected": expected_events, "events_stored": stored, "first_error": total.first_error,
    });
    println!(
        "{} over {:.1} s: {} exports of {} records, {} records accepted ({:.0} records/s), {} rejected, {} errors",
        report["mode"].as_str().unwrap_or_default(),
        elapsed,
        total.batches,
        args.records,
        total.accepted,
        total.accepted as f64 / elapsed,
        total.rejected,
        total.errors
    );
    println!(
        "latency ms per export: p50 {:.2}  p95 {:.2}  p99 {:.2}  max {:.2}",
        pct(0.5),
        pct(0.95),
        pct(0.99),
        pct(1.0)
    );
    if let Some(stored) = stored {
        println!("events stored by this run: {stored} (its records make {expected_events})");
    }
    if let Some(error) = &total.first_error {
        println!("first error: {error}");
    }
    let lost = stored.is_some_and(|stored| stored != expected_events);
    Ok(if total.errors > 0 || lost { 1 } else { 0 })
}

//! `sightline bench …`: measurements an operator (or this project's closing notes)
//! can repeat, one file per benchmark (the command line only dispatches here).
//! `bench ingest` (this file) plays N developers flushing batches at a target rate
//! (or as fast as the server takes them) and reports events/s and latency
//! percentiles; `bench compaction` and `bench redact` measure storage and CPU costs;
//! `bench retention` times the retention sweep over a year of partitions, and
//! `bench reprice` the reprice report and apply over generated history.
//!
//! Invariant: the generator reports only what it observed — latency is measured per
//! request from send to full response, errors are counted, nothing is extrapolated.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};

pub mod dashboard;
pub mod hook;
pub mod otlp;
pub mod reprice;
pub mod retention;
pub mod search;
pub mod search_corpus;
pub mod storage;
pub mod storage_events;
pub mod transcript_memory;
pub mod web;
pub mod webhooks;
use serde_json::json;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Load-test a running server's POST /v1/events.
    Ingest(IngestArgs),
    /// Load-test a running server's OTLP receiver (POST /v1/logs) with Claude Code's log records.
    Otlp(otlp::OtlpBenchArgs),
    /// Compression ratio of partition compaction on generated events.
    Compaction(storage::CompactionArgs),
    /// Latency of a running server's own pages (/me, /me/sessions, a session, /me/insights).
    Web(web::WebBenchArgs),
    /// reprice-events and reprice-events-apply over generated history.
    Reprice(reprice::RepriceArgs),
    /// The sweep-retention job over a year and more of generated day partitions.
    Retention(retention::RetentionArgs),
    /// Time redaction of adversarial input.
    Redact(storage::RedactArgs),
    /// Latency of a running eval dashboard: paged API and run detail page.
    Dashboard(dashboard::DashboardBenchArgs),
    /// Exec-to-exit latency of `sightline hook`, alone or several at once.
    Hook(hook::HookBenchArgs),
    /// Deliveries to a running server's GitHub App listener: receipt to upsert, success.
    Webhooks(webhooks::WebhooksBenchArgs),
    /// Transcript search at a million messages: indexing rate, index size, query latency.
    Search(search::SearchBenchArgs),
    /// Peak and retained memory of receiving and indexing one large transcript.
    TranscriptMemory(transcript_memory::TranscriptMemoryArgs),
}

#[derive(Debug, Clone, Args)]
pub struct IngestArgs {
    /// Base URL of the ingest listener, e.g. http://127.0.0.1:4000.
    #[arg(long)]
    pub url: String,
    /// A hook token (sightline token create --kind hook).
    #[arg(long, env = "SIGHTLINE_BENCH_TOKEN")]
    pub token: String,
    /// Simulated developers, each with its own session.
    #[arg(long, default_value_t = 200)]
    pub developers: usize,
    /// Target events per second over all developers, or "max" to send back-to-back.
    #[arg(long, default_value = "2000")]
    pub rate: String,
    /// How long to run: seconds, or with a unit (90s, 2m).
    #[arg(long, default_value = "60s")]
    pub duration: String,
    /// Events per batch.
    #[arg(long, default_value_t = 50)]
    pub batch_size: usize,
    /// Concurrent connections (default: 32 paced, 8 in max mode).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// UUID version of event ids: 7 (what the hook mints) or 4.
    #[arg(long, default_value_t = 7)]
    pub id_version: u8,
    /// Send bodies zstd-compressed, as the hook does.
    #[arg(long)]
    pub zstd: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// After the run, count this run's events in the server's data directory and
    /// compare with what the server acknowledged.
    #[arg(long)]
    pub verify_data_dir: Option<std::path::PathBuf>,
}

pub fn run(command: BenchCommand) -> anyhow::Result<i32> {
    match command {
        BenchCommand::Ingest(args) => ingest(&args),
        BenchCommand::Otlp(args) => otlp::run(&args),
        BenchCommand::Compaction(args) => storage::compaction(&args),
        BenchCommand::Retention(args) => retention::run(&args),
        BenchCommand::Reprice(args) => reprice::run(&args),
        BenchCommand::Web(args) => web::run(&args),
        BenchCommand::Webhooks(args) => webhooks::run(&args),
        BenchCommand::Redact(args) => storage::redact(&args),
        BenchCommand::Dashboard(args) => dashboard::run(&args),
        BenchCommand::Hook(args) => hook::run(&args),
        BenchCommand::Search(args) => search::run(&args),
        BenchCommand::TranscriptMemory(args) => transcript_memory::run(&args),
    }
}

pub fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let text = text.trim();
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(text.len()));
    let value: f64 =
        number.parse().map_err(|_| anyhow::anyhow!("duration {text:?} is not a number with an optional unit"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        other => anyhow::bail!("duration unit {other:?} is not one of ms, s, m, h"),
    };
    Ok(Duration::from_secs_f64(seconds))
}

/// One developer's stream of realistic events: a session of prompts, tool calls
/// and turns with usage, with content-free hashes, as the hook sends them.
struct Developer {
    session_id: String,
    step: u64,
}

fn random_hex64() -> String {
    let mut out = String::with_capacity(64);
    for _ in 0..4 {
        out.push_str(&format!("{:016x}", fastrand::u64(..)));
    }
    out
}

const TOOLS: &[(&str, &str)] =
    &[("Read", "read"), ("Edit", "edit"), ("Bash", "exec"), ("Grep", "search"), ("Write", "write")];
const MODELS: &[&str] = &["claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"];

impl Developer {
    fn next_event(&mut self, id_version: u8) -> serde_json::Value {
        self.step += 1;
        let event_id = if id_version == 4 { uuid::Uuid::new_v4() } else { uuid::Uuid::now_v7() };
        let ts = crate::model::rfc3339_ms(crate::clock::system_now_ms());
        let mut event = json!({
            "event_id": event_id.to_string(), "ts": ts, "agent_type": "claude_code",
            "session_id": self.session_id, "permission_mode": "accept_edits",
        });
        let (name, action) = TOOLS[(self.step as usize / 2) % TOOLS.len()];
        match self.step % 10 {
            0 => {
                event["type"] = json!("prompt_submit");
                event["response_ms"] = json!(fastrand::i64(2_000..60_000));
            }
            9 => {
                event["type"] = json!("turn_end");
                event["model"] = json!(MODELS[fastrand::usize(..MODELS.len())]);
                event["usage"] = json!({
                    "input_tokens": fastrand::i64(10..3000), "output_tokens": fastrand::i64(50..2000),
                    "cache_read_tokens": fastrand::i64(0..80_000), "cache_write_5m_tokens": fastrand::i64(0..4000),
                    "cache_write_1h_tokens": 0, "reasoning_tokens": 0,
                });
                event["metadata"] = json!({"hook_event": "Stop", "stop_hook_active": false});
            }
            step if step % 2 == 1 => {
                event["type"] = json!("tool_start");
                event["tool"] = json!({"name": format!("claude_code:{name}"), "use_id": format!("toolu_{:016x}", self.step),
                    "input_sha256": random_hex64(), "input_bytes": fastrand::i64(20..4000), "target_hash": random_hex64(), "action": action});
            }
            _ => {
                event["type"] = json!("tool_end");
                let status = if fastrand::u8(..100) < 5 { "error" } else { "success" };
                event["tool"] = json!({"name": format!("claude_code:{name}"), "use_id": format!("toolu_{:016x}", self.step - 1),
                    "status": status, "duration_ms": fastrand::i64(5..5000), "output_sha256": random_hex64(),
                    "output_bytes": fastrand::i64(0..50_000), "action": action});
            }
        }
        event
    }
}

/// The shape of a load: how many threads drive how many simulated developers, paced
/// (each developer sends every `interval`, from a random offset) or back to back.
pub(crate) struct Load {
    pub threads: usize,
    pub developers: usize,
    pub max_mode: bool,
    pub interval: Duration,
    pub duration: Duration,
}

/// Drives `load`: each thread owns every `threads`-th developer (made by `make`) and
/// calls `send` for one of them at a time; answers the threads' results together and
/// the seconds the run took.
pub(crate) fn drive<D: 'static>(
    load: Load,
    make: impl Fn(usize) -> D + Send + Sync + 'static,
    send: impl Fn(&ureq::Agent, &mut D, &mut ThreadResult) + Send + Sync + 'static,
) -> anyhow::Result<(ThreadResult, f64)> {
    let Load { threads, developers, max_mode, interval, duration } = load;
    let (make, send) = (Arc::new(make), Arc::new(send));
    let started = Instant::now();
    let deadline = started + duration;
    let mut handles = Vec::new();
    for thread in 0..threads {
        let (make, send) = (make.clone(), send.clone());
        handles.push(std::thread::spawn(move || {
            let agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(30)))
                .build()
                .new_agent();
            let mut result = ThreadResult::default();
            let mut devs: Vec<D> = (thread..developers).step_by(threads).map(|d| make(d)).collect();
            if max_mode {
                let mut i = 0;
                while Instant::now() < deadline {
                    let n = devs.len();
                    send(&agent, &mut devs[i % n], &mut result);
                    i += 1;
                }
                return result;
            }
            // Paced: each developer flushes every `interval`, starting at a random
            // offset so the load is spread as real laptops spread it.
            let mut due: BinaryHeap<Reverse<(Instant, usize)>> =
                (0..devs.len()).map(|i| Reverse((started + interval.mul_f64(fastrand::f64()), i))).collect();
            while let Some(Reverse((at, i))) = due.pop() {
                if at >= deadline {
                    break;
                }
                let now = Instant::now();
                if at > now {
                    std::thread::sleep(at - now);
                }
                send(&agent, &mut devs[i], &mut result);
                due.push(Reverse((at + interval, i)));
            }
            result
        }));
    }
    let mut total = ThreadResult::default();
    for handle in handles {
        let result = handle.join().map_err(|_| anyhow::anyhow!("a load thread panicked"))?;
        total.latencies_us.extend(result.latencies_us);
        total.accepted += result.accepted;
        total.duplicates += result.duplicates;
        total.rejected += result.rejected;
        total.errors += result.errors;
        total.batches += result.batches;
        total.events_expected += result.events_expected;
        if total.first_error.is_none() {
            total.first_error = result.first_error;
        }
    }
    Ok((total, started.elapsed().as_secs_f64()))
}

#[derive(Default)]
pub(crate) struct ThreadResult {
    pub latencies_us: Vec<u64>,
    pub accepted: u64,
    pub duplicates: u64,
    pub rejected: u64,
    pub errors: u64,
    pub batches: u64,
    /// Events the accepted sends should have stored, where a send knows (OTLP: the
    /// records that make events).
    pub events_expected: u64,
    pub first_error: Option<String>,
}

fn send_batch(agent: &ureq::Agent, args: &IngestArgs, dev: &mut Developer, result: &mut ThreadResult) {
    let events: Vec<_> = (0..args.batch_size).map(|_| dev.next_event(args.id_version)).collect();
    let body = json!({"client": {"machine_id": "bench", "cli_version": env!("CARGO_PKG_VERSION"), "os": "linux"}, "events": events});
    let mut bytes = serde_json::to_vec(&body).unwrap_or_default();
    if args.zstd {
        bytes = zstd::bulk::compress(&bytes, 3).unwrap_or(bytes);
    }
    let mut request = agent
        .post(format!("{}/v1/events", args.url.trim_end_matches('/')))
        .header("Authorization", format!("Bearer {}", args.token))
        .header("Content-Type", "application/json");
    if args.zstd {
        request = request.header("Content-Encoding", "zstd");
    }
    let started = Instant::now();
    if let Some(text) = answered(result, started, request.send(&bytes[..])) {
        let parsed: serde_json::Value = serde_json::from_slice(&text).unwrap_or_default();
        result.accepted += parsed["accepted"].as_u64().unwrap_or(0);
        result.duplicates += parsed["duplicates"].as_u64().unwrap_or(0);
        result.rejected += parsed["rejected"].as_array().map_or(0, |r| r.len() as u64);
    }
}

/// Counts one request's answer into `result` (its latency from `started`, an error for
/// anything but a 200) and returns a 200's body.
pub(crate) fn answered(
    result: &mut ThreadResult,
    started: Instant,
    outcome: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Option<Vec<u8>> {
    result.batches += 1;
    match outcome {
        Ok(mut response) => {
            let status = response.status().as_u16();
            let bytes = response.body_mut().with_config().limit(16 << 20).read_to_vec().unwrap_or_default();
            result.latencies_us.push(started.elapsed().as_micros() as u64);
            if status == 200 {
                return Some(bytes);
            }
            result.errors += 1;
            result.first_error.get_or_insert(format!("HTTP {status}: {}", String::from_utf8_lossy(&bytes)));
        }
        Err(err) => {
            result.errors += 1;
            result.first_error.get_or_insert(err.to_string());
        }
    }
    None
}

fn ingest(args: &IngestArgs) -> anyhow::Result<i32> {
    let duration = parse_duration(&args.duration)?;
    let max_mode = args.rate.eq_ignore_ascii_case("max");
    let rate: f64 = if max_mode {
        0.0
    } else {
        args.rate.parse().map_err(|_| anyhow::anyhow!("--rate must be events per second or \"max\""))?
    };
    anyhow::ensure!(args.developers >= 1 && args.batch_size >= 1, "--developers and --batch-size must be at least 1");
    anyhow::ensure!(max_mode || rate > 0.0, "--rate must be positive");
    anyhow::ensure!(matches!(args.id_version, 4 | 7), "--id-version must be 4 or 7");
    let concurrency = args.concurrency.unwrap_or(if max_mode { 8 } else { 32 }).clamp(1, 1024);
    let developers = if max_mode { concurrency.max(args.developers.min(concurrency)) } else { args.developers };
    let threads = concurrency.min(developers);
    let run_id = uuid::Uuid::new_v4().simple().to_string();
    let session_run = run_id.clone();
    let interval = if max_mode {
        Duration::ZERO
    } else {
        Duration::from_secs_f64(developers as f64 * args.batch_size as f64 / rate)
    };
    let args = Arc::new(args.clone());
    let send_args = args.clone();
    let (mut total, elapsed) = drive(
        Load { threads, developers, max_mode, interval, duration },
        move |d| Developer { session_id: format!("bench-{session_run}-{d}"), step: 0 },
        move |agent, dev, result| send_batch(agent, &send_args, dev, result),
    )?;
    total.latencies_us.sort_unstable();
    let pct = |p: f64| nearest_rank(&total.latencies_us, p).map_or(0.0, |us| us as f64 / 1000.0);
    let stored = match &args.verify_data_dir {
        Some(dir) => Some(count_run_events(dir, &run_id)?),
        None => None,
    };
    let report = json!({
        "mode": if max_mode { "max".to_string() } else { format!("{rate} events/s target") },
        "developers": developers, "concurrency": threads, "batch_size": args.batch_size,
        "id_version": args.id_version, "zstd": args.zstd,
        "seconds": elapsed, "batches": total.batches, "accepted": total.accepted,
        "duplicates": total.duplicates, "rejected": total.rejected, "errors": total.errors,
        "events_per_second": total.accepted as f64 / elapsed,
        "latency_ms": {"p50": pct(0.50), "p95": pct(0.95), "p99": pct(0.99), "max": pct(1.0)},
        "stored_events": stored, "first_error": total.first_error,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} over {:.1} s: {} batches, {} events accepted ({:.0} events/s), {} duplicates, {} rejected, {} errors",
            report["mode"].as_str().unwrap_or_default(),
            elapsed,
            total.batches,
            total.accepted,
            total.accepted as f64 / elapsed,
            total.duplicates,
            total.rejected,
            total.errors
        );
        println!("latency ms: p50 {:.2}  p95 {:.2}  p99 {:.2}  max {:.2}", pct(0.5), pct(0.95), pct(0.99), pct(1.0));
        if let Some(stored) = stored {
            println!("stored events of this run: {stored} (acknowledged {})", total.accepted);
        }
        if let Some(error) = &total.first_error {
            println!("first error: {error}");
        }
    }
    let lost = stored.is_some_and(|stored| stored != total.accepted);
    Ok(if total.errors > 0 || lost { 1 } else { 0 })
}

/// Counts the events of one bench run across all partitions (a full scan; for
/// verification after a run, not for production use).
fn count_run_events(data_dir: &std::path::Path, run_id: &str) -> anyhow::Result<u64> {
    count_events_like(data_dir, &format!("bench-{run_id}-%"))
}

/// Counts the events whose session id is `LIKE` the pattern, in every partition.
pub(crate) fn count_events_like(data_dir: &std::path::Path, pattern: &str) -> anyhow::Result<u64> {
    let mut total = 0u64;
    for day in crate::events::partitions::list_days(data_dir)? {
        if let Some(conn) = crate::events::partitions::open_for_read(data_dir, day)? {
            let n: i64 =
                conn.query_row("SELECT count(*) FROM events WHERE session_id LIKE ?1", [pattern], |row| row.get(0))?;
            total += n as u64;
        }
    }
    Ok(total)
}

/// The nearest-rank percentile `p` (0 to 1) of sorted samples; `None` when there are none.
/// Every benchmark reports its percentiles this way.
pub(crate) fn nearest_rank<T: Copy>(sorted: &[T], p: f64) -> Option<T> {
    let last = sorted.len().checked_sub(1)?;
    Some(sorted[((sorted.len() as f64 * p).ceil() as usize).saturating_sub(1).min(last)])
}

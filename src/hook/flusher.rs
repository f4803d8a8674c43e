//! The flusher: ships queued events to the server in batches (every `interval` or at
//! `batch` events, whichever first), retries with jittered exponential backoff, settles
//! each batch from the server's answer, and exits after a quiet period.
//!
//! Invariants: exactly one flusher per user — an OS file lock on `flusher.lock`,
//! released by the kernel if the process dies; an event leaves the queue only when the
//! server answered 200 and did not reject it; rejected events move aside with the
//! server's reason; nothing is dropped on a network or server error.

use std::fs::File;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::local::{self, ClientConfig};
use super::queue::Queue;

#[derive(Clone, Debug)]
pub struct FlushConfig {
    pub batch: usize,
    pub interval: Duration,
    /// Exit after the queue has been empty this long (0: exit as soon as it is empty).
    pub quiet_exit: Duration,
    pub max_backoff: Duration,
    /// Size of the transcript chunks the shipper uploads.
    pub chunk_bytes: usize,
}

impl Default for FlushConfig {
    fn default() -> Self {
        FlushConfig {
            batch: 50,
            interval: Duration::from_secs(5),
            quiet_exit: Duration::from_secs(120),
            max_backoff: Duration::from_secs(60),
            chunk_bytes: super::shipper::CHUNK_BYTES,
        }
    }
}

/// What one POST achieved.
#[derive(Debug, PartialEq, Eq)]
pub enum Shipped {
    Settled { acknowledged: usize, rejected: usize },
    RetryLater(String),
}

/// A stable, random id for this machine (not derived from hardware or user names).
pub fn machine_id() -> String {
    let path = local::data_dir().join("machine_id");
    if let Ok(id) = std::fs::read_to_string(&path)
        && !id.trim().is_empty()
    {
        return id.trim().to_string();
    }
    let id = uuid::Uuid::new_v4().to_string();
    let _ = std::fs::create_dir_all(local::data_dir());
    let _ = std::fs::write(&path, &id);
    id
}

/// Holds the per-user flusher lock, or `None` when another flusher has it.
pub fn try_lock() -> std::io::Result<Option<File>> {
    std::fs::create_dir_all(local::data_dir())?;
    let file = File::options().create(true).truncate(false).write(true).open(local::lock_path())?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(err)) => Err(err),
    }
}

/// The envelope's `client` block: this machine's id (read once per flusher run, not per
/// batch), the CLI version and the OS.
pub fn client_block() -> Value {
    json!({"machine_id": machine_id(), "cli_version": env!("CARGO_PKG_VERSION"), "os": std::env::consts::OS})
}

/// Posts one batch and settles it in the queue.
pub fn ship(
    queue: &Queue,
    config: &ClientConfig,
    agent: &ureq::Agent,
    client: &Value,
    batch_size: usize,
) -> Result<Shipped, super::super::db::DbError> {
    let batch = queue.peek(batch_size)?;
    if batch.is_empty() {
        return Ok(Shipped::Settled { acknowledged: 0, rejected: 0 });
    }
    let events: Vec<Value> = batch.iter().map(|q| serde_json::from_str(&q.event).unwrap_or(Value::Null)).collect();
    let body = json!({
        "client": client,
        "events": events,
    });
    let compressed = zstd::bulk::compress(body.to_string().as_bytes(), 3).unwrap_or_default();
    let response = agent
        .post(format!("{}/v1/events", config.server.trim_end_matches('/')))
        .header("Authorization", format!("Bearer {}", config.token))
        .header("Content-Type", "application/json")
        .header("Content-Encoding", "zstd")
        .send(&compressed[..]);
    let mut response = match response {
        Ok(response) => response,
        Err(err) => return Ok(Shipped::RetryLater(format!("server unreachable: {err}"))),
    };
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    if status != 200 {
        return Ok(Shipped::RetryLater(format!(
            "server answered {status}: {}",
            text.chars().take(300).collect::<String>()
        )));
    }
    let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let Some(rejected) = answer.get("rejected").and_then(Value::as_array) else {
        return Ok(Shipped::RetryLater(format!("unexpected answer: {}", text.chars().take(300).collect::<String>())));
    };
    if let Some(unlinked) = answer.get("unlinked_eval_events").and_then(Value::as_u64).filter(|n| *n > 0) {
        crate::hook::local::log(&format!(
            "{unlinked} events named an evaluation cell (SIGHTLINE_EVAL_CELL) and were stored without the link: \
             only a harness machine's token links a session to a cell (sightline token create --kind hook --run-kind EVAL)"
        ));
    }
    let mut rejected_rows = Vec::new();
    for r in rejected {
        if let Some(queued) = r.get("index").and_then(Value::as_u64).and_then(|i| batch.get(i as usize)) {
            let field = r.get("field").and_then(Value::as_str).unwrap_or("").to_string();
            let reason = r.get("reason").and_then(Value::as_str).unwrap_or("").to_string();
            rejected_rows.push((queued.id, field, reason));
        }
    }
    let acknowledged: Vec<i64> =
        batch.iter().map(|q| q.id).filter(|id| !rejected_rows.iter().any(|(r, _, _)| r == id)).collect();
    queue.settle(&acknowledged, &rejected_rows, crate::clock::system_now_ms())?;
    Ok(Shipped::Settled { acknowledged: acknowledged.len(), rejected: rejected_rows.len() })
}

/// How often a running flusher folds the WAL back when no shipment did.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);

/// Runs until the queue has been quiet for `quiet_exit`. Returns without work when
/// another flusher holds the lock. With `quiet_exit` zero (one-shot), a failed shipment
/// is an error instead of a retry, and everything unshipped stays queued.
pub fn run(config: &FlushConfig) -> anyhow::Result<()> {
    let Some(_lock) = try_lock()? else { return Ok(()) };
    let agent = local::http_agent(Duration::from_secs(30));
    let queue = Queue::open(&local::queue_path())?;
    let upload_agent = local::http_agent(super::shipper::UPLOAD_TIMEOUT);
    let client_info = client_block();
    let mut last_shipping = Instant::now() - Duration::from_secs(60);
    let mut backoff = Duration::ZERO;
    let mut quiet_since = Instant::now();
    let mut last_checkpoint = Instant::now();
    loop {
        // Hooks never checkpoint; this connection keeps the WAL short even while the
        // server is away (a hook that opens the queue alone reads the whole WAL).
        if last_checkpoint.elapsed() >= CHECKPOINT_EVERY {
            queue.checkpoint()?;
            last_checkpoint = Instant::now();
        }
        if !backoff.is_zero() {
            // Full jitter: anywhere up to the current backoff, so many laptops coming
            // back online do not hit the server in step.
            std::thread::sleep(backoff.mul_f64(0.5 + fastrand::f64() / 2.0));
        }
        let (queued, oldest_ms) = queue.backlog()?;
        if queued == 0 {
            // Transcripts go once their session's events are on the server; a one-shot
            // run retries failed uploads now, a long-running one after their backoff.
            let one_shot = config.quiet_exit.is_zero();
            if (one_shot || last_shipping.elapsed() >= Duration::from_secs(5))
                && let Some(client) = local::load_config()?
            {
                super::shipper::ship_due(&queue, &client, &upload_agent, config.chunk_bytes, one_shot)?;
                last_shipping = Instant::now();
            }
            if quiet_since.elapsed() >= config.quiet_exit {
                queue.checkpoint_truncate()?;
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200).min(config.interval));
            continue;
        }
        quiet_since = Instant::now();
        let oldest_age = oldest_ms.map_or(0, |t| crate::clock::system_now_ms() - t);
        if (queued as usize) < config.batch
            && (oldest_age as u128) < config.interval.as_millis()
            && config.quiet_exit > Duration::ZERO
        {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        let Some(client) = local::load_config()? else {
            local::log("flusher: not logged in (sightline login --server URL --token TOKEN)");
            backoff = next_backoff(backoff, config.max_backoff);
            continue;
        };
        match ship(&queue, &client, &agent, &client_info, config.batch)? {
            Shipped::Settled { rejected, acknowledged } => {
                queue.set_mark(
                    "last_flush",
                    &format!("{acknowledged} events accepted"),
                    crate::clock::system_now_ms(),
                )?;
                // Hooks never checkpoint or prune; this connection keeps the WAL short and
                // the usage ledger small.
                queue.checkpoint()?;
                last_checkpoint = Instant::now();
                queue.prune_usage_groups(crate::clock::system_now_ms(), super::usage::GROUP_RETENTION_MS)?;
                if rejected > 0 {
                    local::log(&format!(
                        "flusher: the server rejected {rejected} events; kept aside in the queue database"
                    ));
                }
                backoff = Duration::ZERO;
            }
            Shipped::RetryLater(reason) if config.quiet_exit.is_zero() => {
                queue.set_mark("last_error", &reason, crate::clock::system_now_ms())?;
                // A one-shot run reports the failure; the events stay queued.
                anyhow::bail!("{reason}; {} events stay queued", queue.queued_count()?);
            }
            Shipped::RetryLater(reason) => {
                queue.set_mark("last_error", &reason, crate::clock::system_now_ms())?;
                local::log(&format!("flusher: {reason}; retrying"));
                backoff = next_backoff(backoff, config.max_backoff);
            }
        }
    }
}

fn next_backoff(current: Duration, max: Duration) -> Duration {
    if current.is_zero() { Duration::from_millis(500) } else { (current * 2).min(max) }
}

//! `sightline bench hook`: exec-to-exit latency of `sightline hook` as an agent runs
//! it — a new process per event reading a Claude Code payload on stdin and appending
//! to the local queue — alone or with several hooks firing at once.
//!
//! As on a developer's machine, a flusher holds the queue open while hooks fire and
//! drains it every 5 s or 50 events, then checkpoints: here a stand-in in this process
//! that does to the queue what the flusher does, with a server that acknowledges every
//! event at once (the real flusher needs a server). `--without-flusher` measures hooks
//! with nobody draining the queue, the WAL growing for the whole run.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct HookBenchArgs {
    /// Hook runs per concurrent stream.
    #[arg(long, default_value_t = 500)]
    pub runs: usize,
    /// Hooks firing at once (independent streams).
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// No flusher drains or checkpoints the queue during the run.
    #[arg(long)]
    pub without_flusher: bool,
    /// The binary whose `hook` is timed (default: this one), e.g. the slim
    /// `sightline-hook`, to compare the two builds' cold starts.
    #[arg(long, value_name = "PATH")]
    pub binary: Option<std::path::PathBuf>,
}

/// Does to the queue what a running flusher does, until `done`: every 5 s or 50 events
/// the batch leaves (as if the server acknowledged it) and the WAL is checkpointed.
/// Returns how many events it drained.
fn flusher_stand_in(queue_path: &std::path::Path, done: &AtomicBool) -> anyhow::Result<usize> {
    let queue = crate::hook::queue::Queue::open(queue_path)?;
    let mut drained = 0;
    let mut last = Instant::now();
    while !done.load(Ordering::Relaxed) {
        let (queued, _) = queue.backlog()?;
        if queued < 50 && last.elapsed() < Duration::from_secs(5) {
            // The flusher polls every 100 ms while under a batch, and ships the next
            // batch at once while a full one waits.
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        let batch: Vec<i64> = queue.peek(50)?.into_iter().map(|q| q.id).collect();
        queue.settle(&batch, &[], crate::clock::system_now_ms())?;
        queue.checkpoint()?;
        drained += batch.len();
        last = Instant::now();
    }
    Ok(drained)
}

const PAYLOAD: &str = r#"{"session_id":"bench-session","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"acceptEdits","hook_event_name":"PostToolUse","tool_name":"Edit","tool_use_id":"toolu_bench","tool_input":{"file_path":"src/lib.rs","old_string":"a","new_string":"b"},"tool_response":{"filePath":"src/lib.rs","success":true}}"#;

pub fn run(args: &HookBenchArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(args.runs > 0 && args.concurrency > 0, "--runs and --concurrency must be at least 1");
    let exe = match &args.binary {
        Some(path) => path.clone(),
        None => std::env::current_exe()?,
    };
    let home = std::env::temp_dir().join(format!("sightline-hook-bench-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&home)?;
    let one = |exe: &std::path::Path| -> anyhow::Result<f64> {
        let started = Instant::now();
        let mut child = Command::new(exe)
            .args(["hook", "PostToolUse", "--agent", "claude_code"])
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("SIGHTLINE_NO_FLUSHER", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        child.stdin.take().map(|mut s| s.write_all(PAYLOAD.as_bytes()));
        child.wait()?;
        Ok(started.elapsed().as_secs_f64() * 1000.0)
    };
    one(&exe)?; // warm the page cache and create the queue
    let queue_path = home.join("data/sightline/queue.db");
    let done = AtomicBool::new(false);
    let (times, drained) = std::thread::scope(|scope| {
        let flusher = (!args.without_flusher).then(|| scope.spawn(|| flusher_stand_in(&queue_path, &done)));
        let handles: Vec<_> = (0..args.concurrency.max(1))
            .map(|_| scope.spawn(|| (0..args.runs).map(|_| one(&exe)).collect::<Result<Vec<f64>, _>>()))
            .collect();
        let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        // Stop the flusher before reporting anything, or the scope would wait for it forever.
        done.store(true, Ordering::Relaxed);
        let drained = flusher.map(|f| f.join().map_err(|_| anyhow::anyhow!("the flusher thread panicked")));
        let times = joined
            .into_iter()
            .map(|run| run.map_err(|_| anyhow::anyhow!("a bench thread panicked"))?)
            .collect::<anyhow::Result<Vec<Vec<f64>>>>()?;
        let drained = drained.transpose()?.transpose()?;
        Ok::<_, anyhow::Error>((times, drained))
    })?;
    let mut times: Vec<f64> = times.into_iter().flatten().collect();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| super::nearest_rank(&times, p).unwrap_or(0.0);
    let queue = crate::hook::queue::Queue::open(&queue_path)?;
    let flusher = match drained {
        Some(drained) => format!("{drained} drained by the flusher stand-in, "),
        None => "no flusher, ".to_string(),
    };
    // This command keeps ignoring SIGPIPE (it writes into its hooks' stdin), so a reader
    // that went away is an ignored write, not a panic.
    let _ = writeln!(
        std::io::stdout(),
        "hook PostToolUse, {} runs x {} at once: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {flusher}{} events queued",
        args.runs,
        args.concurrency.max(1),
        pct(0.5),
        pct(0.95),
        pct(0.99),
        pct(1.0),
        queue.queued_count()?
    );
    let _ = std::fs::remove_dir_all(&home);
    Ok(0)
}

//! `sightline bench hook`: exec-to-exit latency of `sightline hook` as an agent runs
//! it — a new process per event reading a Claude Code payload on stdin and appending
//! to the local queue — alone or with several hooks firing at once.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct HookBenchArgs {
    /// Hook runs per concurrent stream.
    #[arg(long, default_value_t = 500)]
    pub runs: usize,
    /// Hooks firing at once (independent streams).
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
}

const PAYLOAD: &str = r#"{"session_id":"bench-session","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","permission_mode":"acceptEdits","hook_event_name":"PostToolUse","tool_name":"Edit","tool_use_id":"toolu_bench","tool_input":{"file_path":"src/lib.rs","old_string":"a","new_string":"b"},"tool_response":{"filePath":"src/lib.rs","success":true}}"#;

pub fn run(args: &HookBenchArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(args.runs > 0 && args.concurrency > 0, "--runs and --concurrency must be at least 1");
    let exe = std::env::current_exe()?;
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
    let mut times: Vec<f64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..args.concurrency.max(1))
            .map(|_| scope.spawn(|| (0..args.runs).map(|_| one(&exe)).collect::<Result<Vec<f64>, _>>()))
            .collect();
        handles.into_iter().map(|h| h.join().expect("bench thread")).collect::<Result<Vec<Vec<f64>>, _>>()
    })?
    .into_iter()
    .flatten()
    .collect();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| super::bench::nearest_rank(&times, p).unwrap_or(0.0);
    let queue = crate::hook::queue::Queue::open(&home.join("data/sightline/queue.db"))?;
    println!(
        "hook PostToolUse, {} runs x {} at once: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {} events queued",
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

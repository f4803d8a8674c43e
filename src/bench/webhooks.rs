//! `sightline bench webhooks`: deliveries to a running server's GitHub App listener at a
//! steady rate (default 50/s), signed as GitHub signs them, in the mix a busy
//! organisation sends (for each pull request: opened, two pushes, check runs, a review,
//! the merge). It reports the acknowledgement latency it saw, and from the server's own
//! delivery log (`webhook_deliveries` in `--data-dir`, read-only) receipt-to-upsert
//! latency and delivery success for this run's deliveries.
//!
//! Invariant: only what was observed is reported; a delivery not acknowledged with 202
//! counts against success, and one still pending when the wait ends is reported as such.

use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{Value, json};

use crate::github::signature;

#[derive(Debug, Clone, Args)]
pub struct WebhooksBenchArgs {
    /// Base URL of the GitHub App listener, e.g. http://127.0.0.1:4001.
    #[arg(long)]
    pub url: String,
    /// The server's data directory, to read its delivery log.
    #[arg(long)]
    pub data_dir: std::path::PathBuf,
    /// The webhook secret the server was started with.
    #[arg(long, env = "SIGHTLINE_GITHUB_WEBHOOK_SECRET", hide_env_values = true)]
    pub secret: String,
    /// Deliveries per second.
    #[arg(long, default_value_t = 50)]
    pub rate: u32,
    /// How long to send: seconds, or with a unit (90s, 2m).
    #[arg(long, default_value = "60s")]
    pub duration: String,
}

/// A repository of this run only (its own GitHub id too: one id under two names is a
/// rename, which would move an earlier run's pull requests into this one).
fn repository(run: &str) -> Value {
    let id = i64::from_str_radix(&run[run.len() - 8..], 16).unwrap_or(77);
    json!({"id": id, "full_name": format!("bench-{run}/service"), "default_branch": "main", "private": true})
}

fn pull_request(run: &str, number: i64, state: &str, minute: i64, merged: bool) -> Value {
    let time = |m: i64| format!("2026-11-20T{:02}:{:02}:00Z", 8 + m / 60, m % 60);
    json!({
        "id": number, "number": number, "title": format!("PAY-{number} bench change"), "body": "Benchmark.",
        "user": {"login": "bench", "id": 1}, "state": state, "draft": false, "merged": merged,
        "created_at": time(0), "updated_at": time(minute), "merged_at": if merged { Value::from(time(minute)) } else { Value::Null },
        "closed_at": if merged { Value::from(time(minute)) } else { Value::Null },
        "merge_commit_sha": if merged { Value::from(format!("{number:040x}")) } else { Value::Null },
        "head": {"ref": format!("bench/{number}"), "sha": format!("{:040x}", number * 1000 + minute), "repo": {"full_name": format!("bench-{run}/service")}},
        "base": {"ref": "main", "sha": "1".repeat(40), "repo": {"full_name": format!("bench-{run}/service")}},
        "additions": 40 + number % 100, "deletions": 10, "changed_files": 3
    })
}

/// The `i`-th delivery of the mix: (event, payload).
fn delivery(run: &str, i: u64) -> (&'static str, Value) {
    let number = (i / 8) as i64 + 1;
    let repo = repository(run);
    let pr = |state: &str, minute: i64, merged: bool| pull_request(run, number, state, minute, merged);
    match i % 8 {
        0 => ("pull_request", json!({"action": "opened", "pull_request": pr("open", 0, false), "repository": repo})),
        1 | 3 => {
            let sha = format!("{:040x}", number * 1000 + i as i64);
            (
                "push",
                json!({"ref": format!("refs/heads/bench/{number}"), "after": sha, "commits": [{"id": sha, "message": "work"}], "repository": repo}),
            )
        }
        2 => {
            ("pull_request", json!({"action": "synchronize", "pull_request": pr("open", 5, false), "repository": repo}))
        }
        4 | 5 => {
            let conclusion = if i % 8 == 4 { "failure" } else { "success" };
            let run_id = number * 10 + (i % 8) as i64;
            (
                "check_run",
                json!({"action": "completed", "check_run": {"id": run_id, "name": format!("check-{}", i % 8),
                "head_sha": format!("{:040x}", number * 1000 + 5), "status": "completed", "conclusion": conclusion,
                "completed_at": "2026-11-20T08:30:00Z", "pull_requests": [{"number": number}]}, "repository": repo}),
            )
        }
        6 => (
            "pull_request_review",
            json!({"action": "submitted", "review": {"id": number, "user": {"login": "reviewer"},
            "state": "approved", "commit_id": format!("{:040x}", number * 1000 + 5), "submitted_at": "2026-11-20T08:40:00Z"},
            "pull_request": pr("open", 6, false), "repository": repo}),
        ),
        _ => ("pull_request", json!({"action": "closed", "pull_request": pr("closed", 50, true), "repository": repo})),
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    super::nearest_rank(sorted, p).unwrap_or(f64::NAN)
}

pub fn run(args: &WebhooksBenchArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(args.rate > 0, "--rate must be at least 1");
    let duration = super::parse_duration(&args.duration)?;
    let total = (duration.as_secs_f64() * args.rate as f64).round() as u64;
    let run = uuid::Uuid::now_v7().simple().to_string()[..12].to_string();
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent();
    let url = format!("{}/github/webhooks", args.url.trim_end_matches('/'));
    let conn = rusqlite::Connection::open_with_flags(
        args.data_dir.join("main.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let started_ms = crate::clock::system_now_ms();
    eprintln!("sending {total} deliveries at {}/s to {url}", args.rate);
    let interval = Duration::from_secs_f64(1.0 / args.rate as f64);
    let start = Instant::now();
    let mut acks = Vec::with_capacity(total as usize);
    let mut refused = 0u64;
    for i in 0..total {
        let due = start + interval * i as u32;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let (event, payload) = delivery(&run, i);
        let body = serde_json::to_vec(&payload)?;
        let sent = Instant::now();
        let answer = agent
            .post(&url)
            .header("Content-Type", "application/json")
            .header("X-GitHub-Event", event)
            .header("X-GitHub-Delivery", format!("bench-{run}-{i}"))
            .header("X-Hub-Signature-256", signature::sign(args.secret.as_bytes(), &body))
            .send(&body[..]);
        match answer {
            Ok(response) if response.status().as_u16() == 202 => acks.push(sent.elapsed().as_secs_f64() * 1000.0),
            Ok(response) => {
                refused += 1;
                eprintln!("delivery {i}: HTTP {}", response.status());
            }
            Err(err) => {
                refused += 1;
                eprintln!("delivery {i}: {err}");
            }
        }
    }
    let sending = start.elapsed();
    // Wait (up to a minute) for the worker to settle this run's deliveries.
    let pattern = format!("bench-{run}-%");
    let pending = |conn: &rusqlite::Connection| -> anyhow::Result<i64> {
        Ok(conn.query_row(
            "SELECT count(*) FROM webhook_deliveries WHERE delivery_id LIKE ?1 AND outcome = 'pending'",
            [&pattern],
            |r| r.get(0),
        )?)
    };
    let wait_start = Instant::now();
    while pending(&conn)? > 0 && wait_start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut stmt = conn.prepare(
        "SELECT outcome, processing_ms FROM webhook_deliveries WHERE delivery_id LIKE ?1 AND received_at_ms >= ?2",
    )?;
    let rows: Vec<(String, Option<i64>)> = stmt
        .query_map(rusqlite::params![pattern, started_ms - 1000], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut upsert: Vec<f64> = rows
        .iter()
        .filter(|(o, _)| o == "applied" || o == "ignored")
        .filter_map(|(_, ms)| ms.map(|m| m as f64))
        .collect();
    upsert.sort_by(f64::total_cmp);
    acks.sort_by(f64::total_cmp);
    let count = |what: &str| rows.iter().filter(|(o, _)| o == what).count() as u64;
    let (applied, ignored, failed, still_pending) =
        (count("applied"), count("ignored"), count("failed"), count("pending"));
    let succeeded = applied + ignored;
    let success = succeeded as f64 / total.max(1) as f64 * 100.0;
    println!(
        "deliveries: {total} sent in {:.1} s ({:.1}/s); {refused} not acknowledged",
        sending.as_secs_f64(),
        total as f64 / sending.as_secs_f64()
    );
    println!(
        "acknowledgement (202): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        percentile(&acks, 0.5),
        percentile(&acks, 0.99),
        acks.last().copied().unwrap_or(f64::NAN)
    );
    println!(
        "receipt to upsert: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        percentile(&upsert, 0.5),
        percentile(&upsert, 0.99),
        upsert.last().copied().unwrap_or(f64::NAN)
    );
    println!("outcomes: {applied} applied, {ignored} ignored, {failed} failed, {still_pending} still pending");
    println!("delivery success: {success:.2}% (target 99%)");
    Ok(if success >= 99.0 { 0 } else { 1 })
}

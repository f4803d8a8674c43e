//! What one scrape costs in SQLite steps on a small and a large job history: indexed
//! lookups only, so the count does not grow with `job_runs` or `job_alerts`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::{Connection, params};

use super::read;

fn main_db() -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
    conn
}

/// `runs` job runs spread over every job, most of them failed (so the last success is
/// far back in each job's history), one breach in three, and the latest run of each job
/// breach-free: the history a scrape must not read.
fn with_history(conn: &Connection, runs: usize) {
    let tx = conn.unchecked_transaction().unwrap();
    {
        let mut run = tx
            .prepare(
                "INSERT INTO job_runs (id, job, trigger, started_at_ms, ended_at_ms, outcome)
                 VALUES (?1, ?2, 'schedule', ?3, ?3 + 10, ?4)",
            )
            .unwrap();
        let mut alert = tx
            .prepare(
                "INSERT INTO job_alerts (id, job, run_id, at_ms, severity, reason)
                 VALUES (?1, ?2, ?3, ?4, 'warning', 'slow')",
            )
            .unwrap();
        let jobs = crate::jobs::registry::JOBS;
        for i in 0..runs {
            let job = jobs[i % jobs.len()].name;
            let id = format!("run-{i:08}");
            let outcome = match i / jobs.len() {
                0 => "succeeded",
                n if n % 50 == 7 => "refused",
                _ => "failed",
            };
            run.execute(params![id, job, 1_000 + i as i64, outcome]).unwrap();
            if i % 3 == 0 && i + jobs.len() < runs {
                alert.execute(params![format!("alert-{i:08}"), job, id, 1_010 + i as i64]).unwrap();
            }
        }
        for hour in 0..24 {
            tx.execute(
                "INSERT INTO aggregate_dirty_buckets (bucket_start_ms, marked_at_ms) VALUES (?1, ?2)",
                params![hour * 3_600_000, 5_000 + hour],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

/// SQLite's virtual-machine steps of one scrape's reads.
fn steps_of_a_scrape(conn: &Connection) -> u64 {
    let steps = Arc::new(AtomicU64::new(0));
    let counter = steps.clone();
    conn.progress_handler(
        1,
        Some(move || {
            counter.fetch_add(1, Ordering::Relaxed);
            false
        }),
    )
    .unwrap();
    let scrape = read(conn, 10_000_000).unwrap();
    conn.progress_handler(0, None::<fn() -> bool>).unwrap();
    assert!(scrape.jobs.iter().all(|job| !job.breached), "{:?}", scrape.jobs);
    assert!(scrape.jobs.iter().all(|job| job.last_success_ms.is_some()), "{:?}", scrape.jobs);
    assert_eq!(scrape.aggregate_lag_ms, 10_000_000 - 5_000);
    steps.load(Ordering::Relaxed)
}

#[test]
fn metrics_scrape_reads_indexes_not_the_job_history() {
    let (small, large) = (main_db(), main_db());
    with_history(&small, 1_000);
    with_history(&large, 100_000);
    let (few, many) = (steps_of_a_scrape(&small), steps_of_a_scrape(&large));
    eprintln!("a scrape: {few} SQLite steps on 1,000 job runs, {many} on 100,000");
    // A scan of 100,000 runs (or of a third as many alerts) is hundreds of thousands of
    // steps; indexed lookups grow with the log of the rows.
    assert!(many < 2 * few + 2_000, "a scrape took {many} steps on 100,000 runs and {few} on 1,000");
    assert!(many < 50_000, "a scrape took {many} steps on 100,000 runs");
}

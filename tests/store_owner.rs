//! The event store's one owner beside a running server (issue 54): commands run from the
//! command line next to a server under ingest load neither fail on a locked `main.db`
//! nor rewrite a partition while another rewriter holds the store. The rewrite lock is
//! held here by this test process (the library's `events::store::Store`, a process of
//! its own), so what the server and the real binary's `jobs run` do while it is held
//! shows that the lock reaches across processes.

use crate::common;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use sightline::events::partitions::{self, Day};
use sightline::events::store::Store;

const DAY_MS: i64 = 86_400_000;

/// A session of `n` events at `start_ms` that ends (so scoring takes it).
fn ended_session(session: &str, start_ms: i64, n: usize) -> Vec<serde_json::Value> {
    let mut events = session_events(session, start_ms, n);
    events.push(event("session_end", session, start_ms + n as i64 + 1));
    events
}

fn job_outcome(server: &TestServer, job: &str) -> Option<String> {
    server
        .main_db()
        .query_row("SELECT outcome FROM job_runs WHERE job = ?1 ORDER BY started_at_ms DESC LIMIT 1", [job], |row| {
            row.get(0)
        })
        .ok()
}

#[test]
fn jobs_beside_a_loaded_server_wait_for_the_store_and_never_meet_a_locked_database() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "admin@example.com", "ADMIN");
    let now = now_ms();
    // Ten days of ended sessions, one a day, then the ingest load on today's.
    for back in 1..=10 {
        let start = now - back * DAY_MS;
        let (status, body) =
            server.post_events(&server.token, &envelope(ended_session(&format!("old-{back}"), start, 12)));
        assert_eq!(status, 200, "{body}");
    }
    let old_days: Vec<Day> = (6..=10).map(|back| Day::of_ms(now - back * DAY_MS)).collect();
    assert!(old_days.iter().all(|day| partitions::partition_path(&server.data_dir, *day).exists()));

    let stop = Arc::new(AtomicBool::new(false));
    let (sent, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let load = {
        let (ingest, token) = (server.ingest.clone(), server.token.clone());
        let (stop, sent, refused) = (stop.clone(), sent.clone(), refused.clone());
        std::thread::spawn(move || {
            let mut batch = 0;
            while !stop.load(Ordering::Relaxed) {
                let session = format!("load-{}", batch % 20);
                let body = envelope(session_events(&session, now_ms(), 50));
                let (status, _) = post_json(&format!("{ingest}/v1/events"), &token, &body);
                if status == 200 {
                    sent.fetch_add(50, Ordering::Relaxed)
                } else {
                    refused.fetch_add(1, Ordering::Relaxed)
                };
                batch += 1;
            }
        })
    };

    // This process takes the store; a rewriting job of the command line and one of the
    // server must wait for it, while a job that only writes main.db goes ahead.
    let store = Store::at(&server.data_dir);
    let held = store.rewriting("the test").unwrap();
    let data_dir = server.data_dir.to_str().unwrap().to_string();
    let retention = Command::new(BIN)
        .args(["jobs", "run", "--data-dir", &data_dir, "sweep-retention"])
        .env_remove("SIGHTLINE_CONFIG")
        .env("SIGHTLINE_JOBS_RETENTION_DAYS", "5")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let admin = access_token(&server, "admin@example.com");
    let (status, body) = post_json(&format!("{}/admin/jobs/reprice-events-apply/run", server.web), &admin, &json!({}));
    assert_eq!(status, 202, "{body}");

    let scoring = sightline(&["jobs", "run", "--data-dir", &data_dir, "compute-trajectory-scores"]);
    assert!(scoring.status.success(), "scoring beside the server: {}", stderr(&scoring));
    assert!(!stderr(&scoring).contains("locked"), "{}", stderr(&scoring));
    assert!(stdout(&scoring).contains("compute-trajectory-scores succeeded"), "{}", stdout(&scoring));

    // Both rewriters still wait, seconds later, and nothing of the old days has moved.
    let mut retention = retention;
    let waited_from = Instant::now();
    while waited_from.elapsed() < Duration::from_secs(2) {
        assert!(retention.try_wait().unwrap().is_none(), "sweep-retention ran while the store was held");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(job_outcome(&server, "reprice-events-apply").as_deref(), Some("running"));
    assert!(old_days.iter().all(|day| partitions::partition_path(&server.data_dir, *day).exists()));
    assert_eq!(store.rewriter().unwrap().as_deref().map(|holder| holder.contains("(the test)")), Some(true));

    drop(held);
    let retention = retention.wait_with_output().unwrap();
    let (out, err) = (String::from_utf8_lossy(&retention.stdout), String::from_utf8_lossy(&retention.stderr));
    assert!(retention.status.success(), "sweep-retention: {err}");
    assert!(err.contains("waiting for another rewrite of the event store"), "it said what it waited for: {err}");
    assert!(err.contains("(the test)"), "and whom: {err}");
    assert!(out.contains("sweep-retention succeeded"), "{out}");
    wait_until(Duration::from_secs(60), "the server's repricing to end", || {
        job_outcome(&server, "reprice-events-apply").as_deref() != Some("running")
    });
    assert_eq!(job_outcome(&server, "reprice-events-apply").as_deref(), Some("succeeded"));

    stop.store(true, Ordering::Relaxed);
    load.join().unwrap();
    assert_eq!(refused.load(Ordering::Relaxed), 0, "no ingest batch refused meanwhile");
    assert!(sent.load(Ordering::Relaxed) > 0);
    // Retention did its work once it had the store: the days past five are gone.
    for day in &old_days {
        assert!(!partitions::partition_path(&server.data_dir, *day).exists(), "{day} outlived retention");
    }
    assert!(partitions::partition_path(&server.data_dir, Day::of_ms(now - DAY_MS)).exists());
    assert_eq!(store.rewriter().unwrap(), None, "no one holds the store at the end");
}

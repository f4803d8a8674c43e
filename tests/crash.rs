//! `kill -9` of the server at random moments under load, with clients that retry
//! every unacknowledged batch: no acknowledged event is lost, none is stored twice,
//! every session's aggregates equal its stored events (crash recovery folds commits
//! that reached a partition but not main.db), and SQLite's integrity checks pass.
//!
//! Rounds: `SIGHTLINE_CRASH_ROUNDS` (CI runs 5; the closing-note figure uses 20).

use crate::common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use common::*;

#[test]
fn kill_9_under_load_loses_no_acknowledged_event_and_double_counts_none() {
    let rounds: usize = std::env::var("SIGHTLINE_CRASH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    let mut server = TestServer::spawn();
    let url = Arc::new(RwLock::new(format!("{}/v1/events", server.ingest)));
    let acked: Arc<Mutex<HashSet<String>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..4)
        .map(|client| {
            let (url, acked, stop, token) = (url.clone(), acked.clone(), stop.clone(), server.token.clone());
            std::thread::spawn(move || {
                let mut batch_no = 0;
                while !stop.load(Ordering::SeqCst) {
                    batch_no += 1;
                    let session = format!("crash-{client}-{}", batch_no / 10);
                    let events = session_events(&session, now_ms() - 1000, 50);
                    let ids: Vec<String> = events.iter().map(|e| e["event_id"].as_str().unwrap().to_string()).collect();
                    let batch = envelope(events);
                    // Retry this batch until the server acknowledges it, across restarts.
                    loop {
                        let target = url.read().unwrap().clone();
                        let (status, _) = post_json(&target, &token, &batch);
                        if status == 200 {
                            acked.lock().unwrap().extend(ids);
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            })
        })
        .collect();
    for _ in 0..rounds {
        std::thread::sleep(Duration::from_millis(fastrand::u64(150..600)));
        server.kill9();
        server.start();
        *url.write().unwrap() = format!("{}/v1/events", server.ingest);
    }
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::SeqCst);
    for client in clients {
        client.join().unwrap();
    }
    server.kill9();
    server.start(); // recovery after the last crash runs at start-up

    let acked = acked.lock().unwrap();
    assert!(acked.len() > 1000, "the load actually ran: {} events acknowledged", acked.len());
    let mut stored: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(server.data_dir.join("events")).unwrap().flatten() {
        if entry.path().extension().and_then(|e| e.to_str()) != Some("db") {
            continue;
        }
        let conn = rusqlite::Connection::open(entry.path()).unwrap();
        let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok", "{}", entry.path().display());
        let mut stmt = conn.prepare("SELECT event_id FROM events").unwrap();
        let ids = stmt.query_map([], |r| r.get::<_, Vec<u8>>(0)).unwrap();
        stored.extend(ids.map(|id| uuid::Uuid::from_slice(&id.unwrap()).unwrap().to_string()));
    }
    let stored_set: HashSet<&String> = stored.iter().collect();
    assert_eq!(stored_set.len(), stored.len(), "an event is stored twice");
    let lost: Vec<_> = acked.iter().filter(|id| !stored_set.contains(id)).take(5).collect();
    assert!(lost.is_empty(), "acknowledged events lost: {lost:?}");

    let main = server.main_db();
    let check: String = main.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    let counted: i64 = main.query_row("SELECT sum(event_count) FROM sessions", [], |r| r.get(0)).unwrap();
    assert_eq!(counted, stored.len() as i64, "session aggregates count every stored event exactly once");
    eprintln!(
        "{rounds} kill -9 rounds: {} events acknowledged, {} stored, 0 lost, 0 stored twice, sessions count {counted}",
        acked.len(),
        stored.len()
    );
}

//! Queue durability: the flusher killed with SIGKILL in the middle of its POSTs, again
//! and again, and a server that is unreachable for a while — every queued event reaches
//! the server exactly once.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::machine::*;
use common::proxy::Proxy;
use common::*;
use serde_json::json;

const EVENTS: usize = 300;
const SESSIONS: usize = 4;

fn rounds() -> usize {
    std::env::var("SIGHTLINE_FLUSHER_KILL_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(20)
}

#[test]
fn killing_the_flusher_mid_post_and_a_server_outage_lose_and_duplicate_nothing() {
    let server = TestServer::spawn();
    let proxy = Proxy::start(server.ingest.trim_start_matches("http://"), 60);
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let login = client(home, &["login", "--server", &proxy.url, "--token", &server.token], None);
    assert!(login.status.success(), "{}", stderr(&login));
    for i in 0..EVENTS {
        let payload = json!({"session_id": format!("durable-{}", i % SESSIONS), "cwd": "/", "prompt": "x"});
        let out = client(home, &["hook", "UserPromptSubmit", "--agent", "claude_code"], Some(&payload.to_string()));
        assert_eq!(out.status.code(), Some(0));
    }

    let mut rng = fastrand::Rng::with_seed(7);
    let mut killed_mid_flight = 0;
    for round in 0..rounds() {
        // Rounds 8 to 11: the server cannot be reached at all.
        proxy.set_down((8..12).contains(&round));
        let mut flusher = Command::new(BIN)
            .args(["flusher", "--once", "--batch", "5"])
            .env("HOME", home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.u64(40..260)));
        if flusher.try_wait().unwrap().is_none() {
            killed_mid_flight += 1;
        }
        let _ = flusher.kill();
        let out = flusher.wait_with_output().unwrap();
        if let Some(code) = out.status.code() {
            // Only the rounds without a server may end by themselves, and then with the
            // one-shot failure code.
            assert!((8..12).contains(&round) && code == 2, "round {round}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    proxy.set_down(false);
    proxy.set_delay_ms(0);
    let finished = client(home, &["flusher", "--once"], None);
    assert!(finished.status.success(), "{}", stderr(&finished));
    assert!(stdout(&client(home, &["status"], None)).contains("queued:      0 events"));

    assert!(killed_mid_flight >= rounds() / 2, "most kills must land while shipping ({killed_mid_flight})");
    assert_eq!(count_stored_events(&server.data_dir), EVENTS as i64, "every event stored exactly once");
    let counted: i64 = (0..SESSIONS)
        .map(|s| server.session(&server.token, &format!("durable-{s}")).1["event_count"].as_i64().unwrap())
        .sum();
    assert_eq!(counted, EVENTS as i64, "session aggregates count each event once");
    let metrics = ureq::get(format!("{}/metrics", server.ingest)).call().unwrap().body_mut().read_to_string().unwrap();
    let resent = metrics
        .lines()
        .find(|l| l.starts_with("sightline_ingest_events_total{outcome=\"duplicate\"}"))
        .and_then(|l| l.rsplit(' ').next())
        .unwrap_or("0");
    eprintln!(
        "{} rounds, {killed_mid_flight} flushers killed while running, {resent} events re-sent after a kill and deduplicated",
        rounds()
    );
}

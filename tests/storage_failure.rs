//! Disk full: the server runs with its data directory on a small tmpfs (mounted in
//! a private user and mount namespace with `unshare`, so no privileges are needed
//! beyond unprivileged user namespaces). When the disk fills, ingest answers 503
//! with Retry-After and acknowledges nothing; once space returns, the retried
//! batches are stored, and everything acknowledged before is intact.

use crate::common;

use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

#[test]
fn disk_full_answers_503_and_loses_nothing_once_space_returns() {
    let outside = tempfile::tempdir().unwrap();
    let mount = outside.path().join("mnt");
    std::fs::create_dir(&mount).unwrap();
    let token_file = outside.path().join("token");
    let script = format!(
        r#"set -e
mount -t tmpfs -o size=6m tmpfs "{mount}"
"{bin}" user add --data-dir "{mount}/data" --email dev@example.com --name Dev >/dev/null
"{bin}" token create --data-dir "{mount}/data" --user dev@example.com --kind hook > "{token}" 2>/dev/null
exec "{bin}" serve --data-dir "{mount}/data" --ingest-addr 127.0.0.1:0 --web-addr 127.0.0.1:0 --github-addr 127.0.0.1:0"#,
        mount = mount.display(),
        bin = BIN,
        token = token_file.display()
    );
    let child = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", &script])
        .env("SIGHTLINE_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("unshare is part of util-linux");
    let mut child = KillOnDrop(child);
    // The server's view of the tmpfs, seen from outside its mount namespace.
    let inside = std::path::PathBuf::from(format!("/proc/{}/root{}", child.0.id(), mount.display()));
    let addresses = inside.join("data/run/addresses.json");
    wait_until(std::time::Duration::from_secs(30), "server in namespace", || {
        if let Ok(Some(status)) = child.0.try_wait() {
            panic!("server exited: {status}");
        }
        addresses.exists()
    });
    let bound: Value = serde_json::from_str(&std::fs::read_to_string(&addresses).unwrap()).unwrap();
    let url = format!("http://{}/v1/events", bound["ingest"].as_str().unwrap());
    let token = std::fs::read_to_string(&token_file).unwrap().trim().to_string();

    let before = envelope(session_events("s-full", now_ms() - 5000, 50));
    let (status, body) = post_json(&url, &token, &before);
    assert_eq!((status, body["accepted"].clone()), (200, serde_json::json!(50)), "{body}");

    // Fill the disk.
    let filler = inside.join("filler");
    let chunk = vec![7u8; 64 * 1024];
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&filler).unwrap();
        while file.write_all(&chunk).is_ok() {}
        let _ = file.sync_all();
    }
    let mut refused = Vec::new();
    for attempt in 0..5 {
        let batch = envelope(session_events(&format!("s-full-{attempt}"), now_ms(), 200));
        let (status, body) = post_json(&url, &token, &batch);
        refused.push((status, batch, body));
    }
    assert!(
        refused.iter().all(|(status, _, _)| *status == 503),
        "{:?}",
        refused.iter().map(|r| (r.0, r.2.clone())).collect::<Vec<_>>()
    );
    assert!(refused.iter().all(|(_, _, body)| body["error"]["code"] == "unavailable"));

    // Space returns: the retried batches go through, exactly once.
    std::fs::remove_file(&filler).unwrap();
    for (_, batch, _) in &refused {
        let (status, body) = post_json(&url, &token, batch);
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["accepted"].as_i64().unwrap() + body["duplicates"].as_i64().unwrap(), 200);
    }
    let (status, body) = post_json(&url, &token, &before);
    assert_eq!((status, body["duplicates"].clone()), (200, serde_json::json!(50)), "earlier events intact");

    // Everything is stored exactly once and counted once: replays are all
    // duplicates, and each session's count equals what was sent.
    for (_, batch, _) in &refused {
        let (_, body) = post_json(&url, &token, batch);
        assert_eq!(body["duplicates"], 200, "{body}");
    }
    let sessions = format!("http://{}/v1/me/sessions/claude_code", bound["ingest"].as_str().unwrap());
    assert_eq!(get_auth(&format!("{sessions}/s-full"), &token).1["event_count"], 50);
    for attempt in 0..5 {
        let (status, session) = get_auth(&format!("{sessions}/s-full-{attempt}"), &token);
        assert_eq!((status, session["event_count"].clone()), (200, serde_json::json!(200)), "{session}");
    }
}

/// Kills the namespaced server however the test ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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

/// Disk full during a backup, run as the `backup` job and as `sightline backup`: the backup
/// directory is a tmpfs too small for the data. The run fails naming the full disk and its
/// row in `job_runs` says so; no partial backup is left and the earlier backup is whole;
/// with room again, the next backup succeeds.
#[test]
fn a_backup_onto_a_full_disk_fails_naming_it_and_leaves_the_earlier_backups_whole() {
    let server = TestServer::spawn();
    for n in 0..20 {
        let (status, _) =
            server.post_events(&server.token, &envelope(session_events(&format!("full-{n}"), now_ms() - 60_000, 200)));
        assert_eq!(status, 200);
    }
    let data = server.data_dir.clone();
    let mut server = server;
    server.kill9(); // stopped, its data directory kept
    let outside = tempfile::tempdir().unwrap();
    let backups = outside.path().join("backups");
    std::fs::create_dir(&backups).unwrap();
    let script = format!(
        r#"set -u
bin="{bin}"; data="{data}"; backups="{backups}"
mount -t tmpfs -o size=4m tmpfs "$backups"
"$bin" backup --data-dir "$data" --to "$backups" >/dev/null 2>&1 || {{ echo "first backup failed"; exit 1; }}
mount -o remount,size=5m tmpfs "$backups"
dd if=/dev/zero of="$backups/filler" bs=64k count=$(( ( $(df -k --output=avail "$backups" | tail -1) - 256 ) / 64 )) 2>/dev/null
SIGHTLINE_BACKUP_DIR="$backups" "$bin" jobs run --data-dir "$data" backup >/dev/null 2>"$backups/../job.err"; echo "job=$?"
"$bin" backup --data-dir "$data" --to "$backups" >/dev/null 2>"$backups/../command.err"; echo "command=$?"
ls -A "$backups" | sort | tr '\n' ' '; echo
"$bin" restore --from "$backups" --check >/dev/null 2>&1; echo "check=$?"
rm -f "$backups/filler"; mount -o remount,size=64m tmpfs "$backups"
"$bin" backup --data-dir "$data" --to "$backups" >/dev/null 2>&1; echo "again=$?""#,
        bin = BIN,
        data = data.display(),
        backups = backups.display(),
    );
    let out = in_own_mount_namespace(&script);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "job=2", "the job's run failed: {text}");
    assert_eq!(lines[1], "command=2", "the command failed: {text}");
    let listed: Vec<&str> = lines[2].split_whitespace().collect();
    assert!(!listed.iter().any(|name| name.ends_with(".partial")), "no partial backup is left: {listed:?}");
    assert_eq!(listed.iter().filter(|name| !name.starts_with('.') && **name != "filler").count(), 1, "{listed:?}");
    assert_eq!(lines[3], "check=0", "the earlier backup is whole: {text}");
    assert_eq!(lines[4], "again=0", "with room again, a backup succeeds: {text}");
    let job_err = std::fs::read_to_string(outside.path().join("job.err")).unwrap();
    let command_err = std::fs::read_to_string(outside.path().join("command.err")).unwrap();
    for said in [&job_err, &command_err] {
        let full = said.contains("No space left on device") || said.contains("no space left on the backup's disk");
        assert!(full && said.contains(backups.to_str().unwrap()), "the failure names the full disk: {said}");
    }
    let main = rusqlite::Connection::open(data.join("main.db")).unwrap();
    let (outcome, error): (String, String) = main
        .query_row(
            "SELECT outcome, error FROM job_runs WHERE job = 'backup' ORDER BY started_at_ms DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(outcome, "failed");
    assert!(
        error.contains("no space left") || error.contains("No space left"),
        "the run's row says what failed: {error}"
    );
}

/// Disk full during compaction (`sightline compact`), with the data directory on a tmpfs
/// that has almost no room left: compaction fails naming the cause, the day's partition
/// keeps every event and passes SQLite's integrity check; with room again, it compacts.
#[test]
fn compaction_on_a_full_disk_fails_and_the_partition_keeps_every_event() {
    let server = TestServer::spawn();
    let old = now_ms() - 10 * 86_400_000;
    for n in 0..10 {
        let (status, _) =
            server.post_events(&server.token, &envelope(session_events(&format!("old-{n}"), old + n * 60_000, 200)));
        assert_eq!(status, 200);
    }
    let data = server.data_dir.clone();
    let mut server = server;
    server.kill9(); // stopped, its data directory kept
    let day = sightline::events::partitions::Day::of_ms(old).to_string();
    let kib: u64 = walk_size(&data) / 1024;
    let outside = tempfile::tempdir().unwrap();
    let mount = outside.path().join("mnt");
    std::fs::create_dir(&mount).unwrap();
    let script = format!(
        r#"set -u
bin="{bin}"; mnt="{mount}"; out="{out}"
mount -t tmpfs -o size={size}k tmpfs "$mnt"
cp -a "{data}" "$mnt/data" || exit 1
dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null
"$bin" compact --data-dir "$mnt/data" --day {day} >/dev/null 2>"$out/full.err"; echo "full=$?"
cp -a "$mnt/data" "$out/after-full"
rm -f "$mnt/filler"
"$bin" compact --data-dir "$mnt/data" --day {day} >/dev/null 2>"$out/room.err"; echo "room=$?"
cp -a "$mnt/data" "$out/after-room""#,
        bin = BIN,
        mount = mount.display(),
        out = outside.path().display(),
        data = data.display(),
        size = kib + 2048,
    );
    let out = in_own_mount_namespace(&script);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = text.lines().collect();
    let full_err = std::fs::read_to_string(outside.path().join("full.err")).unwrap();
    assert_ne!(lines[0], "full=0", "compaction on a full disk fails: {full_err}");
    assert!(full_err.to_lowercase().contains("full") || full_err.contains("No space left"), "it says why: {full_err}");
    assert_eq!(lines[1], "room=0", "{}", std::fs::read_to_string(outside.path().join("room.err")).unwrap());
    for copy in ["after-full", "after-room"] {
        let partition = outside.path().join(copy).join(format!("events/{day}.db"));
        let conn = rusqlite::Connection::open(&partition).unwrap();
        let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok", "{copy}");
        let events: i64 = conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0)).unwrap();
        assert_eq!(events, 2000, "{copy}: every event kept");
    }
}

fn walk_size(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|entry| {
            let path = entry.path();
            if path.is_dir() { walk_size(&path) } else { entry.metadata().map(|m| m.len()).unwrap_or(0) }
        })
        .sum()
}

/// Runs a shell script as root of a private user and mount namespace (its tmpfs mounts
/// are its own, and no privileges are needed), waiting for it.
fn in_own_mount_namespace(script: &str) -> std::process::Output {
    Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", script])
        .env("SIGHTLINE_LOG", "error")
        .env_remove("SIGHTLINE_CONFIG")
        .output()
        .expect("unshare is part of util-linux")
}

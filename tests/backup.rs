//! The restore drill (docs/operations.md, "Backup and restore"), on the real binary: events
//! are ingested under load while GitHub webhooks arrive and an administrator runs jobs
//! over HTTP; `sightline backup` runs in the middle of it; the backup is checked and
//! restored into a new directory and a server started on it. Every event acknowledged
//! before the backup began is there once, the sessions fold counts every restored event
//! once, the aggregates equal a `GROUP BY` over the restored events, every audit row and
//! every acknowledged webhook delivery from before the backup is there, and SQLite's
//! integrity check passes on every file.

use crate::common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::datadir::*;
use common::github_payloads::{self as gh, Pr};
use common::*;
use serde_json::json;

const SECRET: &str = "whsec-drill-6b2e9d1c";

fn stored_event_ids(data_dir: &std::path::Path) -> Vec<String> {
    let mut ids = Vec::new();
    for path in databases(data_dir).into_iter().skip(1) {
        let conn = open_read_only(&path);
        let mut stmt = conn.prepare("SELECT event_id FROM events").unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, Vec<u8>>(0)).unwrap();
        ids.extend(rows.map(|id| uuid::Uuid::from_slice(&id.unwrap()).unwrap().to_string()));
    }
    ids
}

fn column(conn: &rusqlite::Connection, sql: &str) -> Vec<String> {
    conn.prepare(sql).unwrap().query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[test]
fn a_backup_taken_under_load_restores_every_acknowledged_event_with_exact_aggregates() {
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_GITHUB_WEBHOOK_SECRET", SECRET)]);
    add_user(&server.data_dir, "admin@example.com", "ADMIN");
    let admin = access_token(&server, "admin@example.com");
    let acked: Arc<Mutex<HashSet<String>>> = Arc::default();
    let delivered: Arc<Mutex<Vec<String>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for client in 0..3 {
        let (acked, stop, url, token) =
            (acked.clone(), stop.clone(), format!("{}/v1/events", server.ingest), server.token.clone());
        workers.push(std::thread::spawn(move || {
            let mut batch_no = 0;
            while !stop.load(Ordering::SeqCst) {
                batch_no += 1;
                let events = session_events(&format!("drill-{client}-{}", batch_no / 8), now_ms() - 1000, 25);
                let ids: Vec<String> = events.iter().map(|e| e["event_id"].as_str().unwrap().to_string()).collect();
                if post_json(&url, &token, &envelope(events)).0 == 200 {
                    acked.lock().unwrap().extend(ids);
                }
            }
        }));
    }
    {
        // GitHub's deliveries, about five a second.
        let (delivered, stop, url) = (delivered.clone(), stop.clone(), format!("{}/github/webhooks", server.github));
        workers.push(std::thread::spawn(move || {
            let mut number = 0;
            while !stop.load(Ordering::SeqCst) {
                number += 1;
                let pr = Pr::new(number, "Drill", &format!("drill-{number}"), &format!("{number:040x}"));
                let body = serde_json::to_vec(&gh::pull_request_event("opened", &pr)).unwrap();
                let id = uuid::Uuid::new_v4().to_string();
                let answer = agent()
                    .post(&url)
                    .header("Content-Type", "application/json")
                    .header("X-GitHub-Event", "pull_request")
                    .header("X-GitHub-Delivery", &id)
                    .header("X-Hub-Signature-256", sightline::github::signature::sign(SECRET.as_bytes(), &body))
                    .send(&body[..]);
                if read(answer).0 == 202 {
                    delivered.lock().unwrap().push(id);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }));
    }
    {
        // An administrator running jobs (each run and each request audited).
        let (stop, web, admin) = (stop.clone(), server.web.clone(), admin.clone());
        workers.push(std::thread::spawn(move || {
            let jobs = ["sweep-abandoned", "sweep-scratch", "evaluate-alerts", "compute-subject-scores"];
            let mut turn = 0;
            while !stop.load(Ordering::SeqCst) {
                let _ = post_json(&format!("{web}/admin/jobs/{}/run", jobs[turn % jobs.len()]), &admin, &json!({}));
                turn += 1;
                std::thread::sleep(Duration::from_millis(150));
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(1500));

    // What was acknowledged, audited and delivered before the backup began.
    let acked_before = acked.lock().unwrap().clone();
    let delivered_before = delivered.lock().unwrap().clone();
    let live = open_read_only(&server.data_dir.join("main.db"));
    let audit_columns: Vec<String> = tables(&live)["audit_log"].0.clone();
    let audit_before = rows_of(&live, "audit_log", &audit_columns);
    drop(live);
    let backups = server.data_dir.parent().unwrap().join("backups");
    let backed =
        sightline(&["backup", "--data-dir", server.data_dir.to_str().unwrap(), "--to", backups.to_str().unwrap()]);
    assert!(backed.status.success(), "{}", stderr(&backed));
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.join().unwrap();
    }
    assert!(acked_before.len() > 500, "the load ran: {} events acknowledged before the backup", acked_before.len());
    assert!(delivered_before.len() >= 3, "webhooks arrived: {}", delivered_before.len());
    assert!(audit_before.len() >= 3, "jobs were run: {} audit rows", audit_before.len());

    let checked = sightline(&["restore", "--from", backups.to_str().unwrap(), "--check"]);
    assert!(checked.status.success(), "{}", stderr(&checked));
    let restored = server.data_dir.parent().unwrap().join("restored");
    let out = sightline(&["restore", "--from", backups.to_str().unwrap(), "--data-dir", restored.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    for path in databases(&restored) {
        assert_eq!(integrity(&path), "ok", "{}", path.display());
    }

    let again = TestServer::on(restored.clone(), server.token.clone());
    let main = again.main_db();
    wait_until(Duration::from_secs(60), "the aggregates caught up", || {
        main.query_row("SELECT count(*) FROM aggregate_dirty_buckets", [], |r| r.get::<_, i64>(0)).unwrap() == 0
    });
    let stored = stored_event_ids(&restored);
    let stored_set: HashSet<&String> = stored.iter().collect();
    assert_eq!(stored_set.len(), stored.len(), "an event is stored twice");
    let lost: Vec<_> = acked_before.iter().filter(|id| !stored_set.contains(id)).take(5).collect();
    assert!(lost.is_empty(), "events acknowledged before the backup began are missing: {lost:?}");
    let counted: i64 = main.query_row("SELECT coalesce(sum(event_count), 0) FROM sessions", [], |r| r.get(0)).unwrap();
    assert_eq!(counted, stored.len() as i64, "the sessions fold counts every restored event once");
    assert_eq!(
        crate::analytics::stored(&main),
        crate::analytics::from_raw_events(&restored),
        "the aggregates equal a GROUP BY over the restored events"
    );
    let audit_after: HashSet<String> = rows_of(&main, "audit_log", &audit_columns).into_iter().collect();
    let missing: Vec<_> = audit_before.iter().filter(|row| !audit_after.contains(*row)).take(3).collect();
    assert!(missing.is_empty(), "audit rows from before the backup are missing: {missing:?}");
    let deliveries: HashSet<String> = column(&main, "SELECT delivery_id FROM webhook_deliveries").into_iter().collect();
    let missing: Vec<_> = delivered_before.iter().filter(|id| !deliveries.contains(*id)).collect();
    assert!(missing.is_empty(), "acknowledged deliveries missing: {missing:?}");
    eprintln!(
        "drill: {} events acknowledged before the backup, {} restored; {} audit rows, {} deliveries before it",
        acked_before.len(),
        stored.len(),
        audit_before.len(),
        delivered_before.len()
    );
}

/// The `backup` job: off without `backup.dir` (a run fails naming the setting), and with
/// it a run takes a backup, says what it copied, and records it in `backups`.
#[test]
fn the_backup_job_runs_where_backup_dir_says_and_is_recorded() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("data");
    let _token = user_with_token(&data, "dev@example.com");
    let dir = data.to_str().unwrap();
    let ran = sightline(&["jobs", "run", "--data-dir", dir, "backup"]);
    assert!(!ran.status.success());
    assert!(stderr(&ran).contains("backup.dir"), "{}", stderr(&ran));

    let backups = temp.path().join("backups");
    let ran = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["jobs", "run", "--data-dir", dir, "backup"])
        .env("SIGHTLINE_BACKUP_DIR", &backups)
        .env("SIGHTLINE_BACKUP_KEEP", "2")
        .env_remove("SIGHTLINE_CONFIG")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", stderr(&ran));
    assert!(stdout(&ran).contains("copied"), "the summary says what was copied: {}", stdout(&ran));
    let main = open_read_only(&data.join("main.db"));
    let (location, files): (String, i64) =
        main.query_row("SELECT location, files FROM backups", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert!(location.starts_with(backups.to_str().unwrap()) && files >= 1, "{location} {files}");
    let runs: Vec<(String, String)> = main
        .prepare("SELECT outcome, coalesce(error, '') FROM job_runs WHERE job = 'backup' ORDER BY started_at_ms, rowid")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs[0].0 == "failed" && runs[0].1.contains("backup.dir"), "the first run says what is missing: {runs:?}");
    assert_eq!(runs[1].0, "succeeded");
}

/// A backup of a small real data directory, taken under a umask that would leave
/// everything readable by everyone: (the backup's directory, the data directory).
fn small_backup(root: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let data = root.join("data");
    let token = user_with_token(&data, "dev@example.com");
    let mut server = TestServer::on(data.clone(), token.clone());
    assert_eq!(server.post_events(&token, &envelope(session_events("backed-1", now_ms() - 5000, 5))).0, 200);
    server.terminate();
    let backups = root.join("backups");
    let command =
        format!("umask 000; exec '{BIN}' backup --data-dir '{}' --to '{}'", data.display(), backups.display());
    let out = std::process::Command::new("sh").args(["-c", &command]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let taken = std::fs::read_dir(&backups)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("manifest.json").is_file())
        .expect("a backup");
    (taken, data)
}

fn edit_manifest(backup: &std::path::Path, edit: impl FnOnce(&mut Vec<serde_json::Value>)) {
    let path = backup.join("manifest.json");
    let mut manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(manifest["files"].as_array_mut().unwrap());
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
}

fn file_entry(path: &str, content: &[u8]) -> serde_json::Value {
    let sha256 = hex::encode(ring::digest::digest(&ring::digest::SHA256, content).as_ref());
    json!({"path": path, "kind": "file", "bytes": content.len(), "sha256": sha256, "source": null, "reused": false})
}

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// L4: a backup and a restore hold password hashes, keys and transcripts: owner-only,
/// whatever the umask of whoever ran them.
#[cfg(unix)]
#[test]
fn backups_and_restores_are_owner_only_whatever_the_umask() {
    let root = tempfile::tempdir().unwrap();
    let (backup, _) = small_backup(root.path());
    let mut seen = 0;
    for path in walk(&backup) {
        let want = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(&path), want, "{}", path.display());
        seen += 1;
    }
    assert!(seen > 4, "{seen} files and directories");
    let restored = root.path().join("restored");
    let command =
        format!("umask 000; exec '{BIN}' restore --from '{}' --data-dir '{}'", backup.display(), restored.display());
    let out = std::process::Command::new("sh").args(["-c", &command]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for path in walk(&restored) {
        let want = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(&path), want, "{}", path.display());
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = vec![dir.to_path_buf()];
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            found.push(path);
        }
    }
    found
}

/// H2: a manifest that names a path outside the data directory is refused before
/// anything is read or written; nothing lands outside.
#[test]
fn a_restore_refuses_a_manifest_path_that_leaves_the_data_directory() {
    let root = tempfile::tempdir().unwrap();
    let (backup, _) = small_backup(root.path());
    let content = b"* * * * * root sh -c 'echo owned'\n";
    // The file the entry names, where the manifest's path finds it from the backup.
    std::fs::write(backup.parent().unwrap().join("escaped"), content).unwrap();
    for path in ["../escaped", "/tmp/sightline-restore-escaped", "transcripts/../../escaped", "bin/sightline-hook"] {
        let attacked = root.path().join("attacked");
        std::fs::copy(backup.join("manifest.json"), root.path().join("manifest.orig")).unwrap();
        edit_manifest(&backup, |files| files.push(file_entry(path, content)));
        for args in [vec!["--check"], vec!["--data-dir", attacked.to_str().unwrap()]] {
            let out = sightline(&[&["restore", "--from", backup.to_str().unwrap()][..], &args[..]].concat());
            assert!(!out.status.success(), "{path} {args:?}: restored");
            let said = stderr(&out);
            assert!(said.contains(&format!("{path:?}")) && said.contains("nothing was read or restored"), "{said}");
        }
        assert!(!root.path().join("escaped-in-data").exists());
        assert!(!attacked.join("main.db").exists(), "{path}: nothing is restored");
        assert!(!root.path().join("escaped").exists(), "{path}: nothing lands beside the data directory");
        assert!(!std::path::Path::new("/tmp/sightline-restore-escaped").exists());
        std::fs::copy(root.path().join("manifest.orig"), backup.join("manifest.json")).unwrap();
    }
    // Untouched, the same backup restores.
    let restored = root.path().join("restored");
    let out = sightline(&["restore", "--from", backup.to_str().unwrap(), "--data-dir", restored.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// H2: a symbolic link inside the backup (to a file anywhere on the machine) is neither
/// read by the check nor copied by the restore, even with the manifest made to match it.
#[cfg(unix)]
#[test]
fn a_restore_never_follows_a_link_inside_the_backup() {
    let root = tempfile::tempdir().unwrap();
    let (backup, _) = small_backup(root.path());
    let outside = root.path().join("outside-secret");
    std::fs::write(&outside, b"a file the backup must not reach\n").unwrap();
    let content = std::fs::read(&outside).unwrap();
    // A key replaced by a link, and a whole directory that is one.
    std::fs::create_dir_all(backup.join("keys")).unwrap();
    std::os::unix::fs::symlink(&outside, backup.join("keys/linked.pk8")).unwrap();
    std::fs::create_dir_all(root.path().join("elsewhere")).unwrap();
    std::fs::write(root.path().join("elsewhere/s9.jsonl.zst"), &content).unwrap();
    let transcripts = backup.join("transcripts");
    let _ = std::fs::remove_dir_all(&transcripts);
    std::os::unix::fs::symlink(root.path().join("elsewhere"), &transcripts).unwrap();
    for (path, link) in [("keys/linked.pk8", "keys/linked.pk8"), ("transcripts/s9.jsonl.zst", "transcripts")] {
        std::fs::copy(backup.join("manifest.json"), root.path().join("manifest.orig")).unwrap();
        edit_manifest(&backup, |files| {
            files.retain(|f| !f["path"].as_str().unwrap().starts_with("transcripts/"));
            files.push(file_entry(path, &content));
        });
        let restored = root.path().join("restored-with-link");
        for args in [vec!["--check"], vec!["--data-dir", restored.to_str().unwrap()]] {
            let out = sightline(&[&["restore", "--from", backup.to_str().unwrap()][..], &args[..]].concat());
            assert!(!out.status.success(), "{path} ({link} is a link) {args:?}: accepted");
            assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
        }
        assert!(!restored.join("main.db").exists(), "nothing is restored");
        std::fs::copy(root.path().join("manifest.orig"), backup.join("manifest.json")).unwrap();
    }
}

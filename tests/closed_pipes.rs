//! Every command that prints ends quietly when its reader has gone (`sightline status |
//! head -1`): no panic, no backtrace, and the status a shell expects of a writer to a
//! closed pipe (killed by SIGPIPE, 141 in the shell).

use crate::common;

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use common::BIN;

/// Runs `args` with stdout a pipe whose read end is already closed, so the first write
/// meets a closed pipe. Returns how it ended and what it wrote on stderr.
fn with_closed_stdout(args: &[&str], home: &std::path::Path) -> (std::process::ExitStatus, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = Command::new(BIN)
        .args(args)
        .env_remove("SIGHTLINE_CONFIG")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("SIGHTLINE_NO_FLUSHER", "1")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (output.status, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn commands_end_quietly_when_stdout_is_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let results = dir.path().join("results.db");
    let results = results.to_str().unwrap();
    let made = Command::new(BIN).args(["evals", "demo", "--out", results]).output().unwrap();
    assert!(made.status.success());
    let migrated = Command::new(BIN).args(["migrate", "--data-dir", data]).output().unwrap();
    assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
    let added =
        Command::new(BIN).args(["user", "add", "--email", "a@example.com", "--name", "A", "--data-dir", data]).output();
    assert!(added.unwrap().status.success());
    let reports = dir.path().join("reports");
    let reports = reports.to_str().unwrap();

    let commands: Vec<Vec<&str>> = vec![
        vec!["status"],
        vec!["config", "default"],
        vec!["config", "show", "--data-dir", data],
        vec!["user", "list", "--data-dir", data],
        vec!["team", "list", "--data-dir", data],
        vec!["deletion", "list", "--data-dir", data],
        vec!["results", "--db", results],
        vec!["results", "nightly-2026-11-20", "--db", results],
        vec!["results", "nightly-2026-11-20", "--db", results, "--format", "json"],
        vec!["report", "nightly-2026-11-20", "--db", results, "--output", reports],
        vec!["pause", "--for", "1m"],
        vec!["resume"],
        vec!["--help"],
        vec!["results", "--help"],
        vec!["bench", "redact", "--bytes", "100000"],
    ];
    for args in commands {
        let (status, stderr) = with_closed_stdout(&args, &home);
        assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{args:?} panicked: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?} reported the closed pipe as an error: {stderr}");
        let by_sigpipe = status.signal() == Some(13);
        assert!(by_sigpipe || status.code() == Some(0), "{args:?} ended with {status:?}: {stderr}");
    }
}

/// The long-running commands keep going when whoever read their first lines has gone:
/// a dashboard started as `sightline dashboard | head -1` still serves.
#[test]
fn a_dashboard_whose_stdout_is_closed_still_serves() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.db");
    let made = Command::new(BIN).args(["evals", "demo", "--out", results.to_str().unwrap()]).output().unwrap();
    assert!(made.status.success());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(BIN)
        .args(["dashboard", "--db", results.to_str().unwrap(), "--port", &port.to_string()])
        .env_remove("SIGHTLINE_DASHBOARD_TOKEN")
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/api/runs");
    common::wait_until(std::time::Duration::from_secs(20), "the dashboard to answer", || common::get(&url).0 == 200);
    assert!(child.try_wait().unwrap().is_none(), "still running after printing into a closed pipe");
    child.kill().unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

//! The hook CLI through the real binary: a scripted Claude Code session of hook calls
//! against a real `sightline serve` on loopback.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::*;
use serde_json::{Value, json};

/// Runs the binary as a developer machine would: its own HOME and XDG directories.
fn client(home: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("SIGHTLINE_NO_FLUSHER", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child.stdin.as_mut().unwrap().write_all(text.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Test", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

fn hook(home: &Path, event: &str, payload: Value) {
    let out = client(home, &["hook", event, "--agent", "claude-code"], Some(&payload.to_string()));
    assert_eq!(out.status.code(), Some(0), "hook {event}: {}", stderr(&out));
}

#[test]
fn a_scripted_claude_code_session_reaches_the_server_exactly() {
    let server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let login = client(home, &["login", "--server", &server.ingest, "--token", &server.token], None);
    assert!(login.status.success(), "{}", stderr(&login));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join("config/sightline/client.toml")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is private");
    }

    let repo = home.join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "feature/hooks"]);
    std::fs::write(repo.join("a.txt"), "a").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    git(
        &repo,
        &["remote", "add", "origin", "https://ada:ghp_secretsecretsecretsecretsecretsecret12@github.com/acme/app.git"],
    );
    std::fs::write(repo.join("a.txt"), "changed").unwrap();

    let session = "7c1e9a52-0c1f-4e0a-9d7e-2f1b5e7c9a10";
    let base = json!({"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": repo, "permission_mode": "acceptEdits"});
    let with = |extra: Value| {
        let mut v = base.clone();
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    hook(home, "SessionStart", with(json!({"hook_event_name": "SessionStart", "source": "startup"})));
    hook(
        home,
        "UserPromptSubmit",
        with(json!({"hook_event_name": "UserPromptSubmit", "prompt": "fix the failing test"})),
    );
    hook(
        home,
        "PreToolUse",
        with(json!({"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "cargo test"}})),
    );
    hook(
        home,
        "PostToolUse",
        with(
            json!({"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": "ok", "exit_code": 0}}),
        ),
    );
    hook(
        home,
        "PreToolUse",
        with(
            json!({"tool_name": "Edit", "tool_use_id": "toolu_2", "tool_input": {"file_path": "src/lib.rs", "old_string": "a", "new_string": "b"}}),
        ),
    );
    hook(
        home,
        "PostToolUse",
        with(
            json!({"tool_name": "Edit", "tool_use_id": "toolu_2", "tool_input": {"file_path": "src/lib.rs"}, "tool_response": {"is_error": true, "error": "old_string not found"}}),
        ),
    );
    hook(home, "Notification", with(json!({"message": "Claude needs your permission to use Bash"})));
    hook(home, "FutureEventNobodyKnows", with(json!({"anything": 1})));
    hook(home, "Stop", with(json!({"stop_hook_active": false})));
    hook(home, "SessionEnd", with(json!({"reason": "exit"})));

    let status = stdout(&client(home, &["status"], None));
    assert!(status.contains("queued:      9 events"), "{status}");

    let flushed = client(home, &["flusher", "--once"], None);
    assert!(flushed.status.success(), "{}", stderr(&flushed));
    assert!(stdout(&client(home, &["status"], None)).contains("queued:      0 events"));

    let (code, view) = server.session(&server.token, session);
    assert_eq!(code, 200, "{view}");
    assert_eq!(view["event_count"], 9);
    assert_eq!(view["prompt_count"], 1);
    assert_eq!(view["tool_call_count"], 2);
    assert_eq!(view["tool_error_count"], 1);
    assert_eq!(view["notification_count"], 1);
    assert_eq!(view["max_permission_mode"], "accept_edits");
    assert_eq!(view["git"]["branch"], "feature/hooks");
    assert_eq!(view["git"]["dirty"], true);
    assert_eq!(view["git"]["remote"], "https://github.com/acme/app.git", "credentials stripped on the laptop");
    assert!(view["ended_at"].is_string());

    let (_, events) =
        get_auth(&format!("{}/v1/me/sessions/claude_code/{session}/events", server.ingest), &server.token);
    let text = events.to_string();
    for secret in ["cargo test", "fix the failing test", "old_string not found", "src/lib.rs"] {
        assert!(!text.contains(secret), "raw content {secret:?} reached the server: {text}");
    }
    let tool_end = events["events"].as_array().unwrap().iter().find(|e| e["type"] == "tool_end").unwrap();
    assert_eq!(tool_end["tool"]["name"], "claude_code:Bash");
    assert_eq!(tool_end["tool"]["action"], "exec");
    assert_eq!(tool_end["tool"]["input_sha256"].as_str().unwrap().len(), 64);
    assert!(tool_end["tool"]["duration_ms"].is_number(), "duration from the matching PreToolUse");
}

#[test]
fn bad_input_never_fails_the_agent_and_is_logged() {
    let home = tempfile::tempdir().unwrap();
    let out = client(home.path(), &["hook", "PostToolUse", "--agent", "claude_code"], Some("not json at all"));
    assert_eq!(out.status.code(), Some(0));
    let out = client(home.path(), &["hook", "PostToolUse", "--agent", "vim"], Some("{}"));
    assert_eq!(out.status.code(), Some(0));
    let log = std::fs::read_to_string(home.path().join("data/sightline/hook.log")).unwrap();
    assert!(log.contains("PostToolUse") && log.contains("vim"), "{log}");
}

#[test]
fn events_wait_in_the_queue_while_the_server_is_down() {
    let mut server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    client(home, &["login", "--server", &server.ingest, "--token", &server.token], None);
    server.kill9();
    let payload = json!({"session_id": "s-down", "cwd": "/", "hook_event_name": "UserPromptSubmit"});
    hook(home, "UserPromptSubmit", payload.clone());
    hook(home, "Stop", payload);
    let flushed = client(home, &["flusher", "--once"], None);
    assert_eq!(flushed.status.code(), Some(2), "a one-shot flush reports the failure");
    assert!(stderr(&flushed).contains("stay queued"), "{}", stderr(&flushed));
    assert!(stdout(&client(home, &["status"], None)).contains("queued:      2 events"), "nothing lost while down");
    server.start();
    client(home, &["login", "--server", &server.ingest, "--token", &server.token], None);
    assert!(client(home, &["flusher", "--once"], None).status.success());
    assert!(stdout(&client(home, &["status"], None)).contains("queued:      0 events"));
    assert_eq!(server.session(&server.token, "s-down").1["event_count"], 2);
}

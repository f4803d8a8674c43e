//! The hook CLI through the real binary: a scripted Claude Code session of hook calls
//! against a real `sightline serve` on loopback.

use crate::common;

use std::path::Path;

use common::machine::*;
use common::*;
use serde_json::{Value, json};

fn hook(home: &Path, event: &str, payload: Value) {
    let out = client(home, &["hook", event, "--agent", "claude-code"], Some(&payload.to_string()));
    assert_eq!(out.status.code(), Some(0), "hook {event}: {}", stderr(&out));
}

/// A git repository whose remote URL carries credentials, with an uncommitted change.
fn dirty_repo(home: &Path) -> std::path::PathBuf {
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
    repo
}

/// Replays the agent's fixture through the real binary, flushes to a real server, and
/// checks the server's session against the fixture's `expected.json`, field by field.
/// Returns the server's events of the session.
fn fixture_session_reaches_the_server_exactly(agent: &str) -> Vec<Value> {
    let server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let login = client(home, &["login", "--server", &server.ingest, "--token", &server.token], None);
    assert!(login.status.success(), "{}", stderr(&login));
    let repo = dirty_repo(home);
    replay(home, agent, &repo);
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture_dir(agent).join("expected.json")).unwrap()).unwrap();
    let want_events = expected["session"]["event_count"].as_i64().unwrap();
    let status = stdout(&client(home, &["status"], None));
    assert!(status.contains(&format!("queued:      {want_events} events")), "{status}");

    let flushed = client(home, &["flusher", "--once"], None);
    assert!(flushed.status.success(), "{}", stderr(&flushed));
    let session_id = expected["session_id"].as_str().unwrap();
    let (code, view) = server.agent_session(&server.token, agent, session_id);
    assert_eq!(code, 200, "{view}");
    for (field, want) in expected["session"].as_object().unwrap() {
        assert_eq!(&view[field], want, "{agent}: session field {field}: {view:#}");
    }
    assert_eq!(view["git"]["branch"], "feature/hooks", "{view:#}");
    assert_eq!(view["git"]["dirty"], true);
    assert_eq!(view["git"]["remote"], "https://github.com/acme/app.git", "credentials stripped on the laptop");
    assert!(view["ended_at"].is_string());
    let status = stdout(&client(home, &["status"], None));
    let shown = format!("session:     {agent} {session_id}: {want_events} events");
    assert!(
        status.contains(&shown) && status.contains("reachable:   yes") && status.contains("last flush:  2"),
        "{status}"
    );

    let url = format!("{}/v1/me/sessions/{agent}/{session_id}/events?limit=1000", server.ingest);
    let (code, events) = get_auth(&url, &server.token);
    assert_eq!(code, 200, "{events}");
    let text = events.to_string();
    for raw in expected["raw_content"].as_array().into_iter().flatten() {
        let raw = raw.as_str().unwrap();
        assert!(!text.contains(raw), "raw content {raw:?} reached the server: {text}");
    }
    events["events"].as_array().unwrap().clone()
}

#[test]
fn a_scripted_claude_code_session_reaches_the_server_exactly() {
    let events = fixture_session_reaches_the_server_exactly("claude_code");
    let bash = events.iter().find(|e| e["type"] == "tool_end" && e["tool"]["name"] == "claude_code:Bash").unwrap();
    assert_eq!(bash["tool"]["action"], "exec");
    assert_eq!(bash["tool"]["input_sha256"].as_str().unwrap().len(), 64);
    assert!(bash["tool"]["duration_ms"].is_number(), "duration from the matching PreToolUse");
    let statuses: Vec<_> =
        events.iter().filter(|e| e["type"] == "tool_end").map(|e| e["tool"]["status"].clone()).collect();
    assert_eq!(statuses, [json!("success"), json!("error"), json!("denied"), json!("success")]);
    let subagent = events.iter().find(|e| e["type"] == "subagent_end").unwrap();
    assert_eq!(subagent["model"], "claude-haiku-4-5-20251001");
    assert_eq!(subagent["usage"]["output_tokens"], 640, "the streamed group counts once, with its final count");
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

/// An evaluation harness (or a CI job) sets `SIGHTLINE_RUN_KIND` in its agent's
/// environment: the hook records every event under that kind, so the session is stored
/// as an EVAL run and never reaches the developer's own figures; a value the hook does not
/// understand still keeps the run out of them (recorded as CI, the log says why).
#[test]
fn a_harness_marks_its_agents_runs_with_sightline_run_kind() {
    let server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    assert!(client(home, &["login", "--server", &server.ingest, "--token", &server.token], None).status.success());
    let run = |session: &str, kind: &str| {
        let payload = json!({"session_id": session, "cwd": "/", "hook_event_name": "UserPromptSubmit"});
        for event in ["UserPromptSubmit", "Stop"] {
            let out = client_with(
                home,
                &["hook", event, "--agent", "claude-code"],
                Some(&payload.to_string()),
                &[("SIGHTLINE_RUN_KIND", kind)],
            );
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        }
    };
    run("s-eval", "eval");
    run("s-typo", "EVALS");
    hook(home, "UserPromptSubmit", json!({"session_id": "s-mine", "cwd": "/", "hook_event_name": "UserPromptSubmit"}));
    assert!(client(home, &["flusher", "--once"], None).status.success());

    let kind = |session: &str| server.session(&server.token, session).1["run_kind"].clone();
    assert_eq!((kind("s-eval"), kind("s-typo"), kind("s-mine")), (json!("EVAL"), json!("CI"), json!("INTERACTIVE")));
    let log = std::fs::read_to_string(home.join("data/sightline/hook.log")).unwrap();
    assert!(log.contains("SIGHTLINE_RUN_KIND=\"EVALS\" is not INTERACTIVE, CI or EVAL"), "{log}");
}

/// A harness names the cell it runs the agent for in its environment: the session is an
/// evaluation run linked to that cell (with its run and phase); a cell id of another shape
/// is not sent, the run stays an evaluation and the hook's log says why.
#[test]
fn a_harness_names_the_cell_each_session_was_run_for() {
    let server = TestServer::spawn();
    // The harness machine signs in with a harness's token: only that links a cell.
    let dir = server.data_dir.to_str().unwrap();
    let made = sightline(&[
        "token",
        "create",
        "--data-dir",
        dir,
        "--user",
        "dev@example.com",
        "--kind",
        "hook",
        "--run-kind",
        "EVAL",
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let harness = stdout(&made).trim().to_string();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    assert!(client(home, &["login", "--server", &server.ingest, "--token", &harness], None).status.success());
    let run = |home: &Path, session: &str, vars: &[(&str, &str)]| {
        let payload = json!({"session_id": session, "cwd": "/", "hook_event_name": "UserPromptSubmit"});
        for event in ["UserPromptSubmit", "Stop"] {
            let out = client_with(home, &["hook", event, "--agent", "claude-code"], Some(&payload.to_string()), vars);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        }
    };
    let cell = "claude-code__claude-sonnet-4-5__django__django-11099__r1";
    run(
        home,
        "s-cell",
        &[("SIGHTLINE_EVAL_CELL", cell), ("SIGHTLINE_EVAL_RUN", "nightly"), ("SIGHTLINE_EVAL_PHASE", "review")],
    );
    run(home, "s-bad", &[("SIGHTLINE_EVAL_CELL", "django-11099")]);
    assert!(client(home, &["flusher", "--once"], None).status.success());
    // A developer's own machine naming a cell: an evaluation run of theirs, not linked.
    let own = tempfile::tempdir().unwrap();
    let own = own.path();
    assert!(client(own, &["login", "--server", &server.ingest, "--token", &server.token], None).status.success());
    run(own, "s-own", &[("SIGHTLINE_EVAL_CELL", cell)]);
    assert!(client(own, &["flusher", "--once"], None).status.success());

    let db = server.main_db();
    let row = |session: &str| -> (String, Option<String>, Option<String>, Option<String>) {
        db.query_row(
            "SELECT run_kind, eval_cell_id, eval_run, eval_phase FROM sessions WHERE agent_session_id = ?1",
            [session],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .unwrap()
    };
    assert_eq!(row("s-cell"), ("EVAL".into(), Some(cell.to_string()), Some("nightly".into()), Some("review".into())));
    assert_eq!(row("s-bad"), ("EVAL".into(), None, None, None));
    let log = std::fs::read_to_string(home.join("data/sightline/hook.log")).unwrap();
    assert!(log.contains("SIGHTLINE_EVAL_CELL=\"django-11099\" must have the shape"), "{log}");
    assert_eq!(row("s-own"), ("EVAL".into(), None, None, None));
    let log = std::fs::read_to_string(own.join("data/sightline/hook.log")).unwrap();
    assert!(log.contains("stored without the link: only a harness machine's token links"), "{log}");
}

/// An evaluation harness machine signs in with a hook token made for EVAL runs: every
/// session sent with it is EVAL, whatever its events say; the CLI refuses a run kind on
/// anything but a hook token, and a kind other than EVAL or CI, naming the problem.
#[test]
fn a_harness_token_makes_every_session_sent_with_it_an_eval_run() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "harness@example.com", "MEMBER");
    let dir = server.data_dir.to_str().unwrap();
    let made = sightline(&[
        "token",
        "create",
        "--data-dir",
        dir,
        "--user",
        "harness@example.com",
        "--kind",
        "hook",
        "--run-kind",
        "eval",
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    assert!(stderr(&made).contains("(EVAL runs only)"), "{}", stderr(&made));
    let token = stdout(&made).trim().to_string();

    let mut claims_a_person = session_events("e-1", now_ms() - 60_000, 3);
    for event in &mut claims_a_person {
        event["run_kind"] = json!("INTERACTIVE");
    }
    let says_nothing = session_events("e-2", now_ms() - 30_000, 3);
    for events in [claims_a_person, says_nothing] {
        let (status, body) = server.post_events(&token, &envelope(events));
        assert_eq!((status, &body["accepted"]), (200, &json!(3)), "{body}");
    }
    assert_eq!(server.session(&token, "e-1").1["run_kind"], "EVAL");
    assert_eq!(server.session(&token, "e-2").1["run_kind"], "EVAL");
    // The developer's own token still sends their runs as they are.
    let (status, _) = server.post_events(&server.token, &envelope(session_events("mine", now_ms() - 10_000, 2)));
    assert_eq!(status, 200);
    assert_eq!(server.session(&server.token, "mine").1["run_kind"], "INTERACTIVE");

    for (args, says) in [
        (&["--kind", "otlp", "--run-kind", "EVAL"][..], "use it with --kind hook"),
        (&["--kind", "hook", "--run-kind", "interactive"][..], "--run-kind must be EVAL or CI, not \"INTERACTIVE\""),
    ] {
        let mut command = vec!["token", "create", "--data-dir", dir, "--user", "harness@example.com"];
        command.extend_from_slice(args);
        let refused = sightline(&command);
        assert!(!refused.status.success() && stderr(&refused).contains(says), "{}", stderr(&refused));
    }
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

#[test]
fn paused_hooks_record_nothing_and_purge_local_empties_the_queue() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let payload = json!({"session_id": "s-pause", "cwd": "/", "hook_event_name": "UserPromptSubmit"});
    assert!(client(home, &["pause"], None).status.success());
    hook(home, "UserPromptSubmit", payload.clone());
    let status = stdout(&client(home, &["status"], None));
    assert!(status.contains("queued:      0 events") && status.contains("paused:      yes"), "{status}");
    let bad = client(home, &["pause", "--for", "2w"], None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--for \"2w\": the unit must be s, m, h or d"), "{}", stderr(&bad));
    assert!(client(home, &["resume"], None).status.success());
    hook(home, "UserPromptSubmit", payload.clone());
    hook(home, "UserPromptSubmit", payload);
    assert!(stdout(&client(home, &["status"], None)).contains("queued:      2 events"));
    let purged = client(home, &["purge-local"], None);
    assert!(stdout(&purged).contains("removed 2 queued"), "{}", stdout(&purged));
    assert!(stdout(&client(home, &["status"], None)).contains("queued:      0 events"));
}

#[test]
fn a_scripted_codex_session_reaches_the_server_exactly() {
    let events = fixture_session_reaches_the_server_exactly("codex");
    let denied = events.iter().find(|e| e["type"] == "tool_end" && e["tool"]["status"] == "denied").unwrap();
    assert_eq!(denied["tool"]["name"], "codex:shell", "the refused git push, under the one name of Codex's shell tool");
    let mcp = events.iter().find(|e| e["type"] == "tool_end" && e["tool"]["action"] == "mcp").unwrap();
    assert_eq!(mcp["tool"]["server"], "github");
}

#[test]
fn a_scripted_gemini_cli_session_reaches_the_server_exactly() {
    let events = fixture_session_reaches_the_server_exactly("gemini_cli");
    let denied = events.iter().find(|e| e["type"] == "tool_end" && e["tool"]["status"] == "denied").unwrap();
    assert_eq!(
        denied["tool"]["name"], "gemini_cli:run_shell_command",
        "the refused shell dialog, not the approved edit"
    );
    let edit = events.iter().find(|e| e["type"] == "tool_end" && e["tool"]["name"] == "gemini_cli:replace").unwrap();
    assert!(edit["tool"]["duration_ms"].is_number(), "paired with its start by name and input");
}

#[test]
fn a_scripted_copilot_cli_session_reaches_the_server_exactly() {
    let events = fixture_session_reaches_the_server_exactly("copilot_cli");
    let denied = events.iter().find(|e| e["type"] == "tool_end" && e["tool"]["status"] == "denied").unwrap();
    assert_eq!(denied["tool"]["name"], "copilot_cli:bash");
}

#[test]
fn a_scripted_droid_session_reaches_the_server_exactly() {
    let events = fixture_session_reaches_the_server_exactly("droid");
    let denied = events.iter().find(|e| e["type"] == "tool_end" && e["tool"]["status"] == "denied").unwrap();
    assert_eq!(denied["tool"]["name"], "droid:Execute");
}

#[test]
fn a_scripted_opencode_session_reaches_the_server_exactly() {
    let events = fixture_session_reaches_the_server_exactly("opencode");
    let denied = events.iter().find(|e| e["type"] == "tool_end" && e["tool"]["status"] == "denied").unwrap();
    assert_eq!(denied["tool"]["name"], "opencode:edit");
}

#[test]
fn a_scripted_cline_session_reaches_the_server_exactly() {
    let events = fixture_session_reaches_the_server_exactly("cline");
    let mcp = events.iter().find(|e| e["type"] == "tool_end" && e["tool"]["action"] == "mcp").unwrap();
    assert_eq!(mcp["tool"]["server"], "github");
}

/// `flusher --once` beside a flusher that holds the lock waits instead of exiting at once
/// having shipped nothing; when that flusher stops with events left, it ships them.
#[test]
fn flusher_once_waits_for_a_running_flusher_then_ships_what_it_left() {
    let server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let login = client(home, &["login", "--server", &server.ingest, "--token", &server.token], None);
    assert!(login.status.success(), "{}", stderr(&login));
    let payload = json!({"session_id": "s-once", "transcript_path": "", "cwd": home, "hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    hook(home, "UserPromptSubmit", payload);
    // Another flusher (this test) holds the per-user lock for a second, shipping nothing.
    let lock_path = home.join("data/sightline/flusher.lock");
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let lock = std::fs::File::options().create(true).truncate(false).write(true).open(&lock_path).unwrap();
    lock.try_lock().unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(1));
        drop(lock);
    });
    let once = client(home, &["flusher", "--once"], None);
    releaser.join().unwrap();
    assert_eq!(once.status.code(), Some(0), "{}", stderr(&once));
    assert!(stdout(&client(home, &["status"], None)).contains("queued:      0 events"));
    let (status, view) = server.agent_session(&server.token, "claude_code", "s-once");
    assert_eq!((status, view["prompt_count"].as_i64()), (200, Some(1)), "{view}");
}

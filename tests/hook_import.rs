//! `import` through the real binary: past sessions of all seven adapter agents, from their
//! own stores (transcript files, Droid's sidecar, OpenCode's SQLite database, Cline's task
//! messages), reach the server with the same token totals the hooks would have reported;
//! importing again adds nothing, and sessions the hooks already saw are left to them.

use crate::common;

use std::path::Path;

use common::machine::*;
use common::*;
use serde_json::Value;

fn expected(agent: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture_dir(agent).join("expected.json")).unwrap()).unwrap()
}

fn copy_fixture(agent: &str, file: &str, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(fixture_dir(agent).join(file), to).unwrap();
}

fn run(home: &Path, args: &[&str]) -> String {
    let out = client(home, args, None);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn past_sessions_import_once_with_the_hooks_token_totals() {
    let server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    run(home, &["login", "--server", &server.ingest, "--token", &server.token]);
    let claude = expected("claude_code");
    let claude_session = claude["session_id"].as_str().unwrap();
    let project = home.join(".claude/projects/-home-ada-webapp");
    copy_fixture("claude_code", "transcript.jsonl", &project.join(format!("{claude_session}.jsonl")));
    copy_fixture("claude_code", "subagent.jsonl", &project.join(claude_session).join("subagents/agent-a7c31f0.jsonl"));
    let codex = expected("codex");
    let codex_session = codex["session_id"].as_str().unwrap();
    copy_fixture(
        "codex",
        "transcript.jsonl",
        &home.join(format!(".codex/sessions/2026/05/20/rollout-2026-05-20T10-15-02-{codex_session}.jsonl")),
    );

    let gemini = expected("gemini_cli");
    copy_fixture(
        "gemini_cli",
        "transcript.jsonl",
        &home.join(".gemini/tmp/widget/chats/session-2026-05-20T10-15-3f9c2a71.jsonl"),
    );

    let first = run(home, &["import", "--agent", "claude-code"]);
    assert!(first.starts_with("2 transcripts: 2 imported"), "{first}");
    assert!(run(home, &["import", "--agent", "codex"]).starts_with("1 transcripts: 1 imported"));
    assert!(run(home, &["import", "--agent", "gemini_cli"]).starts_with("1 transcripts: 1 imported"));
    run(home, &["flusher", "--once"]);
    let wal = std::fs::metadata(home.join("data/sightline/queue.db-wal")).map(|m| m.len());
    assert_eq!(wal.ok(), Some(0), "a flusher that leaves empties the WAL, so the next hook does not read it");

    for (agent, want) in [("claude_code", &claude), ("codex", &codex), ("gemini_cli", &gemini)] {
        let (code, view) = server.agent_session(&server.token, agent, want["session_id"].as_str().unwrap());
        assert_eq!(code, 200, "{view}");
        assert_eq!(view["usage"], want["session"]["usage"], "{agent}: imported usage equals the hooks' usage");
        assert_eq!(view["cost_nusd"], want["session"]["cost_nusd"], "{agent}");
        assert!(view["tool_call_count"].as_i64().unwrap() >= 2, "{agent}: {view:#}");
    }
    let (_, view) = server.agent_session(&server.token, "claude_code", claude_session);
    assert_eq!(view["prompt_count"], 1, "the transcript's one prompt; tool results and the subagent's prompt are not");
    assert_eq!(view["tool_error_count"], 1, "the failed Edit");
    let stored = count_stored_events(&server.data_dir);

    let again = run(home, &["import", "--agent", "claude_code"]);
    assert!(again.starts_with("2 transcripts: 0 imported (0 events queued), 2 already recorded"), "{again}");
    // Even with the local record gone, the server keeps one copy of each event.
    run(home, &["purge-local", "--all"]);
    run(home, &["login", "--server", &server.ingest, "--token", &server.token]);
    assert!(run(home, &["import", "--agent", "claude_code"]).starts_with("2 transcripts: 2 imported"));
    run(home, &["flusher", "--once"]);
    assert_eq!(count_stored_events(&server.data_dir), stored, "a second import stores nothing new");
    assert_eq!(
        server.agent_session(&server.token, "claude_code", claude_session).1["usage"],
        claude["session"]["usage"]
    );

    let unsupported = client(home, &["import", "--agent", "cursor"], None);
    assert_eq!(unsupported.status.code(), Some(2));
    assert!(stderr(&unsupported).contains("cursor has no adapter"), "{}", stderr(&unsupported));
}

fn session_view(server: &TestServer, agent: &str) -> (Value, Value) {
    let want = expected(agent);
    let (code, view) = server.agent_session(&server.token, agent, want["session_id"].as_str().unwrap());
    assert_eq!(code, 200, "{agent}: {view}");
    assert_eq!(view["usage"], want["session"]["usage"], "{agent}: imported usage equals the hooks' usage");
    assert_eq!(view["cost_nusd"], want["session"]["cost_nusd"], "{agent}");
    (view, want)
}

#[test]
fn copilot_droid_opencode_and_cline_sessions_import_from_their_own_stores() {
    let server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    run(home, &["login", "--server", &server.ingest, "--token", &server.token]);

    let copilot = expected("copilot_cli")["session_id"].as_str().unwrap().to_string();
    copy_fixture(
        "copilot_cli",
        "transcript.jsonl",
        &home.join(format!(".copilot/session-state/{copilot}/events.jsonl")),
    );
    let droid = expected("droid")["session_id"].as_str().unwrap().to_string();
    let droid_dir = home.join(".factory/sessions/-home-dev-proj");
    copy_fixture("droid", "transcript.jsonl", &droid_dir.join(format!("{droid}.jsonl")));
    copy_fixture("droid", "transcript.settings.json", &droid_dir.join(format!("{droid}.settings.json")));
    let opencode_db = home.join("data/opencode/opencode.db");
    std::fs::create_dir_all(opencode_db.parent().unwrap()).unwrap();
    let sql = std::fs::read_to_string(fixture_dir("opencode").join("opencode.sql")).unwrap();
    rusqlite::Connection::open(&opencode_db).unwrap().execute_batch(&sql).unwrap();
    let cline = expected("cline")["session_id"].as_str().unwrap().to_string();
    let tasks = home.join("config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks");
    copy_fixture("cline", "ui_messages.json", &tasks.join(&cline).join("ui_messages.json"));
    // A second task whose hooks ran: import leaves it to them.
    copy_fixture("cline", "ui_messages.json", &tasks.join("1762399999999").join("ui_messages.json"));
    let task_start = r#"{"hookName":"TaskStart","taskId":"1762399999999","timestamp":"1762399999999"}"#;
    assert!(client(home, &["hook", "TaskStart", "--agent", "cline"], Some(task_start)).status.success());

    for (agent, summary) in [
        ("copilot-cli", "1 transcripts: 1 imported"),
        ("droid", "1 transcripts: 1 imported"),
        ("opencode", "1 transcripts: 1 imported"),
        ("cline", "2 transcripts: 1 imported"),
    ] {
        let out = run(home, &["import", "--agent", agent]);
        assert!(out.starts_with(summary), "{agent}: {out}");
    }
    assert!(run(home, &["import", "--agent", "cline"]).contains("2 already recorded"));
    assert!(run(home, &["import", "--agent", "opencode"]).starts_with("1 transcripts: 0 imported"));
    run(home, &["flusher", "--once"]);

    let (view, _) = session_view(&server, "copilot_cli");
    assert_eq!((view["prompt_count"].as_i64(), view["tool_call_count"].as_i64()), (Some(1), Some(2)), "{view:#}");
    assert_eq!(view["tool_error_count"], 1, "the edit whose old_str did not match");
    let (view, _) = session_view(&server, "droid");
    assert_eq!(view["prompt_count"], 1, "the system-reminder message is not a prompt: {view:#}");
    assert_eq!(view["tool_error_count"], 1, "{view:#}");
    let (view, want) = session_view(&server, "opencode");
    for field in
        ["prompt_count", "tool_call_count", "tool_error_count", "denial_count", "subagent_count", "compact_count"]
    {
        assert_eq!(view[field], want["session"][field], "opencode {field}: {view:#}");
    }
    let (view, _) = session_view(&server, "cline");
    assert_eq!((view["prompt_count"].as_i64(), view["tool_call_count"].as_i64()), (Some(1), Some(2)), "{view:#}");
    let (code, _) = server.agent_session(&server.token, "cline", "1762399999999");
    assert_eq!(code, 200, "the hooks' own session_start reached the server");

    // Droid's hooks of a resumed session go on from the imported running total.
    let settings = droid_dir.join(format!("{droid}.settings.json"));
    let grown = std::fs::read_to_string(&settings).unwrap().replace("\"outputTokens\": 960", "\"outputTokens\": 1000");
    std::fs::write(&settings, grown).unwrap();
    let transcript = droid_dir.join(format!("{droid}.jsonl"));
    let stop = serde_json::json!({"session_id": droid, "transcript_path": transcript, "hook_event_name": "Stop"});
    assert!(client(home, &["hook", "Stop", "--agent", "droid"], Some(&stop.to_string())).status.success());
    run(home, &["flusher", "--once"]);
    let (_, view) = server.agent_session(&server.token, "droid", &droid);
    let before = expected("droid")["session"]["usage"]["output_tokens"].as_i64().unwrap();
    assert_eq!(view["usage"]["output_tokens"].as_i64(), Some(before + 40), "only the growth after the import");
}

/// On a machine without hooks (the usual reason to import), the imported history
/// reaches the server with no other command: `import` starts the flusher as a hook does.
#[test]
fn import_ships_what_it_imported_with_no_other_command() {
    let server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    run(home, &["login", "--server", &server.ingest, "--token", &server.token]);
    let claude = expected("claude_code");
    let session = claude["session_id"].as_str().unwrap();
    let project = home.join(".claude/projects/-home-ada-webapp");
    copy_fixture("claude_code", "transcript.jsonl", &project.join(format!("{session}.jsonl")));
    copy_fixture("claude_code", "subagent.jsonl", &project.join(session).join("subagents/agent-a7c31f0.jsonl"));
    assert_eq!(server.agent_session(&server.token, "claude_code", session).0, 404, "nothing there before");

    let output = std::process::Command::new(BIN)
        .args(["import", "--agent", "claude_code"])
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env_remove("SIGHTLINE_NO_FLUSHER")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stdout(&output);
    assert!(said.contains("events are on their way to the server") && said.contains("sightline status"), "{said}");

    wait_until(std::time::Duration::from_secs(30), "the whole imported session on the server", || {
        let (code, view) = server.agent_session(&server.token, "claude_code", session);
        code == 200 && view["usage"] == claude["session"]["usage"]
    });
}

//! `import` through the real binary: past Claude Code, Codex and Gemini CLI sessions from their
//! transcript stores reach the server with the same token totals the hooks would have
//! reported, and importing again adds nothing.

mod common;

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

    let unsupported = client(home, &["import", "--agent", "cline"], None);
    assert_eq!(unsupported.status.code(), Some(2));
    assert!(stderr(&unsupported).contains("import from cline is not supported yet"), "{}", stderr(&unsupported));
}

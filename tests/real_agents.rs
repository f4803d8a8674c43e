//! The conformance suite: the agent CLIs as they ship (pinned in
//! `tests/agents/package-lock.json`, installed by scripts/test through
//! scripts/fetch-agents) run for real against a loopback stand-in of their vendor's model
//! API (`common::model_standin`), in a git repository with a branch and a credentialed
//! remote, captured by our hook, by our OTLP receiver, and by both, each configured the
//! way `/install` tells a person to. The stand-in's record of what it answered is the
//! truth; the stored session must equal it in every mode: model requests and every token
//! kind, the cost from our own price table, tool calls by name and outcome, prompts, the
//! branch and the remote without its credential, the run kind, nothing counted twice.
//!
//! Codex 0.171.0 (`codex exec`, a non-interactive run). Claude Code and Gemini CLI are
//! not run for real yet (`docs/testing.md`, "The real agents").

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::machine::{client_with, git};
use crate::common::model_standin::Standin;
use crate::common::*;

/// Where scripts/fetch-agents installed the pinned agents.
fn agents_dir() -> PathBuf {
    std::env::var_os("SIGHTLINE_AGENTS_DIR").map(PathBuf::from).expect(
        "SIGHTLINE_AGENTS_DIR names the pinned agent CLIs: run the tests with scripts/test, which installs them",
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Hook,
    Otlp,
    Both,
}

impl Mode {
    fn hook(self) -> bool {
        self != Mode::Otlp
    }
    fn otlp(self) -> bool {
        self != Mode::Hook
    }
}

/// A repository on branch `feat/real-agents` whose remote carries a credential.
fn repository(home: &Path) -> PathBuf {
    let repo = home.join("work");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "feat/real-agents"]);
    std::fs::write(repo.join("README.md"), "hello\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    git(
        &repo,
        &["remote", "add", "origin", "https://ada:ghp_conformanceconformanceconformance12@github.com/acme/app.git"],
    );
    repo
}

/// The machine's environment for the agent and the hooks it runs.
fn machine_env(home: &Path) -> Vec<(String, String)> {
    [
        ("HOME", home.to_path_buf()),
        ("XDG_DATA_HOME", home.join("data")),
        ("XDG_CONFIG_HOME", home.join("config")),
        ("CODEX_HOME", home.join(".codex")),
    ]
    .into_iter()
    .map(|(key, path)| (key.to_string(), path.display().to_string()))
    .chain([("SIGHTLINE_NO_FLUSHER".to_string(), "1".to_string()), ("STANDIN_API_KEY".into(), "sk-standin".into())])
    .collect()
}

/// Codex's `config.toml`: the stand-in as its model provider, nothing else on the
/// network, and, for OTLP, the exporter as `/install` writes it.
fn codex_config(standin: &Standin, server: &TestServer, mode: Mode) -> String {
    let mut config = format!(
        r#"model = "gpt-5.2"
model_provider = "standin"
check_for_update_on_startup = false

[model_providers.standin]
name = "Stand-in"
base_url = "{}/v1"
wire_api = "responses"
env_key = "STANDIN_API_KEY"

[analytics]
enabled = false

[features]
plugins = false
apps = false
remote_plugin = false
"#,
        standin.url
    );
    if mode.otlp() {
        config.push_str(&format!(
            r#"
[otel]
exporter = {{ otlp-http = {{ endpoint = "{}/v1/logs", protocol = "json", headers = {{ "Authorization" = "Bearer {}" }} }} }}
"#,
            server.ingest, server.token
        ));
    }
    config
}

/// The stored Codex session once what was sent has settled.
fn stored_session(server: &TestServer) -> (String, Value) {
    let mut last = None;
    for _ in 0..50 {
        let found: Option<(String, i64)> = server
            .main_db()
            .query_row("SELECT agent_session_id, event_count FROM sessions WHERE agent_type = 'codex'", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .ok();
        if let Some((id, count)) = found {
            if last == Some(count) {
                let (status, view) = server.agent_session(&server.token, "codex", &id);
                assert_eq!(status, 200, "{view}");
                return (id, view);
            }
            last = Some(count);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    panic!("no Codex session was stored");
}

fn run_codex(mode: Mode) {
    let server = TestServer::spawn();
    let standin = Standin::openai_responses();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let repo = repository(home);
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::write(home.join(".codex/config.toml"), codex_config(&standin, &server, mode)).unwrap();
    let env = machine_env(home);
    let env_refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    if mode.hook() {
        let login =
            client_with(home, &["login", "--server", &server.ingest, "--token", &server.token], None, &env_refs);
        assert!(login.status.success(), "{}", stderr(&login));
        let install = client_with(home, &["install", "--agent", "codex"], None, &env_refs);
        assert!(install.status.success(), "{}", stderr(&install));
    }
    let codex = agents_dir().join("node_modules/.bin/codex");
    let mut command = Command::new(&codex);
    command.current_dir(&repo).env_clear().env("PATH", std::env::var("PATH").unwrap());
    for (key, value) in &env {
        command.env(key, value);
    }
    command.args(["exec", "--dangerously-bypass-hook-trust", "Run git status and tell me if the tree is clean."]);
    let ran = command.stdin(std::process::Stdio::null()).output().unwrap();
    assert!(ran.status.success(), "codex exec: {}\n{}", stdout(&ran), stderr(&ran));
    if mode.hook() {
        let flushed = client_with(home, &["flusher", "--once"], None, &env_refs);
        assert!(flushed.status.success(), "{}", stderr(&flushed));
    }

    let truth = standin.answered();
    assert!(truth.len() >= 2 && truth[0].tool_call.is_some(), "{mode:?}: {truth:?} {:?}", standin.paths);
    let (session_id, view) = stored_session(&server);
    let sum = |field: fn(&crate::common::model_standin::Answer) -> i64| truth.iter().map(field).sum::<i64>();
    let usage = &view["usage"];
    // The table of truth against stored (shown with --nocapture).
    let figures = [
        ("input", sum(|a| a.input - a.cached), &usage["input_tokens"]),
        ("cache reads", sum(|a| a.cached), &usage["cache_read_tokens"]),
        ("output", sum(|a| a.output - a.reasoning), &usage["output_tokens"]),
        ("reasoning", sum(|a| a.reasoning), &usage["reasoning_tokens"]),
    ];
    for (what, truth, stored) in figures {
        eprintln!("codex {mode:?}\t{what}\tstand-in {truth}\tstored {stored}");
    }
    assert_eq!(
        [&usage["input_tokens"], &usage["cache_read_tokens"], &usage["output_tokens"], &usage["reasoning_tokens"]]
            .map(|v| v.as_i64()),
        [
            Some(sum(|a| a.input - a.cached)),
            Some(sum(|a| a.cached)),
            Some(sum(|a| a.output - a.reasoning)),
            Some(sum(|a| a.reasoning))
        ],
        "{mode:?}: every token kind once: {view:#}"
    );
    // gpt-5.2 at $1.75 input, $0.175 cached, $14 output and reasoning per million tokens.
    let cost: i64 = truth
        .iter()
        .map(|a| {
            (a.input - a.cached) * 1_750 + a.cached * 175 + (a.output - a.reasoning) * 14_000 + a.reasoning * 14_000
        })
        .sum();
    let stored_cost: i64 = server
        .main_db()
        .query_row("SELECT cost_nusd FROM sessions WHERE agent_session_id = ?1", [&session_id], |r| r.get(0))
        .unwrap();
    assert_eq!(stored_cost, cost, "{mode:?}: the cost from our price table");
    let url = format!("{}/v1/me/sessions/codex/{session_id}/events?limit=1000", server.ingest);
    let (status, events) = get_auth(&url, &server.token);
    assert_eq!(status, 200, "{events}");
    let events = events["events"].as_array().unwrap().clone();
    let of = |kind: &str| events.iter().filter(|e| e["type"] == kind).cloned().collect::<Vec<_>>();
    let requests = of("turn_end").into_iter().filter(|e| e["usage"].is_object()).count();
    assert_eq!(requests, truth.len(), "{mode:?}: one event per model request: {events:#?}");
    let calls: Vec<(String, String)> = of("tool_end")
        .iter()
        .map(|e| (e["tool"]["name"].as_str().unwrap().to_string(), e["tool"]["status"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(calls, [("codex:shell".to_string(), "success".to_string())], "{mode:?}: {events:#?}");
    assert_eq!(of("prompt_submit").len(), 1, "{mode:?}: one prompt");
    let run_kind: String = server
        .main_db()
        .query_row("SELECT run_kind FROM sessions WHERE agent_session_id = ?1", [&session_id], |r| r.get(0))
        .unwrap();
    assert_eq!(run_kind, "CI", "{mode:?}: codex exec is nobody's interactive session");
    if mode.hook() {
        assert_eq!(view["git"]["branch"], "feat/real-agents", "{mode:?}: {view:#}");
        assert_eq!(view["git"]["remote"], "https://github.com/acme/app.git", "{mode:?}: without its credential");
    }
    assert!(
        !serde_json::to_string(&events).unwrap().contains("ghp_conformance"),
        "{mode:?}: the credential stays home"
    );
}

#[test]
fn codex_exec_by_its_hook_is_stored_as_the_model_api_saw_it() {
    run_codex(Mode::Hook);
}

#[test]
fn codex_exec_by_its_otlp_export_is_stored_as_the_model_api_saw_it() {
    run_codex(Mode::Otlp);
}

#[test]
fn codex_exec_by_its_hook_and_export_together_is_stored_once() {
    run_codex(Mode::Both);
}

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
//! Claude Code 2.1.332 (`claude -p`), Codex 0.171.0 (`codex exec`) and Gemini CLI 0.61.0
//! (`gemini -p`), each a non-interactive run.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::machine::{client_with, git};
use crate::common::model_standin::{Answer, SUBAGENT, Standin};
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

/// The stored session of `agent` once what was sent has settled.
fn stored_session(server: &TestServer, agent: &str) -> (String, Value) {
    // Settled: the same count three looks in a row (what an agent exports at its exit is
    // answered once stored, the hook's queue is flushed before; this is the margin).
    let (mut last, mut same) = (None, 0);
    for _ in 0..100 {
        let found: Option<(String, i64)> = server
            .main_db()
            .query_row("SELECT agent_session_id, event_count FROM sessions WHERE agent_type = ?1", [agent], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .ok();
        if let Some((id, count)) = found {
            same = if last == Some(count) { same + 1 } else { 0 };
            if same == 2 {
                let (status, view) = server.agent_session(&server.token, agent, &id);
                assert_eq!(status, 200, "{view}");
                return (id, view);
            }
            last = Some(count);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    panic!("no {agent} session was stored");
}

/// The environment as `client_with` takes it.
fn borrowed(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// Logs the machine in and installs the hook for `agent`, as `/install` tells a person to.
fn install_hook(home: &Path, server: &TestServer, agent: &str, env: &[(String, String)]) {
    let env = borrowed(env);
    let login = client_with(home, &["login", "--server", &server.ingest, "--token", &server.token], None, &env);
    assert!(login.status.success(), "{}", stderr(&login));
    let install = client_with(home, &["install", "--agent", agent], None, &env);
    assert!(install.status.success(), "{}", stderr(&install));
}

/// Runs the agent's binary `program` in `repo` with the machine's environment (and no other).
fn run_agent(program: &Path, repo: &Path, env: &[(String, String)], args: &[&str]) {
    let mut command = Command::new(program);
    command.current_dir(repo).env_clear().env("PATH", std::env::var("PATH").unwrap());
    for (key, value) in env {
        command.env(key, value);
    }
    let ran = command.args(args).stdin(std::process::Stdio::null()).output().unwrap();
    assert!(ran.status.success(), "{}: {}\n{}", program.display(), stdout(&ran), stderr(&ran));
}

/// Ships what the hook queued (the tests' machines run no background flusher).
fn flush(home: &Path, env: &[(String, String)]) {
    let env = borrowed(env);
    let flushed = client_with(home, &["flusher", "--once"], None, &env);
    assert!(flushed.status.success(), "{}", stderr(&flushed));
}

fn run_codex(mode: Mode) {
    let server = TestServer::spawn();
    // The first turn: a command that succeeds, one that fails, one the rules forbid; the
    // second (the session resumed): one more, then the answer.
    let standin = Standin::openai_responses(&[
        "git status --short",
        "git rev-parse --verify no-such-branch",
        "git push origin HEAD",
        "ls",
    ]);
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let repo = repository(home);
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::write(home.join(".codex/config.toml"), codex_config(&standin, &server, mode)).unwrap();
    // An organisation's command rule (Codex's execpolicy): pushes are refused unasked.
    std::fs::create_dir_all(home.join(".codex/rules")).unwrap();
    std::fs::write(
        home.join(".codex/rules/default.rules"),
        "prefix_rule(pattern = [\"git\", \"push\"], decision = \"forbidden\", justification = \"pushes go through review\")\n",
    )
    .unwrap();
    let env = machine_env(home);
    if mode.hook() {
        install_hook(home, &server, "codex", &env);
    }
    let codex = agents_dir().join("node_modules/.bin/codex");
    let prompt = "Run git status and tell me if the tree is clean.";
    run_agent(&codex, &repo, &env, &["exec", "--dangerously-bypass-hook-trust", prompt]);
    let again = "And which files are there?";
    run_agent(&codex, &repo, &env, &["exec", "--dangerously-bypass-hook-trust", "resume", "--last", again]);
    if mode.hook() {
        flush(home, &env);
    }

    let truth = standin.answered();
    assert!(
        truth.iter().filter(|a| a.tool_call.is_some()).count() == 4,
        "{mode:?}: every scripted call made: {truth:?} {:?}",
        standin.paths
    );
    // gpt-5.2 at $1.75 input, $0.175 cached, $14 output and reasoning per million tokens.
    let cost = |a: &Answer| {
        (a.input - a.cached) * 1_750 + a.cached * 175 + (a.output - a.reasoning) * 14_000 + a.reasoning * 14_000
    };
    // Codex's version is in its export's resource and in its rollout's session_meta.
    let calls =
        [("codex:shell", "success"), ("codex:shell", "error"), ("codex:shell", "denied"), ("codex:shell", "success")];
    let expected = Expected { calls: &calls, version: Some("0.171.0"), prompts: 2, compactions: 0, subagents: 0 };
    verify(&server, "codex", &expected, mode, &truth, cost);
}

/// What the scripted session did that the stand-in cannot see.
struct Expected<'a> {
    /// Each tool call by canonical name and outcome, in order.
    calls: &'a [(&'a str, &'a str)],
    /// The agent's own version as stored.
    version: Option<&'a str>,
    /// The person's prompts (turns).
    prompts: usize,
    compactions: usize,
    /// Subagents the model started (a compaction's fork is none).
    subagents: usize,
}

/// The stored session of `agent` against the stand-in's record, in every figure.
fn verify(
    server: &TestServer,
    agent: &str,
    expected: &Expected,
    mode: Mode,
    truth: &[Answer],
    cost_of: impl Fn(&Answer) -> i64,
) {
    let Expected { calls, version, prompts, compactions, subagents } = *expected;
    let (session_id, view) = stored_session(server, agent);
    let sum = |field: fn(&Answer) -> i64| truth.iter().map(field).sum::<i64>();
    let usage = &view["usage"];
    // The table of truth against stored (shown with --nocapture).
    let figures = [
        ("input", sum(|a| a.input - a.cached - a.cache_written), &usage["input_tokens"]),
        ("cache reads", sum(|a| a.cached), &usage["cache_read_tokens"]),
        ("cache writes", sum(|a| a.cache_written), &usage["cache_write_5m_tokens"]),
        ("output", sum(|a| a.output - a.reasoning), &usage["output_tokens"]),
        ("reasoning", sum(|a| a.reasoning), &usage["reasoning_tokens"]),
    ];
    for (what, truth, stored) in figures {
        eprintln!("{agent} {mode:?}\t{what}\tstand-in {truth}\tstored {stored}");
    }
    assert_eq!(
        figures.map(|(_, _, stored)| stored.as_i64()),
        figures.map(|(_, truth, _)| Some(truth)),
        "{agent} {mode:?}: every token kind once: {view:#}"
    );
    let cost: i64 = truth.iter().map(&cost_of).sum();
    let stored_cost: i64 = server
        .main_db()
        .query_row("SELECT cost_nusd FROM sessions WHERE agent_session_id = ?1", [&session_id], |r| r.get(0))
        .unwrap();
    assert_eq!(stored_cost, cost, "{agent} {mode:?}: the cost from our price table");
    let url = format!("{}/v1/me/sessions/{agent}/{session_id}/events?limit=1000", server.ingest);
    let (status, events) = get_auth(&url, &server.token);
    assert_eq!(status, 200, "{events}");
    let events = events["events"].as_array().unwrap().clone();
    let of = |kind: &str| events.iter().filter(|e| e["type"] == kind).cloned().collect::<Vec<_>>();
    // A model request is an event with usage: the main conversation's `turn_end`s and a
    // subagent's `subagent_end`s.
    let requests = events.iter().filter(|e| e["usage"].is_object()).count();
    eprintln!("{agent} {mode:?}\tmodel requests\tstand-in {}\tstored {requests}", truth.len());
    eprintln!("{agent} {mode:?}\ttool calls\texpected {}\tstored {}", calls.len(), of("tool_end").len());
    eprintln!("{agent} {mode:?}\tprompts\texpected {prompts}\tstored {}", of("prompt_submit").len());
    eprintln!("{agent} {mode:?}\tcompactions\texpected {compactions}\tstored {}", of("compact").len());
    eprintln!("{agent} {mode:?}\tsubagents\texpected {subagents}\tstored {}", of("subagent_end").len());
    assert_eq!(requests, truth.len(), "{agent} {mode:?}: one event per model request: {events:#?}");
    let ends = of("tool_end");
    let stored_calls: Vec<(&str, &str)> =
        ends.iter().map(|e| (e["tool"]["name"].as_str().unwrap(), e["tool"]["status"].as_str().unwrap())).collect();
    assert_eq!(stored_calls, calls, "{agent} {mode:?}: each tool call once, by its name and outcome: {events:#?}");
    assert_eq!(of("prompt_submit").len(), prompts, "{agent} {mode:?}: each prompt once: {events:#?}");
    assert_eq!(of("compact").len(), compactions, "{agent} {mode:?}: each compaction once: {events:#?}");
    assert_eq!(of("subagent_end").len(), subagents, "{agent} {mode:?}: each subagent once: {events:#?}");
    let sessions: i64 = server
        .main_db()
        .query_row("SELECT count(*) FROM sessions WHERE agent_type = ?1", [agent], |r| r.get(0))
        .unwrap();
    assert_eq!(sessions, 1, "{agent} {mode:?}: a resumed session is the same session");
    let run_kind: String = server
        .main_db()
        .query_row("SELECT run_kind FROM sessions WHERE agent_session_id = ?1", [&session_id], |r| r.get(0))
        .unwrap();
    assert_eq!(run_kind, "CI", "{agent} {mode:?}: a non-interactive run is nobody's interactive session");
    let agent_version: Option<String> = server
        .main_db()
        .query_row("SELECT agent_version FROM sessions WHERE agent_session_id = ?1", [&session_id], |r| r.get(0))
        .unwrap();
    eprintln!("{agent} {mode:?}\tagent version\t{agent_version:?}");
    assert_eq!(agent_version.as_deref(), version, "{agent} {mode:?}: the agent's own version");
    if mode.hook() {
        assert_eq!(view["git"]["branch"], "feat/real-agents", "{agent} {mode:?}: {view:#}");
        assert_eq!(
            view["git"]["remote"], "https://github.com/acme/app.git",
            "{agent} {mode:?}: without its credential"
        );
    }
    assert!(
        !serde_json::to_string(&events).unwrap().contains("ghp_conformance"),
        "{agent} {mode:?}: the credential stays home"
    );
}

/// Claude Code's `~/.claude/settings.json` as the hook's install left it (or new), with
/// the `env` block `/install` shows for OTLP.
fn claude_settings(home: &Path, server: &TestServer, mode: Mode) {
    let path = home.join(".claude/settings.json");
    let mut settings: Value = std::fs::read(&path)
        .map(|bytes| serde_json::from_slice(&bytes).unwrap())
        .unwrap_or_else(|_| serde_json::json!({}));
    if mode.otlp() {
        settings["env"] = serde_json::json!({
            "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
            "OTEL_LOGS_EXPORTER": "otlp",
            "OTEL_METRICS_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_ENDPOINT": server.ingest,
            "OTEL_EXPORTER_OTLP_HEADERS": format!("Authorization=Bearer {}", server.token),
        });
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_string_pretty(&settings).unwrap()).unwrap();
}

fn run_claude(mode: Mode) {
    let server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let repo = repository(home);
    // The first turn: a call that succeeds, one that fails, one refused (`-p` allows only
    // what `--allowedTools` names), then the answer; the second (`--continue`): a
    // subagent, a call, the answer; the third compacts the conversation.
    let bash = |command: &str| serde_json::json!({"name": "Bash", "input": {"command": command, "description": "The repository"}});
    let subagent = serde_json::json!({"name": "Agent", "input": {
        "description": "Count the files", "prompt": format!("{SUBAGENT} count the files in the repository."),
        "subagent_type": "general-purpose", "run_in_background": false}});
    let standin = Standin::anthropic_messages(vec![
        bash("git status --short"),
        bash("git rev-parse --verify no-such-branch"),
        serde_json::json!({"name": "Write", "input": {"file_path": repo.join("NOTES.md"), "content": "notes\n"}}),
        subagent,
        bash("ls"),
    ]);
    let mut env = machine_env(home);
    env.extend(
        [
            ("TMPDIR", home.display().to_string()),
            ("TERM", "xterm".to_string()),
            ("ANTHROPIC_BASE_URL", standin.url.clone()),
            ("ANTHROPIC_API_KEY", "sk-ant-standin".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
        ]
        .map(|(key, value)| (key.to_string(), value)),
    );
    if mode.hook() {
        install_hook(home, &server, "claude_code", &env);
    }
    claude_settings(home, &server, mode);
    let claude = agents_dir().join("node_modules/.bin/claude");
    let allowed = ["--allowedTools", "Bash,Agent", "--model", "claude-sonnet-4-6"];
    let prompt = "Run git status and tell me if the tree is clean.";
    run_agent(&claude, &repo, &env, &[&["-p", prompt][..], &allowed].concat());
    let again = "Have a subagent count the files, then list them.";
    run_agent(&claude, &repo, &env, &[&["-p", again, "--continue"][..], &allowed].concat());
    run_agent(&claude, &repo, &env, &[&["-p", "/compact", "--continue"][..], &allowed].concat());
    if mode.hook() {
        flush(home, &env);
    }
    let mut truth = standin.answered();
    assert!(truth.iter().filter(|a| a.compaction).count() == 2, "{mode:?}: `/compact` asked for its summary");
    if mode == Mode::Hook {
        // 2.1.332 writes a compaction's usage to no file a hook reads (the fork's
        // transcript that SubagentStop names is never written, the main transcript keeps
        // only `compact_boundary`); its export reports both requests.
        truth.retain(|answer| !answer.compaction);
    }
    assert!(
        truth.iter().filter(|a| a.tool_call.is_some()).count() == 5,
        "{mode:?}: every scripted call made: {truth:?} {:?}",
        standin.paths
    );
    // claude-sonnet-4-6 at $3 input, $0.30 cache reads, $3.75 five-minute cache writes,
    // $15 output per million tokens.
    let cost = |a: &Answer| {
        (a.input - a.cached - a.cache_written) * 3_000 + a.cached * 300 + a.cache_written * 3_750 + a.output * 15_000
    };
    let calls = [
        ("claude_code:Bash", "success"),
        ("claude_code:Bash", "error"),
        ("claude_code:Write", "denied"),
        ("claude_code:Agent", "success"),
        ("claude_code:Bash", "success"),
    ];
    // Claude Code's version is in its export's resource; its hook's input has none.
    let version = mode.otlp().then_some("2.1.332");
    // `/compact` is a command, not a prompt; its fork is no subagent.
    let expected = Expected { calls: &calls, version, prompts: 2, compactions: 1, subagents: 1 };
    verify(&server, "claude_code", &expected, mode, &truth, cost);
}

#[test]
fn claude_p_by_its_hook_is_stored_as_the_model_api_saw_it() {
    run_claude(Mode::Hook);
}

#[test]
fn claude_p_by_its_otlp_export_is_stored_as_the_model_api_saw_it() {
    run_claude(Mode::Otlp);
}

#[test]
fn claude_p_by_its_hook_and_export_together_is_stored_once() {
    run_claude(Mode::Both);
}

/// Gemini CLI's `settings.json`: the API key's auth (the stand-in is its base URL), no
/// usage statistics or updates, and, for OTLP, the telemetry `/install` shows.
fn gemini_settings(server: &TestServer, mode: Mode) -> Value {
    serde_json::json!({
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "privacy": {"usageStatisticsEnabled": false},
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "telemetry": if mode.otlp() {
            serde_json::json!({"enabled": true, "target": "local", "otlpEndpoint": server.ingest, "otlpProtocol": "http", "logPrompts": false})
        } else {
            serde_json::json!({"enabled": false})
        },
    })
}

fn run_gemini(mode: Mode) {
    let server = TestServer::spawn();
    // The first turn: a shell call that succeeds, one whose command fails, one a policy
    // denies, then the answer; the second (the session resumed): one more call, the answer.
    let shell = |command: &str| serde_json::json!({"name": "run_shell_command", "input": {"command": command, "description": "The repository"}});
    let standin = Standin::gemini(vec![
        shell("git status --short"),
        shell("git rev-parse --verify no-such-branch"),
        shell("git push origin HEAD"),
        shell("ls"),
    ]);
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let repo = repository(home);
    // An organisation's rule in the policy engine's user tier, above `--yolo`'s.
    std::fs::create_dir_all(home.join(".gemini/policies")).unwrap();
    std::fs::write(
        home.join(".gemini/policies/rules.toml"),
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"git push\"\ndecision = \"deny\"\npriority = 100\ndenyMessage = \"pushes go through review\"\n",
    )
    .unwrap();
    let settings = serde_json::to_string_pretty(&gemini_settings(&server, mode)).unwrap();
    std::fs::write(home.join(".gemini/settings.json"), settings).unwrap();
    let mut env = machine_env(home);
    env.extend(
        [
            ("GEMINI_API_KEY", "standin-key".to_string()),
            ("GOOGLE_GEMINI_BASE_URL", standin.url.clone()),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
            ("GEMINI_CLI_NO_RELAUNCH", "true".into()),
            ("OTEL_EXPORTER_OTLP_HEADERS", format!("Authorization=Bearer {}", server.token)),
        ]
        .map(|(key, value)| (key.to_string(), value)),
    );
    if mode.hook() {
        install_hook(home, &server, "gemini_cli", &env);
    }
    let gemini = agents_dir().join("node_modules/.bin/gemini");
    let prompt = "Run git status and tell me if the tree is clean.";
    run_agent(&gemini, &repo, &env, &["-p", prompt, "--yolo", "-m", "gemini-2.5-pro"]);
    let again = "And which files are there?";
    run_agent(&gemini, &repo, &env, &["--resume", "latest", "-p", again, "--yolo", "-m", "gemini-2.5-pro"]);
    if mode.hook() {
        flush(home, &env);
    }
    let truth = standin.answered();
    assert!(
        truth.iter().filter(|a| a.tool_call.is_some()).count() == 4,
        "{mode:?}: every scripted call made: {truth:?} {:?}",
        standin.paths
    );
    // gemini-2.5-pro at $1.25 input, $0.125 cached, $10 output and thoughts per million
    // tokens (prompts under 200,000 tokens).
    let cost = |a: &Answer| {
        (a.input - a.cached) * 1_250 + a.cached * 125 + (a.output - a.reasoning) * 10_000 + a.reasoning * 10_000
    };
    // Gemini CLI says its version nowhere: its resource's service.version is Node's.
    // Gemini CLI 0.61.0 reports a command that exits non-zero as a successful call (the
    // tool ran; the exit code is only in its output), by its hook and its export alike:
    // stored as it says, the same whatever the source (docs/testing.md).
    let shell_call = |status| ("gemini_cli:run_shell_command", status);
    let calls = [shell_call("success"), shell_call("success"), shell_call("denied"), shell_call("success")];
    let expected = Expected { calls: &calls, version: None, prompts: 2, compactions: 0, subagents: 0 };
    verify(&server, "gemini_cli", &expected, mode, &truth, cost);
}

#[test]
fn gemini_p_by_its_hook_is_stored_as_the_model_api_saw_it() {
    run_gemini(Mode::Hook);
}

#[test]
fn gemini_p_by_its_otlp_export_is_stored_as_the_model_api_saw_it() {
    run_gemini(Mode::Otlp);
}

#[test]
fn gemini_p_by_its_hook_and_export_together_is_stored_once() {
    run_gemini(Mode::Both);
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

//! What the demo's developers did: sessions of the seven agents with hooks, on working
//! days, with realistic mixes — prompts and the wait for a first response, tool calls
//! (built-in tools, MCP servers, skills, slash commands) with errors and denials (a denial
//! follows a permission prompt), retries of a failed call, model turns with tokens and
//! cache use, compactions in long sessions, subagents — plus CI and EVAL runs, as wire
//! events (the JSON the hook sends).
//!
//! Invariant: the same seed gives the same organisation, event for event.

use serde_json::{Value, json};

/// An agent with hooks, its share of developers, its models and its tools.
struct Agent {
    name: &'static str,
    weight: u32,
    models: &'static [&'static str],
    tools: &'static [&'static str],
}

const AGENTS: [Agent; 7] = [
    Agent {
        name: "claude_code",
        weight: 40,
        models: &["claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"],
        tools: &["Bash", "Read", "Edit", "Grep", "Glob", "Write", "WebFetch", "Task"],
    },
    Agent {
        name: "codex",
        weight: 20,
        models: &["gpt-5.1-codex", "gpt-5.1-codex-mini", "gpt-5.2"],
        tools: &["shell", "apply_patch", "read_file", "update_plan"],
    },
    Agent {
        name: "gemini_cli",
        weight: 10,
        models: &["gemini-2.5-pro", "gemini-3-flash-preview"],
        tools: &["run_shell_command", "read_file", "replace", "glob"],
    },
    Agent {
        name: "copilot_cli",
        weight: 10,
        models: &["claude-sonnet-4-5", "gpt-5.1-codex"],
        tools: &["bash", "view", "edit", "create"],
    },
    Agent {
        name: "droid",
        weight: 6,
        models: &["claude-sonnet-4-5", "gpt-5.1-codex"],
        tools: &["Execute", "Read", "Edit", "Grep"],
    },
    Agent {
        name: "opencode",
        weight: 7,
        models: &["claude-sonnet-4-5", "gpt-5.1-codex"],
        tools: &["bash", "read", "edit", "grep"],
    },
    Agent {
        name: "cline",
        weight: 7,
        models: &["claude-sonnet-4-5", "gemini-2.5-pro"],
        tools: &["execute_command", "read_file", "replace_in_file", "search_files"],
    },
];

/// MCP servers and their tools (called as `mcp__<server>__<tool>`).
const MCP: [(&str, &str); 5] = [
    ("github", "create_pull_request"),
    ("github", "get_issue"),
    ("linear", "update_issue"),
    ("postgres", "query"),
    ("sentry", "get_error"),
];
const SKILLS: [&str; 3] = ["pdf", "frontend-design", "db-migrations"];
const SLASH: [&str; 4] = ["/review", "/compact", "/test", "/init"];
const REPOS: [&str; 6] = ["acme/shop", "acme/web", "acme/mobile", "acme/infra", "acme/data-pipeline", "acme/research"];
/// What a developer's branches are about (with an issue key, as teams name them).
const TOPICS: [&str; 6] = [
    "fix/SHOP-{}-checkout-timeout",
    "feat/WEB-{}-search",
    "chore/INFRA-{}-deps",
    "feat/MOB-{}-offline-mode",
    "exp/DATA-{}-ranking",
    "fix/SHOP-{}-rounding",
];
const PERMISSION_MODES: [(&str, u32); 4] = [("normal", 55), ("accept_edits", 30), ("plan", 10), ("bypass", 5)];

/// A developer's habits, drawn once from the seed.
pub struct Habits {
    agent: usize,
    second_agent: usize,
    sessions_per_day: u32,
    turns: u32,
    repo: usize,
}

fn pick_weighted<T: Copy>(items: &[(T, u32)]) -> T {
    let total: u32 = items.iter().map(|(_, w)| w).sum();
    let mut at = fastrand::u32(0..total);
    for (item, weight) in items {
        if at < *weight {
            return *item;
        }
        at -= weight;
    }
    items[0].0
}

impl Habits {
    /// How many sessions this developer starts on a working day.
    pub fn sessions_today(&self) -> u32 {
        fastrand::u32(1..=self.sessions_per_day)
    }
}

pub fn habits(team_index: usize) -> Habits {
    let weighted: Vec<(usize, u32)> = AGENTS.iter().enumerate().map(|(i, a)| (i, a.weight)).collect();
    Habits {
        agent: pick_weighted(&weighted),
        second_agent: pick_weighted(&weighted),
        sessions_per_day: fastrand::u32(1..5),
        turns: fastrand::u32(4..18),
        repo: team_index % REPOS.len(),
    }
}

/// The habits of a harness machine that always runs `agent` (an adapter's name; another
/// agent's habits if it has none).
pub fn harness_habits(agent: &str) -> Habits {
    let index = AGENTS.iter().position(|a| a.name == agent).unwrap_or(0);
    Habits { agent: index, second_agent: index, sessions_per_day: 1, turns: fastrand::u32(3..10), repo: 0 }
}

/// The model of `agent`'s price table that `wanted` names (a harness's model name without
/// its date: `claude-opus-4-5` for `claude-opus-4-5-20251101`), if it has one.
pub fn model_named(agent: &str, wanted: &str) -> Option<&'static str> {
    AGENTS.iter().find(|a| a.name == agent)?.models.iter().copied().find(|model| model.starts_with(wanted))
}

impl Habits {
    /// The repository this developer works in.
    pub fn repo(&self) -> &'static str {
        REPOS[self.repo]
    }
}

/// Branch names everyone uses again, months apart and for unrelated work.
const REUSED: [&str; 3] = ["fix-tests", "update-deps", "release"];

/// The branch a developer works on during `day_index` (a new one every few days; some
/// days straight on main). Names are mostly unique (an issue key per stint), as in a real
/// organisation; one stint in ten uses a name everyone reuses (`fix-tests`).
pub fn branch(person: usize, day_index: i64) -> String {
    if fastrand::u32(0..7) == 0 {
        return "main".into();
    }
    let stint = (day_index + person as i64) / 3;
    if (stint + person as i64) % 10 == 0 {
        return REUSED[(stint as usize / 10 + person) % REUSED.len()].into();
    }
    let topic = TOPICS[(stint as usize + person) % TOPICS.len()];
    topic.replace("{}", &(1_000 + (stint * 7_919 + person as i64 * 104_729) % 90_000).to_string())
}

/// Files a session may touch (a few of them per session), and programs it runs.
const FILES: [&str; 8] = [
    "src/lib.rs",
    "src/api/orders.rs",
    "src/api/payments.rs",
    "tests/orders.rs",
    "README.md",
    "src/db.rs",
    "src/cli.rs",
    "Cargo.toml",
];
const PROGRAMS: [&str; 6] = ["cargo", "npm", "pytest", "git", "ls", "make"];

/// The action class the agents' adapters give a tool (by its name).
fn action_of(tool: &str) -> &'static str {
    let lower = tool.to_ascii_lowercase();
    match lower.as_str() {
        "read" | "read_file" | "view" => "read",
        "edit" | "apply_patch" | "replace" | "replace_in_file" => "edit",
        "write" | "create" | "write_file" => "write",
        "bash" | "shell" | "run_shell_command" | "execute" | "execute_command" => "exec",
        "grep" | "glob" | "search_files" => "search",
        "webfetch" => "fetch",
        "task" => "delegate",
        "update_plan" => "plan",
        _ if lower.starts_with("mcp__") => "mcp",
        _ => "other",
    }
}

fn hex(n: usize) -> String {
    (0..n).map(|_| char::from_digit(fastrand::u32(0..16), 16).unwrap_or('0')).collect()
}

fn ts(ms: i64) -> String {
    crate::model::rfc3339_ms(ms)
}

/// One session of a developer, starting at `start_ms`: its events, and the agent and
/// session id (to attach a transcript).
pub struct Session {
    pub agent: &'static str,
    pub session_id: String,
    pub model: &'static str,
    pub events: Vec<Value>,
    pub prompts: Vec<String>,
    /// The shell calls, for the transcript: (turn, call id, command line).
    pub shell_calls: Vec<(usize, String, String)>,
}

/// A command line for a shell call of `program` (what its transcript shows; the event
/// keeps only the program): builds as well as test runs, so "tests before merge" needs the
/// transcript to tell them apart.
fn command_of(program: &str) -> String {
    let choices: &[&str] = match program {
        "cargo" => &["cargo test", "cargo build", "cargo clippy --all-targets", "cargo test -p core -- --nocapture"],
        "npm" => &["npm test", "npm run build", "npm install", "npm run test:unit"],
        "pytest" => &["pytest -q", "pytest tests/test_orders.py -x"],
        "make" => &["make test", "make", "make lint"],
        "git" => &["git status", "git diff --stat", "git log --oneline -5"],
        _ => &["ls -la", "ls src"],
    };
    choices[fastrand::usize(0..choices.len())].to_string()
}

const PROMPTS: [&str; 8] = [
    "the checkout test times out on CI, find out why",
    "add pagination to the orders endpoint",
    "refactor the retry logic in the payment client",
    "why does the nightly data load skip Sundays?",
    "write a migration that adds an index on orders.created_at",
    "review this diff for race conditions",
    "update the deps and fix what breaks",
    "explain how the feature flags are evaluated",
];

/// Generates a session. `run_kind` is INTERACTIVE, CI or EVAL (machines: no prompts wait,
/// no permission prompts, bypass mode).
pub fn session(habits: &Habits, start_ms: i64, run_kind: &str, branch: &str) -> Session {
    let agent = &AGENTS[if fastrand::u32(0..5) == 0 { habits.second_agent } else { habits.agent }];
    let model = agent.models[if fastrand::u32(0..4) == 0 { fastrand::usize(0..agent.models.len()) } else { 0 }];
    let session_id = format!("{}-{}-4{}-a{}-{}", hex(8), hex(4), hex(3), hex(3), hex(12));
    let interactive = run_kind == "INTERACTIVE";
    let mode = if interactive { pick_weighted(&PERMISSION_MODES) } else { "bypass" };
    let repo = REPOS[habits.repo];
    // The files this session works on: a small set, so some are read again or edited back
    // and forth, as real sessions do.
    let files_in_play = fastrand::usize(1..=5);
    let mut t = start_ms;
    let mut events = Vec::new();
    let mut prompts = Vec::new();
    let mut shell_calls = Vec::new();
    let base = |kind: &str, t: i64| {
        json!({"event_id": uuid::Uuid::now_v7().to_string(), "type": kind, "ts": ts(t), "agent_type": agent.name,
               "session_id": session_id, "run_kind": run_kind, "permission_mode": mode})
    };
    let mut start = base("session_start", t);
    start["git"] = json!({"branch": branch, "commit": hex(40),
                          "remote": format!("git@github.com:{repo}.git"), "dirty": fastrand::bool()});
    events.push(start);
    let turns = if interactive { habits.turns + fastrand::u32(0..6) } else { 3 + fastrand::u32(0..4) };
    let mut context = 8_000i64;
    for turn in 0..turns as usize {
        t += if interactive { fastrand::i64(20_000..240_000) } else { fastrand::i64(2_000..20_000) };
        let mut prompt = base("prompt_submit", t);
        let prompt_text = PROMPTS[fastrand::usize(0..PROMPTS.len())];
        prompts.push(prompt_text.to_string());
        prompt["response_ms"] = json!(fastrand::i64(800..9_000));
        events.push(prompt);
        for _ in 0..fastrand::u32(1..7) {
            let (name, server, skill, slash) = match fastrand::u32(0..20) {
                0..=1 => {
                    let (server, tool) = MCP[fastrand::usize(0..MCP.len())];
                    (format!("mcp__{server}__{tool}"), Some(server), None, None)
                }
                2 => ("Skill".to_string(), None, Some(SKILLS[fastrand::usize(0..SKILLS.len())]), None),
                3 => ("SlashCommand".to_string(), None, None, Some(SLASH[fastrand::usize(0..SLASH.len())])),
                _ => (agent.tools[fastrand::usize(0..agent.tools.len())].to_string(), None, None, None),
            };
            let use_id = format!("toolu_{}", hex(12));
            // As the adapters report a call: its action class, and the digest of what it
            // targets (a file of the few this session works on, or a command's program).
            let action = action_of(&name);
            let target = match action {
                "exec" => PROGRAMS[fastrand::usize(0..PROGRAMS.len())].to_string(),
                "read" | "edit" | "write" | "search" => format!("{repo}/{}", FILES[fastrand::usize(0..files_in_play)]),
                _ => name.clone(),
            };
            let target_hash = crate::model::sha256_hex(target.as_bytes());
            if action == "exec" {
                shell_calls.push((turn, use_id.clone(), command_of(&target)));
            }
            let input = hex(64);
            let tool = |status: Option<&str>, duration: Option<i64>| {
                json!({"name": format!("{}:{name}", agent.name), "server": server, "skill": skill, "slash_command": slash,
                       "use_id": use_id, "status": status, "duration_ms": duration, "action": action,
                       "target_hash": target_hash, "input_sha256": input, "input_bytes": fastrand::i64(40..4_000),
                       "output_sha256": status.map(|_| hex(64)), "output_bytes": status.map(|_| fastrand::i64(0..60_000))})
            };
            t += fastrand::i64(500..4_000);
            let mut begin = base("tool_start", t);
            begin["tool"] = tool(None, None);
            events.push(begin);
            // Denials come after a permission prompt the developer answered no to.
            let outcome = match fastrand::u32(0..100) {
                0..=5 if interactive && mode == "normal" => "denied",
                0..=9 => "error",
                _ => "success",
            };
            if outcome == "denied" || (interactive && mode == "normal" && fastrand::u32(0..8) == 0) {
                t += fastrand::i64(1_000..3_000);
                let mut ask = base("notification", t);
                ask["notification_kind"] = json!("permission");
                events.push(ask);
                t += fastrand::i64(3_000..90_000);
            }
            let duration = fastrand::i64(40..25_000);
            t += duration;
            let mut end = base("tool_end", t);
            end["tool"] = tool(Some(outcome), Some(duration));
            // From the call's own time, so the demo's other random choices stay as they were.
            if t % 40 == 0 {
                end["metadata"] = leaked_secret(&mut fastrand::Rng::with_seed(t as u64));
            }
            events.push(end);
            if outcome == "error" && fastrand::bool() {
                // The agent retries the call that failed.
                t += fastrand::i64(500..3_000);
                let mut again = base("tool_end", t);
                again["tool"] = tool(Some("success"), Some(duration / 2 + 1));
                again["tool"]["use_id"] = json!(format!("toolu_{}", hex(12)));
                events.push(again);
            }
        }
        context += fastrand::i64(2_000..12_000);
        let cached = (context as f64 * fastrand::f64() * 0.9) as i64;
        t += fastrand::i64(2_000..30_000);
        let mut done = base("turn_end", t);
        done["model"] = json!(model);
        done["usage"] = json!({"input_tokens": fastrand::i64(200..4_000), "output_tokens": fastrand::i64(100..3_000),
                               "cache_read_tokens": cached, "cache_write_5m_tokens": fastrand::i64(0..6_000),
                               "cache_write_1h_tokens": 0, "reasoning_tokens": if model.starts_with("gpt") { fastrand::i64(0..2_000) } else { 0 }});
        events.push(done);
        if context > 120_000 {
            t += 2_000;
            events.push(base("compact", t));
            context = 20_000;
        }
        if fastrand::u32(0..12) == 0 {
            t += fastrand::i64(10_000..120_000);
            events.push(base("subagent_end", t));
        }
        if interactive && fastrand::u32(0..10) == 0 {
            t += 60_000;
            let mut idle = base("notification", t);
            idle["notification_kind"] = json!("idle");
            events.push(idle);
        }
    }
    // Most sessions end; some are left open and the abandoned sweep closes them.
    if fastrand::u32(0..8) != 0 {
        events.push(base("session_end", t + 1_000));
    }
    for event in &mut events {
        if let Some(object) = event.as_object_mut() {
            object.retain(|_, value| !value.is_null());
            if let Some(tool) = object.get_mut("tool").and_then(Value::as_object_mut) {
                tool.retain(|_, value| !value.is_null());
            }
        }
    }
    Session { agent: agent.name, session_id, model, events, prompts, shell_calls }
}

/// A Claude Code or Codex transcript of the session's prompts and shell calls (by the
/// same call ids as its events), in the agent's own format.
pub fn transcript(session: &Session, start_ms: i64) -> Option<String> {
    let calls_of = |turn: usize| session.shell_calls.iter().filter(move |(t, _, _)| *t == turn);
    let lines: Vec<Value> = match session.agent {
        // A longer session carries the title Claude Code writes for it (a `summary`
        // record), which names it in lists instead of its first prompt.
        "claude_code" => (session.prompts.len() >= 3)
            .then(|| {
                let title = format!("{} (and {} follow-ups)", session.prompts[0], session.prompts.len() - 1);
                json!({"type": "summary", "summary": title, "leafUuid": format!("a{}", session.prompts.len() - 1)})
            })
            .into_iter()
            .chain(session.prompts.iter().enumerate().flat_map(|(i, prompt)| {
                let at = ts(start_ms + i as i64 * 60_000);
                let uses: Vec<Value> = calls_of(i)
                    .map(|(_, id, command)| json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}))
                    .collect();
                let results: Vec<Value> = calls_of(i)
                    .map(|(_, id, _)| json!({"type": "tool_result", "tool_use_id": id, "content": "done"}))
                    .collect();
                let mut lines = vec![
                    json!({"type": "user", "sessionId": session.session_id, "uuid": format!("u{i}"), "timestamp": at,
                           "message": {"role": "user", "content": prompt}}),
                    json!({"type": "assistant", "sessionId": session.session_id, "uuid": format!("a{i}"), "timestamp": at,
                           "message": {"id": format!("msg_{i}"), "type": "message", "role": "assistant", "model": session.model,
                                       "content": [{"type": "text", "text": format!("Looking into it: {prompt}. I will start with the tests.")}],
                                       "usage": {"input_tokens": 12, "cache_read_input_tokens": 4000, "output_tokens": 80}}}),
                ];
                if !uses.is_empty() {
                    lines.push(json!({"type": "assistant", "sessionId": session.session_id, "uuid": format!("t{i}"),
                                      "timestamp": at, "message": {"id": format!("msg_t{i}"), "type": "message",
                                      "role": "assistant", "model": session.model, "content": uses}}));
                    lines.push(json!({"type": "user", "sessionId": session.session_id, "uuid": format!("r{i}"),
                                      "timestamp": at, "message": {"role": "user", "content": results}}));
                }
                lines
            }))
            .collect(),
        "codex" => {
            let mut lines = vec![
                json!({"timestamp": ts(start_ms), "type": "session_meta", "payload": {"id": session.session_id, "timestamp": ts(start_ms),
                       "cwd": "/home/dev/work", "originator": "codex_cli_rs", "cli_version": "0.131.0"}}),
                json!({"timestamp": ts(start_ms), "type": "turn_context", "payload": {"model": session.model, "cwd": "/home/dev/work"}}),
            ];
            for (i, prompt) in session.prompts.iter().enumerate() {
                let at = ts(start_ms + i as i64 * 60_000);
                lines.push(json!({"timestamp": at, "type": "response_item", "payload": {"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": prompt}]}}));
                lines.push(json!({"timestamp": at, "type": "response_item", "payload": {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": format!("On it: {prompt}.")}]}}));
                for (_, id, command) in calls_of(i) {
                    let arguments = json!({"command": ["bash", "-lc", command]}).to_string();
                    lines.push(json!({"timestamp": at, "type": "response_item", "payload": {"type": "function_call",
                                      "name": "shell", "arguments": arguments, "call_id": id}}));
                    lines.push(json!({"timestamp": at, "type": "response_item", "payload": {"type": "function_call_output",
                                      "call_id": id, "output": "Exit code: 0\nOutput:\ndone\n"}}));
                }
            }
            lines
        }
        _ => return None,
    };
    Some(lines.iter().map(|line| format!("{line}\n")).collect())
}

/// A tool result's metadata with a secret in it: mostly one the hook already redacted (its
/// label), sometimes one it let through, which ingest redacts (the security page's counts).
fn leaked_secret(rng: &mut fastrand::Rng) -> Value {
    let mut upper = |n: usize| (0..n).map(|_| rng.uppercase()).collect::<String>();
    let key = upper(16);
    let token = upper(36);
    match rng.u32(0..6) {
        0 => json!({"output": format!("aws configure set aws_access_key_id AKIA{key}")}),
        1 => json!({"output": format!("remote: https://ci:ghp_{token}@github.com/acme/shop")}),
        2 => json!({"output": "export DATABASE_PASSWORD=[REDACTED:env_secret]"}),
        3 => json!({"output": "Authorization: Bearer [REDACTED:http_credential]"}),
        4 => json!({"output": "git log --author [REDACTED:email]"}),
        _ => json!({"output": "GITHUB_TOKEN=[REDACTED:code_hosting_token]"}),
    }
}

/// Whether a successful shell call follows the session's last successful edit: the calls
/// "tests before merge" judges, by their command lines when the transcript is kept.
pub fn runs_commands_after_last_edit(session: &Session) -> bool {
    let ended: Vec<(&str, &str)> = session
        .events
        .iter()
        .filter(|event| event["type"] == "tool_end")
        .map(|event| (event["tool"]["action"].as_str().unwrap_or(""), event["tool"]["status"].as_str().unwrap_or("")))
        .collect();
    let last_edit =
        ended.iter().rposition(|(action, status)| matches!(*action, "edit" | "write") && *status == "success");
    last_edit.is_some_and(|at| ended[at + 1..].iter().any(|(action, status)| *action == "exec" && *status == "success"))
}

//! Where each agent keeps its hook configuration, and which of its events we register.

use std::path::PathBuf;

use serde_json::json;

use super::{JsonHooks, Shape, Target};
use crate::model::AgentType;

fn home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."))
}

/// Claude Code reads `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`).
const CLAUDE_CODE_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionDenied",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
];

/// Codex reads `~/.codex/hooks.json` (or `$CODEX_HOME/hooks.json`) and runs only hooks
/// the person trusted in `/hooks`; our entries go after theirs so their trust (keyed by
/// position) stays valid.
const CODEX_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "Interrupt",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
];

/// Gemini CLI reads `~/.gemini/settings.json`. The per-request model hooks are left out:
/// Gemini waits for hooks, and AfterModel fires on every streamed chunk.
const GEMINI_EVENTS: &[&str] = &[
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "Notification",
    "AfterAgent",
    "PreCompress",
    "SessionEnd",
];

/// `{"hooks": [{"type": "command", "command": …, "timeout": seconds}]}`, no matcher
/// (all tools, all sources).
fn grouped_seconds(_event: &str, command: &str) -> serde_json::Value {
    json!({"hooks": [{"type": "command", "command": command, "timeout": 10}]})
}

fn codex_entry(event: &str, command: &str) -> serde_json::Value {
    // Codex caps SessionEnd and Interrupt hooks at 3 seconds.
    let timeout = if matches!(event, "SessionEnd" | "Interrupt") { 3 } else { 10 };
    json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
}

fn gemini_entry(event: &str, command: &str) -> serde_json::Value {
    // Named, so `/hooks disable sightline-<event>` works; timeouts are in milliseconds.
    json!({"matcher": "*", "hooks": [{"name": format!("sightline-{event}"), "type": "command", "command": command, "timeout": 5000}]})
}

fn dir_from_env(var: &str, fallback: &str) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| home().join(fallback))
}

pub fn for_agent(agent: AgentType) -> anyhow::Result<Vec<Target>> {
    Ok(match agent {
        AgentType::ClaudeCode => vec![Target::Json(JsonHooks {
            path: dir_from_env("CLAUDE_CONFIG_DIR", ".claude").join("settings.json"),
            hooks_at: &["hooks"],
            shape: Shape::Grouped,
            events: CLAUDE_CODE_EVENTS,
            new_file_root: || json!({}),
            entry: grouped_seconds,
        })],
        AgentType::Codex => vec![Target::Json(JsonHooks {
            path: dir_from_env("CODEX_HOME", ".codex").join("hooks.json"),
            hooks_at: &["hooks"],
            shape: Shape::Grouped,
            events: CODEX_EVENTS,
            new_file_root: || json!({}),
            entry: codex_entry,
        })],
        AgentType::GeminiCli => vec![Target::Json(JsonHooks {
            path: home().join(".gemini/settings.json"),
            hooks_at: &["hooks"],
            shape: Shape::Grouped,
            events: GEMINI_EVENTS,
            new_file_root: || json!({}),
            entry: gemini_entry,
        })],
        other => anyhow::bail!("{} has no hook adapter, so there is nothing to install", other.as_str()),
    })
}

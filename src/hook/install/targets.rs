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

pub fn for_agent(agent: AgentType) -> anyhow::Result<Vec<Target>> {
    Ok(match agent {
        AgentType::ClaudeCode => {
            let dir =
                std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from).unwrap_or_else(|| home().join(".claude"));
            vec![Target::Json(JsonHooks {
                path: dir.join("settings.json"),
                hooks_at: &["hooks"],
                shape: Shape::Grouped { timeout_key: "timeout", timeout: 10 },
                events: CLAUDE_CODE_EVENTS,
                new_file_root: || json!({}),
            })]
        }
        other => anyhow::bail!("{} has no hook adapter, so there is nothing to install", other.as_str()),
    })
}

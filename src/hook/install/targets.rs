//! Where each agent keeps its hook configuration, and which of its events we register.

use std::path::PathBuf;

use serde_json::json;

use super::owned::{OwnedFile, has_marker};
use super::{JsonHooks, Shape, Target, our_program, our_program_path};
use crate::config::machine::MachineVariable;
use crate::hook::local::{dir_from_env, home, xdg_config_home};
use crate::model::AgentType;

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

/// Droid reads `~/.factory/settings.json` `hooks`, or `~/.factory/hooks.json` when that
/// file exists (newer versions).
const DROID_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
];

/// Copilot CLI loads every `*.json` in `~/.copilot/hooks/`; ours is a file of its own.
const COPILOT_EVENTS: &[&str] = &[
    "sessionStart",
    "userPromptSubmitted",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "notification",
    "agentStop",
    "subagentStop",
    "preCompact",
    "sessionEnd",
];

/// Cline runs the executable named after each hook in its global hooks directory.
const CLINE_HOOKS: &[&str] = &[
    "TaskStart",
    "TaskResume",
    "TaskCancel",
    "TaskComplete",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "Notification",
];

const OPENCODE_PLUGIN: &str = include_str!("../../../assets/agents/opencode-plugin.js");
const CLINE_SCRIPT: &str = include_str!("../../../assets/agents/cline-hook.sh");

/// Copilot's `preToolUse` denies the tool when a hook fails, so the command cannot fail.
fn copilot_file() -> String {
    let program = our_program();
    let hooks: serde_json::Map<String, serde_json::Value> = COPILOT_EVENTS
        .iter()
        .map(|event| {
            let windows =
                format!("& '{}' hook {event} --agent copilot_cli; exit 0", our_program_path().replace('\'', "''"));
            let entry = json!({
                "type": "command",
                "bash": format!("{program} hook {event} --agent copilot_cli || true"),
                "powershell": windows,
                "timeoutSec": 10,
            });
            (event.to_string(), json!([entry]))
        })
        .collect();
    format!("{:#}\n", json!({"version": 1, "hooks": hooks}))
}

fn copilot_is_ours(text: &str) -> bool {
    text.contains("--agent copilot_cli")
}

/// Cline's Documents directory: `xdg-user-dir DOCUMENTS` when available (which is `$HOME`
/// when the person has no Documents folder configured), else `~/Documents`, as Cline
/// itself resolves it.
fn documents_dir() -> PathBuf {
    if cfg!(target_os = "linux")
        && let Ok(out) = std::process::Command::new("xdg-user-dir").arg("DOCUMENTS").output()
        && out.status.success()
    {
        let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !dir.is_empty() {
            return PathBuf::from(dir);
        }
    }
    home().join("Documents")
}

/// The agents `install` has hooks for.
pub const HOOKED_AGENTS: [AgentType; 7] = [
    AgentType::ClaudeCode,
    AgentType::Codex,
    AgentType::GeminiCli,
    AgentType::CopilotCli,
    AgentType::Droid,
    AgentType::Opencode,
    AgentType::Cline,
];

/// The directory whose presence says an agent is on this machine (each agent makes it
/// on its first run): where `install --found` looks.
pub fn home_of(agent: AgentType) -> Option<PathBuf> {
    Some(match agent {
        AgentType::ClaudeCode => dir_from_env(MachineVariable::ClaudeConfigDir, ".claude"),
        AgentType::Codex => dir_from_env(MachineVariable::CodexHome, ".codex"),
        AgentType::GeminiCli => home().join(".gemini"),
        AgentType::CopilotCli => dir_from_env(MachineVariable::CopilotHome, ".copilot"),
        AgentType::Droid => home().join(".factory"),
        AgentType::Opencode => xdg_config_home().join("opencode"),
        AgentType::Cline => documents_dir().join("Cline"),
        _ => return None,
    })
}

pub fn for_agent(agent: AgentType) -> anyhow::Result<Vec<Target>> {
    Ok(match agent {
        AgentType::ClaudeCode => vec![Target::Json(JsonHooks {
            path: dir_from_env(MachineVariable::ClaudeConfigDir, ".claude").join("settings.json"),
            hooks_at: &["hooks"],
            shape: Shape::Grouped,
            events: CLAUDE_CODE_EVENTS,
            new_file_root: || json!({}),
            entry: grouped_seconds,
        })],
        AgentType::Codex => vec![Target::Json(JsonHooks {
            path: dir_from_env(MachineVariable::CodexHome, ".codex").join("hooks.json"),
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
        AgentType::Droid => {
            let factory = home().join(".factory");
            let hooks_file = factory.join("hooks.json");
            let (path, hooks_at): (PathBuf, &'static [&'static str]) = if hooks_file.exists() {
                let wrapped = std::fs::read_to_string(&hooks_file)
                    .ok()
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                    .is_some_and(|v| v.get("hooks").is_some_and(serde_json::Value::is_object));
                (hooks_file, if wrapped { &["hooks"] } else { &[] })
            } else {
                (factory.join("settings.json"), &["hooks"])
            };
            vec![Target::Json(JsonHooks {
                path,
                hooks_at,
                shape: Shape::Grouped,
                events: DROID_EVENTS,
                new_file_root: || json!({}),
                entry: grouped_seconds,
            })]
        }
        AgentType::CopilotCli => vec![Target::Owned(OwnedFile {
            path: dir_from_env(MachineVariable::CopilotHome, ".copilot").join("hooks/sightline.json"),
            content: copilot_file(),
            executable: false,
            is_ours: copilot_is_ours,
        })],
        AgentType::Opencode => {
            let config = xdg_config_home();
            let binary = serde_json::to_string(&our_program_path())?;
            vec![Target::Owned(OwnedFile {
                path: config.join("opencode/plugins/sightline.js"),
                content: OPENCODE_PLUGIN.replace("\"__SIGHTLINE_BIN__\"", &binary),
                executable: false,
                is_ours: has_marker,
            })]
        }
        AgentType::Cline => {
            let binary = our_program_path();
            anyhow::ensure!(
                !binary.contains(['"', '$', '`', '\\']),
                "the sightline binary's path {binary:?} cannot be written into a shell script; move the binary"
            );
            let script = CLINE_SCRIPT.replace("__SIGHTLINE_ABS_PATH__", &binary);
            let dir = documents_dir().join("Cline/Hooks");
            CLINE_HOOKS
                .iter()
                .map(|name| {
                    Target::Owned(OwnedFile {
                        path: dir.join(name),
                        content: script.clone(),
                        executable: true,
                        is_ours: has_marker,
                    })
                })
                .collect()
        }
        other => anyhow::bail!("{} has no hook adapter, so there is nothing to install", other.as_str()),
    })
}

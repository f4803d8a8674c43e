//! OpenAI Codex CLI: hook payloads as documented at developers.openai.com/codex/hooks and
//! in `openai/codex` (`codex-rs/hooks/schema/generated`): every payload carries
//! `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `model`, and most carry
//! `permission_mode` (`default` or `bypassPermissions`) and `turn_id`; tool events add
//! `tool_name` (`Bash`, `apply_patch`, `mcp__<server>__<tool>`, or a function name),
//! `tool_use_id`, `tool_input`, and `tool_response` on PostToolUse (Bash's is the
//! model-facing text, `Exit code: N …`); `SubagentStop` adds `agent_transcript_path`.
//!
//! Mapping: SessionStart → session_start (git context of `cwd`), UserPromptSubmit →
//! prompt_submit, PreToolUse → tool_start, PostToolUse → tool_end (`error` when the exit
//! code is not 0 or an MCP result says `isError`), PermissionRequest → notification
//! `permission`, Stop and Interrupt → turn_end, SubagentStop → subagent_end, PreCompact →
//! compact, SessionEnd → session_end; SubagentStart, PostCompact and unknown events are
//! ignored. Codex tells no hook when the person refuses an approval: the call simply
//! never gets a PostToolUse, so a call still open when its turn ends is `denied`.
//!
//! Tokens come from the rollout transcript (`~/.codex/sessions/…/rollout-*.jsonl`):
//! `event_msg` lines of type `token_count` carry `info.total_token_usage`, a running total
//! for the thread, differenced line by line (a repeated total or `info: null` is no
//! request); the model is that of the latest `turn_context` line. Codex's `input_tokens`
//! include `cached_input_tokens` and its `output_tokens` include
//! `reasoning_output_tokens`; both are subtracted so each wire count is its own kind.

use serde_json::{Value, json};

use super::build::{Builder, ToolCall, text, with_permission_mode};
use super::claude_code::canonical_permission_mode;
use super::{AdapterError, Context};
use crate::hook::usage::Line;
use crate::model::{AgentType, NotificationKind, RunKind, ToolStatus, Usage};

pub fn tool_action(tool: &str) -> &'static str {
    match tool {
        "Bash" | "shell" | "shell_command" | "local_shell" | "exec_command" => "exec",
        "apply_patch" => "edit",
        "read_file" | "view_image" | "read_mcp_resource" => "read",
        "grep_files" | "list_dir" | "list_mcp_resources" | "list_mcp_resource_templates" => "search",
        "web_search" => "fetch",
        "spawn_agent" | "send_input" | "wait" | "close_agent" | "resume_agent" => "delegate",
        "update_plan" => "plan",
        _ if tool.starts_with("mcp__") => "mcp",
        _ => "other",
    }
}

fn tool_call(payload: &Value) -> ToolCall<'_> {
    ToolCall::claude_style(
        text(payload, "tool_name"),
        text(payload, "tool_use_id"),
        payload.get("tool_input"),
        tool_action,
    )
}

/// The exit code in Codex's model-facing tool output, if it states one.
pub fn exit_code(output: &str) -> Option<i64> {
    ["Exit code: ", "Process exited with code "].iter().find_map(|marker| {
        let rest = &output[output.find(marker)? + marker.len()..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
        digits.parse().ok()
    })
}

fn response_status(response: Option<&Value>) -> ToolStatus {
    let failed = match response {
        Some(Value::String(output)) => exit_code(output).is_some_and(|code| code != 0),
        Some(result) => {
            result.get("isError").and_then(Value::as_bool).unwrap_or(false)
                || result.get("is_error").and_then(Value::as_bool).unwrap_or(false)
        }
        None => false,
    };
    if failed { ToolStatus::Error } else { ToolStatus::Success }
}

/// One rollout line: `turn_context` names the model, `token_count` carries the running
/// total.
pub fn transcript_line(line: &str) -> Option<Line> {
    if !line.contains("token_count") && !line.contains("turn_context") {
        return None;
    }
    record_usage(&serde_json::from_str(line).ok()?)
}

/// [`transcript_line`] for a line already parsed (import reads every line anyway).
pub fn record_usage(value: &Value) -> Option<Line> {
    let payload = value.get("payload")?;
    match value.get("type").and_then(Value::as_str)? {
        "turn_context" => payload.get("model").and_then(Value::as_str).map(|m| Line::Model(m.to_string())),
        "event_msg" if payload.get("type").and_then(Value::as_str) == Some("token_count") => {
            let total = payload.get("info")?.get("total_token_usage")?;
            let count = |key: &str| total.get(key).and_then(Value::as_i64).unwrap_or(0).max(0);
            let (input, cached) = (count("input_tokens"), count("cached_input_tokens"));
            let (output, reasoning) = (count("output_tokens"), count("reasoning_output_tokens"));
            Some(Line::Cumulative {
                model: None,
                usage: Usage {
                    input_tokens: (input - cached).max(0),
                    output_tokens: (output - reasoning).max(0),
                    cache_read_tokens: cached,
                    reasoning_tokens: reasoning,
                    ..Usage::default()
                },
            })
        }
        _ => None,
    }
}

pub fn map(hook_event: &str, payload: &Value, context: &mut Context<'_>) -> Result<Vec<Value>, AdapterError> {
    let session = text(payload, "session_id").ok_or(AdapterError::Missing("session_id"))?;
    let build = Builder {
        context,
        agent: AgentType::Codex,
        session: session.to_string(),
        hook_event: hook_event.to_string(),
        cwd: text(payload, "cwd").map(str::to_string),
    };
    let transcript = text(payload, "transcript_path");
    let events = match hook_event {
        "SessionStart" => {
            vec![build.session_start(text(payload, "source"), text(payload, "model"))]
        }
        "UserPromptSubmit" => vec![build.event("prompt_submit")],
        "PreToolUse" => vec![build.tool_start(&tool_call(payload))?],
        "PostToolUse" => {
            let response = payload.get("tool_response");
            vec![build.tool_end(&tool_call(payload), response, response_status(response))?]
        }
        "PermissionRequest" => {
            let event = build.notification(NotificationKind::Permission.as_str());
            vec![event]
        }
        "Stop" => build.turn_end(transcript, transcript_line, json!({}))?,
        "Interrupt" => build.turn_end(transcript, transcript_line, json!({"interrupted": true}))?,
        "SubagentStop" => {
            build.subagent_end(text(payload, "agent_transcript_path"), transcript_line, text(payload, "agent_type"))?
        }
        "PreCompact" => vec![build.compact(text(payload, "trigger"))],
        "SessionEnd" => build.session_end(transcript, transcript_line, text(payload, "reason"))?,
        _ => Vec::new(),
    };
    let mut events = with_permission_mode(events, text(payload, "permission_mode").and_then(canonical_permission_mode));
    let meta = if events.is_empty() { None } else { transcript.and_then(session_meta) };
    if let Some(meta) = meta {
        for event in &mut events {
            // No payload says how Codex was started; its rollout's first line does. A run
            // of `codex exec` is nobody's interactive session, as the export's
            // `originator` says (a harness's SIGHTLINE_RUN_KIND is stamped after, and wins).
            if meta.exec {
                event["run_kind"] = json!(RunKind::Ci.as_str());
            }
            if let Some(version) = &meta.version {
                event["agent_version"] = json!(version);
            }
        }
    }
    Ok(events)
}

/// The most of a rollout's first line read: its `session_meta` carries the base
/// instructions (some kilobytes) before `originator` and `source`.
const SESSION_META_MAX: u64 = 256 * 1024;

/// What a rollout's first line, the `session_meta` record, says of the run.
struct SessionMeta {
    /// Started by `codex exec`: `originator` is `codex_exec` (`codex-tui` interactive) or
    /// `source` is `exec` (`cli`).
    exec: bool,
    /// Codex's own version (`cli_version`), if it is one the wire keeps.
    version: Option<String>,
}

/// The `session_meta` of the rollout at `path`; a rollout not written yet, or
/// unreadable, says nothing.
fn session_meta(path: &str) -> Option<SessionMeta> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(file.take(SESSION_META_MAX)).read_line(&mut line).ok()?;
    let first = serde_json::from_str::<Value>(&line).ok()?;
    let meta = &first["payload"];
    (first["type"] == "session_meta").then(|| SessionMeta {
        exec: meta["originator"] == "codex_exec" || meta["source"] == "exec",
        version: meta["cli_version"].as_str().filter(|v| crate::model::wire::is_agent_version(v)).map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rollout_says_in_its_first_line_whether_codex_exec_started_it_and_its_version() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path.display().to_string()
        };
        // As 0.171.0 writes it (base instructions shortened).
        let meta = |originator: &str, source: &str| {
            format!(
                "{}\n{{\"type\":\"turn_context\",\"payload\":{{}}}}\n",
                json!({"timestamp": "2026-12-02T12:58:41.385Z", "type": "session_meta",
                       "payload": {"id": "01a236d5", "base_instructions": {"text": "You are Codex"},
                                   "originator": originator, "cli_version": "0.171.0", "source": source}})
            )
        };
        let exec = session_meta(&write("exec.jsonl", &meta("codex_exec", "exec"))).unwrap();
        assert!(exec.exec);
        assert_eq!(exec.version.as_deref(), Some("0.171.0"), "Codex's own version");
        assert!(!session_meta(&write("tui.jsonl", &meta("codex-tui", "cli"))).unwrap().exec);
        assert!(session_meta(&write("empty.jsonl", "")).is_none());
        assert!(session_meta(&dir.path().join("missing.jsonl").display().to_string()).is_none());
    }

    #[test]
    fn exit_codes_are_read_from_the_model_facing_output() {
        assert_eq!(exit_code("Exit code: 101\nWall time: 2 seconds\nOutput:\n"), Some(101));
        assert_eq!(exit_code("Process exited with code 0\nOutput:"), Some(0));
        assert_eq!(exit_code("Success. Updated the following files:"), None);
        assert_eq!(response_status(Some(&json!({"isError": true, "content": []}))), ToolStatus::Error);
    }
}

//! OpenAI Codex CLI: hook payloads as documented at developers.openai.com/codex/hooks and
//! in `openai/codex` (`codex-rs/hooks/schema/generated`): every payload carries
//! `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `model`, and most carry
//! `permission_mode` (`default` or `bypassPermissions`) and `turn_id`; tool events add
//! `tool_name` (`Bash`, `apply_patch`, `mcp__<server>__<tool>`, or a function name),
//! `tool_use_id`, `tool_input`, and `tool_response` on PostToolUse (Bash's is the
//! command's output alone in 0.171.0, `Exit code: N …` before); `SubagentStop` adds
//! `agent_transcript_path`.
//!
//! Mapping: SessionStart → session_start (git context of `cwd`), UserPromptSubmit →
//! prompt_submit, PreToolUse → tool_start, PostToolUse → tool_end (`error` when the call
//! failed: the rollout's `item_completed` for the call, written before PostToolUse runs,
//! says `failed` or a non-zero `exit_code`; without it, an `Exit code: N` in the response
//! or an MCP result's `isError`), PermissionRequest → notification
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

use super::build::{Builder, ToolCall, with_permission_mode};
use super::{AdapterError, Context};
use crate::agents::claude_code::canonical_permission_mode;
use crate::agents::codex::{exit_code, tool_action, transcript_line};
use crate::agents::text;
use crate::model::wire::Draft;
use crate::model::{AgentType, EventType, NotificationKind, RunKind, ToolStatus};

fn tool_call(payload: &Value) -> ToolCall<'_> {
    ToolCall::claude_style(
        text(payload, "tool_name"),
        text(payload, "tool_use_id"),
        payload.get("tool_input"),
        tool_action,
    )
}

/// The most of a rollout's end read for a call's `item_completed`: the line is written
/// just before PostToolUse runs, with the command's output (aggregated, so a chatty
/// command makes it long).
const ITEM_COMPLETED_TAIL: u64 = 1024 * 1024;

/// The outcome the rollout at `path` records for `call_id` (its `item_completed`
/// event), if its end holds one.
fn completed_item_status(path: &str, call_id: &str) -> Option<ToolStatus> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(length.saturating_sub(ITEM_COMPLETED_TAIL))).ok()?;
    let mut tail = Vec::new();
    file.take(ITEM_COMPLETED_TAIL).read_to_end(&mut tail).ok()?;
    let tail = String::from_utf8_lossy(&tail);
    let quoted = format!("\"{call_id}\"");
    let line = tail.lines().rev().filter(|line| line.contains("item_completed") && line.contains(&quoted)).find_map(
        |line| {
            let value: Value = serde_json::from_str(line).ok()?;
            let item = &value["payload"]["item"];
            (value["payload"]["type"] == "item_completed" && item["id"] == call_id).then(|| item.clone())
        },
    )?;
    let failed = line["status"] == "failed" || line["exit_code"].as_i64().is_some_and(|code| code != 0);
    Some(match line["status"].as_str() {
        Some("declined") => ToolStatus::Denied,
        _ if failed => ToolStatus::Error,
        _ => ToolStatus::Success,
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

pub fn map(hook_event: &str, payload: &Value, context: &mut Context<'_>) -> Result<Vec<Draft>, AdapterError> {
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
        "UserPromptSubmit" => vec![build.event(EventType::PromptSubmit)],
        "PreToolUse" => vec![build.tool_start(&tool_call(payload))?],
        "PostToolUse" => {
            let response = payload.get("tool_response");
            let recorded =
                transcript.zip(text(payload, "tool_use_id")).and_then(|(path, id)| completed_item_status(path, id));
            let status = recorded.unwrap_or_else(|| response_status(response));
            vec![build.tool_end(&tool_call(payload), response, status)?]
        }
        "PermissionRequest" => {
            let event = build.notification(NotificationKind::Permission);
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
                event.set_run_kind(RunKind::Ci);
            }
            if let Some(version) = &meta.version {
                event.agent_version = Some(version.clone());
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

    #[test]
    fn a_call_s_outcome_is_read_from_the_rollout_s_completed_item() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        // As 0.171.0 writes them before it runs PostToolUse (fields shortened).
        let completed = |id: &str, status: &str, exit: i64| {
            json!({"timestamp": "2026-12-03T12:01:33.026Z", "ordinal": 16, "type": "event_msg",
                   "payload": {"type": "item_completed", "turn_id": "t1",
                               "item": {"type": "CommandExecution", "id": id, "command": ["/bin/bash", "-lc", "git x"],
                                        "source": "unified_exec_startup", "status": status,
                                        "aggregated_output": "fatal: Needed a single revision\n", "exit_code": exit}}})
            .to_string()
        };
        let call = json!({"type": "response_item", "payload": {"type": "function_call", "call_id": "call_2"}});
        let rollout = [completed("call_0", "completed", 0), completed("call_1", "failed", 128), call.to_string()];
        std::fs::write(&path, rollout.join("\n") + "\n").unwrap();
        let path = path.display().to_string();
        assert_eq!(completed_item_status(&path, "call_0"), Some(ToolStatus::Success));
        assert_eq!(completed_item_status(&path, "call_1"), Some(ToolStatus::Error));
        assert_eq!(completed_item_status(&path, "call_2"), None, "a call not completed yet says nothing");
        assert_eq!(completed_item_status(&path, "call_"), None, "ids match whole");
        assert_eq!(completed_item_status("/nonexistent/rollout.jsonl", "call_0"), None);
    }
}

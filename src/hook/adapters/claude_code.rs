//! Claude Code: hook payloads as documented at docs.claude.com ("Hooks reference"): every
//! payload carries `session_id`, `transcript_path`, `cwd`, `hook_event_name` and (recent
//! versions) `permission_mode`; `PreToolUse`/`PostToolUse` add `tool_name`, `tool_input`
//! and `tool_response`; `Notification` adds `message`; `SessionStart` adds `source`;
//! `PreCompact` adds `trigger`; `SessionEnd` adds `reason`.
//!
//! Mapping: SessionStart → session_start (with git context of `cwd`), UserPromptSubmit →
//! prompt_submit, PreToolUse → tool_start, PostToolUse → tool_end, Notification →
//! notification, Stop → turn_end, SubagentStop → subagent_end, PreCompact → compact,
//! SessionEnd → session_end; anything else is ignored. MCP tools (`mcp__<server>__<tool>`)
//! keep their full name and report the server. Token usage comes from the transcript, not
//! from hooks (a later step of the hook issue).

use serde_json::{Map, Value, json};

use super::common::{classify_notification, digest_of, git_context, target_hash};
use super::{AdapterError, Context};

/// Claude Code's permission modes in the wire contract's canonical names.
pub fn canonical_permission_mode(mode: &str) -> Option<&'static str> {
    Some(match mode {
        "default" => "normal",
        "plan" => "plan",
        "acceptEdits" => "accept_edits",
        "bypassPermissions" => "bypass",
        "dontAsk" => "dont_ask",
        "auto" => "auto",
        _ => return None,
    })
}

fn tool_action(tool: &str) -> &'static str {
    match tool {
        "Read" | "NotebookRead" | "LS" => "read",
        "Write" => "write",
        "Edit" | "MultiEdit" | "NotebookEdit" => "edit",
        "Bash" | "BashOutput" | "KillShell" => "exec",
        "Grep" | "Glob" => "search",
        "WebFetch" | "WebSearch" => "fetch",
        "Task" => "delegate",
        "TodoWrite" => "plan",
        _ if tool.starts_with("mcp__") => "mcp",
        _ => "other",
    }
}

fn tool_fields(payload: &Value, end: bool) -> Map<String, Value> {
    let name = payload.get("tool_name").and_then(Value::as_str).unwrap_or("unknown");
    let mut tool = Map::new();
    tool.insert("name".into(), json!(format!("claude_code:{name}")));
    if let Some(server) = name.strip_prefix("mcp__").and_then(|rest| rest.split("__").next()) {
        tool.insert("server".into(), json!(server));
    }
    tool.insert("action".into(), json!(tool_action(name)));
    if let Some(use_id) = payload.get("tool_use_id").and_then(Value::as_str) {
        tool.insert("use_id".into(), json!(use_id));
    }
    if let Some(input) = payload.get("tool_input") {
        let (digest, bytes) = digest_of(input);
        tool.insert("input_sha256".into(), json!(digest));
        tool.insert("input_bytes".into(), json!(bytes));
        if let Some(target) = target_hash(input) {
            tool.insert("target_hash".into(), json!(target));
        }
    }
    if end {
        if let Some(response) = payload.get("tool_response") {
            let (digest, bytes) = digest_of(response);
            tool.insert("output_sha256".into(), json!(digest));
            tool.insert("output_bytes".into(), json!(bytes));
            let failed = response.get("is_error").and_then(Value::as_bool).unwrap_or(false)
                || response.get("error").is_some_and(|e| !e.is_null())
                || response.get("success").and_then(Value::as_bool) == Some(false);
            tool.insert("status".into(), json!(if failed { "error" } else { "success" }));
        } else {
            tool.insert("status".into(), json!("success"));
        }
    }
    tool
}

pub fn map(hook_event: &str, payload: &Value, context: &mut Context<'_>) -> Result<Vec<Value>, AdapterError> {
    let kind = match hook_event {
        "SessionStart" => "session_start",
        "UserPromptSubmit" => "prompt_submit",
        "PreToolUse" => "tool_start",
        "PostToolUse" => "tool_end",
        "Notification" => "notification",
        "Stop" => "turn_end",
        "SubagentStop" => "subagent_end",
        "PreCompact" => "compact",
        "SessionEnd" => "session_end",
        _ => return Ok(Vec::new()),
    };
    let session_id = payload.get("session_id").and_then(Value::as_str).ok_or(AdapterError::Missing("session_id"))?;
    let mut event = json!({
        "event_id": uuid::Uuid::now_v7().to_string(),
        "type": kind,
        "ts": crate::ingest::sessions::rfc3339_ms(context.now_ms),
        "agent_type": "claude_code",
        "session_id": session_id,
        "metadata": {"hook_event": hook_event},
    });
    if let Some(mode) = payload.get("permission_mode").and_then(Value::as_str).and_then(canonical_permission_mode) {
        event["permission_mode"] = json!(mode);
    }
    match kind {
        "session_start" => {
            if let Some(source) = payload.get("source").and_then(Value::as_str) {
                event["metadata"]["source"] = json!(source);
            }
            if let Some(git) = payload.get("cwd").and_then(Value::as_str).and_then(|cwd| git_context(cwd.as_ref())) {
                event["git"] = git;
            }
        }
        "tool_start" => {
            let tool = tool_fields(payload, false);
            if let Some(use_id) = tool.get("use_id").and_then(Value::as_str) {
                context.tool_starts.started(use_id, context.now_ms);
            }
            event["tool"] = Value::Object(tool);
        }
        "tool_end" => {
            let mut tool = tool_fields(payload, true);
            if let Some(started) =
                tool.get("use_id").and_then(Value::as_str).and_then(|id| context.tool_starts.finished(id))
            {
                tool.insert("duration_ms".into(), json!((context.now_ms - started).max(0)));
            }
            event["tool"] = Value::Object(tool);
        }
        "notification" => {
            let message = payload.get("message").and_then(Value::as_str).unwrap_or("");
            let kind = classify_notification(payload.get("notification_type").and_then(Value::as_str), message);
            event["notification_kind"] = json!(kind.as_str());
        }
        "compact" => {
            if let Some(trigger) = payload.get("trigger").and_then(Value::as_str) {
                event["metadata"]["trigger"] = json!(trigger);
            }
        }
        "session_end" => {
            if let Some(reason) = payload.get("reason").and_then(Value::as_str) {
                event["metadata"]["reason"] = json!(reason);
            }
        }
        _ => {}
    }
    Ok(vec![event])
}

//! Claude Code: hook payloads as documented at code.claude.com/docs/en/hooks ("Hooks
//! reference"): every payload carries `session_id`, `transcript_path`, `cwd`,
//! `hook_event_name` and (recent versions) `permission_mode`; tool events add
//! `tool_name`, `tool_input`, `tool_use_id`, and `tool_response` (PostToolUse) or `error`
//! (PostToolUseFailure) or `reason` (PermissionDenied); `Notification` adds `message` and
//! `notification_type`; `SessionStart` adds `source`; `PreCompact` adds `trigger`;
//! `SessionEnd` adds `reason`; `SubagentStop` adds `agent_transcript_path` (recent
//! versions keep a subagent's messages in their own file).
//!
//! Mapping: SessionStart → session_start (with git context of `cwd`), UserPromptSubmit →
//! prompt_submit, PreToolUse → tool_start, PostToolUse → tool_end, PostToolUseFailure →
//! tool_end `error` (or `denied` when the person refused), PermissionDenied → tool_end
//! `denied`, Notification → notification, Stop → turn_end, SubagentStop → subagent_end,
//! PreCompact → compact, SessionEnd → session_end; anything else is ignored. MCP tools
//! (`mcp__<server>__<tool>`) keep their full name and report the server.
//!
//! Tokens come from the transcript (JSONL, one line per content block): every assistant
//! line repeats its message's `usage`, and output counts grow while it streams, so usage
//! is grouped by (`message.id`, `requestId`) and each group counts once with its largest
//! counts; `cache_creation.ephemeral_1h_input_tokens` splits cache writes into 1-hour and
//! 5-minute. Stop reads the main transcript and reports one turn_end per model request;
//! SubagentStop reads the subagent's transcript onto subagent_end; SessionEnd reports
//! whatever is left (a turn cut short has no Stop). Claude Code counts thinking inside
//! `output_tokens` and does not report it apart, so `reasoning_tokens` stays 0.

use serde_json::{Map, Value, json};

use super::common::{classify_notification, digest_of, git_context, target_hash, usage_events};
use super::{AdapterError, Context};
use crate::hook::usage::{self, Line};
use crate::model::Usage;

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

/// How a tool call ended, for the three hook events that end one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    Started,
    Finished,
    Failed,
    Denied,
}

/// Words Claude Code uses when the person refused a tool call.
fn reads_as_refusal(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    ["doesn't want to proceed", "rejected", "denied", "permission to use"].iter().any(|w| error.contains(w))
}

fn tool_fields(payload: &Value, ending: Ending) -> Map<String, Value> {
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
    let end = ending != Ending::Started;
    if let Some(error) = payload.get("error").filter(|_| ending == Ending::Failed) {
        let (digest, bytes) = digest_of(error);
        tool.insert("output_sha256".into(), json!(digest));
        tool.insert("output_bytes".into(), json!(bytes));
        let refused = error.as_str().is_some_and(reads_as_refusal);
        tool.insert("status".into(), json!(if refused { "denied" } else { "error" }));
    } else if ending == Ending::Denied || ending == Ending::Failed {
        tool.insert("status".into(), json!(if ending == Ending::Denied { "denied" } else { "error" }));
    } else if end {
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

/// One transcript line's usage: assistant lines carry their message's usage, repeated
/// on every content block of the message.
pub fn transcript_line(line: &str) -> Option<Line> {
    if !line.contains("\"usage\"") {
        return None;
    }
    let value: Value = serde_json::from_str(line).ok()?;
    let message = value.get("message")?;
    let usage = message.get("usage")?;
    let model = message.get("model").and_then(Value::as_str).filter(|m| !m.starts_with('<')).map(str::to_string);
    let count = |v: &Value, key: &str| v.get(key).and_then(Value::as_i64).unwrap_or(0).max(0);
    let cache_write = count(usage, "cache_creation_input_tokens");
    let (write_5m, write_1h) = match usage.get("cache_creation") {
        Some(split) if split.is_object() => {
            let hour = count(split, "ephemeral_1h_input_tokens");
            (cache_write.max(count(split, "ephemeral_5m_input_tokens") + hour) - hour, hour)
        }
        _ => (cache_write, 0),
    };
    let id = message.get("id").and_then(Value::as_str).unwrap_or("");
    let request = value.get("requestId").and_then(Value::as_str).unwrap_or("");
    let group = if id.is_empty() && request.is_empty() {
        value.get("uuid").and_then(Value::as_str).unwrap_or(line).to_string()
    } else {
        format!("{id}\u{1f}{request}")
    };
    Some(Line::Counts {
        group,
        model,
        usage: Usage {
            input_tokens: count(usage, "input_tokens"),
            output_tokens: count(usage, "output_tokens"),
            cache_read_tokens: count(usage, "cache_read_input_tokens"),
            cache_write_5m_tokens: write_5m,
            cache_write_1h_tokens: write_1h,
            reasoning_tokens: 0,
        },
    })
}

pub fn map(hook_event: &str, payload: &Value, context: &mut Context<'_>) -> Result<Vec<Value>, AdapterError> {
    let kind = match hook_event {
        "SessionStart" => "session_start",
        "UserPromptSubmit" => "prompt_submit",
        "PreToolUse" => "tool_start",
        "PostToolUse" | "PostToolUseFailure" | "PermissionDenied" => "tool_end",
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
    let transcript = |key: &str| payload.get(key).and_then(Value::as_str).filter(|p| !p.is_empty());
    let mut events = Vec::new();
    match kind {
        "session_start" => {
            if let Some(source) = payload.get("source").and_then(Value::as_str) {
                event["metadata"]["source"] = json!(source);
            }
            if let Some(model) = payload.get("model").and_then(Value::as_str) {
                event["model"] = json!(model);
            }
            if let Some(git) = payload.get("cwd").and_then(Value::as_str).and_then(|cwd| git_context(cwd.as_ref())) {
                event["git"] = git;
            }
        }
        "tool_start" => {
            let tool = tool_fields(payload, Ending::Started);
            if let Some(use_id) = tool.get("use_id").and_then(Value::as_str) {
                context.state.tool_started(use_id, context.now_ms)?;
            }
            event["tool"] = Value::Object(tool);
        }
        "tool_end" => {
            let ending = match hook_event {
                "PostToolUseFailure" => Ending::Failed,
                "PermissionDenied" => Ending::Denied,
                _ => Ending::Finished,
            };
            let mut tool = tool_fields(payload, ending);
            if let Some(use_id) = tool.get("use_id").and_then(Value::as_str)
                && let Some(started) = context.state.tool_finished(use_id)?
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
        "turn_end" => {
            let requests = match transcript("transcript_path") {
                Some(path) => usage::read_new(context.state, path, transcript_line, context.now_ms)?,
                None => Vec::new(),
            };
            return Ok(usage_events(&event, requests));
        }
        "subagent_end" => {
            if let Some(agent) = payload.get("agent_type").and_then(Value::as_str) {
                event["metadata"]["subagent_type"] = json!(agent);
            }
            // Older versions write subagent lines into the main transcript; the next
            // Stop counts those.
            let requests = match transcript("agent_transcript_path") {
                Some(path) => usage::read_new(context.state, path, transcript_line, context.now_ms)?,
                None => Vec::new(),
            };
            return Ok(usage_events(&event, requests));
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
            if let Some(path) = transcript("transcript_path") {
                let left = usage::read_new(context.state, path, transcript_line, context.now_ms)?;
                if !left.is_empty() {
                    let mut turn = event.clone();
                    turn["type"] = json!("turn_end");
                    turn["event_id"] = json!(uuid::Uuid::now_v7().to_string());
                    turn["metadata"] = json!({"hook_event": hook_event, "usage_left_at": "session_end"});
                    events.extend(usage_events(&turn, left));
                }
            }
        }
        _ => {}
    }
    events.push(event);
    Ok(events)
}

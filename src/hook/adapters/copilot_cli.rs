//! GitHub Copilot CLI: hook payloads as documented in "GitHub Copilot hooks reference"
//! (docs.github.com/en/copilot/reference/hooks-reference), camelCase format: every
//! payload carries `sessionId` (CLI 1.0.11 and later), `timestamp` (Unix ms) and `cwd`,
//! but no event name (it comes from the command line); tool events add `toolName` and
//! `toolArgs` (an object in newer versions, a JSON-encoded string in older ones, raw
//! text for `apply_patch`), `toolResult` `{resultType, textResultForLlm}` on
//! postToolUse and `error` on postToolUseFailure; `notification` adds
//! `notification_type`; `agentStop`/`subagentStop`/`preCompact` add `transcriptPath`.
//!
//! Mapping: sessionStart → session_start, userPromptSubmitted → prompt_submit,
//! preToolUse → tool_start, postToolUse → tool_end (`resultType` `failure`/`denied` of
//! older versions honoured), postToolUseFailure → tool_end `error` (`denied` when the
//! error says the person rejected the call), notification → notification (by
//! `notification_type`), agentStop → turn_end, subagentStop → subagent_end, preCompact →
//! compact, sessionEnd → session_end; permissionRequest (fires before the permission
//! rules, not only when the person is asked), subagentStart, errorOccurred (the wire
//! contract has no error event) and unknown events are ignored.
//!
//! Tokens: Copilot writes per-request usage nowhere on disk; `session.shutdown` lines of
//! `~/.copilot/session-state/<sessionId>/events.jsonl` carry `modelMetrics`, per model,
//! for one process lifetime (a resumed session writes another), so each (shutdown line,
//! model) is one usage group. `inputTokens` includes cache reads and writes and
//! `outputTokens` is taken to include `reasoningTokens` (the OpenAI convention; not
//! documented), so both are subtracted. The usage arrives at sessionEnd (or the next
//! hook that reads the file); a session closed with `/new` or a crash has none.

use serde_json::{Value, json};

use super::build::{Builder, ToolCall};
use super::common::classify_notification;
use super::{AdapterError, Context};
use crate::agents::copilot_cli::tool_action;
use crate::agents::text;
use crate::agents::usage::Line;
use crate::model::wire::Draft;
use crate::model::{AgentType, EventType, NotificationKind, ToolStatus, Usage};

/// `toolArgs` as a JSON value whichever way this version sends it.
fn tool_args(payload: &Value) -> Option<Value> {
    match payload.get("toolArgs")? {
        Value::String(text) => Some(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))),
        other => Some(other.clone()),
    }
}

fn tool_call<'p>(payload: &Value, args: Option<&'p Value>) -> ToolCall<'p> {
    let name = text(payload, "toolName").unwrap_or("unknown").to_string();
    ToolCall {
        action: tool_action(&name),
        server: name.contains('-').then(|| name.split('-').next().unwrap_or_default().to_string()),
        use_id: None,
        input: args,
        name,
    }
}

pub fn reads_as_refusal(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    ["rejected", "denied", "declined"].iter().any(|w| error.contains(w))
}

/// One events.jsonl line: `session.shutdown` with per-model usage of that process.
pub fn transcript_line(line: &str) -> Option<Line> {
    if !line.contains("session.shutdown") {
        return None;
    }
    let value: Value = serde_json::from_str(line).ok()?;
    if text(&value, "type") != Some("session.shutdown") {
        return None;
    }
    let id = text(&value, "id").unwrap_or(line);
    let metrics = value.get("data")?.get("modelMetrics")?.as_object()?;
    let lines = metrics
        .iter()
        .map(|(model, metric)| {
            let usage = metric.get("usage").unwrap_or(&Value::Null);
            let count = |key: &str| usage.get(key).and_then(Value::as_i64).unwrap_or(0).max(0);
            let (read, write, reasoning) =
                (count("cacheReadTokens"), count("cacheWriteTokens"), count("reasoningTokens"));
            Line::Counts {
                group: format!("{id}\u{1f}{model}"),
                model: Some(model.clone()),
                usage: Usage {
                    input_tokens: (count("inputTokens") - read - write).max(0),
                    output_tokens: (count("outputTokens") - reasoning).max(0),
                    cache_read_tokens: read,
                    cache_write_5m_tokens: write,
                    cache_write_1h_tokens: 0,
                    reasoning_tokens: reasoning,
                },
            }
        })
        .collect();
    Some(Line::Many(lines))
}

/// Where Copilot keeps a session's events (`$COPILOT_HOME` or `~/.copilot`).
fn events_path(session: &str) -> Option<String> {
    if session.contains(['/', '\\']) || session.starts_with('.') {
        return None;
    }
    let home = crate::hook::local::dir_from_env(crate::config::machine::MachineVariable::CopilotHome, ".copilot");
    Some(home.join("session-state").join(session).join("events.jsonl").to_string_lossy().into_owned())
}

pub fn map(hook_event: &str, payload: &Value, context: &mut Context<'_>) -> Result<Vec<Draft>, AdapterError> {
    let session = text(payload, "sessionId").ok_or(AdapterError::Missing("sessionId"))?;
    let build = Builder {
        context,
        agent: AgentType::CopilotCli,
        session: session.to_string(),
        hook_event: hook_event.to_string(),
        cwd: text(payload, "cwd").map(str::to_string),
    };
    let args = tool_args(payload);
    let events_file = text(payload, "transcriptPath").map(str::to_string).or_else(|| events_path(session));
    Ok(match hook_event {
        "sessionStart" => vec![build.session_start(text(payload, "source"), None)],
        "userPromptSubmitted" => vec![build.event(EventType::PromptSubmit)],
        "preToolUse" => vec![build.tool_start(&tool_call(payload, args.as_ref()))?],
        "postToolUse" => {
            let result = payload.get("toolResult");
            let status = match result.and_then(|r| text(r, "resultType")) {
                Some("failure") => ToolStatus::Error,
                Some("denied") => ToolStatus::Denied,
                _ => ToolStatus::Success,
            };
            vec![build.tool_end(&tool_call(payload, args.as_ref()), result, status)?]
        }
        "postToolUseFailure" => {
            let error = payload.get("error");
            let refused = error.and_then(Value::as_str).is_some_and(reads_as_refusal);
            let status = if refused { ToolStatus::Denied } else { ToolStatus::Error };
            vec![build.tool_end(&tool_call(payload, args.as_ref()), error, status)?]
        }
        "notification" => {
            let kind = match text(payload, "notification_type") {
                Some("permission_prompt") => NotificationKind::Permission,
                Some("elicitation_dialog") => NotificationKind::Elicitation,
                Some("agent_idle") => NotificationKind::Idle,
                Some(_) => NotificationKind::Other,
                None => classify_notification(None, text(payload, "message").unwrap_or("")),
            };
            let event = build.notification(kind);
            vec![event]
        }
        "agentStop" => build.turn_end(events_file.as_deref(), transcript_line, json!({}))?,
        // Subagents have no transcript of their own here: their usage is in the session's.
        "subagentStop" => build.subagent_end(
            None,
            transcript_line,
            text(payload, "agentType").or_else(|| text(payload, "agentName")),
        )?,
        "preCompact" => vec![build.compact(text(payload, "trigger"))],
        "sessionEnd" => build.session_end(events_path(session).as_deref(), transcript_line, text(payload, "reason"))?,
        _ => Vec::new(),
    })
}

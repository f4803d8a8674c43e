//! Factory Droid: hook payloads as documented at docs.factory.ai ("Hooks reference"),
//! which copies Claude Code's events. Factory's two versions of the page disagree on
//! field casing (`session_id` / `sessionId`, …), so both spellings are read. Payloads
//! carry `session_id`, `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`;
//! tool events add `tool_name`, `tool_input`, `tool_use_id` (sometimes absent) and, on
//! PostToolUse, `tool_response` (`{success, …}`); Notification adds `message` only.
//!
//! Mapping: SessionStart → session_start, UserPromptSubmit → prompt_submit, PreToolUse →
//! tool_start, PostToolUse → tool_end (`error` when the response says `success: false`,
//! `is_error` or a non-zero `exitCode`), Notification → notification (classified by its text), Stop →
//! turn_end, SubagentStop → subagent_end, PreCompact → compact, SessionEnd →
//! session_end. Droid has no failure or denial event: a call without a PostToolUse
//! when the turn ends is `denied`. Autonomy levels map onto the wire's modes: off/normal
//! → normal, spec → plan, auto-low → accept_edits, auto-medium → auto, auto-high →
//! dont_ask, skip-permissions-unsafe → bypass (and the Claude names when Droid sends them).
//!
//! Tokens: Droid's transcript has none; the sidecar `<session>.settings.json` beside it
//! holds `tokenUsage` `{inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens,
//! thinkingTokens}`, a running total for the session (not its subagents, which have their
//! own sidecars) rewritten in place, and `model`. Its growth since the last report is
//! one usage event at Stop and SessionEnd. `inputTokens` excludes the cache;
//! `thinkingTokens` are taken as separate from `outputTokens`.

use serde_json::{Value, json};

use super::build::{Builder, ToolCall, with_permission_mode};
use super::common::classify_notification;
use super::{AdapterError, Context};
use crate::agents::claude_code::canonical_permission_mode;
use crate::agents::usage::Request;
use crate::hook::usage;
use crate::model::wire::Draft;
use crate::model::{AgentType, EventType, ToolStatus, Usage};

/// A field in either of the casings Factory documents.
fn field<'p>(payload: &'p Value, snake: &str, camel: &str) -> Option<&'p Value> {
    payload.get(snake).or_else(|| payload.get(camel))
}

fn text_field<'p>(payload: &'p Value, snake: &str, camel: &str) -> Option<&'p str> {
    field(payload, snake, camel).and_then(Value::as_str)
}

fn permission_mode(mode: &str) -> Option<&'static str> {
    Some(match mode {
        "off" | "normal" => "normal",
        "spec" => "plan",
        "auto-low" => "accept_edits",
        "auto-medium" => "auto",
        "auto-high" => "dont_ask",
        "skip-permissions-unsafe" => "bypass",
        other => return canonical_permission_mode(other),
    })
}

pub fn tool_action(tool: &str) -> &'static str {
    match tool {
        "Read" | "LS" => "read",
        "Create" => "write",
        "Edit" | "MultiEdit" | "ApplyPatch" => "edit",
        "Execute" => "exec",
        "Grep" | "Glob" => "search",
        "FetchUrl" | "WebSearch" => "fetch",
        "Task" => "delegate",
        "TodoWrite" | "ExitSpecMode" => "plan",
        _ if tool.starts_with("mcp__") => "mcp",
        _ => "other",
    }
}

fn tool_call(payload: &Value) -> ToolCall<'_> {
    ToolCall::claude_style(
        text_field(payload, "tool_name", "toolName"),
        text_field(payload, "tool_use_id", "toolUseId"),
        field(payload, "tool_input", "toolInput"),
        tool_action,
    )
}

/// The sidecar beside a transcript: `<session>.settings.json`.
pub fn sidecar_of(transcript: &str) -> Option<String> {
    transcript.strip_suffix(".jsonl").map(|stem| format!("{stem}.settings.json"))
}

/// The session's running total and model from its sidecar, if it has one.
pub fn sidecar_total(sidecar: &str) -> Option<(Option<String>, Usage)> {
    let settings = serde_json::from_str::<Value>(&std::fs::read_to_string(sidecar).ok()?).ok()?;
    let tokens = settings.get("tokenUsage").filter(|t| t.is_object())?;
    let count = |key: &str| tokens.get(key).and_then(Value::as_i64).unwrap_or(0).max(0);
    let total = Usage {
        input_tokens: count("inputTokens"),
        output_tokens: count("outputTokens"),
        cache_read_tokens: count("cacheReadTokens"),
        cache_write_5m_tokens: count("cacheCreationTokens"),
        cache_write_1h_tokens: 0,
        reasoning_tokens: count("thinkingTokens"),
    };
    let model = settings.get("model").and_then(Value::as_str).map(|m| m.trim_start_matches("custom:").to_string());
    Some((model, total))
}

/// The session's usage growth from the sidecar beside its transcript.
fn sidecar_usage(build: &Builder<'_, '_>, transcript: Option<&str>) -> Result<Vec<Request>, AdapterError> {
    let Some(sidecar) = transcript.and_then(sidecar_of) else { return Ok(Vec::new()) };
    let Some((model, total)) = sidecar_total(&sidecar) else { return Ok(Vec::new()) };
    let context = build.context;
    Ok(usage::grown_total(context.state, &sidecar, model, total, context.now_ms)?.into_iter().collect())
}

pub fn map(hook_event: &str, payload: &Value, context: &mut Context<'_>) -> Result<Vec<Draft>, AdapterError> {
    let session = text_field(payload, "session_id", "sessionId").ok_or(AdapterError::Missing("session_id"))?;
    let build = Builder {
        context,
        agent: AgentType::Droid,
        session: session.to_string(),
        hook_event: hook_event.to_string(),
        cwd: text_field(payload, "cwd", "cwd").map(str::to_string),
    };
    let transcript = text_field(payload, "transcript_path", "transcriptPath");
    if matches!(hook_event, "SessionStart" | "Stop" | "SessionEnd") {
        build.mark_seen()?;
    }
    let events = match hook_event {
        "SessionStart" => {
            vec![build.session_start(text_field(payload, "source", "source"), None)]
        }
        "UserPromptSubmit" => vec![build.event(EventType::PromptSubmit)],
        "PreToolUse" => vec![build.tool_start(&tool_call(payload))?],
        "PostToolUse" => {
            let response = field(payload, "tool_response", "toolResponse");
            // A command that exits non-zero failed, as for every other agent.
            let failed = response.is_some_and(|r| {
                r.get("success").and_then(Value::as_bool) == Some(false)
                    || r.get("is_error").and_then(Value::as_bool) == Some(true)
                    || r.get("exitCode").and_then(Value::as_i64).is_some_and(|code| code != 0)
            });
            let status = if failed { ToolStatus::Error } else { ToolStatus::Success };
            vec![build.tool_end(&tool_call(payload), response, status)?]
        }
        "Notification" => {
            let kind = classify_notification(None, text_field(payload, "message", "message").unwrap_or(""));
            let event = build.notification(kind);
            vec![event]
        }
        "Stop" => build.turn_end_with(transcript, sidecar_usage(&build, transcript)?, json!({}))?,
        "SubagentStop" => vec![build.event(EventType::SubagentEnd)],
        "PreCompact" => vec![build.compact(text_field(payload, "trigger", "trigger"))],
        "SessionEnd" => build.session_end_with(
            transcript,
            sidecar_usage(&build, transcript)?,
            text_field(payload, "reason", "reason"),
        )?,
        _ => Vec::new(),
    };
    let mode = text_field(payload, "permission_mode", "permissionMode").and_then(permission_mode);
    Ok(with_permission_mode(events, mode))
}

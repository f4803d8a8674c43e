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
//! whatever is left (a turn cut short has no Stop). A tool call still open when its turn
//! ends never ran (refused in the permission dialog) and ends as `denied`. Claude Code counts thinking inside
//! `output_tokens` and does not report it apart, so `reasoning_tokens` stays 0.

use serde_json::{Value, json};

use super::build::{Builder, ToolCall, with_permission_mode};
use super::common::classify_notification;
use super::{AdapterError, Context};
use crate::agents::claude_code::{canonical_permission_mode, tool_action, transcript_line};
use crate::agents::text;
use crate::model::wire::Draft;
use crate::model::{AgentType, EventType, ToolStatus};

/// Words Claude Code uses when the person refused a tool call.
fn reads_as_refusal(error: &str) -> bool {
    let error = error.to_ascii_lowercase();
    ["doesn't want to proceed", "rejected", "denied", "permission to use"].iter().any(|w| error.contains(w))
}

fn tool_call(payload: &Value) -> ToolCall<'_> {
    ToolCall::claude_style(
        text(payload, "tool_name"),
        text(payload, "tool_use_id"),
        payload.get("tool_input"),
        tool_action,
    )
}

/// Status of a PostToolUse from its response: Claude Code reports failures in-band for
/// some tools (`is_error`, `error`, `success: false`).
fn response_status(response: Option<&Value>) -> ToolStatus {
    let Some(response) = response else { return ToolStatus::Success };
    let failed = response.get("is_error").and_then(Value::as_bool).unwrap_or(false)
        || response.get("error").is_some_and(|e| !e.is_null())
        || response.get("success").and_then(Value::as_bool) == Some(false);
    if failed { ToolStatus::Error } else { ToolStatus::Success }
}

pub fn map(hook_event: &str, payload: &Value, context: &mut Context<'_>) -> Result<Vec<Draft>, AdapterError> {
    let session = text(payload, "session_id").ok_or(AdapterError::Missing("session_id"))?;
    let build = Builder {
        context,
        agent: AgentType::ClaudeCode,
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
            vec![build.tool_end(&tool_call(payload), response, response_status(response))?]
        }
        "PostToolUseFailure" => {
            let error = payload.get("error");
            let refused = error.and_then(Value::as_str).is_some_and(reads_as_refusal);
            let status = if refused { ToolStatus::Denied } else { ToolStatus::Error };
            vec![build.tool_end(&tool_call(payload), error, status)?]
        }
        "PermissionDenied" => vec![build.tool_end(&tool_call(payload), None, ToolStatus::Denied)?],
        "Notification" => {
            let kind =
                classify_notification(text(payload, "notification_type"), text(payload, "message").unwrap_or(""));
            let event = build.notification(kind);
            vec![event]
        }
        "Stop" => build.turn_end(transcript, transcript_line, json!({}))?,
        // Older versions write subagent lines into the main transcript; the next Stop
        // counts those.
        // A compaction runs as a fork that stops like a subagent with an empty
        // `agent_type` (2.1.332, twice per `/compact`): no subagent the model asked
        // for. Its requests count as the conversation's, if its transcript holds any
        // (2.1.332 writes none; its export alone reports them).
        "SubagentStop" if text(payload, "agent_type") == Some("") => {
            let requests = build.usage_since_last_read(text(payload, "agent_transcript_path"), transcript_line)?;
            if requests.is_empty() { Vec::new() } else { build.requests(requests, json!({"compaction": true})) }
        }
        "SubagentStop" => {
            build.subagent_end(text(payload, "agent_transcript_path"), transcript_line, text(payload, "agent_type"))?
        }
        "PreCompact" => vec![build.compact(text(payload, "trigger"))],
        "SessionEnd" => build.session_end(transcript, transcript_line, text(payload, "reason"))?,
        _ => Vec::new(),
    };
    let mut events = with_permission_mode(events, text(payload, "permission_mode").and_then(canonical_permission_mode));
    // No payload says whether a person sits at the session; `claude -p` is a run nobody
    // does, as its export's terminal.type = non-interactive says.
    if !events.is_empty()
        && super::ancestry::started_with(&super::ancestry::ancestors_args(), is_claude, &["-p", "--print"])
    {
        super::ancestry::stamp_ci(&mut events);
    }
    Ok(events)
}

/// Whether a program argument is Claude Code: `claude` (2.1.332's native binary, run
/// as invoked), `bin/claude.exe` (the npm package's own path to it), or an older
/// release's `cli.js`.
fn is_claude(arg: &str) -> bool {
    let name = arg.rsplit('/').next().unwrap_or(arg);
    name == "claude" || name == "claude.exe" || (name == "cli.js" && arg.contains("claude-code"))
}

#[cfg(test)]
mod print_mode_tests {
    use super::*;

    #[test]
    fn claude_started_with_print_is_told_apart_from_a_persons_session() {
        let args = |line: &str| line.split(' ').map(str::to_string).collect::<Vec<_>>();
        let shell = args("/bin/sh -c sightline hook Stop --agent claude-code");
        let started = |line: &str| {
            super::super::ancestry::started_with(&[shell.clone(), args(line)], is_claude, &["-p", "--print"])
        };
        assert!(started("claude -p fix --allowedTools Bash"));
        assert!(started("/opt/agents/node_modules/@anthropic-ai/claude-code/bin/claude.exe --print fix"));
        assert!(started("node /usr/lib/node_modules/@anthropic-ai/claude-code/cli.js -p fix"));
        assert!(!started("claude"), "a person's session");
        assert!(!started("node /srv/other/cli.js -p x"), "another program's -p");
    }
}

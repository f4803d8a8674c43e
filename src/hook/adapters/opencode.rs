//! OpenCode: OpenCode has no command hooks; `install` puts a plugin
//! (`~/.config/opencode/plugins/sightline.js`, the plugin API of opencode.ai/docs/plugins)
//! that runs `sightline hook <event> --agent opencode` for the events below, with one
//! JSON envelope on stdin: `{schema: 1, event, time, session_id, directory, worktree,
//! project_id, data}`, where `data` is the bus event (`{type, properties}`) or the
//! hook's `{input, output}`. The plugin forwards finished assistant messages once
//! (`message.updated` with `time.completed`) and synthesises `tool.execute.error` from
//! tool parts that end in error (OpenCode's `tool.execute.after` fires on success only).
//!
//! Mapping: session.created → session_start (a session with `parentID` is a subagent:
//! remembered, and its events count for the parent), chat.message → prompt_submit,
//! tool.execute.before → tool_start, tool.execute.after → tool_end (`error` when bash's
//! `metadata.exit` is not 0), tool.execute.error → tool_end `error`, or `denied` when the
//! error is OpenCode's permission rejection, permission.asked/permission.updated →
//! notification `permission`, question.asked → notification `elicitation`, session.idle
//! and session.status idle (deduplicated) → turn_end (subagent_end for a subagent),
//! experimental.session.compacting → compact, session.deleted → session_end; other
//! events are ignored.
//!
//! Tokens: each finished assistant message is one model request, carrying `modelID` and
//! `tokens {input, output, reasoning, cache {read, write}}` (the same objects OpenCode
//! stores in `opencode.db`). Current versions report disjoint counts (`input` without
//! cache, `output` without reasoning, `total` = the five summed); when `total` says
//! otherwise, reasoning is taken out of `output`. A message is reported once per id, as a
//! turn_end with its usage.

use serde_json::{Value, json};

use super::build::{Builder, ToolCall};
use super::{AdapterError, Context};
use crate::agents::opencode::{message_usage, tool_action};
use crate::agents::text;
use crate::hook::usage;
use crate::model::wire::Draft;
use crate::model::{AgentType, EventType, NotificationKind, ToolStatus};

/// Two idle signals of one session this close together are one turn end.
const IDLE_DEDUPE_MS: i64 = 5_000;

fn tool_call<'p>(input: &Value, args: Option<&'p Value>) -> ToolCall<'p> {
    let name = text(input, "tool").unwrap_or("unknown").to_string();
    ToolCall {
        action: tool_action(&name),
        server: None,
        use_id: text(input, "callID").map(str::to_string),
        input: args,
        name,
    }
}

/// OpenCode's own words when a person or a rule refused a tool call.
pub fn reads_as_refusal(error: &str) -> bool {
    error.contains("rejected permission")
        || error.contains("prevents you from using")
        || error.contains("user rejected")
}

pub fn map(hook_event: &str, payload: &Value, context: &mut Context<'_>) -> Result<Vec<Draft>, AdapterError> {
    let own_session = text(payload, "session_id").ok_or(AdapterError::Missing("session_id"))?;
    let state = context.state;
    let parent = state.mark(&format!("opencode-parent:{own_session}"))?.map(|(parent, _)| parent);
    let session = parent.clone().unwrap_or_else(|| own_session.to_string());
    let build = Builder {
        context,
        agent: AgentType::Opencode,
        session,
        hook_event: hook_event.to_string(),
        cwd: text(payload, "directory").map(str::to_string),
    };
    let data = payload.get("data").unwrap_or(&Value::Null);
    let properties = data.get("properties").unwrap_or(&Value::Null);
    let input = data.get("input").unwrap_or(&Value::Null);
    let output = data.get("output").unwrap_or(&Value::Null);
    Ok(match hook_event {
        "session.created" => match properties.get("info").and_then(|i| text(i, "parentID")) {
            Some(parent) => {
                state.set_mark(&format!("opencode-parent:{own_session}"), parent, context.now_ms)?;
                Vec::new()
            }
            None => {
                build.mark_seen()?;
                vec![build.session_start(None, None)]
            }
        },
        "chat.message" if parent.is_none() => vec![build.event(EventType::PromptSubmit)],
        "tool.execute.before" => vec![build.tool_start(&tool_call(input, output.get("args")))?],
        "tool.execute.after" => {
            let exit = output.get("metadata").and_then(|m| m.get("exit")).and_then(Value::as_i64);
            let status = if exit.is_some_and(|code| code != 0) { ToolStatus::Error } else { ToolStatus::Success };
            vec![build.tool_end(&tool_call(input, input.get("args")), output.get("output"), status)?]
        }
        "tool.execute.error" => {
            let error = output.get("error");
            let refused = error.and_then(Value::as_str).is_some_and(reads_as_refusal);
            let status = if refused { ToolStatus::Denied } else { ToolStatus::Error };
            vec![build.tool_end(&tool_call(input, input.get("args")), error, status)?]
        }
        "permission.asked" | "permission.updated" => vec![build.notification(NotificationKind::Permission)],
        "question.asked" => vec![build.notification(NotificationKind::Elicitation)],
        "message.updated" => {
            let Some(group) = properties.get("info").and_then(message_usage) else { return Ok(Vec::new()) };
            build.mark_seen()?;
            let key = format!("opencode:{own_session}");
            let requests = usage::report_groups(state, &key, vec![group], context.now_ms)?;
            if requests.is_empty() {
                return Ok(Vec::new());
            }
            let mut event = build.event(EventType::TurnEnd);
            event.note("request_completed", true);
            super::common::usage_events(&event, requests)
        }
        "session.idle" | "session.status" => {
            let key = format!("opencode-idle:{own_session}");
            let recent = state.mark(&key)?.is_some_and(|(_, at)| context.now_ms - at < IDLE_DEDUPE_MS);
            state.set_mark(&key, hook_event, context.now_ms)?;
            match (recent, &parent) {
                (true, _) => Vec::new(),
                (false, Some(_)) => build.subagent_end(None, |_| None, None)?,
                (false, None) => build.turn_end_with(None, Vec::new(), json!({}))?,
            }
        }
        "experimental.session.compacting" => vec![build.compact(None)],
        "session.deleted" if parent.is_none() => build.session_end_with(None, Vec::new(), Some("deleted"))?,
        _ => Vec::new(),
    })
}

//! Google Gemini CLI: hook payloads as documented in `google-gemini/gemini-cli`
//! (`docs/hooks/reference.md`, `packages/core/src/hooks/types.ts`): every payload carries
//! `session_id`, `transcript_path` (empty when recording is off), `cwd`,
//! `hook_event_name` and `timestamp`; BeforeTool/AfterTool add `tool_name`, `tool_input`,
//! `mcp_context` (MCP tools) and, after, `tool_response` `{llmContent, returnDisplay,
//! error}`; Notification adds `notification_type` (`ToolPermission`), `message` and
//! `details` (`{type: edit|exec|mcp|info, …}`). No payload carries a tool-call id, a
//! model or a permission mode.
//!
//! Mapping: SessionStart → session_start, BeforeAgent → prompt_submit, BeforeTool →
//! tool_start, AfterTool → tool_end (`error` when `tool_response.error` is set; subagent
//! tools such as `codebase_investigator` also end a subagent), Notification →
//! notification `permission`, AfterAgent → turn_end, PreCompress of trigger `manual`
//! (`/compress`) → compact (an `auto` one fires before every turn, compressed or not),
//! SessionEnd → session_end; BeforeModel, AfterModel, BeforeToolSelection and unknown events are
//! ignored (install does not register the model hooks: they fire per streamed chunk).
//! Tool ends are paired with their starts by tool name and input. Gemini tells no hook
//! when the person refuses a permission dialog: the dialog's Notification is simply not
//! followed by the tool's BeforeTool, so each dialog is remembered and one still
//! unanswered when the turn ends becomes a `denied` tool_end.
//!
//! Tokens come from the chat recording (`~/.gemini/tmp/<project>/chats/session-*.jsonl`):
//! `gemini` messages carry `tokens` `{input, output, cached, thoughts, tool, total}` of one
//! response, and a message is re-appended whenever it changes, so usage is grouped by
//! message `id` (largest counts win). `input` includes `cached`, which is subtracted;
//! `output` (candidates) excludes `thoughts`, reported as reasoning. The older one-object
//! `.json` recordings are not read.

use serde_json::{Value, json};

use super::build::{Builder, ToolCall};
use super::{AdapterError, Context};
use crate::agents::gemini_cli::{SUBAGENT_TOOLS, tool_action, transcript_line};
use crate::agents::text;
use crate::model::wire::{Draft, DraftTool};
use crate::model::{AgentType, EventType, NotificationKind, ToolStatus};

fn tool_call(payload: &Value) -> ToolCall<'_> {
    let name = text(payload, "tool_name").unwrap_or("unknown").to_string();
    let mcp = payload.get("mcp_context").filter(|c| c.is_object());
    ToolCall {
        action: tool_action(&name, mcp.is_some()),
        server: mcp.and_then(|c| text(c, "server_name")).map(str::to_string),
        use_id: None,
        input: payload.get("tool_input"),
        name,
    }
}

/// The tool a permission dialog asks about, from its `details`.
fn asked_tool(details: &Value) -> (String, &'static str, Option<String>) {
    match text(details, "type").unwrap_or("") {
        "exec" => ("run_shell_command".into(), "exec", None),
        "edit" if text(details, "title").is_some_and(|t| t.contains("Write")) => ("write_file".into(), "write", None),
        "edit" => ("replace".into(), "edit", None),
        "mcp" => {
            let server = text(details, "serverName").unwrap_or("unknown");
            let tool = text(details, "toolName").unwrap_or("unknown");
            (format!("mcp_{server}_{tool}"), "mcp", Some(server.to_string()))
        }
        "info" => ("web_fetch".into(), "fetch", None),
        _ => ("unknown".into(), "other", None),
    }
}

pub fn map(hook_event: &str, payload: &Value, context: &mut Context<'_>) -> Result<Vec<Draft>, AdapterError> {
    let session = text(payload, "session_id").ok_or(AdapterError::Missing("session_id"))?;
    let build = Builder {
        context,
        agent: AgentType::GeminiCli,
        session: session.to_string(),
        hook_event: hook_event.to_string(),
        cwd: text(payload, "cwd").map(str::to_string),
    };
    let transcript = text(payload, "transcript_path");
    let mut events = match hook_event {
        "SessionStart" => vec![build.session_start(text(payload, "source"), None)],
        "BeforeAgent" => vec![build.event(EventType::PromptSubmit)],
        "BeforeTool" => {
            let call = tool_call(payload);
            // The tool starting answers the oldest open permission dialog for its kind
            // (dialogs say edit for both edits and writes, info for web fetches and searches).
            let kinds: &[&str] = match call.action {
                "edit" | "write" => &["edit", "write"],
                _ if call.name == "google_web_search" => &["fetch"],
                other => &[other],
            };
            for kind in kinds {
                if context.state.forget_oldest_tool(session, &format!("~ask:{kind}:"))? {
                    break;
                }
            }
            vec![build.tool_start(&call)?]
        }
        "AfterTool" => {
            let call = tool_call(payload);
            let response = payload.get("tool_response");
            let failed = response.and_then(|r| r.get("error")).is_some_and(|e| !e.is_null());
            let status = if failed { ToolStatus::Error } else { ToolStatus::Success };
            let mut events = vec![build.tool_end(&call, response, status)?];
            if SUBAGENT_TOOLS.contains(&call.name.as_str()) {
                events.extend(build.subagent_end(None, transcript_line, Some(&call.name))?);
            }
            events
        }
        "Notification" => {
            let event = build.notification(NotificationKind::Permission);
            if let Some(details) = payload.get("details").filter(|d| d.is_object()) {
                let (name, action, server) = asked_tool(details);
                let tool = DraftTool {
                    name: Some(format!("gemini_cli:{name}")),
                    action: Some(action.to_string()),
                    server,
                    ..DraftTool::default()
                };
                let key = format!("~ask:{action}:{}", uuid::Uuid::now_v7());
                let text = serde_json::to_string(&tool).unwrap_or_default();
                context.state.tool_started(session, &key, context.now_ms, &text)?;
            }
            vec![event]
        }
        "AfterAgent" => build.turn_end(transcript, transcript_line, json!({}))?,
        // Gemini CLI fires PreCompress with trigger `auto` before every turn, before it
        // checks whether the history needs compressing, and no hook says whether it did:
        // an automatic compaction is counted from the export's `chat_compression` alone.
        // `/compress` (trigger `manual`) forces one.
        "PreCompress" => match text(payload, "trigger") {
            Some("manual") => vec![build.compact(Some("manual"))],
            _ => Vec::new(),
        },
        "SessionEnd" => build.session_end(transcript, transcript_line, text(payload, "reason"))?,
        _ => Vec::new(),
    };
    if !events.is_empty()
        && super::ancestry::started_with(&super::ancestry::ancestors_args(), is_gemini, &["-p", "--prompt"])
    {
        // No payload says whether a person sits at the session; the command line does.
        // `gemini -p` is nobody's interactive session, as its export's `interactive`
        // = false says (a harness's SIGHTLINE_RUN_KIND is stamped after, and wins).
        super::ancestry::stamp_ci(&mut events);
    }
    Ok(events)
}

/// Whether a program argument is Gemini CLI's entry point (`bin/gemini`, `bundle/gemini.js`).
fn is_gemini(arg: &str) -> bool {
    let name = arg.rsplit('/').next().unwrap_or(arg);
    name == "gemini" || name == "gemini.js"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    fn started_with_a_prompt(ancestors: &[Vec<String>]) -> bool {
        super::super::ancestry::started_with(ancestors, is_gemini, &["-p", "--prompt"])
    }

    #[test]
    fn a_prompt_on_geminis_command_line_is_a_run_nobody_sits_at() {
        let relaunched = args(
            "/usr/bin/node --max-old-space-size=12288 /opt/agents/node_modules/@google/gemini-cli/bundle/gemini.js -p fix --yolo",
        );
        let shell = args("/bin/sh -c /usr/bin/sightline hook AfterTool --agent gemini-cli");
        assert!(started_with_a_prompt(&[shell.clone(), args("node /home/ada/.npm/bin/gemini --prompt=fix")]));
        assert!(started_with_a_prompt(&[shell.clone(), relaunched]));
        assert!(!started_with_a_prompt(&[shell.clone(), args("node /home/ada/.npm/bin/gemini")]), "a person's session");
        assert!(!started_with_a_prompt(&[shell.clone(), args("node /usr/bin/gemini --prompt-interactive fix")]));
        assert!(!started_with_a_prompt(&[args("python3 tool.py -p x")]), "another program's -p");
        assert!(!started_with_a_prompt(&[]));
    }
}

//! Cline: hook executables as documented at docs.cline.bot (Hooks reference) and in
//! `cline/cline` (`src/core/hooks/hook-factory.ts`): each receives one JSON object with
//! `clineVersion`, `hookName`, `timestamp` (ms, as a string), `taskId`, `workspaceRoots`,
//! `userId`, newer builds `model {provider, slug}`, and one object named after the hook:
//! `preToolUse {toolName, parameters}` (string values), `postToolUse {toolName,
//! parameters, result, success, executionTimeMs}`, `userPromptSubmit {prompt}`,
//! `notification {event, source, message, waitingForUserInput}`, `preCompact {…}`,
//! `taskStart`/`taskResume`/`taskComplete`/`taskCancel {taskMetadata}`. The task is the
//! session.
//!
//! Mapping: TaskStart and TaskResume → session_start (git context of the first workspace
//! root), UserPromptSubmit → prompt_submit, PreToolUse → tool_start, PostToolUse →
//! tool_end (`error` when `success` is false or the result starts with Cline's "The tool
//! execution failed"; `denied` when it says "The user denied this operation"; newer builds
//! run PreToolUse only after approval, so a denied call has an end and no start),
//! Notification → notification (a follow-up question is `elicitation`), PreCompact →
//! compact, TaskComplete and TaskCancel → turn_end then session_end (a task can be
//! resumed, which starts it again); unknown hooks are ignored. Cline has no subagent hook.
//!
//! Tokens: Cline keeps each API request in the task's `ui_messages.json` (VS Code global
//! storage, `saoudrizwan.claude-dev/tasks/<taskId>/`) as a `say: "api_req_started"` message
//! whose `text` is JSON `{tokensIn, tokensOut, cacheWrites, cacheReads, cost}`; one usage
//! group per message `ts`. The file is a JSON array rewritten in place, so it is read
//! whole when a task completes or is cancelled. Cline's counts are disjoint (`tokensIn`
//! without the cache, Anthropic style); `tokensOut` includes reasoning, which Cline does
//! not report apart. The model is the message's `modelInfo.modelId`, else the hook's.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::build::{Builder, ToolCall};
use super::common::classify_notification;
use super::{AdapterError, Context};
use crate::agents::cline::{api_requests, tool_action};
use crate::agents::text;
use crate::agents::usage::Request;
use crate::hook::usage;
use crate::model::wire::Draft;
use crate::model::{AgentType, EventType, NotificationKind, ToolStatus};

fn tool_call(section: &Value) -> ToolCall<'_> {
    let name = text(section, "toolName").unwrap_or("unknown").to_string();
    let parameters = section.get("parameters");
    ToolCall {
        action: tool_action(&name),
        server: parameters.and_then(|p| text(p, "server_name")).map(str::to_string),
        use_id: None,
        input: parameters,
        name,
    }
}

/// Where VS Code-family editors keep Cline's tasks (`…/saoudrizwan.claude-dev/tasks`),
/// newest conventions first.
pub fn task_roots() -> Vec<PathBuf> {
    let home = crate::hook::local::home();
    let config = crate::hook::local::xdg_config_home();
    let mut roots = Vec::new();
    for editor in ["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"] {
        roots.push(config.join(editor).join("User/globalStorage"));
        roots.push(home.join("Library/Application Support").join(editor).join("User/globalStorage"));
    }
    roots.push(home.join(".vscode-server/data/User/globalStorage"));
    roots.into_iter().map(|root| root.join("saoudrizwan.claude-dev/tasks")).collect()
}

fn task_file(task: &str) -> Option<PathBuf> {
    if task.is_empty() || task.contains(['/', '\\']) || task.starts_with('.') {
        return None;
    }
    task_roots().into_iter().map(|root| root.join(task).join("ui_messages.json")).find(|path| path.is_file())
}

/// The growth of every API request's usage in the task's `ui_messages.json`.
fn task_usage(build: &Builder<'_, '_>, task: &str, hook_model: Option<&str>) -> Result<Vec<Request>, AdapterError> {
    let Some(path) = task_file(task) else { return Ok(Vec::new()) };
    let Ok(text_bytes) = std::fs::read(&path) else { return Ok(Vec::new()) };
    let Ok(Value::Array(messages)) = serde_json::from_slice::<Value>(&text_bytes) else { return Ok(Vec::new()) };
    let groups = api_requests(&messages, hook_model);
    let context = build.context;
    Ok(usage::report_groups(context.state, &path.to_string_lossy(), groups, context.now_ms)?)
}

pub fn map(hook_event: &str, payload: &Value, context: &mut Context<'_>) -> Result<Vec<Draft>, AdapterError> {
    let task = text(payload, "taskId").ok_or(AdapterError::Missing("taskId"))?;
    let build = Builder {
        context,
        agent: AgentType::Cline,
        session: task.to_string(),
        hook_event: hook_event.to_string(),
        cwd: payload.get("workspaceRoots").and_then(|r| r.get(0)).and_then(Value::as_str).map(str::to_string),
    };
    let model = payload.get("model").and_then(|m| text(m, "slug")).filter(|m| *m != "unknown");
    let section = |key: &str| payload.get(key).unwrap_or(&Value::Null);
    if matches!(hook_event, "TaskStart" | "TaskResume" | "TaskComplete" | "TaskCancel") {
        build.mark_seen()?;
    }
    Ok(match hook_event {
        "TaskStart" => vec![build.session_start(Some("startup"), model)],
        "TaskResume" => vec![build.session_start(Some("resume"), model)],
        "UserPromptSubmit" => vec![build.event(EventType::PromptSubmit)],
        "PreToolUse" => vec![build.tool_start(&tool_call(section("preToolUse")))?],
        "PostToolUse" => {
            let post = section("postToolUse");
            let result = post.get("result");
            let said = result.and_then(Value::as_str).unwrap_or("");
            let status = if said.starts_with("The user denied this operation") {
                ToolStatus::Denied
            } else if post.get("success") == Some(&json!(false)) || said.starts_with("The tool execution failed") {
                ToolStatus::Error
            } else {
                ToolStatus::Success
            };
            vec![build.tool_end(&tool_call(post), result, status)?]
        }
        "Notification" => {
            let note = section("notification");
            let source = text(note, "source").unwrap_or("");
            let kind = if source.contains("followup") || source.contains("question") {
                NotificationKind::Elicitation
            } else if text(note, "event") == Some("task_complete") {
                NotificationKind::Other
            } else {
                classify_notification(Some(source), text(note, "message").unwrap_or(""))
            };
            let event = build.notification(kind);
            vec![event]
        }
        "PreCompact" => vec![build.compact(text(section("preCompact"), "compactionStrategy"))],
        "TaskComplete" | "TaskCancel" => {
            let cancelled = hook_event == "TaskCancel";
            let mut events =
                build.turn_end_with(None, task_usage(&build, task, model)?, json!({"cancelled": cancelled}))?;
            events.extend(build.session_end_with(
                None,
                Vec::new(),
                Some(if cancelled { "cancelled" } else { "completed" }),
            )?);
            events
        }
        _ => Vec::new(),
    })
}

//! Cline's task store: `<editor globalStorage>/saoudrizwan.claude-dev/tasks/<taskId>/
//! ui_messages.json` (the first of VS Code, Insiders, VSCodium, Cursor, Windsurf or a
//! VS Code server that has one), the message list Cline's panel shows. A task becomes
//! session_start (first message), prompt_submit (`say: "task"` and each
//! `user_feedback`), tool_start/tool_end (each finished `tool`, `command` or
//! `use_mcp_server` message, ended by the next `api_req_started`, whose request text
//! starts with the tool's result as Cline sends it to the model — `[read_file for
//! '…'] Result:` — which gives the tool's own name and its outcome: "The user denied
//! this operation" is denied, "The tool execution failed" or an `[ERROR]` is error; a
//! call with no later request is denied), one turn_end per API request with the usage
//! the hooks read from the same messages, and session_end (last message).

use std::path::Path;

use serde_json::{Value, json};

use super::tools::{Call, Tools};
use super::{ImportedSession, Importer, Source, Store, event, transcripts, usage_event};
use crate::agents::cline::{api_requests, tool_action};
use crate::agents::cline::{shown_tool, tool_result};
use crate::agents::text;
use crate::hook::adapters::cline::task_roots;
use crate::hook::usage::session_key;
use crate::model::{AgentType, EventType};

pub const IMPORTER: Importer = Importer {
    default_root: || {
        let roots = task_roots();
        roots.iter().find(|root| root.is_dir()).cloned().unwrap_or_else(|| roots.into_iter().next().unwrap_or_default())
    },
    store: Store::Listed(tasks),
    parse,
    usage_line: None,
};

const AGENT: AgentType = AgentType::Cline;

/// Every task under `root`, keyed as hooks record the tasks they saw.
fn tasks(root: &Path) -> anyhow::Result<Vec<Source>> {
    let mut files = Vec::new();
    transcripts(root, |path| path.file_name().is_some_and(|n| n == "ui_messages.json"), &mut files);
    for source in &mut files {
        let task = source.path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
        source.key = session_key(AGENT, task.as_deref().unwrap_or_default());
        source.id = task;
    }
    Ok(files)
}

fn parse(source: &Source) -> anyhow::Result<Option<ImportedSession>> {
    let Some(task) = source.id.as_deref() else { return Ok(None) };
    let messages: Vec<Value> = match serde_json::from_slice(&std::fs::read(&source.path)?)? {
        Value::Array(messages) => messages,
        _ => anyhow::bail!("{} is not a list of messages", source.path.display()),
    };
    let finished: Vec<&Value> = messages.iter().filter(|m| m.get("partial") != Some(&json!(true))).collect();
    let ts = |m: &Value| m.get("ts").and_then(Value::as_i64);
    let Some(first_ms) = finished.iter().find_map(|m| ts(m)) else { return Ok(None) };
    let last_ms = finished.iter().filter_map(|m| ts(m)).max().unwrap_or(first_ms);
    let mut events = vec![event(AGENT, task, EventType::SessionStart, first_ms, "start")];
    let mut calls = Tools::new(AGENT, task);
    // Tools shown since the last request: (use id, name shown, input, ts).
    let mut pending: Vec<(String, String, Value, i64)> = Vec::new();
    for message in &finished {
        let Some(at) = ts(message) else { continue };
        let key = at.to_string();
        match text(message, "say") {
            Some("task" | "user_feedback") => events.push(event(AGENT, task, EventType::PromptSubmit, at, &key)),
            Some("api_req_started") => {
                let info = text(message, "text").and_then(|t| serde_json::from_str::<Value>(t).ok());
                let request = info.as_ref().and_then(|i| text(i, "request")).unwrap_or("");
                let (named, status) = tool_result(request);
                for (use_id, shown, input, started) in pending.drain(..) {
                    let name = named.unwrap_or(&shown);
                    let call = Call { use_id: &use_id, name, action: tool_action(name), server: None, input: &input };
                    calls.start(started, &call);
                    calls.end(at, &use_id, &json!(request), status);
                }
            }
            _ => {
                if let Some((name, input)) = shown_tool(message) {
                    pending.push((format!("ui-{at}"), name, input, at));
                }
            }
        }
    }
    for (use_id, name, input, started) in pending {
        calls.start(
            started,
            &Call { use_id: &use_id, name: &name, action: tool_action(&name), server: None, input: &input },
        );
    }
    calls.end_open(last_ms, "denied");
    events.extend(calls.events);
    let groups = api_requests(&messages, None);
    for (group, model, usage) in groups.iter().filter(|g| !g.2.is_zero()) {
        let at = group.parse::<i64>().unwrap_or(last_ms);
        events.push(usage_event(AGENT, task, EventType::TurnEnd, at, group, model.as_deref(), usage)?);
    }
    events.push(event(AGENT, task, EventType::SessionEnd, last_ms, "end"));
    // Hooks key the task's usage ledger by the file's path.
    let ledger = vec![(source.path.to_string_lossy().into_owned(), groups)];
    Ok(Some(ImportedSession { events, last_ms, ledger }))
}

#[cfg(test)]
mod tests {
    use super::tool_result;

    #[test]
    fn a_request_names_the_tool_and_its_outcome() {
        assert_eq!(tool_result("[read_file for 'src/a.ts'] Result:\nfn a()"), (Some("read_file"), "success"));
        assert_eq!(
            tool_result("[write_to_file for 'x'] Result:\nThe user denied this operation."),
            (Some("write_to_file"), "denied")
        );
        assert_eq!(
            tool_result("[execute_command] Result:\nThe tool execution failed with: x"),
            (Some("execute_command"), "error")
        );
        assert_eq!(tool_result("<task>\nFix it\n</task>"), (None, "success"));
    }
}

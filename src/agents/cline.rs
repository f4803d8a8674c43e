//! Cline's records: its tools as actions, the usage of its finished API requests, the
//! tool a UI message shows and the outcome the next request reports of it.

use serde_json::{Value, json};

use super::text;
use crate::model::Usage;

pub fn tool_action(tool: &str) -> &'static str {
    match tool {
        "read_file" | "list_files" | "list_code_definition_names" => "read",
        "search_files" | "search_subagent" => "search",
        "write_to_file" | "new_rule" => "write",
        "replace_in_file" | "apply_patch" => "edit",
        "execute_command" => "exec",
        "web_fetch" | "web_search" | "browser_action" => "fetch",
        "use_mcp_tool" | "access_mcp_resource" | "load_mcp_documentation" => "mcp",
        "new_task" | "use_subagents" => "delegate",
        "plan_mode_respond" | "focus_chain" => "plan",
        _ => "other",
    }
}

/// Every finished API request in a task's messages as a usage group keyed by its `ts`.
pub fn api_requests(messages: &[Value], hook_model: Option<&str>) -> Vec<(String, Option<String>, Usage)> {
    let mut groups = Vec::new();
    for message in messages {
        if text(message, "say") != Some("api_req_started") || message.get("partial") == Some(&json!(true)) {
            continue;
        }
        let Some(info) = text(message, "text").and_then(|t| serde_json::from_str::<Value>(t).ok()) else { continue };
        let count = |key: &str| info.get(key).and_then(Value::as_i64).unwrap_or(0).max(0);
        let model = message.get("modelInfo").and_then(|m| text(m, "modelId")).or(hook_model).map(str::to_string);
        let usage = Usage {
            input_tokens: count("tokensIn"),
            output_tokens: count("tokensOut"),
            cache_read_tokens: count("cacheReads"),
            cache_write_5m_tokens: count("cacheWrites"),
            ..Usage::default()
        };
        let ts = message.get("ts").map(Value::to_string).unwrap_or_default();
        groups.push((ts, model, usage));
    }
    groups
}

/// The tool a UI message shows, as (Cline's tool name from the panel, input).
pub fn shown_tool(message: &Value) -> Option<(String, Value)> {
    let kind = text(message, "say").or_else(|| text(message, "ask"))?;
    let body = text(message, "text").unwrap_or("");
    match kind {
        "tool" => {
            let input = serde_json::from_str::<Value>(body).ok()?;
            let name = match text(&input, "tool")? {
                "readFile" => "read_file",
                "listFilesTopLevel" | "listFilesRecursive" => "list_files",
                "listCodeDefinitionNames" => "list_code_definition_names",
                "searchFiles" => "search_files",
                "editedExistingFile" => "replace_in_file",
                "newFileCreated" => "write_to_file",
                "webFetch" => "web_fetch",
                "webSearch" => "web_search",
                other => other,
            }
            .to_string();
            Some((name, input))
        }
        "command" => Some(("execute_command".to_string(), json!({"command": body}))),
        "use_mcp_server" => {
            let input = serde_json::from_str::<Value>(body).unwrap_or(Value::Null);
            let name = text(&input, "type").unwrap_or("use_mcp_tool").to_string();
            Some((name, input))
        }
        _ => None,
    }
}

/// What the request after a tool says of it: the tool's own name and its outcome.
pub fn tool_result(request: &str) -> (Option<&str>, &'static str) {
    let name = request
        .strip_prefix('[')
        .and_then(|rest| rest.split([' ', ']']).next())
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    let status = if request.contains("The user denied this operation") {
        "denied"
    } else if request.contains("The tool execution failed") || request.contains("[ERROR]") {
        "error"
    } else {
        "success"
    };
    (name, status)
}

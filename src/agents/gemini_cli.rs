//! Gemini CLI's records: its tools as actions (MCP tools and subagents apart) and the
//! usage of a chat record.

use serde_json::Value;

use super::text;
use super::usage::Line;
use crate::model::Usage;

/// The tools by which Gemini CLI hands work to a subagent.
pub const SUBAGENT_TOOLS: &[&str] = &["codebase_investigator", "cli_help", "delegate_to_agent", "generalist"];

pub fn tool_action(tool: &str, mcp: bool) -> &'static str {
    match tool {
        _ if mcp => "mcp",
        "run_shell_command" => "exec",
        "read_file" | "read_many_files" | "get_internal_docs" => "read",
        "write_file" => "write",
        "replace" | "edit" => "edit",
        "grep_search" | "search_file_content" | "glob" | "list_directory" | "google_web_search" => "search",
        "web_fetch" => "fetch",
        "write_todos" | "enter_plan_mode" | "exit_plan_mode" => "plan",
        _ if SUBAGENT_TOOLS.contains(&tool) => "delegate",
        _ if tool.starts_with("mcp_") => "mcp",
        _ => "other",
    }
}

/// One chat-recording line: `gemini` messages with their response's token counts.
pub fn transcript_line(line: &str) -> Option<Line> {
    if !line.contains("\"tokens\"") {
        return None;
    }
    record_usage(&serde_json::from_str(line).ok()?)
}

/// [`transcript_line`] for a message already parsed (import keeps each message's last
/// record).
pub fn record_usage(value: &Value) -> Option<Line> {
    if text(value, "type") != Some("gemini") {
        return None;
    }
    let tokens = value.get("tokens").filter(|t| t.is_object())?;
    let count = |key: &str| tokens.get(key).and_then(Value::as_i64).unwrap_or(0).max(0);
    let (input, cached) = (count("input"), count("cached"));
    Some(Line::Counts {
        group: text(value, "id")?.to_string(),
        model: text(value, "model").map(str::to_string),
        usage: Usage {
            input_tokens: (input - cached).max(0),
            output_tokens: count("output"),
            cache_read_tokens: cached,
            reasoning_tokens: count("thoughts"),
            ..Usage::default()
        },
    })
}

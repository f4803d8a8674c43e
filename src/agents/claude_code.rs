//! Claude Code's records: its tools as actions, its permission modes in the wire
//! contract's names, and the usage of a transcript line.

use serde_json::Value;

use super::usage::Line;
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

pub fn tool_action(tool: &str) -> &'static str {
    match tool {
        "Read" | "NotebookRead" | "LS" => "read",
        "Write" => "write",
        "Edit" | "MultiEdit" | "NotebookEdit" => "edit",
        "Bash" | "BashOutput" | "KillShell" => "exec",
        "Grep" | "Glob" => "search",
        "WebFetch" | "WebSearch" => "fetch",
        "Task" | "Agent" => "delegate",
        "TodoWrite" => "plan",
        _ if tool.starts_with("mcp__") => "mcp",
        _ => "other",
    }
}

/// One transcript line's usage: assistant lines carry their message's usage, repeated
/// on every content block of the message.
pub fn transcript_line(line: &str) -> Option<Line> {
    if !line.contains("\"usage\"") {
        return None;
    }
    record_usage(&serde_json::from_str(line).ok()?)
}

/// [`transcript_line`] for a line already parsed (import reads every line anyway).
pub fn record_usage(value: &Value) -> Option<Line> {
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
        value.get("uuid").and_then(Value::as_str).map_or_else(|| value.to_string(), str::to_string)
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

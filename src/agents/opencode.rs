//! opencode's records: its tools as actions and a message's usage.

use serde_json::Value;

use super::text;
use crate::model::Usage;

pub fn tool_action(tool: &str) -> &'static str {
    match tool {
        "read" => "read",
        "write" => "write",
        "edit" | "apply_patch" | "patch" | "multiedit" => "edit",
        "bash" => "exec",
        "grep" | "glob" | "list" | "lsp" => "search",
        "webfetch" | "websearch" | "codesearch" => "fetch",
        "task" => "delegate",
        "todowrite" | "todoread" => "plan",
        _ => "other",
    }
}

pub fn message_usage(info: &Value) -> Option<(String, Option<String>, Usage)> {
    let tokens = info.get("tokens").filter(|t| t.is_object())?;
    let count = |v: &Value, key: &str| v.get(key).and_then(Value::as_i64).unwrap_or(0).max(0);
    let cache = tokens.get("cache").unwrap_or(&Value::Null);
    let (input, output, reasoning) = (count(tokens, "input"), count(tokens, "output"), count(tokens, "reasoning"));
    let (read, write) = (count(cache, "read"), count(cache, "write"));
    let disjoint =
        tokens.get("total").and_then(Value::as_i64).is_none_or(|t| t == input + output + reasoning + read + write);
    let usage = Usage {
        input_tokens: input,
        output_tokens: if disjoint { output } else { (output - reasoning).max(0) },
        cache_read_tokens: read,
        cache_write_5m_tokens: write,
        cache_write_1h_tokens: 0,
        reasoning_tokens: reasoning,
    };
    Some((text(info, "id")?.to_string(), text(info, "modelID").map(str::to_string), usage))
}

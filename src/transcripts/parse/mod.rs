//! Transcript parsers: each supported agent's stored transcript text, as the shipper
//! uploads it (redacted), turned into the normalised [`Message`] list of
//! [`super::model`]. One file per agent; what they share is here.
//!
//! Invariants: parsing never fails and never reorders. A line (or record) a parser does
//! not recognise, or a line that is not JSON, becomes a [`Role::Raw`] message holding the
//! line itself; blank lines are skipped. A parser skips only records it knows to be pure
//! bookkeeping (each parser's header lists them), never an unknown one.
//!
//! Usage is what the agent recorded for one model request, read by the hooks' own
//! readers where they have one (`crate::model::Usage`, disjoint counts) and folded into
//! the transcript's four: output includes reasoning (the transcript has no reasoning
//! count of its own) and cache writes are 5-minute plus 1-hour. A request the agent
//! recorded no tokens for has no usage.

mod claude_code;
mod cline;
mod codex;
mod copilot_cli;
mod droid;
mod gemini_cli;
mod opencode;

use std::collections::HashMap;

use serde_json::Value;

use super::model::{Message, Role, ToolCall, Usage};
use crate::model::AgentType;

/// Parses a stored transcript of `agent_type` (claude_code, codex, gemini_cli, copilot_cli,
/// droid, opencode, cline; anything else: every line raw). Never fails.
pub fn parse(agent_type: &str, text: &str) -> Vec<Message> {
    match AgentType::parse(agent_type) {
        Some(AgentType::ClaudeCode) => claude_code::parse(text),
        Some(AgentType::Codex) => codex::parse(text),
        Some(AgentType::GeminiCli) => gemini_cli::parse(text),
        Some(AgentType::CopilotCli) => copilot_cli::parse(text),
        Some(AgentType::Droid) => droid::parse(text),
        Some(AgentType::Opencode) => opencode::parse(text),
        Some(AgentType::Cline) => cline::parse(text),
        _ => raw_lines(text),
    }
}

/// Every non-blank line as a raw message.
fn raw_lines(text: &str) -> Vec<Message> {
    lines(text).map(raw).collect()
}

/// The non-blank lines of a JSONL text.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|line| !line.trim().is_empty())
}

/// A line kept as it was.
fn raw(line: &str) -> Message {
    Message::new(Role::Raw, line)
}

/// A message of `role` with its text and time.
fn message(role: Role, text: impl Into<String>, ts_ms: Option<i64>) -> Message {
    Message { ts_ms, ..Message::new(role, text) }
}

/// Milliseconds since the epoch of a field holding an RFC 3339 time or a number of ms.
fn time_ms(value: &Value, key: &str) -> Option<i64> {
    match value.get(key)? {
        Value::String(text) => crate::model::parse_rfc3339_ms(text),
        number => number.as_i64(),
    }
}

/// What a person reads of a content value: a string as it is; of a list, its strings and
/// the `text` of its parts, joined by blank lines (images and other parts have none).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => {
            let texts: Vec<String> = parts
                .iter()
                .filter_map(|part| match part {
                    Value::String(text) => Some(text.clone()),
                    other => other.get("text").and_then(Value::as_str).map(str::to_string),
                })
                .filter(|text| !text.is_empty())
                .collect();
            texts.join("\n\n")
        }
        Value::Object(_) => content.get("text").and_then(Value::as_str).unwrap_or_default().to_string(),
        _ => String::new(),
    }
}

/// A value as text: a string as it is, anything else as compact JSON.
fn json_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Adds `more` to `text` after a blank line.
fn append_text(text: &mut String, more: &str) {
    if more.is_empty() {
        return;
    }
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(more);
}

/// One request's counts as the transcript keeps them; `None` when there are none.
fn usage_of(counts: &crate::model::Usage) -> Option<Usage> {
    (!counts.is_zero()).then(|| Usage {
        input_tokens: counts.input_tokens,
        output_tokens: counts.output_tokens + counts.reasoning_tokens,
        cache_read_tokens: counts.cache_read_tokens,
        cache_write_tokens: counts.cache_write_5m_tokens + counts.cache_write_1h_tokens,
    })
}

/// Tool names by call id, so a result that does not name its tool gets the name from the
/// call earlier in the transcript.
#[derive(Default)]
struct Calls {
    names: HashMap<String, String>,
}

impl Calls {
    /// A call the model made, remembered for its result.
    fn call(&mut self, id: Option<&str>, name: &str, input: String) -> ToolCall {
        if let Some(id) = id {
            self.remember(id, name);
        }
        ToolCall { id: id.map(str::to_string), name: name.to_string(), input }
    }

    /// The name of call `id`, from a record that is not the call itself.
    fn remember(&mut self, id: &str, name: &str) {
        self.names.insert(id.to_string(), name.to_string());
    }

    /// A tool's result; `name` when the result carries it, else the call's.
    fn result(&self, call_id: Option<&str>, name: Option<&str>, text: String, is_error: bool) -> Message {
        let tool_name = name.map(str::to_string).or_else(|| call_id.and_then(|id| self.names.get(id)).cloned());
        Message { tool_name, tool_call_id: call_id.map(str::to_string), is_error, ..Message::new(Role::Tool, text) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_agent_gives_every_non_blank_line_raw() {
        let text = "{\"type\": \"user\"}\n\n  \nnot json\r\n{\"a\": 1}\n";
        let messages = parse("aider", text);
        let texts: Vec<&str> = messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["{\"type\": \"user\"}", "not json", "{\"a\": 1}"]);
        assert!(messages.iter().all(|m| m.role == Role::Raw));
        assert_eq!(parse("nonsense", "x").len(), 1);
    }

    #[test]
    fn usage_folds_reasoning_into_output_and_both_cache_writes_together() {
        let counts = crate::model::Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_write_5m_tokens: 4,
            cache_write_1h_tokens: 5,
            reasoning_tokens: 6,
        };
        let usage = usage_of(&counts);
        assert_eq!(
            usage,
            Some(Usage { input_tokens: 1, output_tokens: 8, cache_read_tokens: 3, cache_write_tokens: 9 })
        );
        assert_eq!(usage_of(&crate::model::Usage::default()), None);
    }

    #[test]
    fn times_are_read_from_rfc3339_or_milliseconds() {
        let value = serde_json::json!({"a": "2026-11-21T07:00:01.000Z", "b": 1762300000040_i64, "c": "soon"});
        assert_eq!(time_ms(&value, "a"), Some(1_795_244_401_000));
        assert_eq!(time_ms(&value, "b"), Some(1_762_300_000_040));
        assert_eq!(time_ms(&value, "c"), None);
    }
}

#[cfg(test)]
mod fuzz;

//! OpenAI Codex CLI: the rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`),
//! lines `{timestamp, type, payload}` as `codex-rs/protocol` (`RolloutLine`) writes them.
//! The conversation is in the `response_item` lines (the Responses API items the model
//! saw and wrote); `event_msg` lines repeat parts of it for the UI.
//!
//! Mapping: `message` items by role: `user` is User (System when it is context Codex
//! adds: environment, AGENTS.md and user instructions), `assistant` is Assistant,
//! `developer`/`system` are System; `reasoning` is Reasoning (its summary, else its
//! raw content); `function_call`, `custom_tool_call`, `local_shell_call` and
//! `web_search_call` are tool calls, gathered with the text into one Assistant message
//! per model response (a response ends at its `token_count`); `function_call_output`
//! and `custom_tool_call_output` are Tool messages (an error when the output states a
//! non-zero exit code or `success: false`). `compacted` lines and the `turn_aborted` and
//! `context_compacted` events are System. Usage: each `token_count` event's growth of
//! the running total (as the hooks count it) goes on the response's Assistant message;
//! the model is the latest `turn_context`'s.
//!
//! Skipped: `session_meta` and `turn_context` (session and turn settings),
//! `ghost_snapshot` items (git snapshots for undo), reasoning with only encrypted
//! content, and the events `token_count` (folded into usage), `user_message`,
//! `agent_message`, `agent_reasoning`, `agent_reasoning_raw_content` (copies of the
//! response items), `task_started`/`task_complete`/`turn_started`/`turn_complete` (turn
//! boundaries). Anything else raw.

use serde_json::Value;

use super::{Calls, append_text, json_text, lines, message, raw, text_of, time_ms, usage_of};
use crate::agents::codex::{record_usage, reported_status};
use crate::agents::text;
use crate::agents::usage::{Line, growth};
use crate::model::ToolStatus;
use crate::model::Usage as Counts;
use crate::transcripts::model::{Message, Role, ToolCall};

/// Beginnings of the user-role context Codex inserts itself.
const CONTEXT_PREFIXES: &[&str] =
    &["<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>", "<turn_aborted>"];

#[derive(Default)]
struct Rollout {
    messages: Vec<Message>,
    calls: Calls,
    model: Option<String>,
    /// The running total of the last `token_count`.
    total: Counts,
    /// The Assistant message of the response in progress (no `token_count` yet).
    response: Option<usize>,
}

pub fn parse(transcript: &str) -> Vec<Message> {
    let mut rollout = Rollout::default();
    for line in lines(transcript) {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            rollout.messages.push(raw(line));
            continue;
        };
        let ts_ms = time_ms(&record, "timestamp");
        let payload = record.get("payload").unwrap_or(&Value::Null);
        let known = match (text(&record, "type"), text(payload, "type")) {
            (Some("session_meta"), _) => true,
            (Some("turn_context"), _) => {
                if let Some(Line::Model(model)) = record_usage(&record) {
                    rollout.model = Some(model);
                }
                true
            }
            (Some("compacted"), _) => rollout.notice(text(payload, "message").unwrap_or("compacted"), ts_ms),
            (Some("event_msg"), Some(kind)) => rollout.event(kind, &record, payload, ts_ms),
            (Some("response_item"), Some(kind)) => rollout.item(kind, payload, ts_ms),
            _ => false,
        };
        if !known {
            rollout.messages.push(raw(line));
        }
    }
    rollout.messages
}

impl Rollout {
    fn notice(&mut self, notice: &str, ts_ms: Option<i64>) -> bool {
        self.messages.push(message(Role::System, notice, ts_ms));
        true
    }

    /// An `event_msg` line; false when its kind is not known.
    fn event(&mut self, kind: &str, record: &Value, payload: &Value, ts_ms: Option<i64>) -> bool {
        match kind {
            "token_count" => {
                if let Some(Line::Cumulative { usage, .. }) = record_usage(record) {
                    let request = growth(&usage, &self.total);
                    self.total = usage.max_with(&self.total);
                    // A repeated total is no request, and ends nothing.
                    if let Some(usage) = usage_of(&request)
                        && let Some(reply) = self.response.take().and_then(|at| self.messages.get_mut(at))
                    {
                        reply.usage = Some(usage);
                    }
                }
                true
            }
            "user_message" | "agent_message" | "agent_reasoning" | "agent_reasoning_raw_content" => true,
            "task_started" | "task_complete" | "turn_started" | "turn_complete" => true,
            "turn_aborted" => {
                let reason = text(payload, "reason").unwrap_or("unknown");
                self.notice(&format!("turn aborted: {reason}"), ts_ms)
            }
            "context_compacted" => self.notice("context compacted", ts_ms),
            _ => false,
        }
    }

    /// A `response_item` line; false when its kind is not known.
    fn item(&mut self, kind: &str, payload: &Value, ts_ms: Option<i64>) -> bool {
        match kind {
            "message" => {
                let said = text_of(payload.get("content").unwrap_or(&Value::Null));
                match text(payload, "role") {
                    Some("assistant") => self.reply(said, None, ts_ms),
                    Some("user") if !CONTEXT_PREFIXES.iter().any(|p| said.trim_start().starts_with(p)) => {
                        self.messages.push(message(Role::User, said, ts_ms));
                    }
                    Some("user" | "developer" | "system") => self.messages.push(message(Role::System, said, ts_ms)),
                    _ => return false,
                }
            }
            "reasoning" => {
                let summary = text_of(payload.get("summary").unwrap_or(&Value::Null));
                let thought =
                    if summary.is_empty() { text_of(payload.get("content").unwrap_or(&Value::Null)) } else { summary };
                if !thought.is_empty() {
                    let model = self.model.clone();
                    self.messages.push(Message { model, ..message(Role::Reasoning, thought, ts_ms) });
                }
            }
            "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call" => {
                let call = self.call(kind, payload);
                self.reply(String::new(), Some(call), ts_ms);
            }
            "function_call_output" | "custom_tool_call_output" => {
                let output = payload.get("output").unwrap_or(&Value::Null);
                let (said, success) = match output {
                    Value::Object(_) => (
                        text_of(output.get("content").unwrap_or(&Value::Null)),
                        output.get("success").and_then(Value::as_bool),
                    ),
                    other => (text_of(other), None),
                };
                let is_error = reported_status(success, &said) != ToolStatus::Success;
                let result = self.calls.result(text(payload, "call_id"), None, said, is_error);
                self.messages.push(Message { ts_ms, ..result });
            }
            "ghost_snapshot" => {}
            _ => return false,
        }
        true
    }

    /// A tool call item as the call it is: a function's JSON arguments, a custom tool's
    /// text input, a shell call's command line, a web search's action.
    fn call(&mut self, kind: &str, payload: &Value) -> ToolCall {
        let (name, input) = match kind {
            "function_call" => (text(payload, "name"), json_text(payload.get("arguments").unwrap_or(&Value::Null))),
            "custom_tool_call" => (text(payload, "name"), json_text(payload.get("input").unwrap_or(&Value::Null))),
            "local_shell_call" => {
                let action = payload.get("action").unwrap_or(&Value::Null);
                let words = action.get("command").and_then(Value::as_array).into_iter().flatten();
                (Some("local_shell"), words.filter_map(Value::as_str).collect::<Vec<_>>().join(" "))
            }
            _ => (Some("web_search"), json_text(payload.get("action").unwrap_or(&Value::Null))),
        };
        let id = text(payload, "call_id").or_else(|| text(payload, "id"));
        self.calls.call(id, name.unwrap_or("unknown"), input)
    }

    /// Text or a call of the model's response in progress: added to its Assistant
    /// message while that is the last message, else a new one.
    fn reply(&mut self, said: String, call: Option<ToolCall>, ts_ms: Option<i64>) {
        let last = self.messages.len().checked_sub(1);
        if let Some(at) = self.response.filter(|at| Some(*at) == last)
            && let Some(reply) = self.messages.get_mut(at)
        {
            append_text(&mut reply.text, &said);
            reply.tool_calls.extend(call);
            return;
        }
        self.response = Some(self.messages.len());
        let model = self.model.clone();
        self.messages.push(Message {
            tool_calls: call.into_iter().collect(),
            model,
            ..message(Role::Assistant, said, ts_ms)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::model::Usage;

    const TRANSCRIPT: &str = include_str!("../../../tests/fixtures/agents/codex/transcript.jsonl");

    fn parsed() -> Vec<Message> {
        let mut lines: Vec<&str> = TRANSCRIPT.lines().collect();
        lines.insert(5, "not json");
        lines.insert(
            6,
            r#"{"timestamp": "2026-05-20T10:15:09.200Z", "type": "event_msg", "payload": {"type": "mystery"}}"#,
        );
        parse(&lines.join("\n"))
    }

    #[test]
    fn the_fixture_reads_as_a_conversation() {
        let messages = parsed();
        use Role::*;
        assert_eq!(
            messages.iter().map(|m| m.role).collect::<Vec<_>>(),
            [Raw, User, Raw, Raw, Reasoning, Assistant, Tool, Assistant, Tool, Assistant]
        );
        assert_eq!(messages[1].text, "Fix the failing parser test and push the branch");
        assert_eq!(messages[1].ts_ms, Some(1_779_272_109_122));
        assert_eq!(messages[2].text, "not json");
        assert!(messages[3].text.contains(r#""type": "mystery""#));
        assert_eq!(messages[4].text, "**Locating the parser**");
        assert_eq!(messages[4].model.as_deref(), Some("gpt-5.1-codex"));
        let answer = &messages[9];
        assert!(answer.text.starts_with("`header::parses_empty` fails because `parse_header` rejects blank input."));
        assert_eq!(answer.model.as_deref(), Some("gpt-5.1-codex"));
    }

    #[test]
    fn calls_carry_their_arguments_and_outputs_their_exit_status() {
        let messages = parsed();
        let search = &messages[5];
        assert_eq!(search.text, "");
        assert_eq!(search.tool_calls[0].name, "exec_command");
        assert_eq!(search.tool_calls[0].id.as_deref(), Some("call_7Qk2vJ9sLr0aXw3mB1nC4dEf"));
        assert!(search.tool_calls[0].input.starts_with(r#"{"cmd":"rg -n \"fn parse_header\" src""#));
        let found = &messages[6];
        assert_eq!((found.tool_name.as_deref(), found.is_error), (Some("exec_command"), false));
        assert!(found.text.ends_with("pub fn parse_header(input: &str) -> Result<Header, ParseError> {\n"));
        let tests = &messages[8];
        assert_eq!(tests.tool_call_id.as_deref(), Some("call_Hh8pT2wQz5yR6uV1xK0mN3aB"));
        assert_eq!((tests.tool_name.as_deref(), tests.is_error), (Some("exec_command"), true));
    }

    #[test]
    fn each_response_carries_its_token_count_growth() {
        let messages = parsed();
        // 12000 in (none cached), 450 out.
        assert_eq!(
            messages[5].usage,
            Some(Usage { input_tokens: 12000, output_tokens: 450, cache_read_tokens: 0, cache_write_tokens: 0 })
        );
        // Totals 25200/11904/670 less 12000/0/450.
        assert_eq!(
            messages[7].usage,
            Some(Usage { input_tokens: 1296, output_tokens: 220, cache_read_tokens: 11904, cache_write_tokens: 0 })
        );
        // The repeated total after it is no request.
        assert_eq!(
            messages[9].usage,
            Some(Usage { input_tokens: 644, output_tokens: 380, cache_read_tokens: 13056, cache_write_tokens: 0 })
        );
        assert_eq!(messages[4].usage, None);
    }

    #[test]
    fn context_codex_adds_is_system_and_items_of_one_response_are_gathered() {
        let transcript = [
            r#"{"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]}}"#,
            r#"{"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Patching."}]}}"#,
            r#"{"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c1", "input": "*** Begin Patch"}}"#,
            r#"{"type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": "c1", "output": "Done"}}"#,
            r#"{"type": "compacted", "payload": {"message": "Summary so far"}}"#,
        ]
        .join("\n");
        let messages = parse(&transcript);
        assert_eq!(
            messages.iter().map(|m| m.role).collect::<Vec<_>>(),
            [Role::System, Role::Assistant, Role::Tool, Role::System]
        );
        assert_eq!(messages[1].text, "Patching.");
        assert_eq!(messages[1].tool_calls[0].input, "*** Begin Patch");
        assert_eq!(messages[2].tool_name.as_deref(), Some("apply_patch"));
        assert_eq!(messages[3].text, "Summary so far");
    }
}

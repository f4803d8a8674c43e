//! GitHub Copilot CLI: the session's event log
//! `~/.copilot/session-state/<sessionId>/events.jsonl`, envelopes `{type, data, id,
//! timestamp, parentId}` as github/copilot-sdk `nodejs/src/generated/session-events.ts`
//! declares them.
//!
//! Mapping: `user.message` is User (`content`, what the person typed, not the
//! `transformedContent` sent on); `assistant.message` is Assistant with its
//! `toolRequests` as calls, its `model` (else the session's current one) and
//! `outputTokens` as usage (Copilot records no per-request input counts; the
//! session's totals are only in `session.shutdown`), preceded by its `reasoningText` as
//! Reasoning; `assistant.reasoning` is Reasoning; `tool.execution_complete` is a Tool
//! message (`result.content`, or `error.message` when not `success`), named from its
//! call. `session.info`/`warning`/`error`, `system.message`,
//! `session.compaction_complete` (its summary), `abort` and `subagent.started`/
//! `completed`/`failed` are System.
//!
//! Skipped: `session.start`, `session.resume` and `session.model_change` (their model is
//! kept for the messages after), `session.shutdown` (per-model totals of the process,
//! not of a message), `assistant.turn_start`/`turn_end` and `session.compaction_start`
//! (boundaries), and `tool.execution_start` (the call is in the assistant message; its
//! tool name is kept). Anything else raw.

use serde_json::Value;

use super::{Calls, json_text, lines, message, raw, time_ms};
use crate::agents::text;
use crate::transcripts::model::{Message, Role, Usage};

pub fn parse(transcript: &str) -> Vec<Message> {
    let mut messages: Vec<Message> = Vec::new();
    let mut calls = Calls::default();
    let mut model: Option<String> = None;
    for line in lines(transcript) {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            messages.push(raw(line));
            continue;
        };
        let ts_ms = time_ms(&record, "timestamp");
        let data = record.get("data").unwrap_or(&Value::Null);
        let field = |key: &str| text(data, key).unwrap_or("").to_string();
        let system = |notice: String| message(Role::System, notice, ts_ms);
        match text(&record, "type").unwrap_or("") {
            "session.start" | "session.resume" => model = text(data, "selectedModel").map(str::to_string).or(model),
            "session.model_change" => model = text(data, "newModel").map(str::to_string).or(model),
            "session.shutdown" | "assistant.turn_start" | "assistant.turn_end" | "session.compaction_start" => {}
            "tool.execution_start" => {
                if let (Some(id), Some(name)) = (text(data, "toolCallId"), text(data, "toolName")) {
                    calls.remember(id, name);
                }
            }
            "user.message" => messages.push(message(Role::User, field("content"), ts_ms)),
            "assistant.reasoning" => reason(&mut messages, field("content"), ts_ms, model.as_deref()),
            "assistant.message" => {
                let said_model = text(data, "model").or(model.as_deref()).map(str::to_string);
                reason(&mut messages, field("reasoningText"), ts_ms, said_model.as_deref());
                let requests = data.get("toolRequests").and_then(Value::as_array).into_iter().flatten();
                let tool_calls = requests
                    .map(|request| {
                        let input = json_text(request.get("arguments").unwrap_or(&Value::Null));
                        calls.call(text(request, "toolCallId"), text(request, "name").unwrap_or("unknown"), input)
                    })
                    .collect();
                let output_tokens = data.get("outputTokens").and_then(Value::as_i64).filter(|n| *n > 0);
                let reply = Message {
                    tool_calls,
                    model: said_model,
                    usage: output_tokens.map(|output_tokens| Usage { output_tokens, ..Usage::default() }),
                    ..message(Role::Assistant, field("content"), ts_ms)
                };
                // A message that was only reasoning leaves nothing else to show.
                if !reply.text.is_empty() || !reply.tool_calls.is_empty() || reply.usage.is_some() {
                    messages.push(reply);
                }
            }
            "tool.execution_complete" => {
                let succeeded = data.get("success").and_then(Value::as_bool) == Some(true);
                let part = if succeeded { data.get("result") } else { data.get("error").or(data.get("result")) };
                let part = part.unwrap_or(&Value::Null);
                let said = text(part, "content")
                    .or_else(|| text(part, "message"))
                    .map_or_else(|| json_text(part), str::to_string);
                let result = calls.result(text(data, "toolCallId"), text(data, "toolName"), said, !succeeded);
                messages.push(Message { ts_ms, ..result });
            }
            "session.info" | "session.warning" | "session.error" => messages.push(system(field("message"))),
            "system.message" => messages.push(system(field("content"))),
            "session.compaction_complete" => {
                let summary = text(data, "summaryContent").unwrap_or("conversation compacted");
                messages.push(system(summary.to_string()));
            }
            "abort" => messages.push(system(format!("aborted: {}", field("reason")))),
            kind @ ("subagent.started" | "subagent.completed" | "subagent.failed") => {
                let agent = text(data, "agentDisplayName").or_else(|| text(data, "agentName")).unwrap_or("subagent");
                let what = kind.trim_start_matches("subagent.");
                let error = text(data, "error").map(|e| format!(": {e}")).unwrap_or_default();
                messages.push(system(format!("subagent {agent} {what}{error}")));
            }
            _ => messages.push(raw(line)),
        }
    }
    messages
}

/// Reasoning text as its own message, unless empty or the same as the message before
/// (Copilot can record a message's reasoning both on its own and on the message).
fn reason(messages: &mut Vec<Message>, thought: String, ts_ms: Option<i64>, model: Option<&str>) {
    let repeated = messages.last().is_some_and(|last| last.role == Role::Reasoning && last.text == thought);
    if !thought.is_empty() && !repeated {
        messages.push(Message { model: model.map(str::to_string), ..message(Role::Reasoning, thought, ts_ms) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRANSCRIPT: &str = include_str!("../../../tests/fixtures/agents/copilot_cli/transcript.jsonl");

    fn parsed() -> Vec<Message> {
        let mut lines: Vec<&str> = TRANSCRIPT.lines().collect();
        lines.insert(3, "not json");
        lines.insert(4, r#"{"type": "session.mystery", "data": {}, "id": "x"}"#);
        parse(&lines.join("\n"))
    }

    #[test]
    fn the_fixture_reads_as_a_conversation() {
        let messages = parsed();
        use Role::*;
        assert_eq!(
            messages.iter().map(|m| m.role).collect::<Vec<_>>(),
            [Raw, User, Raw, Raw, Assistant, Tool, Assistant, Tool, Reasoning, Assistant]
        );
        assert_eq!(messages[1].text, "Fix the failing unit test in src/lib.rs");
        assert_eq!(messages[1].ts_ms, crate::model::parse_rfc3339_ms("2026-09-20T10:00:00.412Z"));
        assert_eq!(messages[2].text, "not json");
        assert_eq!(messages[3].text, r#"{"type": "session.mystery", "data": {}, "id": "x"}"#);
        let first = &messages[4];
        assert_eq!(first.text, "I'll run the library tests first to see the failure.");
        assert_eq!(first.model.as_deref(), Some("claude-sonnet-4.5"));
        assert_eq!(first.usage, Some(Usage { output_tokens: 220, ..Usage::default() }));
        assert_eq!(first.tool_calls[0].name, "bash");
        assert_eq!(
            first.tool_calls[0].input,
            r#"{"command":"cargo test --lib","description":"Run the library unit tests"}"#
        );
        assert_eq!(messages[8].text, "The old_str did not match; the file must use a constant instead of a literal.");
        assert!(messages[9].text.starts_with("The edit failed because the line differs"));
    }

    #[test]
    fn results_are_named_from_their_calls() {
        let messages = parsed();
        let tests = &messages[5];
        assert_eq!((tests.tool_name.as_deref(), tests.tool_call_id.as_deref()), (Some("bash"), Some("toolu_01")));
        assert!(!tests.is_error);
        assert!(tests.text.ends_with("<exited with exit code 101>"));
        assert_eq!(messages[6].text, "");
        let edit = &messages[7];
        assert_eq!((edit.tool_name.as_deref(), edit.is_error), (Some("edit"), true));
        assert_eq!(edit.text, "No match found for old_str in /home/dev/proj/src/lib.rs");
    }

    #[test]
    fn notices_are_system_and_a_model_change_applies_after_it() {
        let transcript = [
            r#"{"type": "session.model_change", "data": {"newModel": "gpt-5"}, "timestamp": "2026-09-20T10:00:00Z"}"#,
            r#"{"type": "assistant.message", "data": {"messageId": "m", "content": "Hi"}}"#,
            r#"{"type": "session.compaction_complete", "data": {"success": true, "summaryContent": "So far: a fix"}}"#,
            r#"{"type": "session.error", "data": {"errorType": "quota", "message": "Quota exceeded"}}"#,
        ]
        .join("\n");
        let messages = parse(&transcript);
        assert_eq!(messages[0].model.as_deref(), Some("gpt-5"));
        assert_eq!(messages[0].usage, None);
        assert_eq!((messages[1].role, messages[1].text.as_str()), (Role::System, "So far: a fix"));
        assert_eq!((messages[2].role, messages[2].text.as_str()), (Role::System, "Quota exceeded"));
    }
}

//! Google Gemini CLI: the chat recording JSONL (`~/.gemini/tmp/<project>/chats/
//! session-*.jsonl`) as `packages/core/src/services/chatRecordingService.ts` writes it: a
//! metadata line (`sessionId`, `projectHash`, …), then message records keyed by `id`,
//! re-appended whole whenever they change (the last record of an id wins, at the place
//! of its first), `{"$set": {…}}` metadata updates and `{"$rewindTo": id}` markers. The
//! older recordings, one JSON object with a `messages` list, are read too.
//!
//! Mapping: `user` records are User; `info`, `warning` and `error` records System;
//! a `gemini` record's `thoughts` are one Reasoning message (`subject` and `description`
//! of each), its `content` and `toolCalls` the Assistant message (with `model` and
//! `tokens`, as the hooks count them), and each call with a result a Tool message (an
//! error when its status is `error` or `cancelled` or its response holds `error`). A
//! `$set` with `messages` (resume, compression) updates those messages by id; `summary`
//! is System. A rewind is a System notice where it happened: Gemini drops the messages
//! from the named one on from the model's context, but they did happen, so they stay.
//!
//! Skipped: the metadata line and the rest of `$set` (`lastUpdated`, `directories`, …).
//! Records of an unknown type and lines of no known shape are raw.

use std::collections::HashMap;

use serde_json::Value;

use super::{Calls, json_text, lines, message, raw, text_of, time_ms, usage_of};
use crate::agents::gemini_cli::record_usage;
use crate::agents::text;
use crate::agents::usage::Line;
use crate::transcripts::model::{Message, Role};

/// A place in the recording: a message record (its latest version and line) or a
/// message of its own.
enum Entry {
    Record(Value, String),
    Ready(Message),
}

#[derive(Default)]
struct Recording {
    entries: Vec<Entry>,
    /// Where each message id's record is.
    at: HashMap<String, usize>,
}

impl Recording {
    fn upsert(&mut self, id: &str, record: Value, line: String) {
        match self.at.get(id).and_then(|&at| self.entries.get_mut(at)) {
            Some(entry) => *entry = Entry::Record(record, line),
            None => {
                self.at.insert(id.to_string(), self.entries.len());
                self.entries.push(Entry::Record(record, line));
            }
        }
    }

    /// Every message of a `messages` list, by id.
    fn upsert_all(&mut self, messages: Option<&Value>) {
        for record in messages.and_then(Value::as_array).into_iter().flatten() {
            if let Some(id) = text(record, "id") {
                self.upsert(id, record.clone(), record.to_string());
            }
        }
    }

    fn read(&mut self, line: &str) {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            self.entries.push(Entry::Ready(raw(line)));
            return;
        };
        if let Some(target) = text(&record, "$rewindTo") {
            let notice = format!("rewound: the messages from {target} on were dropped from the model's context");
            self.entries.push(Entry::Ready(message(Role::System, notice, None)));
        } else if let Some(update) = record.get("$set").filter(|update| update.is_object()) {
            self.upsert_all(update.get("messages"));
            if let Some(summary) = text(update, "summary") {
                let summary = serde_json::json!({"id": "$summary", "type": "summary", "content": summary});
                self.upsert("$summary", summary, line.to_string());
            }
        } else if let Some(id) = text(&record, "id").filter(|_| record.get("type").is_some()).map(str::to_string) {
            self.upsert(&id, record, line.to_string());
        } else if record.get("sessionId").is_some() && record.get("projectHash").is_some() {
            self.upsert_all(record.get("messages"));
        } else {
            self.entries.push(Entry::Ready(raw(line)));
        }
    }
}

pub fn parse(transcript: &str) -> Vec<Message> {
    let mut recording = Recording::default();
    let whole = transcript.trim_start().starts_with('{').then(|| serde_json::from_str::<Value>(transcript).ok());
    match whole.flatten().filter(|whole| whole.get("messages").is_some_and(Value::is_array)) {
        Some(legacy) => recording.upsert_all(legacy.get("messages")),
        None => lines(transcript).for_each(|line| recording.read(line)),
    }
    let mut calls = Calls::default();
    let mut messages = Vec::new();
    for entry in recording.entries {
        match entry {
            Entry::Ready(ready) => messages.push(ready),
            Entry::Record(record, line) => convert(&record, &line, &mut calls, &mut messages),
        }
    }
    messages
}

/// One message record as the messages it holds.
fn convert(record: &Value, line: &str, calls: &mut Calls, out: &mut Vec<Message>) {
    let ts_ms = time_ms(record, "timestamp");
    let content = text_of(record.get("content").unwrap_or(&Value::Null));
    match text(record, "type") {
        Some("user") => out.push(message(Role::User, content, ts_ms)),
        Some("summary") => out.push(Message { is_title: true, ..message(Role::System, content, ts_ms) }),
        Some("info" | "warning" | "error") => out.push(message(Role::System, content, ts_ms)),
        Some("gemini") => {
            let model = text(record, "model").map(str::to_string);
            let thoughts: Vec<String> = record
                .get("thoughts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|thought| {
                    let parts = [text(thought, "subject"), text(thought, "description")];
                    parts.into_iter().flatten().filter(|part| !part.is_empty()).collect::<Vec<_>>().join("\n\n")
                })
                .filter(|thought| !thought.is_empty())
                .collect();
            if !thoughts.is_empty() {
                let first_ms = record.get("thoughts").and_then(|t| t.get(0)).and_then(|t| time_ms(t, "timestamp"));
                let reasoning = message(Role::Reasoning, thoughts.join("\n\n"), first_ms.or(ts_ms));
                out.push(Message { model: model.clone(), ..reasoning });
            }
            let tool_calls: Vec<&Value> =
                record.get("toolCalls").and_then(Value::as_array).into_iter().flatten().collect();
            let usage = match record_usage(record) {
                Some(Line::Counts { usage, .. }) => usage_of(&usage),
                _ => None,
            };
            out.push(Message {
                tool_calls: tool_calls
                    .iter()
                    .map(|call| {
                        let input = json_text(call.get("args").unwrap_or(&Value::Null));
                        calls.call(text(call, "id"), text(call, "name").unwrap_or("unknown"), input)
                    })
                    .collect(),
                model,
                usage,
                ..message(Role::Assistant, content, ts_ms)
            });
            for call in tool_calls {
                if let Some(result) = tool_result(call, calls) {
                    out.push(Message { ts_ms: time_ms(call, "timestamp").or(ts_ms), ..result });
                }
            }
        }
        _ => out.push(raw(line)),
    }
}

/// A tool call's result, when it has one: each `functionResponse`'s output or error
/// (else its whole response), and any text parts.
fn tool_result(call: &Value, calls: &Calls) -> Option<Message> {
    let result = call.get("result").filter(|result| !result.is_null())?;
    let parts = match result {
        Value::Array(parts) => parts.as_slice(),
        other => std::slice::from_ref(other),
    };
    let mut failed = matches!(text(call, "status"), Some("error" | "cancelled"));
    let mut said = Vec::new();
    for part in parts {
        if let Some(response) = part.get("functionResponse").and_then(|f| f.get("response")) {
            failed |= response.get("error").is_some();
            let output = response.get("output").or_else(|| response.get("error")).unwrap_or(response);
            said.push(json_text(output));
        } else {
            said.push(text_of(part));
        }
    }
    let said = said.into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("\n\n");
    Some(calls.result(text(call, "id"), text(call, "name"), said, failed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::model::Usage;

    const TRANSCRIPT: &str = include_str!("../../../tests/fixtures/agents/gemini_cli/transcript.jsonl");

    fn parsed() -> Vec<Message> {
        let mut lines: Vec<&str> = TRANSCRIPT.lines().collect();
        lines.insert(3, "not json");
        lines.insert(4, r#"{"$unknownOperator": 1}"#);
        parse(&lines.join("\n"))
    }

    #[test]
    fn the_fixture_reads_as_a_conversation_with_the_last_record_of_each_id() {
        let messages = parsed();
        use Role::*;
        assert_eq!(
            messages.iter().map(|m| m.role).collect::<Vec<_>>(),
            [Raw, User, Raw, Raw, Reasoning, Assistant, Tool, Assistant, Tool, Reasoning, Assistant]
        );
        assert_eq!(messages[1].text, "Fix the failing parser test and push the branch");
        assert_eq!(messages[1].ts_ms, crate::model::parse_rfc3339_ms("2026-05-20T10:15:09.050Z"));
        assert_eq!((messages[2].text.as_str(), messages[3].text.as_str()), ("not json", r#"{"$unknownOperator": 1}"#));
        assert_eq!(
            messages[4].text,
            "Locating the parser\n\nI'll open src/parser.ts to see how empty input is handled."
        );
        assert_eq!(messages[4].ts_ms, crate::model::parse_rfc3339_ms("2026-05-20T10:15:12.900Z"));
        let answer = &messages[10];
        assert!(answer.text.starts_with("`parseHeader` throws on empty input"));
        assert_eq!(answer.model.as_deref(), Some("gemini-2.5-pro"));
        // 10900 in of which 10112 cached; 310 out plus 120 of thoughts.
        assert_eq!(
            answer.usage,
            Some(Usage { input_tokens: 788, output_tokens: 430, cache_read_tokens: 10112, cache_write_tokens: 0 })
        );
    }

    #[test]
    fn tool_calls_take_their_final_record_and_results_their_calls_names() {
        let messages = parsed();
        let read = &messages[5];
        assert_eq!(read.text, "");
        assert_eq!(read.tool_calls[0].name, "read_file");
        assert_eq!(read.tool_calls[0].input, r#"{"file_path":"src/parser.ts"}"#);
        assert!(messages[6].text.starts_with("export function parseHeader(input: string): Header {"));
        assert_eq!((messages[6].tool_name.as_deref(), messages[6].is_error), (Some("read_file"), false));
        // The second call was first recorded executing, then with its error and tokens.
        let missing = &messages[8];
        assert_eq!(missing.tool_call_id.as_deref(), Some("read_file-1779272117880-d4e5f6"));
        assert_eq!(missing.text, "File not found: /home/dev/proj/widget/src/legacy/header.ts");
        assert!(missing.is_error);
        assert_eq!(messages[7].usage.map(|u| u.input_tokens), Some(10450 - 8192));
    }

    #[test]
    fn rewinds_summaries_and_notices_are_system() {
        let transcript = [
            r#"{"id": "u1", "timestamp": "2026-05-20T10:00:00Z", "type": "user", "content": "first"}"#,
            r#"{"id": "i1", "timestamp": "2026-05-20T10:00:01Z", "type": "info", "content": "Logged in"}"#,
            r#"{"$rewindTo": "u1"}"#,
            r#"{"$set": {"summary": "A short session", "lastUpdated": "2026-05-20T10:00:02Z"}}"#,
        ]
        .join("\n");
        let messages = parse(&transcript);
        use Role::*;
        assert_eq!(messages.iter().map(|m| m.role).collect::<Vec<_>>(), [User, System, System, System]);
        assert!(messages[2].text.starts_with("rewound"));
        assert_eq!(messages[3].text, "A short session");
    }

    #[test]
    fn a_single_object_recording_is_read_whole() {
        let legacy = r#"{"sessionId": "s", "projectHash": "p", "messages": [
            {"id": "u1", "timestamp": "2026-05-20T10:00:00Z", "type": "user", "content": [{"text": "hi"}]},
            {"id": "g1", "timestamp": "2026-05-20T10:00:01Z", "type": "gemini", "content": "hello", "model": "gemini-2.5-flash"}
        ]}"#;
        let messages = parse(legacy);
        assert_eq!(messages.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(), ["hi", "hello"]);
        assert_eq!(messages[1].model.as_deref(), Some("gemini-2.5-flash"));
    }
}

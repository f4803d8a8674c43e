//! Factory Droid: the session JSONL under `~/.factory/sessions/<project>/<session>.jsonl`.
//! Its `message` lines hold Anthropic Messages API messages (`message.role`,
//! `message.content` blocks) like Claude Code's, one whole message per line, so they are
//! read by Claude Code's [`Conversation`]: text is User or Assistant (a user message of
//! nothing but `<system-reminder>` context is System), `thinking` is Reasoning,
//! `tool_use` a call and `tool_result` a Tool message named from it. Droid records no
//! model or usage in the transcript (they are in the `<session>.settings.json` sidecar,
//! which is not uploaded).
//!
//! Skipped: `session_start` (the session's id, title and working directory) and
//! `todo_state` (a snapshot of the todo list, which the todo tool's calls already show).
//! Any other line is raw.

use serde_json::Value;

use super::claude_code::{Conversation, Said};
use super::{lines, raw, time_ms};
use crate::agents::text;
use crate::transcripts::model::Message;

pub fn parse(transcript: &str) -> Vec<Message> {
    let mut conversation = Conversation::default();
    for line in lines(transcript) {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            conversation.messages.push(raw(line));
            continue;
        };
        let ts_ms = time_ms(&record, "timestamp");
        let api_message = record.get("message").unwrap_or(&Value::Null);
        match (text(&record, "type"), text(api_message, "role"), api_message.get("content")) {
            (Some("message"), Some("user"), Some(content)) => conversation.user(content, ts_ms, false),
            (Some("message"), Some("assistant"), Some(content)) => {
                // Each line is a whole message: nothing to gather, no usage.
                let said = Said { message_id: None, ts_ms, model: None, counts: None };
                conversation.assistant(content, &said);
            }
            (Some("session_start" | "todo_state"), _, _) => {}
            _ => conversation.messages.push(raw(line)),
        }
    }
    conversation.messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::model::Role;

    const TRANSCRIPT: &str = include_str!("../../../tests/fixtures/agents/droid/transcript.jsonl");

    #[test]
    fn the_fixture_reads_as_a_conversation() {
        let mut lines: Vec<&str> = TRANSCRIPT.lines().collect();
        lines.insert(4, "not json");
        lines.insert(5, r#"{"type": "compaction_marker", "at": 3}"#);
        let messages = parse(&lines.join("\n"));
        use Role::*;
        assert_eq!(
            messages.iter().map(|m| m.role).collect::<Vec<_>>(),
            [Raw, System, User, Raw, Raw, Assistant, Tool, Reasoning, Assistant, Tool, Assistant]
        );
        assert_eq!(
            messages[1].text,
            "<system-reminder>Today is 2026-09-20. Working directory: /home/dev/proj</system-reminder>"
        );
        assert_eq!(messages[2].text, "Fix the failing unit test in src/lib.rs");
        assert_eq!(messages[3].text, "not json");
        assert_eq!(messages[4].text, r#"{"type": "compaction_marker", "at": 3}"#);
        let run = &messages[5];
        assert_eq!(run.text, "Running the library tests first.");
        assert_eq!(run.tool_calls[0].name, "Execute");
        assert_eq!(run.ts_ms, crate::model::parse_rfc3339_ms("2026-09-20T10:00:03.000Z"));
        assert_eq!((run.model.as_deref(), run.usage), (None, None));
        let output = &messages[6];
        assert_eq!(
            (output.tool_name.as_deref(), output.tool_call_id.as_deref()),
            (Some("Execute"), Some("toolu_01Exec"))
        );
        assert!(!output.is_error);
        assert!(output.text.ends_with("[Process exited with code 101]"));
        assert_eq!(messages[7].text, "The constant must be 4.");
        let edit = &messages[8];
        assert_eq!((edit.text.as_str(), edit.tool_calls[0].id.as_deref()), ("", Some("toolu_02Edit")));
        assert!(edit.tool_calls[0].input.contains(r#""old_str":"let n = 3;""#));
        let failed = &messages[9];
        assert_eq!((failed.tool_name.as_deref(), failed.is_error), (Some("Edit"), true));
        assert_eq!(
            messages[10].text,
            "The edit failed because the line differs; I'll re-read src/lib.rs before editing."
        );
    }
}

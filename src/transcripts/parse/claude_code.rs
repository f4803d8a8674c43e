//! Claude Code: the session JSONL Claude Code writes under
//! `~/.claude/projects/<project>/<session>.jsonl` (a subagent's own file has the same
//! shape). `user` and `assistant` lines hold Anthropic Messages API messages
//! (`message.content` blocks, `message.id`, `model`, `usage`); `timestamp` is RFC 3339.
//!
//! Mapping: a `user` line's text is User (System when Claude Code wrote it: `isMeta`,
//! `isCompactSummary`, or nothing but `<system-reminder>` blocks) and each `tool_result`
//! block a Tool message, named from its `tool_use`. An `assistant` line's `thinking`
//! blocks are Reasoning; its text and `tool_use` blocks the Assistant message. Claude
//! Code writes one line per content block, repeating the message's `usage` (which grows
//! while it streams), so the lines of one `message.id` make one Assistant message with
//! the largest counts; thinking never carries the usage. `summary` and `system` lines
//! are System. Placeholder models (`<synthetic>`) are no model.
//!
//! Skipped: `file-history-snapshot` (backups of edited files, for undo) and
//! `queue-operation` (a prompt typed while the model worked; it reappears as the `user`
//! line when sent). Content blocks with nothing to read (images, redacted thinking) are
//! left out of their message. Any other line is raw.

use std::collections::HashMap;

use serde_json::Value;

use super::{Calls, append_text, json_text, lines, message, raw, text_of, time_ms, usage_of};
use crate::agents::claude_code::record_usage;
use crate::agents::text;
use crate::agents::usage::Line;
use crate::model::Usage as Counts;
use crate::transcripts::model::{Message, Role};

pub fn parse(transcript: &str) -> Vec<Message> {
    let mut conversation = Conversation::default();
    for line in lines(transcript) {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            conversation.messages.push(raw(line));
            continue;
        };
        let ts_ms = time_ms(&record, "timestamp");
        let api_message = record.get("message").unwrap_or(&Value::Null);
        match (text(&record, "type"), api_message.get("content")) {
            (Some("user"), Some(content)) => {
                let by_agent = is_set(&record, "isMeta") || is_set(&record, "isCompactSummary");
                conversation.user(content, ts_ms, by_agent);
            }
            (Some("assistant"), Some(content)) => {
                let counts = match record_usage(&record) {
                    Some(Line::Counts { usage, .. }) => Some(usage),
                    _ => None,
                };
                let said = Said {
                    message_id: text(api_message, "id"),
                    ts_ms,
                    model: text(api_message, "model").filter(|model| !model.starts_with('<')),
                    counts,
                };
                conversation.assistant(content, &said);
            }
            (Some("summary"), _) => {
                let summary = text(&record, "summary").unwrap_or("");
                conversation.messages.push(Message { is_title: true, ..message(Role::System, summary, ts_ms) });
            }
            (Some("system"), _) => {
                let notice = text(&record, "content").or_else(|| text(&record, "subtype")).unwrap_or("");
                conversation.messages.push(message(Role::System, notice, ts_ms));
            }
            (Some("file-history-snapshot" | "queue-operation"), _) => {}
            _ => conversation.messages.push(raw(line)),
        }
    }
    conversation.messages
}

fn is_set(record: &Value, flag: &str) -> bool {
    record.get(flag).and_then(Value::as_bool).unwrap_or(false)
}

/// Context text agents add to a person's turn (Claude Code, Droid).
fn is_reminder(text: &str) -> bool {
    text.trim_start().starts_with("<system-reminder>")
}

/// Where an assistant line came from: its API message and what the line recorded.
pub(super) struct Said<'a> {
    pub message_id: Option<&'a str>,
    pub ts_ms: Option<i64>,
    pub model: Option<&'a str>,
    pub counts: Option<Counts>,
}

/// A transcript of Anthropic Messages API content (Claude Code's and Droid's), read in
/// order; `messages` is the result so far.
#[derive(Default)]
pub(super) struct Conversation {
    pub messages: Vec<Message>,
    calls: Calls,
    /// The Assistant message of each API message id and its largest counts so far.
    assistant_at: HashMap<String, (usize, Option<Counts>)>,
}

impl Conversation {
    /// A user-role message: tool results where they stand, then its text.
    pub fn user(&mut self, content: &Value, ts_ms: Option<i64>, by_agent: bool) {
        let mut said = String::new();
        let mut only_reminders = true;
        let blocks = match content {
            Value::Array(blocks) => blocks.as_slice(),
            other => std::slice::from_ref(other),
        };
        for block in blocks {
            let block_text = match block {
                Value::String(plain) => Some(plain.as_str()),
                _ if text(block, "type") == Some("text") => text(block, "text"),
                _ => None,
            };
            if let Some(block_text) = block_text {
                only_reminders &= is_reminder(block_text);
                append_text(&mut said, block_text);
            } else if text(block, "type") == Some("tool_result") {
                let output = text_of(block.get("content").unwrap_or(&Value::Null));
                let is_error = is_set(block, "is_error");
                let result = self.calls.result(text(block, "tool_use_id"), None, output, is_error);
                self.messages.push(Message { ts_ms, ..result });
            }
        }
        if !said.is_empty() {
            let role = if by_agent || only_reminders { Role::System } else { Role::User };
            self.messages.push(message(role, said, ts_ms));
        }
    }

    /// An assistant-role message (or one line of it): thinking, then text and tool calls,
    /// gathered with earlier lines of the same API message.
    pub fn assistant(&mut self, content: &Value, said: &Said<'_>) {
        let mut reply = String::new();
        let mut tool_calls = Vec::new();
        let blocks = match content {
            Value::Array(blocks) => blocks.as_slice(),
            other => std::slice::from_ref(other),
        };
        for block in blocks {
            match (block, text(block, "type")) {
                (Value::String(plain), _) => append_text(&mut reply, plain),
                (_, Some("text")) => append_text(&mut reply, text(block, "text").unwrap_or("")),
                (_, Some("thinking")) => {
                    let thought = message(Role::Reasoning, text(block, "thinking").unwrap_or(""), said.ts_ms);
                    self.messages.push(Message { model: said.model.map(str::to_string), ..thought });
                }
                (_, Some("tool_use" | "server_tool_use")) => {
                    let name = text(block, "name").unwrap_or("unknown");
                    let input = json_text(block.get("input").unwrap_or(&Value::Null));
                    tool_calls.push(self.calls.call(text(block, "id"), name, input));
                }
                _ => {}
            }
        }
        if reply.is_empty() && tool_calls.is_empty() {
            return;
        }
        let earlier = said.message_id.and_then(|id| self.assistant_at.get_mut(id));
        if let Some((index, counts)) = earlier
            && let Some(gathered) = self.messages.get_mut(*index)
        {
            *counts = match (*counts, said.counts) {
                (Some(before), Some(now)) => Some(before.max_with(&now)),
                (before, now) => before.or(now),
            };
            append_text(&mut gathered.text, &reply);
            gathered.tool_calls.extend(tool_calls);
            gathered.usage = counts.as_ref().and_then(usage_of);
            return;
        }
        if let Some(id) = said.message_id {
            self.assistant_at.insert(id.to_string(), (self.messages.len(), said.counts));
        }
        self.messages.push(Message {
            tool_calls,
            model: said.model.map(str::to_string),
            usage: said.counts.as_ref().and_then(usage_of),
            ..message(Role::Assistant, reply, said.ts_ms)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::model::Usage;

    const TRANSCRIPT: &str = include_str!("../../../tests/fixtures/agents/claude_code/transcript.jsonl");
    const SUBAGENT: &str = include_str!("../../../tests/fixtures/agents/claude_code/subagent.jsonl");

    fn count(messages: &[Message], role: Role) -> usize {
        messages.iter().filter(|m| m.role == role).count()
    }

    /// The fixture with a line that is not JSON and a JSON line of no known type after
    /// its second line (the first person's prompt).
    fn with_garbage(transcript: &str) -> String {
        let mut lines: Vec<&str> = transcript.lines().collect();
        lines.insert(2, "not json");
        lines.insert(3, r#"{"type": "mystery", "detail": 1}"#);
        lines.join("\n")
    }

    #[test]
    fn the_fixture_reads_as_a_conversation() {
        let messages = parse(&with_garbage(TRANSCRIPT));
        let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
        use Role::*;
        assert_eq!(
            roles,
            [Raw, User, Raw, Raw, Reasoning, Assistant, Tool, Assistant, Assistant, Tool, Assistant, System, Assistant]
        );
        assert_eq!((count(&messages, Assistant), count(&messages, Tool), count(&messages, Raw)), (5, 2, 3));
        assert_eq!(messages[1].text, "The login test fails with a 500; find out why and fix it.");
        assert_eq!(messages[1].ts_ms, Some(1_795_244_401_000));
        assert_eq!(
            (messages[2].text.as_str(), messages[3].text.as_str()),
            ("not json", r#"{"type": "mystery", "detail": 1}"#)
        );
        assert_eq!(messages[4].text, "Run the test first.");
        assert_eq!(messages[11].text, "Fix login rate limit test");
        assert_eq!(messages[12].text, "Anything else?");
    }

    #[test]
    fn tool_calls_and_results_are_paired_by_id() {
        let messages = parse(TRANSCRIPT);
        let bash = &messages[3];
        assert_eq!((bash.role, bash.text.as_str()), (Role::Assistant, ""));
        assert_eq!(bash.tool_calls.len(), 1);
        assert_eq!(bash.tool_calls[0].id.as_deref(), Some("toolu_01A"));
        assert_eq!(bash.tool_calls[0].name, "Bash");
        assert_eq!(bash.tool_calls[0].input, r#"{"command":"cargo test login -- --nocapture"}"#);
        let result = &messages[4];
        assert_eq!(result.text, "test login_rate_limit ... FAILED");
        assert_eq!((result.tool_name.as_deref(), result.tool_call_id.as_deref()), (Some("Bash"), Some("toolu_01A")));
        assert!(!result.is_error);
        let failed = &messages[7];
        assert_eq!((failed.tool_name.as_deref(), failed.is_error), (Some("Edit"), true));
        assert_eq!(failed.text, "String to replace not found in file.");
    }

    #[test]
    fn lines_of_one_api_message_make_one_assistant_message_with_its_largest_usage() {
        let messages = parse(TRANSCRIPT);
        let limit = &messages[5];
        assert_eq!(limit.text, "The limit is too low.");
        assert_eq!(limit.tool_calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["Edit"]);
        assert_eq!(limit.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
        assert_eq!(
            limit.usage,
            Some(Usage { input_tokens: 5, output_tokens: 95, cache_read_tokens: 11500, cache_write_tokens: 300 })
        );
        let bash = &messages[3];
        assert_eq!(
            bash.usage,
            Some(Usage { input_tokens: 3, output_tokens: 120, cache_read_tokens: 10000, cache_write_tokens: 1500 })
        );
        assert_eq!(messages[2].usage, None, "thinking carries no usage");
        let synthetic = &messages[6];
        assert_eq!(
            (synthetic.text.as_str(), synthetic.model.as_deref(), synthetic.usage),
            ("No response requested.", None, None)
        );
    }

    #[test]
    fn a_subagent_file_reads_the_same_way() {
        let messages = parse(SUBAGENT);
        assert_eq!(messages.iter().map(|m| m.role).collect::<Vec<_>>(), [Role::Raw, Role::User, Role::Assistant]);
        assert_eq!(messages[1].text, "Review src/login.rs");
        assert_eq!(messages[2].text, "Reading\n\nLooks right.");
        assert_eq!(messages[2].model.as_deref(), Some("claude-haiku-4-5-20251001"));
        assert_eq!(messages[2].usage.map(|u| u.output_tokens), Some(640));
    }

    #[test]
    fn agent_written_user_lines_are_system() {
        let transcript = [
            r#"{"type": "user", "isMeta": true, "message": {"role": "user", "content": "Caveat: local commands"}}"#,
            r#"{"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"}]}}"#,
            r#"{"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}"#,
        ]
        .join("\n");
        let messages = parse(&transcript);
        assert!(messages.iter().all(|m| m.role == Role::System), "{messages:?}");
        assert_eq!(messages[2].text, "Conversation compacted");
    }
}

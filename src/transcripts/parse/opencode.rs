//! OpenCode: OpenCode keeps sessions in its database and the shipper uploads no file for
//! it, so the transcript read here is the JSON `opencode export <session>` prints
//! (anomalyco/opencode `packages/opencode/src/cli/cmd/export.ts`): `{info, messages:
//! [{info, parts}], todos}`, the message and part objects of `session/message-v2.ts`.
//! A text that is not such an object is read as raw lines.
//!
//! Mapping: a user message's text parts are User (the ones OpenCode adds itself,
//! `synthetic`, are System), its `compaction` part System. An assistant message's
//! `reasoning` parts are Reasoning; its text parts and `tool` parts (`callID`, `tool`,
//! `state.input`) the Assistant message, with `modelID`, `time.created` and `tokens` (as
//! the hooks count them); then each finished tool part a Tool message: `state.output`
//! (an error when bash's `metadata.exit` is not 0) or `state.error`. An assistant
//! message's `error` is System.
//!
//! Skipped: the session `info` and `todos` (the todo tool's calls show the list), and
//! the parts `step-start`/`step-finish` (step boundaries; the message's `tokens` are
//! their sum), `snapshot` and `patch` (git bookkeeping) and `file` (attachments; their
//! text arrives as synthetic text parts). Other parts and messages of another role are
//! raw, as their JSON.

use serde_json::Value;

use super::{Calls, append_text, json_text, message, raw, raw_lines, time_ms, usage_of};
use crate::agents::opencode::message_usage;
use crate::agents::text;
use crate::transcripts::model::{Message, Role};

pub fn parse(transcript: &str) -> Vec<Message> {
    let export = serde_json::from_str::<Value>(transcript).ok();
    let Some(exported) = export.as_ref().and_then(|e| e.get("messages")).and_then(Value::as_array) else {
        return raw_lines(transcript);
    };
    let mut calls = Calls::default();
    let mut out = Vec::new();
    for exported_message in exported {
        let info = exported_message.get("info").unwrap_or(&Value::Null);
        let parts = exported_message.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let created_ms = info.get("time").and_then(|time| time_ms(time, "created"));
        match text(info, "role") {
            Some("user") => user(parts, created_ms, &mut out),
            Some("assistant") => assistant(info, parts, created_ms, &mut calls, &mut out),
            _ => out.push(raw(&exported_message.to_string())),
        }
    }
    out
}

fn is_bookkeeping(part: &Value) -> bool {
    matches!(text(part, "type"), Some("step-start" | "step-finish" | "snapshot" | "patch" | "file"))
}

fn user(parts: &[Value], ts_ms: Option<i64>, out: &mut Vec<Message>) {
    let (mut typed, mut added) = (String::new(), String::new());
    let mut after = Vec::new();
    for part in parts {
        match text(part, "type") {
            Some("text") if part.get("synthetic") == Some(&Value::Bool(true)) => {
                append_text(&mut added, text(part, "text").unwrap_or(""));
            }
            Some("text") => append_text(&mut typed, text(part, "text").unwrap_or("")),
            Some("compaction") => after.push(message(Role::System, "conversation compacted", ts_ms)),
            _ if is_bookkeeping(part) => {}
            _ => after.push(raw(&part.to_string())),
        }
    }
    if !typed.is_empty() {
        out.push(message(Role::User, typed, ts_ms));
    }
    if !added.is_empty() {
        out.push(message(Role::System, added, ts_ms));
    }
    out.extend(after);
}

fn assistant(info: &Value, parts: &[Value], ts_ms: Option<i64>, calls: &mut Calls, out: &mut Vec<Message>) {
    let model = text(info, "modelID").map(str::to_string);
    let usage = message_usage(info).and_then(|(_, _, counts)| usage_of(&counts));
    let mut reply = Message { model: model.clone(), usage, ..message(Role::Assistant, "", ts_ms) };
    let mut results = Vec::new();
    for part in parts {
        match text(part, "type") {
            Some("reasoning") => {
                let thought = text(part, "text").unwrap_or("");
                let at = part.get("time").and_then(|time| time_ms(time, "start")).or(ts_ms);
                out.push(Message { model: model.clone(), ..message(Role::Reasoning, thought, at) });
            }
            Some("text") => append_text(&mut reply.text, text(part, "text").unwrap_or("")),
            Some("tool") => {
                let state = part.get("state").unwrap_or(&Value::Null);
                let name = text(part, "tool").unwrap_or("unknown");
                let input = json_text(state.get("input").unwrap_or(&Value::Null));
                reply.tool_calls.push(calls.call(text(part, "callID"), name, input));
                let exit = state.get("metadata").and_then(|m| m.get("exit")).and_then(Value::as_i64);
                let (said, is_error) = match text(state, "status") {
                    Some("completed") => (state.get("output"), exit.is_some_and(|code| code != 0)),
                    Some("error") => (state.get("error"), true),
                    // Pending or running when the export was taken: no result yet.
                    _ => continue,
                };
                let result =
                    calls.result(text(part, "callID"), Some(name), json_text(said.unwrap_or(&Value::Null)), is_error);
                let at = state.get("time").and_then(|time| time_ms(time, "end"));
                results.push(Message { ts_ms: at, ..result });
            }
            _ if is_bookkeeping(part) => {}
            _ => results.push(raw(&part.to_string())),
        }
    }
    if !reply.text.is_empty() || !reply.tool_calls.is_empty() {
        out.push(reply);
    }
    out.extend(results);
    if let Some(error) = info.get("error").filter(|error| !error.is_null()) {
        let name = text(error, "name").unwrap_or("error");
        let detail = error.get("data").and_then(|data| text(data, "message")).unwrap_or("");
        out.push(message(Role::System, format!("{name}: {detail}"), ts_ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::model::Usage;

    const EXPORT: &str = include_str!("../../../tests/fixtures/agents/opencode/export.json");

    #[test]
    fn the_export_reads_as_a_conversation() {
        let messages = parse(EXPORT);
        use Role::*;
        assert_eq!(
            messages.iter().map(|m| m.role).collect::<Vec<_>>(),
            [User, System, Reasoning, Assistant, Tool, Assistant, Tool, Assistant, Tool, Tool, Tool, System]
        );
        assert_eq!(messages[0].text, "Fix the failing test in src/parse.ts");
        assert_eq!(messages[0].ts_ms, Some(1_762_300_001_000));
        assert!(messages[1].text.starts_with("Called the Read tool with the following input"));
        assert_eq!(messages[2].text, "The test file is attached; the parser itself is in src/parse.ts.");
        let first = &messages[3];
        assert_eq!(first.text, "I'll read src/parse.ts first.");
        assert_eq!(first.tool_calls[0].input, r#"{"filePath":"/home/dev/proj/src/parse.ts"}"#);
        assert_eq!(first.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(
            first.usage,
            Some(Usage { input_tokens: 1352, output_tokens: 150, cache_read_tokens: 0, cache_write_tokens: 14000 })
        );
        let last = &messages[7];
        assert!(last.text.starts_with("The edit was refused, so nothing changed yet."));
        assert_eq!(last.tool_calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["edit", "read", "task"]);
        // gpt-5's 480 output tokens and 256 of reasoning (disjoint: `total` is the five summed).
        assert_eq!(
            last.usage,
            Some(Usage { input_tokens: 2100, output_tokens: 736, cache_read_tokens: 13824, cache_write_tokens: 0 })
        );
        assert_eq!(messages[11].text, "conversation compacted");
    }

    #[test]
    fn tool_parts_become_results_with_their_outcome() {
        let messages = parse(EXPORT);
        let bash = &messages[6];
        assert_eq!(
            (bash.tool_name.as_deref(), bash.tool_call_id.as_deref()),
            (Some("bash"), Some("toolu_01BashQ9w8E7r6T5y4U3i2"))
        );
        assert!(bash.is_error, "exit 1");
        assert_eq!(bash.ts_ms, Some(1_762_300_019_800));
        let refused = &messages[8];
        assert_eq!(refused.text, "The user rejected permission to use this specific tool call.");
        assert!(refused.is_error);
        let task = &messages[10];
        assert_eq!(
            (task.text.as_str(), task.is_error),
            ("parse() is called in src/cli.ts:14 and src/api.ts:52", false)
        );
    }

    #[test]
    fn unknown_parts_are_raw_in_place_and_text_that_is_no_export_is_raw_lines() {
        let mut export: Value = serde_json::from_str(EXPORT).unwrap();
        let mystery = serde_json::json!({"type": "mystery", "id": "prt_x"});
        export["messages"][2]["parts"].as_array_mut().unwrap().insert(2, mystery.clone());
        let messages = parse(&export.to_string());
        assert_eq!((messages[5].role, messages[6].role, messages[7].role), (Role::Assistant, Role::Tool, Role::Raw));
        assert_eq!(messages[7].text, mystery.to_string());
        let lines = parse("not json\n{\"info\": {}}\n");
        assert_eq!(
            lines.iter().map(|m| (m.role, m.text.as_str())).collect::<Vec<_>>(),
            [(Role::Raw, "not json"), (Role::Raw, "{\"info\": {}}")]
        );
    }
}

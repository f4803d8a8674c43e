//! Gemini CLI's transcript store: the chat recordings
//! `~/.gemini/tmp/<project>/chats/session-*.jsonl`. A message is re-appended whenever it
//! changes, so the last record of each `id` is the message. A recording becomes
//! session_start (first record), prompt_submit (each `user` message), tool_start/tool_end
//! (each tool call of a `gemini` message, by its final status: `error` → error,
//! `cancelled` → denied), one turn_end per `gemini` message with tokens (counted as the
//! hook counts them) and session_end (last record).

use std::path::Path;

use serde_json::Value;

use super::{ImportedSession, Importer, Store, by_path, event, parse_ms, usage_event};
use crate::agents::gemini_cli::{record_usage, tool_action, transcript_line};
use crate::agents::usage::Line;
use crate::hook::adapters::common::{digest_of, target_hash};
use crate::model::wire::{Draft, DraftTool};
use crate::model::{AgentType, EventType};

pub const IMPORTER: Importer = Importer {
    default_root: || crate::hook::local::home().join(".gemini/tmp"),
    store: Store::Files(|path| {
        path.extension().is_some_and(|e| e == "jsonl")
            && path.parent().and_then(Path::file_name).is_some_and(|d| d == "chats")
    }),
    parse: |source| by_path(parse_file, source),
    usage_line: Some(transcript_line),
};

const AGENT: AgentType = AgentType::GeminiCli;

fn parse_file(path: &Path) -> anyhow::Result<Option<ImportedSession>> {
    let text = std::fs::read_to_string(path)?;
    let mut session: Option<String> = None;
    // The last record of each message id, in order of first appearance.
    let mut messages: Vec<(String, Value)> = Vec::new();
    let (mut first_ms, mut last_ms) = (None::<i64>, 0i64);
    for raw in text.lines() {
        let Ok(record) = serde_json::from_str::<Value>(raw) else { continue };
        if session.is_none() {
            session = record.get("sessionId").and_then(Value::as_str).map(str::to_string);
        }
        let Some(id) = record.get("id").and_then(Value::as_str) else { continue };
        if let Some(ts) = record.get("timestamp").and_then(Value::as_str).and_then(parse_ms) {
            first_ms.get_or_insert(ts);
            last_ms = last_ms.max(ts);
        }
        match messages.iter_mut().find(|(m, _)| m == id) {
            Some(entry) => entry.1 = record,
            None => messages.push((id.to_string(), record)),
        }
    }
    let (Some(session), Some(first_ms)) = (session, first_ms) else { return Ok(None) };
    let mut events = vec![event(AGENT, &session, EventType::SessionStart, first_ms, "start")];
    for (id, message) in &messages {
        let ts = message.get("timestamp").and_then(Value::as_str).and_then(parse_ms).unwrap_or(first_ms);
        match message.get("type").and_then(Value::as_str) {
            Some("user") => events.push(event(AGENT, &session, EventType::PromptSubmit, ts, id)),
            Some("gemini") => {
                for call in message.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                    events.extend(tool_events(&session, call, ts));
                }
                if let Some(Line::Counts { model, usage, .. }) = record_usage(message)
                    && !usage.is_zero()
                {
                    events.push(usage_event(AGENT, &session, EventType::TurnEnd, ts, id, model.as_deref(), &usage)?);
                }
            }
            _ => {}
        }
    }
    events.push(event(AGENT, &session, EventType::SessionEnd, last_ms, "end"));
    Ok(Some(ImportedSession { events, last_ms, ledger: Vec::new() }))
}

fn tool_events(session: &str, call: &Value, message_ms: i64) -> Vec<Draft> {
    let Some(call_id) = call.get("id").and_then(Value::as_str) else { return Vec::new() };
    let name = call.get("name").and_then(Value::as_str).unwrap_or("unknown");
    let ts = call.get("timestamp").and_then(Value::as_str).and_then(parse_ms).unwrap_or(message_ms);
    let input = call.get("args").cloned().unwrap_or(Value::Null);
    let (digest, bytes) = digest_of(&input);
    let mut tool = DraftTool {
        name: Some(format!("gemini_cli:{name}")),
        action: Some(tool_action(name, false).to_string()),
        use_id: Some(call_id.to_string()),
        input_sha256: Some(digest),
        input_bytes: Some(bytes as i64),
        target_hash: target_hash(&input),
        ..DraftTool::default()
    };
    let mut start = event(AGENT, session, EventType::ToolStart, ts, call_id);
    start.tool = Some(tool.clone());
    let failed = call.get("result").and_then(Value::as_array).into_iter().flatten().any(|part| {
        part.get("functionResponse").and_then(|r| r.get("response")).and_then(|r| r.get("error")).is_some()
    });
    let status = match call.get("status").and_then(Value::as_str) {
        Some("cancelled") => "denied",
        Some("error") => "error",
        Some("executing" | "scheduled" | "validating" | "awaiting_approval") => return vec![start],
        _ if failed => "error",
        _ => "success",
    };
    let output = call.get("result").cloned().unwrap_or(Value::Null);
    let (digest, bytes) = digest_of(&output);
    tool.output_sha256 = Some(digest);
    tool.output_bytes = Some(bytes as i64);
    tool.status = Some(status.to_string());
    let mut end = event(AGENT, session, EventType::ToolEnd, ts, call_id);
    end.tool = Some(tool);
    vec![start, end]
}

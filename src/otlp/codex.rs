//! OpenAI Codex's log events (`openai/codex`, `docs/config.md` "otel" and
//! `codex-rs/otel`): the attribute `event.name` is `codex.<name>` (the record's own
//! `eventName` is a source location and is not used); the conversation is
//! `conversation.id`; `duration_ms`, `success` and the input and output token counts
//! are text, the cached and reasoning counts integers.
//!
//! Mapping (field by field in `docs/otel.md`): `conversation_starts` → session_start
//! with its model, `user_prompt` → prompt_submit (its length), `sse_event` of kind
//! `response.completed` → turn_end with the response's tokens (OpenAI counts cached
//! input inside input and reasoning inside output; the wire contract counts each kind
//! apart, as the hook's Codex transcript reader does), `tool_result` → tool_end keyed
//! by `call_id` (its `success` says only whether the tool ran: a command that exited
//! non-zero is `error` by the exit code its `output` states, one an execpolicy rule
//! refused is `denied`), `tool_decision` `denied` or `abort` → tool_end `denied`. Every other
//! event (each streamed delta is one) is counted and not stored.

use super::claude_code::copy_texts;
use super::logs::{Outcome, Record};
use crate::agents::codex::{reported_status, tool_action};
use crate::model::wire::{DraftTool, DraftUsage};
use crate::model::{AgentType, EventType, ToolStatus};

pub const AGENT: AgentType = AgentType::Codex;

pub fn map(record: &Record<'_>) -> Outcome {
    let attributes = &record.attributes;
    match record.name.as_str() {
        "conversation_starts" => {
            let mut event = record.start();
            copy_texts(&mut event, attributes, &["approval_policy", "sandbox_policy", "reasoning_effort"]);
            Outcome::Event(event)
        }
        "user_prompt" => Outcome::Event(record.prompt()),
        "sse_event" if attributes.text("event.kind").as_deref() == Some("response.completed") => {
            if attributes.text("error.message").is_some() {
                return Outcome::Skipped;
            }
            // Codex 0.171.0 logs each request's response.completed twice, only the second
            // with its counts (run for real against a stand-in): the first is not a request.
            let Some(input) = attributes.count("input_token_count") else {
                return Outcome::Skipped;
            };
            let output = attributes.count("output_token_count").unwrap_or(0);
            let cached = attributes.count("cached_token_count").unwrap_or(0).min(input);
            let reasoning = attributes.count("reasoning_token_count").unwrap_or(0).min(output);
            let mut event = record.event(EventType::TurnEnd, None);
            event.model = attributes.text("model");
            event.usage = Some(DraftUsage {
                input_tokens: Some(input - cached),
                output_tokens: Some(output - reasoning),
                cache_read_tokens: Some(cached),
                reasoning_tokens: Some(reasoning),
                ..DraftUsage::default()
            });
            Outcome::Event(event)
        }
        "tool_result" => {
            let output = attributes.text("output").unwrap_or_default();
            tool_end(record, reported_status(attributes.flag("success"), &output))
        }
        "tool_decision" => match attributes.text("decision").map(|d| d.to_ascii_lowercase()).as_deref() {
            Some("denied" | "abort") => tool_end(record, ToolStatus::Denied),
            _ => Outcome::Skipped,
        },
        _ => Outcome::Skipped,
    }
}

fn tool_end(record: &Record<'_>, status: ToolStatus) -> Outcome {
    let attributes = &record.attributes;
    let Some(name) = attributes.text("tool_name") else {
        return Outcome::Refused("tool_name is missing".into());
    };
    let call_id = attributes.text("call_id");
    let mut event = record.event(EventType::ToolEnd, call_id.as_deref());
    // The arguments and output are content: only their sizes are kept (§1.5).
    let size = |key: &str| attributes.text(key).map(|text| text.len() as i64);
    let mut tool = DraftTool {
        name: Some(format!("{}:{name}", AGENT.as_str())),
        action: Some(tool_action(&name).to_string()),
        server: attributes.text("mcp_server"),
        use_id: call_id,
        duration_ms: attributes.count("duration_ms"),
        input_bytes: size("arguments"),
        output_bytes: size("output"),
        ..DraftTool::default()
    };
    tool.set_status(status);
    event.tool = Some(tool);
    if let Some(source) = attributes.text("source") {
        event.note("decision_source", source.to_ascii_lowercase());
    }
    Outcome::Event(event)
}

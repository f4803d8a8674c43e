//! Gemini CLI's log events (`google-gemini/gemini-cli`, `docs/cli/telemetry.md`), and
//! Qwen Code's (`QwenLM/qwen-code`, a fork that names them `qwen-code.<name>`):
//! the attribute `event.name` is `gemini_cli.<name>` (the body is a sentence);
//! `session.id` on every record; numbers are numbers and `success` a boolean.
//!
//! Mapping (field by field in `docs/otel.md`): `config` → session_start with its
//! model, `user_prompt` → prompt_submit (its length), `api_response` → turn_end with
//! the response's tokens (Gemini counts cached input inside the prompt count; the wire
//! contract counts it apart, as the hook's Gemini transcript reader does; thoughts are
//! reasoning), `tool_call` → tool_end (a `reject` decision or a `policy_violation` is `denied`),
//! `chat_compression` → compact with `tokens_before` and `tokens_after` (the only sign
//! that a compression happened: the `PreCompress` hook fires before every turn). Other
//! events are counted and not stored.

use crate::model::wire::{DraftTool, DraftUsage};
use crate::model::{EventType, ToolStatus};

use super::logs::{Outcome, Record};
use crate::agents::gemini_cli::tool_action;

pub fn map(record: &Record<'_>) -> Outcome {
    let attributes = &record.attributes;
    match record.name.as_str() {
        "config" => Outcome::Event(record.start()),
        "user_prompt" => Outcome::Event(record.prompt()),
        "api_response" => {
            let input = attributes.count("input_token_count").unwrap_or(0);
            let cached = attributes.count("cached_content_token_count").unwrap_or(0).min(input);
            let mut event = record.event(EventType::TurnEnd, attributes.text("response_id").as_deref());
            event.model = attributes.text("model");
            event.usage = Some(DraftUsage {
                input_tokens: Some(input - cached),
                output_tokens: Some(attributes.count("output_token_count").unwrap_or(0)),
                cache_read_tokens: Some(cached),
                reasoning_tokens: Some(attributes.count("thoughts_token_count").unwrap_or(0)),
                ..DraftUsage::default()
            });
            event.response_ms = attributes.count("duration_ms");
            Outcome::Event(event)
        }
        "tool_call" => {
            let Some(name) = attributes.text("function_name") else {
                return Outcome::Refused("function_name is missing".into());
            };
            let mcp = attributes.text("tool_type").as_deref() == Some("mcp");
            // A call the user rejected carries `decision` = `reject`; one the policy
            // engine denied carries no decision, only `error_type` = `policy_violation`.
            let denied = attributes.text("decision").as_deref() == Some("reject")
                || attributes.text("error_type").as_deref() == Some("policy_violation");
            let status = match (denied, attributes.flag("success")) {
                (true, _) => ToolStatus::Denied,
                (false, Some(false)) => ToolStatus::Error,
                _ => ToolStatus::Success,
            };
            let mut event = record.event(EventType::ToolEnd, None);
            let mut tool = DraftTool {
                name: Some(format!("{}:{name}", record.agent.as_str())),
                action: Some(tool_action(&name, mcp).to_string()),
                server: attributes.text("mcp_server_name").filter(|_| mcp),
                duration_ms: attributes.count("duration_ms"),
                output_bytes: attributes.count("content_length"),
                ..DraftTool::default()
            };
            tool.set_status(status);
            event.tool = Some(tool);
            Outcome::Event(event)
        }
        "chat_compression" => {
            let mut event = record.event(EventType::Compact, None);
            event.note("trigger", "auto");
            for key in ["tokens_before", "tokens_after"] {
                if let Some(count) = attributes.count(key) {
                    event.note(key, count);
                }
            }
            Outcome::Event(event)
        }
        _ => Outcome::Skipped,
    }
}

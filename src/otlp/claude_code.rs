//! Claude Code's log events (`code.claude.com/docs/en/monitoring-usage`, "Events"):
//! the body is `claude_code.<name>` and the attribute `event.name` the bare name;
//! every event carries `session.id`, `event.timestamp` and `event.sequence`. Numbers
//! were strings up to 2.1.121 and are numbers since; `success` is `"true"`/`"false"`;
//! `tool_result` said `name`, `decision` and `source` in 2025 builds and says
//! `tool_name`, `decision_type` and `decision_source` now; one build wrote the use id of a
//! failed call as `use_id`. All of these are read.
//!
//! Mapping (field by field in `docs/otel.md`): `user_prompt` → prompt_submit (its
//! length, never its text; a built-in slash command is none), `api_request` → turn_end with the request's tokens and
//! model (the vendor's `cost_usd` kept as the client's cost, the server prices the
//! tokens), `tool_result` → tool_end, `tool_decision` with `reject` → tool_end
//! `denied` (a refused call has no result), `compaction` → compact,
//! `subagent_completed` → subagent_end. The inventory events (`plugin_loaded`,
//! `mcp_server_connection`, `hook_registered`, `skill_activated`) become capability
//! sightings ([`inventory`]). Other events are counted and not stored.

use serde_json::{Value, json};

use super::logs::{Outcome, Record};
use crate::agents::claude_code::tool_action;
use crate::model::sightings::{CapabilityKind as Kind, DETAIL_KEYS, Sighting, clipped};
use crate::model::wire::{Draft, DraftTool, DraftUsage};
use crate::model::{AgentType, EventType, ToolStatus};

pub const AGENT: AgentType = AgentType::ClaudeCode;

pub fn map(record: &Record<'_>) -> Outcome {
    let attributes = &record.attributes;
    match record.name.as_str() {
        // A built-in command (`/compact`, `/clear`, `/model`: `command_source` builtin)
        // is the person driving the tool, not a prompt to the model; the hook hears no
        // UserPromptSubmit for one either (2.1.332, run for real). What it does is
        // recorded as itself (a compaction, its requests).
        "user_prompt" if attributes.text("command_source").as_deref() == Some("builtin") => Outcome::Skipped,
        "user_prompt" => Outcome::Event(record.prompt()),
        "api_request" => {
            let request_id = attributes.text("request_id");
            let mut event = record.event(EventType::TurnEnd, request_id.as_deref());
            event.model = attributes.text("model");
            event.usage = Some(DraftUsage {
                input_tokens: Some(attributes.count("input_tokens").unwrap_or(0)),
                output_tokens: Some(attributes.count("output_tokens").unwrap_or(0)),
                cache_read_tokens: Some(attributes.count("cache_read_tokens").unwrap_or(0)),
                // The export does not split cache writes by lifetime; the 5-minute
                // write is the default and the price table's cheaper assumption.
                cache_write_5m_tokens: Some(attributes.count("cache_creation_tokens").unwrap_or(0)),
                ..DraftUsage::default()
            });
            let micros = attributes.count("cost_usd_micros").map(|micros| micros as f64 / 1e6);
            event.client_cost_usd = micros.or_else(|| attributes.number("cost_usd")).filter(|cost| *cost >= 0.0);
            event.response_ms = attributes.count("duration_ms");
            copy_texts(&mut event, attributes, &["request_id", "query_source", "speed", "effort"]);
            Outcome::Event(event)
        }
        "tool_result" => tool_end(record, status_of_result(record)),
        "tool_decision" => match attributes.first_text(&["decision", "decision_type"]).as_deref() {
            Some("reject") => tool_end(record, ToolStatus::Denied),
            _ => Outcome::Skipped,
        },
        "compaction" => {
            let mut event = record.event(EventType::Compact, None);
            copy_texts(&mut event, attributes, &["trigger"]);
            Outcome::Event(event)
        }
        "subagent_completed" => {
            let mut event = record.event(EventType::SubagentEnd, None);
            if let Some(agent) = attributes.text("agent_type") {
                event.note("subagent_type", agent);
            }
            Outcome::Event(event)
        }
        _ => Outcome::Skipped,
    }
}

fn status_of_result(record: &Record<'_>) -> ToolStatus {
    let attributes = &record.attributes;
    let decision = attributes.first_text(&["decision_type", "decision"]);
    if decision.as_deref() == Some("reject") {
        ToolStatus::Denied
    } else if attributes.flag("success") == Some(false) {
        ToolStatus::Error
    } else {
        ToolStatus::Success
    }
}

/// A tool call's end, keyed by its use id so a replay is the same event.
fn tool_end(record: &Record<'_>, status: ToolStatus) -> Outcome {
    let attributes = &record.attributes;
    let Some(name) = attributes.first_text(&["tool_name", "name"]) else {
        return Outcome::Refused("tool_name is missing".into());
    };
    let parameters: Option<Value> =
        attributes.text("tool_parameters").and_then(|text| serde_json::from_str(&text).ok());
    let parameter = |key: &str| parameters.as_ref()?.get(key)?.as_str().map(str::to_string);
    // With tool details off, every MCP tool is "mcp_tool"; with them on, the parameters
    // name the server and tool, and the hook's name for it is mcp__<server>__<tool>.
    let (name, server) = match (name.as_str(), parameter("mcp_server_name"), parameter("mcp_tool_name")) {
        ("mcp_tool", Some(server), Some(tool)) => (format!("mcp__{server}__{tool}"), Some(server)),
        _ => {
            let server = name.strip_prefix("mcp__").and_then(|rest| rest.split("__").next()).map(str::to_string);
            (name, server)
        }
    };
    let use_id = attributes.first_text(&["tool_use_id", "use_id"]);
    let mut event = record.event(EventType::ToolEnd, use_id.as_deref());
    let mut tool = DraftTool {
        name: Some(format!("{}:{name}", AGENT.as_str())),
        action: Some(tool_action(&name).to_string()),
        server,
        skill: parameter("skill_name"),
        duration_ms: attributes.count("duration_ms"),
        input_bytes: attributes.count("tool_input_size_bytes"),
        output_bytes: attributes.count("tool_result_size_bytes"),
        use_id,
        ..DraftTool::default()
    };
    tool.set_status(status);
    event.tool = Some(tool);
    if let Some(source) = attributes.first_text(&["decision_source", "source"]) {
        event.note("decision_source", source);
    }
    copy_texts(&mut event, attributes, &["error_type"]);
    Outcome::Event(event)
}

/// Copies short descriptive attributes into the event's metadata (redacted at ingest
/// like every metadata value).
pub(super) fn copy_texts(event: &mut Draft, attributes: &super::attributes::Attributes<'_>, keys: &[&str]) {
    for key in keys {
        if let Some(text) = attributes.text(key).filter(|text| text.len() <= 200) {
            event.note(key, text);
        }
    }
}

/// Claude Code's inventory events (what a session loaded: plugins, MCP servers, hooks,
/// skills) as capability sightings, stored apart from the events
/// (`sessions::capabilities`); `None` for any other event. Only the fields
/// `capabilities::DETAIL_KEYS` names are kept (never `error`, never a command line).
pub fn inventory(record: &Record<'_>, version: Option<&str>) -> Option<Sighting> {
    let attributes = &record.attributes;
    let (kind, name) = match record.name.as_str() {
        "mcp_server_connection" => (
            Kind::McpServer,
            attributes
                .first_text(&["server_name", "plugin.name"])
                .unwrap_or_else(|| "(name withheld by the agent)".into()),
        ),
        "plugin_loaded" => (Kind::Plugin, attributes.text("plugin.name")?),
        "hook_registered" => {
            let part = |key: &str| attributes.text(key).unwrap_or_else(|| "?".into());
            (Kind::Hook, format!("{} {} ({})", part("hook_event"), part("hook_type"), part("hook_source")))
        }
        "skill_activated" => (Kind::Skill, attributes.first_text(&["skill.name", "skill_name"])?),
        _ => return None,
    };
    let detail = DETAIL_KEYS
        .iter()
        .filter_map(|key| attributes.text(key).map(|value| (key.to_string(), json!(clipped(&value)))))
        .collect();
    Some(Sighting {
        agent: AGENT,
        kind,
        name: clipped(&name),
        detail,
        agent_version: version.map(str::to_string),
        session_id: record.session_id.clone(),
    })
}

//! From an OTLP traces export to wire events, for the agents whose telemetry is spans:
//! GitHub Copilot (the CLI runtime, `service.name` `github-copilot`, and the VS Code
//! extension, `copilot-chat`, both `copilot_cli` here) and opencode (the Vercel AI SDK's
//! `ai.*` spans). Each span is recognised by its agent and operation and becomes one
//! event, or is skipped; the events take the hook's path like the log events.
//!
//! Counting once: a model call's tokens come from the span of that one call (Copilot's
//! `chat`, the AI SDK's `ai.streamText.doStream` and its kin), never from the spans that
//! total them (`invoke_agent`, `ai.streamText`), which would count them twice. Ids are
//! derived as for log records (the vendor's response or tool-call id, else the span
//! id), so a retried export is a duplicate. Content (`gen_ai.input.messages`,
//! `ai.prompt`, tool arguments and results) is never read beyond its size.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::{Span, status::StatusCode};

use super::attributes::Attributes;
use super::logs::{Mapped, Outcome, Record};
use crate::model::wire::{DraftTool, DraftUsage};
use crate::model::{AgentType, EventType, ToolStatus};

/// The session of each trace seen lately. A span that does not name its session (a
/// tool call's, in both agents) belongs to its trace's, which a sibling named (a
/// `chat` span, an AI SDK step); the exporter may send the sibling in an earlier export,
/// so the receiver keeps this across exports. Bounded: past `CAPACITY` traces it starts
/// over (a span then falls back to its trace id as its session).
#[derive(Debug, Default)]
pub struct TraceSessions {
    sessions: std::collections::HashMap<Vec<u8>, String>,
}

impl TraceSessions {
    const CAPACITY: usize = 100_000;

    fn learn(&mut self, trace_id: &[u8], session: String) {
        if self.sessions.len() >= Self::CAPACITY && !self.sessions.contains_key(trace_id) {
            self.sessions.clear();
        }
        self.sessions.insert(trace_id.to_vec(), session);
    }
}

/// Maps every span of `request` for the person `user_id`.
pub fn map(request: &ExportTraceServiceRequest, user_id: &str, traces: &mut TraceSessions) -> Mapped {
    let mut mapped = Mapped::default();
    // First the sessions the export names, so a span before its named sibling finds it.
    for resource_spans in &request.resource_spans {
        let resource = resource_spans.resource.as_ref().map(|r| r.attributes.as_slice()).unwrap_or_default();
        for scope_spans in &resource_spans.scope_spans {
            let scope = scope_spans.scope.as_ref().map(|s| s.name.as_str()).unwrap_or_default();
            for span in &scope_spans.spans {
                let attributes = Attributes::of(resource, &span.attributes);
                let keys = match agent_of(&attributes, scope) {
                    Some(AgentType::Opencode) => OPENCODE_SESSION,
                    Some(_) => COPILOT_SESSION,
                    None => continue,
                };
                if let Some(session) = attributes.first_text(keys).filter(|_| !span.trace_id.is_empty()) {
                    traces.learn(&span.trace_id, scoped(user_id, session));
                }
            }
        }
    }
    for resource_spans in &request.resource_spans {
        let resource = resource_spans.resource.as_ref().map(|r| r.attributes.as_slice()).unwrap_or_default();
        for scope_spans in &resource_spans.scope_spans {
            let scope = scope_spans.scope.as_ref().map(|s| s.name.as_str()).unwrap_or_default();
            for span in &scope_spans.spans {
                let attributes = Attributes::of(resource, &span.attributes);
                let Some(agent) = agent_of(&attributes, scope) else {
                    mapped.skipped += 1;
                    continue;
                };
                let trace_session = traces
                    .sessions
                    .get(&span.trace_id)
                    .and_then(|scoped| scoped.strip_prefix(user_id)?.strip_prefix('\u{1f}'));
                let outcome = match agent {
                    AgentType::Opencode => opencode(span, attributes, user_id, trace_session),
                    _ => copilot(span, attributes, user_id, trace_session),
                }
                .unwrap_or_else(Outcome::Refused);
                match outcome {
                    Outcome::Event(event) => mapped.events.push(event),
                    Outcome::Skipped => mapped.skipped += 1,
                    Outcome::Refused(reason) => mapped.refuse(format!("{}: {reason}", span.name)),
                }
            }
        }
    }
    mapped
}

/// Copilot's exporters name their service (or scope); opencode's spans carry the AI
/// SDK's operation id under the `opencode` service.
fn agent_of(attributes: &Attributes<'_>, scope: &str) -> Option<AgentType> {
    let service = attributes.text("service.name").unwrap_or_default();
    if service == "github-copilot" || service == "copilot-chat" || scope.starts_with("github.copilot") {
        return Some(AgentType::CopilotCli);
    }
    let ai_sdk = attributes.text("ai.operationId").is_some();
    (ai_sdk && (service.starts_with("opencode") || attributes.text("ai.telemetry.metadata.sessionId").is_some()))
        .then_some(AgentType::Opencode)
}

/// A trace's session is remembered per person: another person's trace id never names
/// this person's session.
fn scoped(user_id: &str, session: String) -> String {
    format!("{user_id}\u{1f}{session}")
}

/// Where a span is: its agent, the person, the keys that name its session, and the
/// session its trace was seen in.
struct Place<'a, 'b> {
    agent: AgentType,
    user_id: &'a str,
    session_keys: &'static [&'static str],
    trace_session: Option<&'b str>,
}

/// The span's record: its session from the first of the session keys, else its trace's
/// session, else the trace id itself (a span always has one), at `time_nanos`.
fn record<'a>(
    place: &Place<'a, '_>,
    name: &str,
    span: &Span,
    attributes: Attributes<'a>,
    time_nanos: u64,
) -> Result<Record<'a>, String> {
    let (agent, user_id, session_keys) = (place.agent, place.user_id, place.session_keys);
    if time_nanos == 0 {
        return Err("the span has no time (startTimeUnixNano, endTimeUnixNano)".into());
    }
    let session = attributes
        .first_text(session_keys)
        .or_else(|| place.trace_session.map(str::to_string))
        .or_else(|| (!span.trace_id.is_empty()).then(|| hex(&span.trace_id)))
        .ok_or_else(|| format!("{} is missing and the span has no trace id", session_keys[0]))?;
    Ok(Record::from_parts(agent, name.to_string(), attributes, user_id, session, time_nanos))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn failed(span: &Span, attributes: &Attributes<'_>) -> bool {
    span.status.as_ref().is_some_and(|status| status.code == StatusCode::Error as i32)
        || attributes.text("error.type").is_some()
}

fn duration_ms(span: &Span) -> Option<i64> {
    (span.end_time_unix_nano >= span.start_time_unix_nano && span.start_time_unix_nano > 0)
        .then(|| ((span.end_time_unix_nano - span.start_time_unix_nano) / 1_000_000) as i64)
}

/// The VS Code extension names its window (`session.id` on the resource) and not the
/// conversation on its `chat` spans, so the window is its session; the CLI names the
/// conversation on every span.
const COPILOT_SESSION: &[&str] = &["session.id", "gen_ai.conversation.id"];

/// Copilot: `chat` → turn_end (the call's tokens), `execute_tool` → tool_end keyed by
/// `gen_ai.tool.call.id`, `invoke_agent` → session_start with its model (its token
/// totals are the chats' sum and are not read). Other operations are skipped.
fn copilot(
    span: &Span,
    attributes: Attributes<'_>,
    user_id: &str,
    trace_session: Option<&str>,
) -> Result<Outcome, String> {
    let place = Place { agent: AgentType::CopilotCli, user_id, session_keys: COPILOT_SESSION, trace_session };
    let operation = attributes
        .text("gen_ai.operation.name")
        .unwrap_or_else(|| span.name.split(' ').next().unwrap_or_default().to_string());
    let end = span.end_time_unix_nano;
    Ok(match operation.as_str() {
        "chat" => gen_ai_turn(&record(&place, "chat", span, attributes, end)?, span),
        "execute_tool" => tool_end(
            &record(&place, "execute_tool", span, attributes, end)?,
            span,
            COPILOT_TOOL,
            crate::agents::copilot_cli::tool_action,
        )?,
        // Only a top-level agent starts a session; a subagent's span is inside one.
        "invoke_agent" if span.parent_span_id.iter().all(|byte| *byte == 0) => {
            let record = record(&place, "invoke_agent", span, attributes, span.start_time_unix_nano)?;
            let mut event = record.event(EventType::SessionStart, None);
            event.model = record.attributes.first_text(&["gen_ai.response.model", "gen_ai.request.model"]);
            if let Some(agent_name) = record.attributes.text("gen_ai.agent.name") {
                event.note("agent_name", agent_name);
            }
            Outcome::Event(event)
        }
        _ => Outcome::Skipped,
    })
}

/// A GenAI `chat` span's tokens. The semantic conventions count cached input inside
/// `gen_ai.usage.input_tokens` and reasoning inside output; the wire contract counts
/// each kind apart. Copilot's cost and AI units are kept beside, unpriced (their unit
/// is not documented); the server prices the tokens.
fn gen_ai_turn(record: &Record<'_>, span: &Span) -> Outcome {
    let attributes = &record.attributes;
    let Some(input) = attributes.count("gen_ai.usage.input_tokens") else {
        return Outcome::Refused("gen_ai.usage.input_tokens is missing".into());
    };
    let output = attributes.count("gen_ai.usage.output_tokens").unwrap_or(0);
    let cache_read = attributes.count("gen_ai.usage.cache_read.input_tokens").unwrap_or(0).min(input);
    let cache_write = attributes.count("gen_ai.usage.cache_creation.input_tokens").unwrap_or(0).min(input - cache_read);
    let reasoning = attributes
        .first_text(&["gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens"])
        .and_then(|text| text.parse::<i64>().ok())
        .unwrap_or(0)
        .clamp(0, output);
    let key = attributes.text("gen_ai.response.id").unwrap_or_else(|| hex(&span.span_id));
    let mut event = record.event(EventType::TurnEnd, Some(&key));
    event.model = attributes.first_text(&["gen_ai.response.model", "gen_ai.request.model"]);
    event.usage = Some(split_usage(input, output, cache_read, cache_write, reasoning));
    event.response_ms = duration_ms(span);
    for (wire, key) in
        [("vendor_cost", "github.copilot.cost"), ("aiu", "github.copilot.aiu"), ("nano_aiu", "github.copilot.nano_aiu")]
    {
        if let Some(value) = attributes.text(key) {
            event.note(wire, value);
        }
    }
    Outcome::Event(event)
}

/// Where a tool span keeps the tool's name, its call id (the key the hook's report of
/// the same call shares) and its content (only sizes are taken).
struct ToolKeys {
    name: &'static str,
    call_id: &'static str,
    arguments: &'static str,
    result: &'static str,
}

const COPILOT_TOOL: ToolKeys = ToolKeys {
    name: "gen_ai.tool.name",
    call_id: "gen_ai.tool.call.id",
    arguments: "gen_ai.tool.call.arguments",
    result: "gen_ai.tool.call.result",
};

const OPENCODE_TOOL: ToolKeys = ToolKeys {
    name: "ai.toolCall.name",
    call_id: "ai.toolCall.id",
    arguments: "ai.toolCall.args",
    result: "ai.toolCall.result",
};

/// A tool call's end from its span: the name, action, status, duration, the call id and
/// the sizes of its content.
fn tool_end(
    record: &Record<'_>,
    span: &Span,
    keys: ToolKeys,
    action: fn(&str) -> &'static str,
) -> Result<Outcome, String> {
    let attributes = &record.attributes;
    let name = attributes.text(keys.name).ok_or_else(|| format!("{} is missing", keys.name))?;
    let call_id = attributes.text(keys.call_id);
    let key = call_id.clone().unwrap_or_else(|| hex(&span.span_id));
    let mut event = record.event(EventType::ToolEnd, Some(&key));
    let size = |key: &str| attributes.text(key).map(|text| text.len() as i64);
    let mut tool = DraftTool {
        name: Some(format!("{}:{name}", record.agent.as_str())),
        action: Some(action(&name).to_string()),
        use_id: call_id,
        duration_ms: duration_ms(span),
        input_bytes: size(keys.arguments),
        output_bytes: size(keys.result),
        ..DraftTool::default()
    };
    tool.set_status(if failed(span, attributes) { ToolStatus::Error } else { ToolStatus::Success });
    event.tool = Some(tool);
    Ok(Outcome::Event(event))
}

const OPENCODE_SESSION: &[&str] = &["ai.telemetry.metadata.sessionId", "ai.request.headers.x-opencode-session"];

/// opencode's AI SDK spans: one provider call (`ai.streamText.doStream`,
/// `ai.generateText.doGenerate`, `ai.streamObject.doStream`, `ai.generateObject.doGenerate`)
/// → turn_end; `ai.toolCall` → tool_end keyed by `ai.toolCall.id`. The outer spans
/// (`ai.streamText`, …) total their steps and are skipped.
fn opencode(
    span: &Span,
    attributes: Attributes<'_>,
    user_id: &str,
    trace_session: Option<&str>,
) -> Result<Outcome, String> {
    let place = Place { agent: AgentType::Opencode, user_id, session_keys: OPENCODE_SESSION, trace_session };
    let operation = attributes.text("ai.operationId").unwrap_or_default();
    let end = span.end_time_unix_nano;
    Ok(match operation.as_str() {
        "ai.streamText.doStream"
        | "ai.generateText.doGenerate"
        | "ai.streamObject.doStream"
        | "ai.generateObject.doGenerate" => ai_sdk_turn(&record(&place, &operation, span, attributes, end)?, span),
        "ai.toolCall" => tool_end(
            &record(&place, &operation, span, attributes, end)?,
            span,
            OPENCODE_TOOL,
            crate::agents::opencode::tool_action,
        )?,
        _ => Outcome::Skipped,
    })
}

/// The AI SDK's usage, in each version's names: v5 and v6 `ai.usage.inputTokens` (cached
/// input inside it: `cachedInputTokens`, or v6's `inputTokenDetails.*`) and
/// `outputTokens` (reasoning inside it), v4's `promptTokens`/`completionTokens`, and
/// the GenAI names on the provider span as a last resort.
fn ai_sdk_turn(record: &Record<'_>, span: &Span) -> Outcome {
    let attributes = &record.attributes;
    let count = |keys: &[&str]| keys.iter().find_map(|key| attributes.count(key));
    let Some(input) = count(&["ai.usage.inputTokens", "ai.usage.promptTokens", "gen_ai.usage.input_tokens"]) else {
        return Outcome::Refused("ai.usage.inputTokens is missing".into());
    };
    let output =
        count(&["ai.usage.outputTokens", "ai.usage.completionTokens", "gen_ai.usage.output_tokens"]).unwrap_or(0);
    let cache_read =
        count(&["ai.usage.inputTokenDetails.cacheReadTokens", "ai.usage.cachedInputTokens"]).unwrap_or(0).min(input);
    let cache_write = count(&["ai.usage.inputTokenDetails.cacheWriteTokens"]).unwrap_or(0).min(input - cache_read);
    let reasoning =
        count(&["ai.usage.outputTokenDetails.reasoningTokens", "ai.usage.reasoningTokens"]).unwrap_or(0).min(output);
    let key = attributes.first_text(&["ai.response.id", "gen_ai.response.id"]).unwrap_or_else(|| hex(&span.span_id));
    let mut event = record.event(EventType::TurnEnd, Some(&key));
    event.model = attributes.first_text(&["ai.response.model", "gen_ai.response.model", "ai.model.id"]);
    event.usage = Some(split_usage(input, output, cache_read, cache_write, reasoning));
    event.response_ms = count(&["ai.response.msToFinish"]).or_else(|| duration_ms(span));
    if let Some(provider) = attributes.text("ai.model.provider") {
        event.note("provider", provider);
    }
    Outcome::Event(event)
}

/// A call's tokens counted each kind apart, from counts that hold cached input inside
/// input and reasoning inside output (as both the GenAI conventions and the AI SDK do).
fn split_usage(input: i64, output: i64, cache_read: i64, cache_write: i64, reasoning: i64) -> DraftUsage {
    DraftUsage {
        input_tokens: Some(input - cache_read - cache_write),
        output_tokens: Some(output - reasoning),
        cache_read_tokens: Some(cache_read),
        cache_write_5m_tokens: Some(cache_write),
        reasoning_tokens: Some(reasoning),
        ..DraftUsage::default()
    }
}

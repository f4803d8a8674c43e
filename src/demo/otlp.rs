//! The demo's native telemetry: some developers' agents export OpenTelemetry instead of
//! (or beside) the hook. A session is written as the agent's own exporter would send it
//! (`docs/otel.md`): Claude Code, Codex and Gemini CLI as OTLP/JSON log records with the
//! agent's event names and attribute types (and Claude Code's metrics: lines of code,
//! commits, active time), GitHub Copilot and opencode as spans; so the demo shows
//! sessions that arrived by OTLP only, by the hook only, and by both (joined).
//!
//! Invariant: no random draws here (the conversion reads the session's events), so the
//! seed's organisation is the same with or without this part.

use serde_json::{Value, json};

/// How a developer's agents reach the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Hook,
    Otlp,
    Both,
}

/// One developer in ten exports OTLP only, one in ten sends both (never the last, the
/// demo's leaver, in a demo of under ten); and every fourth developer exports their
/// GitHub Copilot and opencode sessions (those agents' telemetry is spans), so the demo
/// has traces too.
pub fn source_of(developer: usize, agent: &str) -> Source {
    match developer % 10 {
        3 => Source::Otlp,
        5 => Source::Both,
        _ if developer.is_multiple_of(4) && matches!(agent, "copilot_cli" | "opencode") => Source::Otlp,
        _ => Source::Hook,
    }
}

/// Whether the agent exports the OTLP this demo writes.
pub fn exports(agent: &str) -> bool {
    matches!(agent, "claude_code" | "codex" | "gemini_cli" | "copilot_cli" | "opencode")
}

/// Whether the hook's and the export's reports of this agent's requests are joined, so a
/// developer may send both (Copilot's and opencode's would count twice).
pub fn joined(agent: &str) -> bool {
    matches!(agent, "claude_code" | "gemini_cli" | "codex")
}

/// One export as the agent's exporter posts it: the OTLP/HTTP path and its JSON body.
pub type Export = (&'static str, Value);

/// Everything the session's agent exports: its log records (or spans), and Claude Code's
/// metrics.
pub fn session_exports(agent: &str, session_id: &str, model: &str, events: &[Value]) -> Vec<Export> {
    let mut exports = Vec::new();
    if let Some(logs) = export(agent, session_id, model, events) {
        exports.push(("/v1/logs", logs));
    }
    if agent == "claude_code" {
        exports.push(("/v1/metrics", super::otlp_signals::claude_metrics(session_id, events)));
    }
    if let Some(traces) = super::otlp_signals::traces(agent, session_id, model, events) {
        exports.push(("/v1/traces", traces));
    }
    exports
}

/// A model request's id, as the vendor would give it, from the event that reports it;
/// put on the hook's event too when the hook reports the same request (`Source::Both`).
pub fn request_id(event: &Value) -> String {
    let id = event["event_id"].as_str().unwrap_or_default().replace('-', "");
    format!("req_demo{id}")
}

fn text(key: &str, value: impl Into<String>) -> Value {
    json!({"key": key, "value": {"stringValue": value.into()}})
}

fn int(key: &str, value: i64) -> Value {
    json!({"key": key, "value": {"intValue": value}})
}

fn nanos(event: &Value) -> String {
    let ms = crate::model::parse_rfc3339_ms(event["ts"].as_str().unwrap_or_default()).unwrap_or(0);
    (ms * 1_000_000).to_string()
}

/// The session's export, in the shape of its agent's exporter; `None` for other agents.
pub fn export(agent: &str, session_id: &str, model: &str, events: &[Value]) -> Option<Value> {
    let (service, version, scope) = match agent {
        "claude_code" => ("claude-code", "2.1.112", "com.anthropic.claude_code.events"),
        "codex" => ("codex_cli_rs", "0.155.1", "codex_otel.log_only"),
        "gemini_cli" => ("gemini-cli", "v20.19.0", "gemini-cli"),
        _ => return None,
    };
    let mut records = Vec::new();
    for (sequence, event) in events.iter().enumerate() {
        let Some((name, mut attributes)) = record_of(agent, model, event) else { continue };
        let session_key = if agent == "codex" { "conversation.id" } else { "session.id" };
        attributes.push(text(session_key, session_id));
        let full = match agent {
            "claude_code" => format!("claude_code.{name}"),
            "codex" => format!("codex.{name}"),
            _ => format!("gemini_cli.{name}"),
        };
        attributes.push(text("event.name", if agent == "claude_code" { name.to_string() } else { full.clone() }));
        attributes.push(int("event.sequence", sequence as i64));
        if event["run_kind"] == "CI" || event["run_kind"] == "EVAL" {
            attributes.push(text("sightline.run_kind", event["run_kind"].as_str().unwrap_or_default()));
        }
        records.push(json!({"timeUnixNano": nanos(event), "body": {"stringValue": full}, "attributes": attributes}));
    }
    Some(json!({"resourceLogs": [{
        "resource": {"attributes": [text("service.name", service), text("service.version", version), text("os.type", "linux")]},
        "scopeLogs": [{"scope": {"name": scope}, "logRecords": records}]
    }]}))
}

/// One wire event as the agent's exporter reports it: its event name and attributes.
fn record_of(agent: &str, model: &str, event: &Value) -> Option<(&'static str, Vec<Value>)> {
    let tool = &event["tool"];
    let tool_name = tool["name"].as_str().and_then(|name| name.split_once(':')).map(|(_, name)| name.to_string());
    let status = tool["status"].as_str().unwrap_or("success");
    let usage = &event["usage"];
    let count = |key: &str| usage[key].as_i64().unwrap_or(0);
    match (agent, event["type"].as_str()?) {
        ("claude_code", "prompt_submit") | ("codex", "prompt_submit") => {
            // Claude Code up to 2.1.121 and Codex send the length as text.
            Some(("user_prompt", vec![text("prompt_length", "64"), text("prompt", "<REDACTED>")]))
        }
        ("gemini_cli", "prompt_submit") => Some(("user_prompt", vec![int("prompt_length", 64)])),
        ("claude_code", "turn_end") => Some((
            "api_request",
            vec![
                text("model", model),
                text("input_tokens", count("input_tokens").to_string()),
                text("output_tokens", count("output_tokens").to_string()),
                text("cache_read_tokens", count("cache_read_tokens").to_string()),
                text("cache_creation_tokens", count("cache_write_5m_tokens").to_string()),
                text("duration_ms", "4200"),
                text("request_id", request_id(event)),
            ],
        )),
        ("codex", "turn_end") => Some((
            "sse_event",
            vec![
                text("event.kind", "response.completed"),
                text("model", model),
                text("input_token_count", (count("input_tokens") + count("cache_read_tokens")).to_string()),
                text("output_token_count", (count("output_tokens") + count("reasoning_tokens")).to_string()),
                int("cached_token_count", count("cache_read_tokens")),
                int("reasoning_token_count", count("reasoning_tokens")),
            ],
        )),
        ("gemini_cli", "turn_end") => Some((
            "api_response",
            vec![
                text("model", model),
                int("input_token_count", count("input_tokens") + count("cache_read_tokens")),
                int("output_token_count", count("output_tokens")),
                int("cached_content_token_count", count("cache_read_tokens")),
                int("thoughts_token_count", count("reasoning_tokens")),
                int("duration_ms", 3100),
            ],
        )),
        ("claude_code", "tool_end") => {
            let mut attributes = vec![
                text("tool_name", tool_name?),
                text("success", (status == "success").to_string()),
                text("duration_ms", tool["duration_ms"].as_i64().unwrap_or(0).to_string()),
                text("decision_type", if status == "denied" { "reject" } else { "accept" }),
                text("decision_source", if status == "denied" { "user_reject" } else { "config" }),
            ];
            if let Some(use_id) = tool["use_id"].as_str() {
                attributes.push(text("tool_use_id", use_id));
            }
            Some(("tool_result", attributes))
        }
        ("codex", "tool_end") => {
            let mut attributes = vec![text("tool_name", tool_name?)];
            if let Some(use_id) = tool["use_id"].as_str() {
                attributes.push(text("call_id", use_id));
            }
            if status == "denied" {
                attributes.extend([text("decision", "denied"), text("source", "user")]);
                return Some(("tool_decision", attributes));
            }
            attributes.extend([
                text("success", (status == "success").to_string()),
                text("duration_ms", tool["duration_ms"].as_i64().unwrap_or(0).to_string()),
            ]);
            Some(("tool_result", attributes))
        }
        ("gemini_cli", "tool_end") => Some((
            "tool_call",
            vec![
                text("function_name", tool_name?),
                json!({"key": "success", "value": {"boolValue": status == "success"}}),
                text("decision", if status == "denied" { "reject" } else { "accept" }),
                int("duration_ms", tool["duration_ms"].as_i64().unwrap_or(0)),
            ],
        )),
        ("claude_code", "session_start") => {
            // What the session loaded, as Claude Code's inventory event reports it (its
            // MCP server, one of three by the session's id).
            let servers = ["github", "linear", "sentry"];
            let pick = event["session_id"].as_str().map_or(0, |id| id.bytes().map(usize::from).sum::<usize>());
            Some((
                "mcp_server_connection",
                vec![
                    text("server_name", servers[pick % servers.len()]),
                    text("status", "connected"),
                    text("transport_type", "http"),
                    text("server_scope", "user"),
                    text("duration_ms", "180"),
                ],
            ))
        }
        ("codex", "session_start") => Some(("conversation_starts", vec![text("model", model)])),
        ("gemini_cli", "session_start") => Some(("config", vec![text("model", model)])),
        ("claude_code", "compact") => Some(("compaction", vec![text("trigger", "auto"), text("success", "true")])),
        ("claude_code", "subagent_end") => Some(("subagent_completed", vec![text("agent_type", "general-purpose")])),
        _ => None,
    }
}

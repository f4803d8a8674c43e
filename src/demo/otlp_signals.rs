//! The demo's OTLP beyond log records: Claude Code's metrics (what no event carries:
//! lines of code, commits, active time, as delta sums of doubles the way its exporter
//! sends them) and the spans of the agents whose telemetry is traces (GitHub Copilot's
//! `invoke_agent`, `chat` and `execute_tool`; opencode's AI SDK steps and tool calls).
//!
//! Invariant: no random draws (everything is read from the session's events), so the
//! seed's organisation is the same with or without this part.

use serde_json::{Value, json};

fn text(key: &str, value: impl Into<String>) -> Value {
    json!({"key": key, "value": {"stringValue": value.into()}})
}

fn int(key: &str, value: i64) -> Value {
    json!({"key": key, "value": {"intValue": value}})
}

fn ms_of(event: &Value) -> i64 {
    crate::model::parse_rfc3339_ms(event["ts"].as_str().unwrap_or_default()).unwrap_or(0)
}

fn nanos(ms: i64) -> String {
    (ms.max(0) * 1_000_000).to_string()
}

fn tools<'a>(events: &'a [Value], action: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    events.iter().filter(move |e| e["type"] == "tool_end" && e["tool"]["action"] == action)
}

/// Claude Code's metrics for one session, one delta point per series over the session.
pub fn claude_metrics(session_id: &str, events: &[Value]) -> Value {
    let (first, last) = (events.first().map(ms_of).unwrap_or(0), events.last().map(ms_of).unwrap_or(0));
    let edits = tools(events, "edit").count() as f64 + tools(events, "write").count() as f64;
    let shells = tools(events, "exec").count() as f64;
    let prompts = events.iter().filter(|e| e["type"] == "prompt_submit").count() as f64;
    let point = |value: f64, extra: Option<(&str, &str)>| {
        let mut attributes = vec![text("session.id", session_id), text("terminal.type", "vscode")];
        if let Some((key, value)) = extra {
            attributes.push(text(key, value));
        }
        json!({"attributes": attributes, "startTimeUnixNano": nanos(first), "timeUnixNano": nanos(last.max(first + 1)), "asDouble": value})
    };
    let sum = |name: &str, points: Vec<Value>| json!({"name": name, "sum": {"aggregationTemporality": 1, "isMonotonic": true, "dataPoints": points}});
    let commits = if edits >= 3.0 && shells >= 1.0 { 1.0 } else { 0.0 };
    json!({"resourceMetrics": [{
        "resource": {"attributes": [text("service.name", "claude-code"), text("service.version", "2.1.112")]},
        "scopeMetrics": [{"scope": {"name": "com.anthropic.claude_code"}, "metrics": [
            sum("claude_code.lines_of_code.count", vec![
                point(edits * 14.0 + shells * 2.0, Some(("type", "added"))),
                point(edits * 5.0, Some(("type", "removed"))),
            ]),
            sum("claude_code.commit.count", vec![point(commits, None)]),
            sum("claude_code.active_time.total", vec![
                point(prompts * 42.5, Some(("type", "user"))),
                point(((last - first) as f64 / 1000.0 * 0.6).round(), Some(("type", "cli"))),
            ]),
            sum("claude_code.token.usage", vec![point(1.0, Some(("type", "input")))]),
        ]}]
    }]})
}

/// A hex id of `bytes` bytes for `what` in the session (deterministic).
fn id(session_id: &str, what: &str, bytes: usize) -> String {
    crate::model::sha256_hex(format!("{session_id}\u{1f}{what}").as_bytes())[..bytes * 2].to_string()
}

/// The session's spans as its agent exports them; `None` for agents that send logs.
pub fn traces(agent: &str, session_id: &str, model: &str, events: &[Value]) -> Option<Value> {
    let (service, version, scope) = match agent {
        "copilot_cli" => ("github-copilot", "1.0.34", "github.copilot"),
        "opencode" => ("opencode", "1.18.34", "opencode"),
        _ => return None,
    };
    let trace_id = id(session_id, "trace", 16);
    let root = id(session_id, "root", 8);
    let (first, last) = (events.first().map(ms_of).unwrap_or(0), events.last().map(ms_of).unwrap_or(0));
    let mut spans = Vec::new();
    for (n, event) in events.iter().enumerate() {
        let end = ms_of(event);
        let usage = &event["usage"];
        let count = |key: &str| usage[key].as_i64().unwrap_or(0);
        let span = |name: String, start: i64, attributes: Vec<Value>, failed: bool| {
            json!({"traceId": trace_id, "spanId": id(session_id, &n.to_string(), 8), "parentSpanId": root,
                   "name": name, "kind": 1, "startTimeUnixNano": nanos(start), "endTimeUnixNano": nanos(end),
                   "attributes": attributes, "status": {"code": if failed { 2 } else { 0 }}})
        };
        let tool = &event["tool"];
        let tool_name = tool["name"].as_str().and_then(|name| name.split_once(':')).map(|(_, name)| name.to_string());
        let failed = tool["status"] == "error";
        match (agent, event["type"].as_str().unwrap_or_default()) {
            ("copilot_cli", "turn_end") => spans.push(span(
                format!("chat {model}"),
                end - event["response_ms"].as_i64().unwrap_or(3000),
                vec![
                    text("gen_ai.operation.name", "chat"),
                    text("gen_ai.request.model", model),
                    text("gen_ai.conversation.id", session_id),
                    text("gen_ai.response.id", id(session_id, &format!("response{n}"), 12)),
                    int(
                        "gen_ai.usage.input_tokens",
                        count("input_tokens") + count("cache_read_tokens") + count("cache_write_5m_tokens"),
                    ),
                    int("gen_ai.usage.output_tokens", count("output_tokens") + count("reasoning_tokens")),
                    int("gen_ai.usage.cache_read.input_tokens", count("cache_read_tokens")),
                    int("gen_ai.usage.cache_creation.input_tokens", count("cache_write_5m_tokens")),
                    int("gen_ai.usage.reasoning.output_tokens", count("reasoning_tokens")),
                ],
                false,
            )),
            ("copilot_cli", "tool_end") => {
                let Some(name) = tool_name else { continue };
                let mut attributes =
                    vec![text("gen_ai.operation.name", "execute_tool"), text("gen_ai.tool.name", name)];
                if let Some(call) = tool["use_id"].as_str() {
                    attributes.push(text("gen_ai.tool.call.id", call));
                }
                let duration = tool["duration_ms"].as_i64().unwrap_or(0);
                spans.push(span(
                    format!("execute_tool {}", attributes[1]["value"]["stringValue"].as_str().unwrap_or_default()),
                    end - duration,
                    attributes,
                    failed,
                ));
            }
            ("opencode", "turn_end") => spans.push(span(
                "ai.streamText.doStream".into(),
                end - event["response_ms"].as_i64().unwrap_or(3000),
                vec![
                    text("ai.operationId", "ai.streamText.doStream"),
                    text("ai.model.id", model),
                    text("ai.model.provider", "anthropic.messages"),
                    text("ai.telemetry.metadata.sessionId", session_id),
                    text("ai.response.id", id(session_id, &format!("response{n}"), 12)),
                    int(
                        "ai.usage.inputTokens",
                        count("input_tokens") + count("cache_read_tokens") + count("cache_write_5m_tokens"),
                    ),
                    int("ai.usage.outputTokens", count("output_tokens") + count("reasoning_tokens")),
                    int("ai.usage.reasoningTokens", count("reasoning_tokens")),
                    int("ai.usage.inputTokenDetails.cacheReadTokens", count("cache_read_tokens")),
                    int("ai.usage.inputTokenDetails.cacheWriteTokens", count("cache_write_5m_tokens")),
                ],
                false,
            )),
            ("opencode", "tool_end") => {
                let Some(name) = tool_name else { continue };
                let mut attributes =
                    vec![text("ai.operationId", "ai.toolCall"), text("ai.toolCall.name", name.clone())];
                if let Some(call) = tool["use_id"].as_str() {
                    attributes.push(text("ai.toolCall.id", call));
                }
                let duration = tool["duration_ms"].as_i64().unwrap_or(0);
                spans.push(span("ai.toolCall".into(), end - duration, attributes, failed));
            }
            _ => {}
        }
    }
    if agent == "copilot_cli" {
        spans.push(json!({"traceId": trace_id, "spanId": root, "name": "invoke_agent copilot", "kind": 3,
            "startTimeUnixNano": nanos(first), "endTimeUnixNano": nanos(last),
            "attributes": [text("gen_ai.operation.name", "invoke_agent"), text("gen_ai.agent.name", "copilot"),
                           text("gen_ai.conversation.id", session_id), text("gen_ai.request.model", model)],
            "status": {"code": 0}}));
    }
    Some(json!({"resourceSpans": [{
        "resource": {"attributes": [text("service.name", service), text("service.version", version)]},
        "scopeSpans": [{"scope": {"name": scope}, "spans": spans}]
    }]}))
}

/// A collector (the platform team's OpenTelemetry Collector) forwarding Claude Code
/// records with one service-account token: the first developer's records under the
/// corporate address an administrator mapped to them, and a contractor's under an
/// address nobody mapped (refused, and shown in /admin/adapters to map or ignore).
pub fn collector(
    server: &super::Server,
    config: &crate::config::Config,
    people: &[super::people::Person],
    now_ms: i64,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let developer = people.iter().find(|p| p.team.is_some()).context("the demo has no developer")?;
    let admin = people.iter().find(|p| p.org_role == "ADMIN").context("the demo has no administrator")?;
    let alias = format!("{}@corp.demo.example", developer.email.split('@').next().unwrap_or("dev"));
    let conn = crate::db::side_door::open(&config.main_db_path())?;
    let id_of = |email: &str| -> anyhow::Result<String> {
        Ok(conn.query_row("SELECT id FROM users WHERE email = ?1", [email], |row| row.get(0))?)
    };
    let (admin_id, developer_id) = (id_of(&admin.email)?, id_of(&developer.email)?);
    let token = crate::db::side_door::write(&conn, |tx| -> anyhow::Result<_> {
        let token =
            crate::auth::otlp_identities::create_service_token(tx, &admin_id, "otel-collector (platform)", now_ms)?;
        crate::auth::otlp_identities::map(tx, "user.email", &alias, &developer_id, &admin_id, now_ms)?;
        Ok(token)
    })?;
    let record = |email: &str, session: &str, ms: i64, name: &str, extra: Vec<Value>| {
        let mut attributes = vec![text("user.email", email), text("session.id", session), text("event.name", name)];
        attributes.extend(extra);
        json!({"timeUnixNano": nanos(ms), "body": {"stringValue": format!("claude_code.{name}")}, "attributes": attributes})
    };
    let at = now_ms - 2 * 3_600_000;
    let session = id("collector", "mapped", 16);
    let records = vec![
        record(&alias, &session, at, "user_prompt", vec![text("prompt_length", "38")]),
        record(
            &alias,
            &session,
            at + 4_000,
            "api_request",
            vec![
                text("model", "claude-sonnet-4-5-20250929"),
                text("input_tokens", "900"),
                text("output_tokens", "240"),
                text("cache_read_tokens", "12000"),
                text("request_id", format!("req_demo{}", id("collector", "request", 12))),
            ],
        ),
        record(
            "contractor@partner.example",
            &id("collector", "unmapped", 16),
            at + 9_000,
            "user_prompt",
            vec![text("prompt_length", "12")],
        ),
    ];
    let export = json!({"resourceLogs": [{
        "resource": {"attributes": [text("service.name", "claude-code"), text("service.version", "2.1.112")]},
        "scopeLogs": [{"scope": {"name": "com.anthropic.claude_code.events"}, "logRecords": records}]
    }]});
    let mut response = super::Server::agent()
        .post(format!("{}/v1/logs", server.ingest))
        .header("Authorization", format!("Bearer {}", token.secret))
        .content_type("application/json")
        .send(export.to_string())?;
    let status = response.status().as_u16();
    let answer = response.body_mut().read_to_string().unwrap_or_default();
    anyhow::ensure!(
        status == 200 && answer.contains("\"rejectedLogRecords\":\"1\""),
        "the collector's export: {status} {answer}"
    );
    Ok(())
}

//! OTLP traces on the real binary, for the agents whose telemetry is spans: GitHub
//! Copilot CLI (`tests/fixtures/otlp/copilot_cli_traces.json`, written from GitHub's
//! "OpenTelemetry monitoring" reference: `invoke_agent` over `chat` and `execute_tool`,
//! a count sent as text) and opencode (`opencode_traces.json`, the Vercel AI SDK v5 spans
//! opencode exports over OTLP/JSON). Each model call's tokens are counted once, from the
//! span of that call and never from the spans that total them; tool calls keep their
//! call id; a replay over protobuf adds nothing; the same over gRPC.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde_json::{Value, json};

use crate::common::*;
use crate::otlp::{fixture, json_of, send, session_view};

const COPILOT_CONVERSATION: &str = "0c4d3e2f-1a2b-4c5d-8e9f-a0b1c2d3e4f5";
const OPENCODE_SESSION: &str = "ses_01JXK4Q9P2M7N3R8T5V6W0Y1Z2";

fn post(server: &TestServer, export: &Value, protobuf: bool) -> Value {
    let (kind, body) = if protobuf {
        let request: ExportTraceServiceRequest = serde_json::from_value(export.clone()).unwrap();
        ("application/x-protobuf", request.encode_to_vec())
    } else {
        ("application/json", serde_json::to_vec(export).unwrap())
    };
    let (status, _, answer) = send(&format!("{}/otel/v1/traces", server.ingest), &server.token, kind, &[], body);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    if protobuf { json!({}) } else { json_of(&answer) }
}

fn tools(server: &TestServer, agent: &str, session: &str) -> Vec<Value> {
    let url = format!("{}/v1/me/sessions/{agent}/{session}/events", server.ingest);
    let (status, page) = get_auth(&url, &server.token);
    assert_eq!(status, 200, "{page}");
    let mut tools: Vec<Value> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["type"] == "tool_end")
        .map(|event| event["tool"].clone())
        .collect();
    tools.sort_by_key(|tool| tool["name"].to_string());
    tools
}

#[test]
fn copilot_spans_become_its_session_with_each_calls_tokens_counted_once() {
    let server = TestServer::spawn();
    let export = fixture("copilot_cli_traces");
    assert_eq!(post(&server, &export, false), json!({}));
    let view = session_view(&server, "copilot_cli", COPILOT_CONVERSATION);
    // Two chats: 14,000 and 16,000 input of which 22,000 cached reads and 1,000 cache
    // writes; `invoke_agent`'s totals (the same tokens again) are not added.
    assert_eq!(
        view["usage"],
        json!({"input_tokens": 7000, "output_tokens": 1500, "cache_read_tokens": 22000,
               "cache_write_5m_tokens": 1000, "cache_write_1h_tokens": 0, "reasoning_tokens": 0})
    );
    assert_eq!((view["event_count"].as_i64(), view["tool_call_count"].as_i64()), (Some(5), Some(2)));
    assert_eq!(view["tool_error_count"], 1, "the span whose status is an error");
    assert!(view["cost_usd"].as_f64().unwrap() > 0.0, "the server prices the tokens: {view}");
    assert!(view["started_at"].is_string(), "invoke_agent starts the session");
    let tools = tools(&server, "copilot_cli", COPILOT_CONVERSATION);
    assert_eq!(
        (tools[0]["name"].as_str(), tools[0]["action"].as_str(), tools[0]["use_id"].as_str()),
        (Some("copilot_cli:bash"), Some("exec"), Some("toolu_01A09q90qw90lq917835lq9"))
    );
    assert_eq!((tools[1]["status"].as_str(), tools[1]["duration_ms"].as_i64()), (Some("error"), Some(50)));

    // The exporter retries over protobuf: nothing is added.
    post(&server, &export, true);
    assert_eq!(session_view(&server, "copilot_cli", COPILOT_CONVERSATION)["event_count"], 5);
}

#[test]
fn opencode_ai_sdk_spans_count_each_step_and_never_the_total() {
    let server = TestServer::spawn();
    let export = fixture("opencode_traces");
    assert_eq!(post(&server, &export, true), json!({}));
    let view = session_view(&server, "opencode", OPENCODE_SESSION);
    // Two steps (12,034 and 12,800 input, 11,000 and 12,000 of it cached); the outer
    // `ai.streamText` repeats their sum and is skipped.
    assert_eq!(
        (view["usage"]["input_tokens"].as_i64(), view["usage"]["cache_read_tokens"].as_i64()),
        (Some(1834), Some(23000))
    );
    assert_eq!(view["usage"]["output_tokens"], 812);
    assert_eq!(view["models"], json!({"claude-sonnet-4-5-20250929": 2}));
    let tools = tools(&server, "opencode", OPENCODE_SESSION);
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!((tool["name"].as_str(), tool["action"].as_str()), (Some("opencode:read"), Some("read")));
    assert_eq!(tool["input_bytes"], 35, "the arguments' size, never their text: {tool}");
    assert!(!tool.to_string().contains("app.ts"), "{tool}");
    assert_eq!(post(&server, &export, false), json!({}));
    assert_eq!(session_view(&server, "opencode", OPENCODE_SESSION)["event_count"], 3, "a replay adds nothing");
}

#[test]
fn a_span_that_cannot_be_used_is_a_partial_success() {
    let server = TestServer::spawn();
    let mut export = fixture("copilot_cli_traces");
    let spans = export["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array_mut().unwrap();
    spans[0]["attributes"].as_array_mut().unwrap().retain(|pair| pair["key"] != "gen_ai.usage.input_tokens");
    let answer = post(&server, &export, false);
    assert_eq!(answer["partialSuccess"]["rejectedSpans"], "1", "{answer}");
    let message = answer["partialSuccess"]["errorMessage"].as_str().unwrap();
    assert!(message.contains("gen_ai.usage.input_tokens is missing"), "{message}");
    assert_eq!(session_view(&server, "copilot_cli", COPILOT_CONVERSATION)["event_count"], 4);
}

#[test]
fn the_grpc_listener_takes_spans_as_http_does() {
    use opentelemetry_proto::tonic::collector::trace::v1::trace_service_client::TraceServiceClient;
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_LISTEN_OTLP_GRPC", "127.0.0.1:0")]);
    let addresses: Value =
        serde_json::from_str(&std::fs::read_to_string(server.data_dir.join("run/addresses.json")).unwrap()).unwrap();
    let endpoint = format!("http://{}", addresses["otlp_grpc"].as_str().unwrap());
    let export: ExportTraceServiceRequest = serde_json::from_value(fixture("opencode_traces")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let answer = runtime.block_on(async {
        let mut client = TraceServiceClient::connect(endpoint).await.unwrap();
        let mut request = tonic::Request::new(export);
        request.metadata_mut().insert("authorization", format!("Bearer {}", server.token).parse().unwrap());
        client.export(request).await.map(|response| response.into_inner())
    });
    assert_eq!(answer.expect("the export is taken").partial_success, None);
    assert_eq!(session_view(&server, "opencode", OPENCODE_SESSION)["event_count"], 3);
}

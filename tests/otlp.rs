//! The OTLP/HTTP receiver on the real binary: the vendors' documented exports
//! (`tests/fixtures/otlp/`, their times moved to the last hour) sent as OTLP/JSON,
//! protobuf and gzip, to the default paths and under the prefix; the events they make
//! read back through the hook's own API; a replay adds nothing; a wrong credential,
//! a malformed or oversized body and a wrong media type are refused as OTLP says,
//! naming what is wrong, with nothing stored.

use std::io::Write;

use opentelemetry_proto::tonic::collector::logs::v1::{ExportLogsServiceRequest, ExportLogsServiceResponse};
use prost::Message;
use serde_json::Value;

use crate::common::*;

/// A fixture with every `*UnixNano` time moved so its first record is an hour ago.
pub(crate) fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/otlp/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut earliest = u64::MAX;
    visit_times(&mut value, &mut |nanos| earliest = earliest.min(*nanos));
    let shift = (now_ms() as u64 - 3_600_000) * 1_000_000 - earliest;
    visit_times(&mut value, &mut |nanos| *nanos += shift);
    value
}

fn visit_times(value: &mut Value, apply: &mut dyn FnMut(&mut u64)) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if key.ends_with("UnixNano") {
                    let mut nanos: u64 = inner.as_str().unwrap().parse().unwrap();
                    apply(&mut nanos);
                    *inner = Value::String(nanos.to_string());
                } else {
                    visit_times(inner, apply);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| visit_times(item, apply)),
        _ => {}
    }
}

fn protobuf(export: &Value) -> Vec<u8> {
    let request: ExportLogsServiceRequest = serde_json::from_value(export.clone()).unwrap();
    request.encode_to_vec()
}

pub(crate) fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// Posts `body` and answers the status, the response's content type and its bytes.
pub(crate) fn send(
    url: &str,
    token: &str,
    content_type: &str,
    extra: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, String, Vec<u8>) {
    let mut request =
        agent().post(url).header("Authorization", format!("Bearer {token}")).header("Content-Type", content_type);
    for (key, value) in extra {
        request = request.header(*key, *value);
    }
    let mut response = request.send(&body[..]).expect("the server answers");
    let kind = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let bytes = response.body_mut().with_config().limit(1 << 20).read_to_vec().unwrap();
    (response.status().as_u16(), kind, bytes)
}

pub(crate) fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

pub(crate) fn session_view(server: &TestServer, agent: &str, session: &str) -> Value {
    let (status, view) = server.agent_session(&server.token, agent, session);
    assert_eq!(status, 200, "{view}");
    view
}

pub(crate) fn otlp_token(server: &TestServer) -> String {
    let dir = server.data_dir.to_str().unwrap();
    let made = sightline(&["token", "create", "--data-dir", dir, "--user", "dev@example.com", "--kind", "otlp"]);
    assert!(made.status.success(), "{}", stderr(&made));
    let token = stdout(&made).trim().to_string();
    assert!(token.starts_with("slh_otlp_"), "{token}");
    token
}

#[test]
fn the_agents_exports_become_their_sessions_once_whatever_the_encoding() {
    let server = TestServer::spawn();
    let token = otlp_token(&server);
    let logs = format!("{}/v1/logs", server.ingest);

    // Claude Code over OTLP/JSON (the 2.1.112 shape: numbers as text).
    let claude = fixture("claude_code_logs");
    let (status, kind, body) = send(&logs, &token, "application/json", &[], serde_json::to_vec(&claude).unwrap());
    assert_eq!((status, kind.as_str()), (200, "application/json"), "{}", String::from_utf8_lossy(&body));
    assert_eq!(json_of(&body), serde_json::json!({}), "every record was used or skipped: no partial success");
    let view = session_view(&server, "claude_code", "3c1d2f4e-8a7b-4c6d-9e0f-1a2b3c4d5e6f");
    assert_eq!(view["event_count"], 8, "{view}");
    assert_eq!(view["prompt_count"], 1);
    assert_eq!(view["tool_call_count"], 5);
    assert_eq!((view["tool_error_count"].as_i64(), view["denial_count"].as_i64()), (Some(1), Some(1)));
    assert_eq!(view["usage"]["input_tokens"], 1200);
    assert_eq!(view["usage"]["cache_read_tokens"], 9000);
    assert!(view["cost_usd"].as_f64().unwrap() > 0.0, "the server prices the tokens: {view}");
    assert_eq!(view["client_cost_usd"], 0.0123, "the vendor's cost is kept beside ours");

    // The same export again, as protobuf and gzipped: a replay, nothing new.
    let (status, kind, body) =
        send(&logs, &token, "application/x-protobuf", &[("Content-Encoding", "gzip")], gzip(&protobuf(&claude)));
    assert_eq!((status, kind.as_str()), (200, "application/x-protobuf"));
    assert_eq!(ExportLogsServiceResponse::decode(&body[..]).unwrap().partial_success, None);
    assert_eq!(session_view(&server, "claude_code", "3c1d2f4e-8a7b-4c6d-9e0f-1a2b3c4d5e6f")["event_count"], 8);

    // The prompt's text and the tool's parameters are in no stored byte.
    for entry in std::fs::read_dir(server.data_dir.join("events")).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for content in ["AKIAIOSFODNN7EXAMPLE", "flaky login", "--grep login"] {
            assert!(!bytes.windows(content.len()).any(|w| w == content.as_bytes()), "{content} was stored");
        }
    }

    // Codex under the prefix, as its config gives the full path; the hook's own token works too.
    let codex = fixture("codex_logs");
    let (status, _, _) = send(
        &format!("{}/otel/v1/logs", server.ingest),
        &server.token,
        "application/x-protobuf",
        &[],
        protobuf(&codex),
    );
    assert_eq!(status, 200);
    let view = session_view(&server, "codex", "0199a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b");
    assert_eq!((view["event_count"].as_i64(), view["tool_call_count"].as_i64()), (Some(5), Some(2)));
    assert_eq!(view["usage"]["cache_read_tokens"], 9600);
    assert_eq!(view["usage"]["reasoning_tokens"], 512);

    // Gemini CLI over JSON.
    let (status, _, _) = send(
        &logs,
        &token,
        "application/json; charset=utf-8",
        &[],
        serde_json::to_vec(&fixture("gemini_cli_logs")).unwrap(),
    );
    assert_eq!(status, 200);
    let view = session_view(&server, "gemini_cli", "b7e4c1d2-3f4a-4b5c-9d6e-7f8a9b0c1d2e");
    assert_eq!((view["event_count"].as_i64(), view["denial_count"].as_i64()), (Some(6), Some(1)));

    // Qwen Code (Gemini CLI's fork, `qwen-code.*`) over protobuf, priced from its own table.
    let (status, _, body) = send(&logs, &token, "application/x-protobuf", &[], protobuf(&fixture("qwen_code_logs")));
    assert_eq!(status, 200);
    assert_eq!(ExportLogsServiceResponse::decode(&body[..]).unwrap().partial_success, None);
    let view = session_view(&server, "qwen_code", "7a1f3c9e-2b4d-4e6f-8a0b-1c2d3e4f5a6b");
    assert_eq!((view["event_count"].as_i64(), view["denial_count"].as_i64()), (Some(5), Some(1)), "{view}");
    assert_eq!(
        (view["usage"]["input_tokens"].as_i64(), view["usage"]["cache_read_tokens"].as_i64()),
        (Some(3000), Some(12000))
    );
    assert_eq!(view["models"], serde_json::json!({"qwen3-coder-plus": 2}), "its config and its response");
    assert_eq!(view["unknown_model_events"], 0);
    assert!(view["cost_usd"].as_f64().unwrap() > 0.0, "{view}");
}

#[test]
fn records_that_cannot_be_used_are_a_partial_success_and_the_rest_is_stored() {
    let server = TestServer::spawn();
    let mut gemini = fixture("gemini_cli_logs");
    // No session on the resource, and none on the prompt record: that record is refused.
    gemini["resourceLogs"][0]["resource"]["attributes"] = serde_json::json!([]);
    let records = gemini["resourceLogs"][0]["scopeLogs"][0]["logRecords"].as_array_mut().unwrap();
    records[1]["attributes"].as_array_mut().unwrap().retain(|pair| pair["key"] != "session.id");
    // A timestamp two years old: the event is refused by the wire contract's rule.
    records[3]["timeUnixNano"] = Value::String(((now_ms() as u64 - 730 * 86_400_000) * 1_000_000).to_string());
    let (status, _, body) = send(
        &format!("{}/v1/logs", server.ingest),
        &server.token,
        "application/json",
        &[],
        serde_json::to_vec(&gemini).unwrap(),
    );
    assert_eq!(status, 200, "a partial success is a 200: the exporter must not retry");
    let answer = json_of(&body);
    let partial = &answer["partialSuccess"];
    assert_eq!(partial["rejectedLogRecords"], "2", "int64 as text, as proto3 JSON writes it: {answer}");
    let message = partial["errorMessage"].as_str().unwrap();
    assert!(message.contains("user_prompt: session.id is missing"), "{message}");
    assert!(message.contains("ts: is older than the server accepts"), "{message}");
    assert_eq!(session_view(&server, "gemini_cli", "b7e4c1d2-3f4a-4b5c-9d6e-7f8a9b0c1d2e")["event_count"], 4);
}

#[test]
fn bad_requests_are_refused_as_otlp_says_and_store_nothing() {
    let server = TestServer::spawn();
    let logs = format!("{}/v1/logs", server.ingest);
    let export = serde_json::to_vec(&fixture("claude_code_logs")).unwrap();

    // A wrong credential, before the body is read: 401 with a google.rpc.Status.
    let (status, kind, body) = send(&logs, "slh_otlp_not-a-token", "application/json", &[], export.clone());
    assert_eq!((status, kind.as_str()), (401, "application/json"));
    assert_eq!(json_of(&body)["code"], 16, "UNAUTHENTICATED");
    // An OTLP token is not a hook token.
    let token = otlp_token(&server);
    let (status, _) = server.post_events(&token, &envelope(vec![event("session_start", "s-1", now_ms())]));
    assert_eq!(status, 401, "an OTLP token opens the OTLP routes only");

    let (status, kind, body) =
        send(&logs, &token, "application/x-protobuf", &[], b"\xff\xff\xff not protobuf".to_vec());
    assert_eq!((status, kind.as_str()), (400, "application/x-protobuf"));
    let status_message = opentelemetry_status(&body);
    assert!(status_message.contains("not a protobuf OTLP logs export"), "{status_message}");

    let (status, _, body) = send(&logs, &token, "application/json", &[], br#"{"resourceLogs": 7}"#.to_vec());
    assert_eq!(status, 400);
    assert!(json_of(&body)["message"].as_str().unwrap().contains("not an OTLP/JSON logs export"));

    let (status, _, body) = send(&logs, &token, "text/plain", &[], export.clone());
    assert_eq!(status, 415);
    assert!(json_of(&body)["message"].as_str().unwrap().contains("application/x-protobuf or application/json"));

    // 50 MB declared: 413 (not retryable) before the body is read. (The server answers
    // and closes without reading 50 MB, so the request is written by hand.)
    let head = declared_only(&server.ingest, "/v1/logs", &token, 50 << 20);
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    let bomb = gzip(&vec![b' '; 50 << 20]);
    let (status, _, _) = send(&logs, &token, "application/json", &[("Content-Encoding", "gzip")], bomb);
    assert_eq!(status, 413, "a small body that inflates past the limit");
    assert_eq!(count_stored_events(&server.data_dir), 0);
}

/// Sends a request's headers declaring `length` bytes, and none of them; answers the
/// response's first line and headers.
fn declared_only(base: &str, path: &str, token: &str, length: usize) -> String {
    use std::io::Read;
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/x-protobuf\r\nContent-Length: {length}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = vec![0u8; 4096];
    let read = stream.read(&mut answer).unwrap();
    String::from_utf8_lossy(&answer[..read]).to_string()
}

/// The message of a protobuf `google.rpc.Status` (field 2).
fn opentelemetry_status(body: &[u8]) -> String {
    #[derive(Clone, PartialEq, prost::Message)]
    struct Status {
        #[prost(int32, tag = "1")]
        code: i32,
        #[prost(string, tag = "2")]
        message: String,
    }
    let status = Status::decode(body).expect("a google.rpc.Status");
    assert_eq!(status.code, 3, "INVALID_ARGUMENT");
    status.message
}

#[test]
fn an_empty_traces_export_is_a_success() {
    let server = TestServer::spawn();
    let (status, _, body) =
        send(&format!("{}/otel/v1/traces", server.ingest), &server.token, "application/json", &[], b"{}".to_vec());
    assert_eq!((status, json_of(&body)), (200, serde_json::json!({})), "an empty export is a success");
}

pub(crate) const CLAUDE_SESSION: &str = "3c1d2f4e-8a7b-4c6d-9e0f-1a2b3c4d5e6f";

/// OTLP/gRPC, on its own listener when `listen.otlp_grpc` is set: Gemini CLI's default.
#[test]
fn the_grpc_listener_takes_the_same_exports_with_the_same_credentials() {
    use opentelemetry_proto::tonic::collector::logs::v1::logs_service_client::LogsServiceClient;
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_LISTEN_OTLP_GRPC", "127.0.0.1:0")]);
    let addresses: Value =
        serde_json::from_str(&std::fs::read_to_string(server.data_dir.join("run/addresses.json")).unwrap()).unwrap();
    let endpoint = format!("http://{}", addresses["otlp_grpc"].as_str().expect("the gRPC listener's address"));
    let export: ExportLogsServiceRequest = serde_json::from_value(fixture("gemini_cli_logs")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (answer, refused) = runtime.block_on(async {
        let mut client = LogsServiceClient::connect(endpoint)
            .await
            .unwrap()
            .send_compressed(tonic::codec::CompressionEncoding::Gzip);
        let mut request = tonic::Request::new(export.clone());
        request.metadata_mut().insert("authorization", format!("Bearer {}", server.token).parse().unwrap());
        let answer = client.export(request).await.map(|response| response.into_inner());
        let mut wrong = tonic::Request::new(export);
        wrong.metadata_mut().insert("authorization", "Bearer slh_otlp_wrong".parse().unwrap());
        (answer, client.export(wrong).await)
    });
    assert_eq!(answer.expect("the export is taken").partial_success, None);
    assert_eq!(refused.expect_err("a wrong token is refused").code(), tonic::Code::Unauthenticated);
    let view = session_view(&server, "gemini_cli", "b7e4c1d2-3f4a-4b5c-9d6e-7f8a9b0c1d2e");
    assert_eq!((view["event_count"].as_i64(), view["usage"]["cache_read_tokens"].as_i64()), (Some(6), Some(4000)));
}

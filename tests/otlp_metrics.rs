//! OTLP metrics on the real binary: Claude Code's documented metrics export (delta
//! temporality, every value a double, `tests/fixtures/otlp/claude_code_metrics.json`)
//! and the same series sent cumulative, over JSON, protobuf and gRPC. What no event
//! carries (lines of code, commits, pull requests, active time) is added to the
//! session once; tokens and cost from metrics are never counted (the events carry
//! them); a retried export adds nothing; a cumulative series adds its growth and
//! restarts on a new start time; a point without a session is refused by count.

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use prost::Message;
use serde_json::{Value, json};

use crate::common::*;
use crate::otlp::{CLAUDE_SESSION, fixture, json_of, send, session_view};

fn post_json(server: &TestServer, export: &Value) -> Value {
    let (status, _, body) = send(
        &format!("{}/otel/v1/metrics", server.ingest),
        &server.token,
        "application/json",
        &[],
        serde_json::to_vec(export).unwrap(),
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    json_of(&body)
}

fn post_protobuf(server: &TestServer, export: &Value) -> u16 {
    let request: ExportMetricsServiceRequest = serde_json::from_value(export.clone()).unwrap();
    send(
        &format!("{}/v1/metrics", server.ingest),
        &server.token,
        "application/x-protobuf",
        &[],
        request.encode_to_vec(),
    )
    .0
}

/// A Claude Code session made by its log export, so the reported totals have a page.
fn claude_session(server: &TestServer) -> Value {
    let logs = fixture("claude_code_logs");
    let (status, _, _) = send(
        &format!("{}/v1/logs", server.ingest),
        &server.token,
        "application/json",
        &[],
        serde_json::to_vec(&logs).unwrap(),
    );
    assert_eq!(status, 200);
    session_view(server, "claude_code", CLAUDE_SESSION)
}

/// One cumulative `lines_of_code` point of `value` lines added since `start`.
fn cumulative_lines(start_ms: u64, time_ms: u64, value: f64, session: Option<&str>) -> Value {
    let mut attributes = vec![json!({"key": "type", "value": {"stringValue": "added"}})];
    if let Some(session) = session {
        attributes.push(json!({"key": "session.id", "value": {"stringValue": session}}));
    }
    json!({"resourceMetrics": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "claude-code"}}]},
        "scopeMetrics": [{"scope": {"name": "com.anthropic.claude_code"}, "metrics": [{
            "name": "claude_code.lines_of_code.count",
            "sum": {"aggregationTemporality": 2, "isMonotonic": true, "dataPoints": [{
                "asInt": value.to_string(),
                "startTimeUnixNano": (start_ms * 1_000_000).to_string(),
                "timeUnixNano": (time_ms * 1_000_000).to_string(),
                "attributes": attributes}]}}]}]}]})
}

#[test]
fn what_no_event_carries_is_added_to_the_session_once_and_tokens_never_twice() {
    let server = TestServer::spawn();
    let before = claude_session(&server);
    let export = fixture("claude_code_metrics");
    let answer = post_json(&server, &export);
    assert_eq!(answer, json!({}), "every point is either kept or knowingly not stored");
    let view = session_view(&server, "claude_code", CLAUDE_SESSION);
    assert_eq!(
        view["reported"],
        json!({"lines_added": 120, "lines_removed": 30, "commits": 2, "pull_requests": 1,
               "active_user_ms": 300_500, "active_agent_ms": 1_200_000})
    );
    // The owner's session page shows them.
    let page_url = format!("{}/sessions/{}", server.web, view["id"].as_str().unwrap());
    let mut response = agent()
        .get(&page_url)
        .header("Accept", "text/html")
        .header("Authorization", format!("Bearer {}", access_token(&server, "dev@example.com")))
        .call()
        .unwrap();
    let page = response.body_mut().read_to_string().unwrap();
    assert!(page.contains("Reported by claude_code itself") && page.contains("+120 −30"), "{page}");
    for field in ["event_count", "usage", "cost_nusd", "client_cost_usd"] {
        assert_eq!(view[field], before[field], "{field}: metrics never add to what the events counted");
    }

    // The exporter retries the same export (over protobuf this time): nothing is added.
    assert_eq!(post_protobuf(&server, &export), 200);
    assert_eq!(session_view(&server, "claude_code", CLAUDE_SESSION)["reported"]["lines_added"], 120);

    // The same series kept by a cumulative exporter: growth only, a new start restarts.
    let start = now_ms() as u64 - 600_000;
    for (start_ms, time_ms, total) in
        [(start, start + 60_000, 10.0), (start, start + 120_000, 25.0), (start, start + 120_000, 25.0)]
    {
        assert_eq!(post_protobuf(&server, &cumulative_lines(start_ms, time_ms, total, Some(CLAUDE_SESSION))), 200);
    }
    post_json(&server, &cumulative_lines(start + 300_000, start + 360_000, 4.0, Some(CLAUDE_SESSION)));
    let reported = &session_view(&server, "claude_code", CLAUDE_SESSION)["reported"];
    assert_eq!(reported["lines_added"], 120 + 10 + 15 + 4, "{reported}");
    assert_eq!(reported["commits"], 2);

    // A point without its session cannot be put anywhere: refused by count and reason.
    let answer = post_json(&server, &cumulative_lines(start, start + 60_000, 7.0, None));
    assert_eq!(answer["partialSuccess"]["rejectedDataPoints"], "1", "{answer}");
    let message = answer["partialSuccess"]["errorMessage"].as_str().unwrap();
    assert!(message.contains("claude_code.lines_of_code.count: session.id is missing"), "{message}");
}

#[test]
fn the_grpc_listener_stores_metrics_as_http_does() {
    use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_client::MetricsServiceClient;
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_LISTEN_OTLP_GRPC", "127.0.0.1:0")]);
    claude_session(&server);
    let addresses: Value =
        serde_json::from_str(&std::fs::read_to_string(server.data_dir.join("run/addresses.json")).unwrap()).unwrap();
    let endpoint = format!("http://{}", addresses["otlp_grpc"].as_str().unwrap());
    let export: ExportMetricsServiceRequest = serde_json::from_value(fixture("claude_code_metrics")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let answer = runtime.block_on(async {
        let mut client = MetricsServiceClient::connect(endpoint).await.unwrap();
        let mut request = tonic::Request::new(export);
        request.metadata_mut().insert("authorization", format!("Bearer {}", server.token).parse().unwrap());
        client.export(request).await.map(|response| response.into_inner())
    });
    assert_eq!(answer.expect("the export is taken").partial_success, None);
    let reported = &session_view(&server, "claude_code", CLAUDE_SESSION)["reported"];
    assert_eq!((reported["lines_added"].as_i64(), reported["active_agent_ms"].as_i64()), (Some(120), Some(1_200_000)));
}

/// L1: a point of 9.2e18 lines overflowed the session's sum into a REAL and made the
/// session a permanent 500 for everyone who could open it. Such a point is refused by
/// count and reason; the session reads as before, on the API and its page.
#[test]
fn a_point_beyond_any_session_is_refused_and_the_session_still_reads() {
    let server = TestServer::spawn();
    claude_session(&server);
    post_json(&server, &fixture("claude_code_metrics"));
    let start = now_ms() as u64 - 600_000;
    let mut huge = cumulative_lines(start, start + 60_000, 0.0, Some(CLAUDE_SESSION));
    huge["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["sum"]["dataPoints"][0]["asInt"] =
        json!("9200000000000000000");
    for _ in 0..2 {
        let answer = post_json(&server, &huge);
        assert_eq!(answer["partialSuccess"]["rejectedDataPoints"], "1", "{answer}");
        let message = answer["partialSuccess"]["errorMessage"].as_str().unwrap();
        assert!(message.contains("beyond any session's"), "{message}");
    }
    let view = session_view(&server, "claude_code", CLAUDE_SESSION);
    assert_eq!(view["reported"]["lines_added"], 120, "{view}");
    let id = view["id"].as_str().unwrap().to_string();
    let owner = access_token(&server, "dev@example.com");
    assert_eq!(get_auth(&format!("{}/api/sessions/{id}", server.web), &owner).0, 200);
    let mut response = agent()
        .get(&format!("{}/sessions/{id}", server.web))
        .header("Accept", "text/html")
        .header("Authorization", format!("Bearer {owner}"))
        .call()
        .unwrap();
    assert_eq!(response.status(), 200, "{}", response.body_mut().read_to_string().unwrap());
}

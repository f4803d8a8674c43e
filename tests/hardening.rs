//! The outside probe's findings against the listeners, reproduced on the real binary:
//! a hostile OTLP export over gRPC without a token (H1) and with one, over gRPC and HTTP
//! (M3), measured by the server's own peak memory; a thousand slow bodies (M1) while
//! `/health` answers; the gRPC listener's limits (idle connections, streams per
//! connection, the status codes OTLP names). Each failed before its fix.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;
use crate::otlp::gzip;

fn gzip_best(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// The body of H1 and M3: `count` empty log records (two bytes each) in one export.
fn empty_records(count: usize) -> Vec<u8> {
    let mut scope = Vec::with_capacity(count * 2 + 16);
    for _ in 0..count {
        scope.extend_from_slice(&[0x12, 0x00]); // ScopeLogs.log_records (2), empty
    }
    let resource = length_delimited(0x12, &scope); // ResourceLogs.scope_logs (2)
    length_delimited(0x0a, &resource) // ExportLogsServiceRequest.resource_logs (1)
}

fn length_delimited(key: u8, inner: &[u8]) -> Vec<u8> {
    let mut out = vec![key];
    let mut length = inner.len() as u64;
    while length >= 0x80 {
        out.push((length as u8) | 0x80);
        length >>= 7;
    }
    out.push(length as u8);
    out.extend_from_slice(inner);
    out
}

/// The hostile export, gzipped: 4 million records in under 10 KB.
fn hostile_gzip() -> Vec<u8> {
    let body = gzip_best(&empty_records(4_000_000));
    assert!(body.len() < 10 << 10, "{} bytes", body.len());
    body
}

fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with(field)).unwrap_or_else(|| panic!("no {field}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// How much the server's resident memory peaked above where it stood, around `act`.
fn peak_growth_mib(server: &TestServer, act: impl FnOnce()) -> u64 {
    let pid = server.child.as_ref().unwrap().id();
    // Writing 5 to clear_refs resets the peak (VmHWM) to the current resident size.
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("reset the server's peak memory");
    let before = status_kib(pid, "VmRSS:");
    act();
    let peak = status_kib(pid, "VmHWM:");
    let growth = peak.saturating_sub(before) / 1024;
    // The figure, for `--nocapture` readers (the closing note's number).
    eprintln!("peak resident memory {before} KiB before, {peak} KiB at peak: {growth} MiB of growth");
    growth
}

fn grpc_server(extra: &[(&str, &str)]) -> (TestServer, SocketAddr) {
    let mut env = vec![("SIGHTLINE_LISTEN_OTLP_GRPC", "127.0.0.1:0")];
    env.extend_from_slice(extra);
    let server = TestServer::spawn_with_env(&env);
    let addresses: Value =
        serde_json::from_str(&std::fs::read_to_string(server.data_dir.join("run/addresses.json")).unwrap()).unwrap();
    let address = addresses["otlp_grpc"].as_str().expect("the gRPC listener's address").parse().unwrap();
    (server, address)
}

/// The answer to one gRPC call: the HTTP status, `grpc-status` (from the headers of a
/// Trailers-Only answer or from the trailers) and `grpc-message`.
#[derive(Debug)]
struct GrpcAnswer {
    http: u16,
    grpc_status: Option<String>,
    grpc_message: Option<String>,
}

/// One unary call over a fresh HTTP/2 connection (the `h2` crate: frames as sent).
fn grpc_call(address: SocketAddr, path: &str, token: Option<&str>, message: &[u8], gzip_flag: bool) -> GrpcAnswer {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
        let (client, connection) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let mut client = client.ready().await.unwrap();
        let mut request = axum::http::Request::builder()
            .method("POST")
            .uri(format!("http://{address}{path}"))
            .header("content-type", "application/grpc")
            .header("te", "trailers");
        if gzip_flag {
            request = request.header("grpc-encoding", "gzip");
        }
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let (response, mut body) = client.send_request(request.body(()).unwrap(), false).unwrap();
        let mut framed = vec![u8::from(gzip_flag)];
        framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
        framed.extend_from_slice(message);
        // The server may answer (and reset the stream) before the body is sent: that is
        // the point of H1, so a failed send is not the test's failure.
        let _ = body.send_data(framed.into(), true);
        let response = response.await.unwrap();
        let (parts, mut stream) = response.into_parts();
        let header = |name: &str| parts.headers.get(name).map(|v| v.to_str().unwrap().to_string());
        let (mut grpc_status, mut grpc_message) = (header("grpc-status"), header("grpc-message"));
        if grpc_status.is_none() {
            while let Some(data) = stream.data().await {
                let _ = data;
            }
            if let Ok(Some(trailers)) = stream.trailers().await {
                grpc_status = trailers.get("grpc-status").map(|v| v.to_str().unwrap().to_string());
                grpc_message = trailers.get("grpc-message").map(|v| v.to_str().unwrap().to_string());
            }
        }
        GrpcAnswer { http: parts.status.as_u16(), grpc_status, grpc_message }
    })
}

const LOGS: &str = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";

/// H1: the export is refused from its headers; its 4 million records are never decoded.
#[test]
fn an_unauthenticated_grpc_export_is_refused_before_its_body_costs_memory() {
    let (server, address) = grpc_server(&[]);
    let body = hostile_gzip();
    let mut answer = None;
    let growth = peak_growth_mib(&server, || answer = Some(grpc_call(address, LOGS, None, &body, true)));
    let answer = answer.unwrap();
    assert_eq!((answer.http, answer.grpc_status.as_deref()), (200, Some("16")), "UNAUTHENTICATED: {answer:?}");
    assert!(growth < 64, "the server's memory grew {growth} MiB for one unauthenticated request");
    // A wrong token is the same.
    let wrong = grpc_call(address, LOGS, Some("slh_otlp_wrong"), &body, true);
    assert_eq!(wrong.grpc_status.as_deref(), Some("16"), "{wrong:?}");
}

/// M3 over gRPC: with a developer's token the same export is refused as too large
/// (RESOURCE_EXHAUSTED, which exporters do not retry), counted before it is decoded.
#[test]
fn a_hostile_grpc_export_with_a_token_is_refused_within_its_memory() {
    let (server, address) = grpc_server(&[]);
    let body = hostile_gzip();
    let mut answer = None;
    let growth = peak_growth_mib(&server, || answer = Some(grpc_call(address, LOGS, Some(&server.token), &body, true)));
    let answer = answer.unwrap();
    assert_eq!(answer.grpc_status.as_deref(), Some("8"), "RESOURCE_EXHAUSTED: {answer:?}");
    assert!(answer.grpc_message.as_deref().unwrap_or("").contains("records"), "{answer:?}");
    assert!(growth < 64, "the server's memory grew {growth} MiB for one export");
    // A message past the decoded limit is RESOURCE_EXHAUSTED too, never OUT_OF_RANGE (11),
    // which exporters retry forever; a malformed one INVALID_ARGUMENT.
    let oversized = gzip(&vec![0u8; 9 << 20]);
    assert_eq!(grpc_call(address, LOGS, Some(&server.token), &oversized, true).grpc_status.as_deref(), Some("8"));
    let malformed = grpc_call(address, LOGS, Some(&server.token), &[0x0a, 0x05, 0x01], false);
    assert_eq!(malformed.grpc_status.as_deref(), Some("3"), "{malformed:?}");
    let unknown = grpc_call(
        address,
        "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export",
        Some(&server.token),
        &[],
        false,
    );
    assert_eq!(unknown.grpc_status.as_deref(), Some("12"), "UNIMPLEMENTED: {unknown:?}");
    // And the listener still takes an ordinary export.
    let export: opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest =
        serde_json::from_value(crate::otlp::fixture("gemini_cli_logs")).unwrap();
    let good = grpc_call(address, LOGS, Some(&server.token), &prost::Message::encode_to_vec(&export), false);
    assert_eq!(good.grpc_status.as_deref(), Some("0"), "{good:?}");
}

/// M3 over HTTP: protobuf and JSON alike.
#[test]
fn a_hostile_http_export_with_a_token_is_refused_within_its_memory() {
    let server = TestServer::spawn();
    let url = format!("{}/v1/logs", server.ingest);
    let protobuf = hostile_gzip();
    let json = {
        let mut text = String::from("{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{}");
        text.push_str(&",{}".repeat(2_700_000));
        text.push_str("]}]}]}");
        gzip(text.as_bytes())
    };
    for (content_type, body) in [("application/x-protobuf", protobuf), ("application/json", json)] {
        let mut answer = (0, String::new(), Vec::new());
        let growth = peak_growth_mib(&server, || {
            answer = crate::otlp::send(&url, &server.token, content_type, &[("Content-Encoding", "gzip")], body)
        });
        assert_eq!(answer.0, 413, "{content_type}: {}", String::from_utf8_lossy(&answer.2));
        assert!(growth < 64, "{content_type}: the server's memory grew {growth} MiB for one export");
    }
    // The hook's own batches: millions of `{}` events stop at the envelope's bound.
    let events = {
        let mut text =
            String::from("{\"client\":{\"machine_id\":\"m\",\"cli_version\":\"1\",\"os\":\"linux\"},\"events\":[{}");
        text.push_str(&",{}".repeat(2_700_000));
        text.push_str("]}");
        gzip(text.as_bytes())
    };
    let mut status = 0;
    let growth = peak_growth_mib(&server, || {
        status =
            post_raw(&format!("{}/v1/events", server.ingest), &server.token, &[("Content-Encoding", "gzip")], events).0
    });
    assert_eq!(status, 413);
    assert!(growth < 64, "/v1/events: the server's memory grew {growth} MiB");
}

/// Opens a connection from `source` (a loopback address of its own) to `to`.
fn connect_from(source: &str, to: SocketAddr) -> std::io::Result<TcpStream> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime
        .block_on(async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind(format!("{source}:0").parse().unwrap())?;
            let stream = socket.connect(to).await?;
            stream.into_std()
        })
        .and_then(|stream| {
            stream.set_nonblocking(false)?;
            Ok(stream)
        })
}

/// `GET /health` from `source`, within a second.
fn health_from(source: &str, to: SocketAddr) -> Result<String, String> {
    let mut stream = connect_from(source, to).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: sightline\r\nConnection: close\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).map_err(|e| e.to_string())?;
    Ok(answer)
}

/// M1: 1,100 sign-in requests trickling their bodies from one address hold at most that
/// address's share of the web listener, `/health` answers meanwhile, and each body is cut
/// at the body timeout.
#[test]
fn slow_bodies_hold_one_addresss_share_and_are_cut_at_the_body_timeout() {
    // The timeout leaves room for opening 1,100 connections on a loaded machine: were the
    // first cut before the last opened, the freed share would admit more of them.
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_LISTEN_BODY_TIMEOUT_SECS", "10")]);
    let web: SocketAddr = server.web.trim_start_matches("http://").parse().unwrap();
    let opened_at = Instant::now();
    let mut slow = Vec::new();
    for _ in 0..1100 {
        let mut stream = connect_from("127.0.0.1", web).expect("connect");
        let head = "POST /login HTTP/1.1\r\nHost: sightline\r\nContent-Type: application/x-www-form-urlencoded\r\n\
                    Content-Length: 1000\r\n\r\ne";
        // A connection past the share is closed by the server; writing to it may fail.
        let _ = stream.write_all(head.as_bytes());
        slow.push(stream);
    }
    let held_since = Instant::now();
    // Meanwhile, another client is served at once, and again a second later.
    for _ in 0..2 {
        let answer = health_from("127.0.0.2", web).expect("/health answers within a second");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        std::thread::sleep(Duration::from_secs(1));
    }
    // Past its share the address's connections were closed at once; the rest are answered
    // 408 at the body timeout (still trickling: a byte each second).
    let mut answered = 0;
    let mut closed_early = 0;
    for stream in &mut slow {
        stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    }
    // Stop trickling before the cut, so the server has read every byte sent and closes
    // cleanly (unread bytes would turn its close into a reset that loses the answer).
    let deadline = opened_at + Duration::from_millis(8500);
    assert!(held_since < deadline, "opening the connections took {:?}: too long to tell", held_since - opened_at);
    while Instant::now() < deadline {
        for stream in &mut slow {
            let _ = stream.write_all(b"x");
        }
        std::thread::sleep(Duration::from_millis(900));
    }
    for stream in &mut slow {
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer);
        if text.starts_with("HTTP/1.1 408") {
            answered += 1;
        } else {
            closed_early += 1;
        }
    }
    assert_eq!(answered, 128, "the address's share (listen.max_connections_per_address) was served, then cut");
    assert_eq!(closed_early, 1100 - 128);
    let answer = health_from("127.0.0.1", web).expect("the address is served again once its connections closed");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// The gRPC listener closes a connection that stays idle, and says how many calls one
/// connection may carry at once.
#[test]
fn the_grpc_listener_limits_streams_and_closes_idle_connections() {
    let (_server, address) = grpc_server(&[("SIGHTLINE_LISTEN_IDLE_TIMEOUT_SECS", "2")]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
        let (client, mut connection) = h2::client::handshake(tcp).await.unwrap();
        // The server's SETTINGS arrive with the first exchange.
        let mut client = client;
        let request =
            axum::http::Request::builder().method("GET").uri(format!("http://{address}/health")).body(()).unwrap();
        let (response, _) = client.send_request(request, true).unwrap();
        let answered = async {
            let response = response.await.unwrap();
            assert_eq!(response.status(), 200);
        };
        tokio::select! {
            () = answered => {},
            _ = &mut connection => panic!("the connection closed before the answer"),
        }
        assert_eq!(connection.max_concurrent_send_streams(), 32, "listen.max_streams_per_connection");
        let started = Instant::now();
        let closed = tokio::time::timeout(Duration::from_secs(15), &mut connection).await;
        assert!(closed.is_ok(), "an idle connection is closed by the server");
        assert!(started.elapsed() >= Duration::from_secs(1), "not before it is idle: {:?}", started.elapsed());
    });
}

/// Every answer of every listener carries the security headers and a request id, the
/// operators' endpoints and errors included; an API error quotes the id.
#[test]
fn every_listener_answers_with_security_headers_and_a_request_id() {
    let (server, grpc) = grpc_server(&[]);
    for url in [
        format!("{}/health", server.ingest),
        format!("{}/metrics", server.ingest),
        format!("{}/v1/price-table?agent=claude_code", server.ingest),
        format!("{}/no-such-route", server.ingest),
        format!("{}/health", server.github),
        format!("{}/login", server.web),
    ] {
        let answer = agent().get(&url).call().unwrap();
        let header = |name: &str| answer.headers().get(name).map(|v| v.to_str().unwrap().to_string());
        assert_eq!(header("x-content-type-options").as_deref(), Some("nosniff"), "{url}");
        assert_eq!(header("x-frame-options").as_deref(), Some("DENY"), "{url}");
        assert!(header("content-security-policy").is_some_and(|csp| csp.contains("default-src 'self'")), "{url}");
        assert!(header("strict-transport-security").is_none(), "{url}: no HSTS over plain HTTP");
        let id = header("x-request-id").unwrap_or_default();
        assert!(id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{url}: {id:?}");
    }
    let mut answer = agent().get(format!("{}/api/sessions/nope", server.web)).call().unwrap();
    let id = answer.headers()["x-request-id"].to_str().unwrap().to_string();
    let body: Value = serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(body["error"]["request_id"].as_str(), Some(id.as_str()), "{body}");
    // The gRPC listener's answers carry the id too.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(grpc).await.unwrap();
        let (mut client, connection) = h2::client::handshake(tcp).await.unwrap();
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let request = axum::http::Request::builder().uri(format!("http://{grpc}/health")).body(()).unwrap();
        let (response, _) = client.send_request(request, true).unwrap();
        assert!(response.await.unwrap().headers().contains_key("x-request-id"));
    });
}

//! The transcript upload end to end: the real shipper (`sightline flusher`) uploads a
//! finished session's transcript through a loopback proxy that drops every third
//! response, to a real `sightline serve`; the server stores it once, redacted again,
//! compressed, with the session pointing at it, and searchable by its owner alone
//! (`GET /api/search`) without the secrets. Direct requests show the server's own
//! redaction, the limits (413) and the checks that name what is wrong.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::machine::*;
use common::proxy::Proxy;
use common::*;
use serde_json::Value;

const SESSION: &str = "3f1c2a9e-5b7d-4c1e-9a0f-6d2e8b4c7a11";
/// The stored transcript's path, rules version and text, read as an operator would.
fn stored(data_dir: &Path, session: &str) -> Option<(String, i64, String)> {
    let conn = rusqlite::Connection::open(data_dir.join("main.db")).unwrap();
    let (path, version): (Option<String>, Option<i64>) = rusqlite::OptionalExtension::optional(conn.query_row(
        "SELECT transcript_path, transcript_rules_version FROM sessions WHERE agent_session_id = ?1",
        [session],
        |r| Ok((r.get(0)?, r.get(1)?)),
    ))
    .unwrap()?;
    let path = path?;
    let text = zstd::stream::decode_all(std::fs::File::open(data_dir.join(&path)).unwrap()).unwrap();
    Some((path, version?, String::from_utf8(text).unwrap()))
}

fn sha256(bytes: &[u8]) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, bytes))
}

#[test]
fn the_shipper_uploads_through_dropped_connections_and_the_server_stores_it_once_redacted() {
    let server = TestServer::spawn();
    let proxy = Proxy::start(server.ingest.trim_start_matches("http://"), 0);
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    replay_with_pasted_secrets(home, &proxy.url, &server.token, 300, |i| {
        format!("note {i}: the flamingo migration step {}", fastrand::u64(..))
    });

    // Every third response through the proxy is lost after the server did the work.
    // Completion is watched on the server (a `status` through the proxy would shift
    // which responses are lost).
    proxy.set_drop_every(3);
    let mut rounds = 0;
    while stored(&server.data_dir, SESSION).is_none() {
        rounds += 1;
        assert!(rounds <= 40, "the upload never completed");
        // A round fails when one of its answers is lost; the next one resumes.
        client(home, &["flusher", "--once", "--transcript-chunk-bytes", "1024"], None);
    }
    assert!(rounds > 1, "answers were lost, so it took more than one round");
    proxy.set_drop_every(0);
    client(home, &["flusher", "--once"], None);
    let status = stdout(&client(home, &["status"], None));
    assert!(status.contains("transcripts: 0 waiting"), "the laptop learnt the upload is complete: {status}");

    let (path, version, stored_text) = stored(&server.data_dir, SESSION).expect("the session points at its transcript");
    assert_eq!(version, i64::from(sightline::redact::RULES_VERSION), "stored under the current rules version");
    assert!(path.starts_with("transcripts/") && path.ends_with(".jsonl.zst"), "{path}");
    assert!(stored_text.contains("note 299: the flamingo migration") && stored_text.contains("msg_01A"));
    assert!(stored_text.contains("[REDACTED:"));
    for secret in PLANTED {
        assert!(!stored_text.contains(secret), "{secret} was stored");
    }
    let files: Vec<_> = std::fs::read_dir(server.data_dir.join("transcripts"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "incoming")
        .collect();
    assert_eq!(files.len(), 1, "stored once: {files:?}");
    let staging = std::fs::read_dir(server.data_dir.join("transcripts/incoming")).unwrap().count();
    assert_eq!(staging, 0, "no chunks left waiting");
    assert_eq!(server.session(&server.token, SESSION).1["event_count"], 21, "events unaffected");

    // The stored transcript becomes searchable by its owner within seconds of the upload.
    let total = |token: &str, q: &str| {
        let (status, body) = transcripts::search(&server, Some(token), &[("q", q)]);
        assert_eq!(status, 200, "{q}: {body}");
        body["total"].as_u64().unwrap()
    };
    wait_until(Duration::from_secs(30), "the transcript to be searchable", || {
        total(&server.token, "\"flamingo migration\"") > 0
    });
    assert_eq!(total(&server.token, "\"flamingo migration\""), 300, "every note, in one commit");
    assert_eq!(total(&server.token, "\"migration flamingo\""), 0, "a phrase keeps its order");
    let pasted = "\"use redacted cloud access key\"";
    assert_eq!(total(&server.token, pasted), 1, "the message that pasted the secrets is indexed, redacted");
    for secret in ["AKIAIOSFODNN7EXAMPLE", "hunter2", PLANTED[1], "\"admin hunter2\""] {
        assert_eq!(total(&server.token, secret), 0, "{secret} is not in the index");
    }
    let other = user_with_token(&server.data_dir, "other@example.com");
    assert_eq!(total(&other, "flamingo"), 0, "another person finds nothing in this session");
    let (status, body) = transcripts::search(&server, None, &[("q", "flamingo")]);
    assert_eq!((status, body["error"]["code"].as_str()), (401, Some("unauthorized")), "{body}");
}

#[test]
fn the_server_redacts_again_checks_every_chunk_and_refuses_what_is_too_large() {
    let server = TestServer::spawn();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    assert!(client(home, &["login", "--server", &server.ingest, "--token", &server.token], None).status.success());
    let repo = home.join("repo");
    std::fs::create_dir(&repo).unwrap();
    replay(home, "claude_code", &repo);
    assert!(client(home, &["flusher", "--once"], None).status.success());

    // A client that did not redact: the server does.
    let raw = format!(
        "{{\"type\":\"user\",\"message\":{{\"content\":\"key {}\"}}}}\nplain line with {}\n",
        PLANTED[0], PLANTED[2]
    );
    let upload = zstd::bulk::compress(raw.as_bytes(), 3).unwrap();
    let whole = sha256(&upload);
    let (first, second) = upload.split_at(upload.len() / 2);
    let url = format!("{}/v1/transcripts/{SESSION}?agent_type=claude_code", server.ingest);
    let post = |index: u32, total: u32, bytes: &[u8], chunk_sha: &str, token: &str| {
        let response = ureq::post(&url)
            .header("Authorization", &format!("Bearer {token}"))
            .header("Content-Type", "application/zstd")
            .header("X-Chunk-Index", &index.to_string())
            .header("X-Chunk-Total", &total.to_string())
            .header("X-Chunk-Sha256", chunk_sha)
            .header("X-Transcript-Sha256", &whole)
            .config()
            .http_status_as_error(false)
            .build()
            .send(bytes)
            .unwrap();
        let status = response.status().as_u16();
        let body: Value = serde_json::from_str(&response.into_body().read_to_string().unwrap()).unwrap_or(Value::Null);
        (status, body)
    };
    let state = |token: &str| {
        let response = ureq::get(&format!("{url}&sha256={whole}"))
            .header("Authorization", &format!("Bearer {token}"))
            .config()
            .http_status_as_error(false)
            .build()
            .call()
            .unwrap();
        let status = response.status().as_u16();
        (status, serde_json::from_str::<Value>(&response.into_body().read_to_string().unwrap()).unwrap_or(Value::Null))
    };
    assert_eq!(state(&server.token).0, 404, "nothing received yet");

    let (status, body) = post(0, 2, first, &sha256(second), &server.token);
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["field"], "X-Chunk-Sha256");
    let (status, body) = post(2, 2, first, &sha256(first), &server.token);
    assert_eq!((status, body["error"]["field"].as_str()), (400, Some("X-Chunk-Index")), "{body}");
    let (status, body) = post(0, 100_000, first, &sha256(first), &server.token);
    assert_eq!(status, 413, "{body}");
    // An upload of 40 small chunks (the shipper's 1 MiB chunks of a 40 MiB transcript):
    // held to the bytes it sends, not to 40 times the largest chunk allowed.
    let forty = ureq::post(&url)
        .header("Authorization", &format!("Bearer {}", server.token))
        .header("X-Chunk-Index", "0")
        .header("X-Chunk-Total", "40")
        .header("X-Chunk-Sha256", &sha256(first))
        .header("X-Transcript-Sha256", &sha256(b"another upload"))
        .config()
        .http_status_as_error(false)
        .build()
        .send(first)
        .unwrap();
    assert_eq!(forty.status().as_u16(), 200, "the 34th chunk and beyond are not refused for their count");
    let other = user_with_token(&server.data_dir, "other@example.com");
    assert_eq!(post(0, 2, first, &sha256(first), &other).0, 404, "another person's session is not found");

    assert_eq!(post(0, 2, first, &sha256(first), &server.token), (200, serde_json::json!({"complete": false})));
    assert_eq!(post(0, 2, first, &sha256(first), &server.token).0, 200, "a repeated chunk is idempotent");
    assert_eq!(state(&server.token), (200, serde_json::json!({"received": [0], "complete": false})));
    let (status, body) = post(1, 3, second, &sha256(second), &server.token);
    assert_eq!((status, body["error"]["field"].as_str()), (400, Some("X-Chunk-Total")), "{body}");
    assert_eq!(post(1, 2, second, &sha256(second), &server.token), (200, serde_json::json!({"complete": true})));
    assert_eq!(state(&server.token), (200, serde_json::json!({"complete": true})));
    assert_eq!(post(1, 2, second, &sha256(second), &server.token).1["complete"], true, "a late retry is done");

    let (_, _, text) = stored(&server.data_dir, SESSION).unwrap();
    assert!(text.contains("plain line with") && text.contains("[REDACTED:"), "{text}");
    assert!(
        !text.contains(PLANTED[0]) && !text.contains("hunter2"),
        "the server redacted what the client did not: {text}"
    );

    // Whole digest that the chunks do not match: discarded, nothing stored over the old one.
    let bogus = zstd::bulk::compress(b"replacement", 3).unwrap();
    let response = ureq::post(&url)
        .header("Authorization", &format!("Bearer {}", server.token))
        .header("X-Chunk-Index", "0")
        .header("X-Chunk-Total", "1")
        .header("X-Chunk-Sha256", &sha256(&bogus))
        .header("X-Transcript-Sha256", &"0".repeat(64))
        .config()
        .http_status_as_error(false)
        .build()
        .send(&bogus[..])
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    assert_eq!(stored(&server.data_dir, SESSION).unwrap().2, text, "the stored transcript is untouched");
}

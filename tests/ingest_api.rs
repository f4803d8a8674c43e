//! POST /v1/events and friends against the real server binary on loopback:
//! validation by index and field, idempotency, additivity, limits, encodings,
//! price tables, the caller's own sessions, metrics and graceful shutdown.

use crate::common;

use std::io::Write;

use common::*;
use serde_json::{Value, json};

#[test]
fn good_events_are_accepted_and_bad_ones_reported_by_index_and_field() {
    let server = TestServer::spawn();
    let now = now_ms();
    let mut too_big = event("turn_end", "s-bad", now);
    too_big["metadata"] = json!({"blob": "x".repeat(9000)});
    let cases: Vec<(Value, &str)> = vec![
        (json!({"type": "session_start"}), "event_id"),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["event_id"] = json!("not-a-uuid");
                e
            },
            "event_id",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["type"] = json!("tool_call");
                e
            },
            "type",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["ts"] = json!(12345);
                e
            },
            "ts",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["ts"] = json!("yesterday");
                e
            },
            "ts",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["ts"] = json!(ts_rfc3339(now + 3 * 86_400_000));
                e
            },
            "ts",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["agent_type"] = json!("vim");
                e
            },
            "agent_type",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["session_id"] = json!("");
                e
            },
            "session_id",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["run_kind"] = json!("BATCH");
                e
            },
            "run_kind",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["permission_mode"] = json!("yolo");
                e
            },
            "permission_mode",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["notification_kind"] = json!("idle");
                e
            },
            "notification_kind",
        ),
        (
            {
                let mut e = event("tool_end", "s-bad", now);
                e["tool"]["name"] = json!("Bash");
                e
            },
            "tool.name",
        ),
        (
            {
                let mut e = event("tool_end", "s-bad", now);
                e["tool"]["status"] = json!("ok");
                e
            },
            "tool.status",
        ),
        (
            {
                let mut e = event("tool_end", "s-bad", now);
                e["tool"]["input_sha256"] = json!("abc");
                e
            },
            "tool.input_sha256",
        ),
        (
            {
                let mut e = event("tool_end", "s-bad", now);
                e["tool"]["input_bytes"] = json!(-1);
                e
            },
            "tool.input_bytes",
        ),
        (
            {
                let mut e = event("tool_end", "s-bad", now);
                e.as_object_mut().unwrap().remove("tool");
                e
            },
            "tool",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["usage"]["output_tokens"] = json!(-5);
                e
            },
            "usage.output_tokens",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["usage"]["input_tokens"] = json!("many");
                e
            },
            "usage.input_tokens",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["git"] = json!({"branch": "main"});
                e
            },
            "git",
        ),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["metadata"] = json!([1, 2]);
                e
            },
            "metadata",
        ),
        (too_big, "metadata"),
        (
            {
                let mut e = event("turn_end", "s-bad", now);
                e["client_cost_usd"] = json!(-1.0);
                e
            },
            "client_cost_usd",
        ),
    ];
    let mut events: Vec<Value> = vec![event("session_start", "s-good", now)];
    events.extend(cases.iter().map(|(e, _)| e.clone()));
    events.push(event("turn_end", "s-good", now + 1));
    let (status, body) = server.post_events(&server.token, &envelope(events));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["accepted"], 2, "{body}");
    assert_eq!(body["duplicates"], 0);
    let rejected = body["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), cases.len(), "{body}");
    for (i, (_, field)) in cases.iter().enumerate() {
        let r = &rejected[i];
        assert_eq!(r["index"], i + 1, "{r}");
        assert_eq!(r["field"], *field, "case {i}: {r}");
        assert!(!r["reason"].as_str().unwrap().is_empty());
    }
    assert_eq!(count_stored_events(&server.data_dir), 2);
}

#[test]
fn replayed_batch_adds_nothing_sequentially_or_concurrently() {
    let server = TestServer::spawn();
    let batch = envelope(session_events("s-replay", now_ms(), 50));
    let (status, first) = server.post_events(&server.token, &batch);
    assert_eq!((status, first["accepted"].clone()), (200, json!(50)), "{first}");
    let before = session_aggregates(&server.main_db(), "s-replay");

    let (_, again) = server.post_events(&server.token, &batch);
    assert_eq!((again["accepted"].clone(), again["duplicates"].clone()), (json!(0), json!(50)));
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                let (status, body) = server.post_events(&server.token, &batch);
                assert_eq!((status, body["accepted"].clone()), (200, json!(0)), "{body}");
            });
        }
    });
    assert_eq!(session_aggregates(&server.main_db(), "s-replay"), before);
    assert_eq!(count_stored_events(&server.data_dir), 50);
}

#[test]
fn concurrent_first_deliveries_of_one_batch_count_it_once() {
    let server = TestServer::spawn();
    let batch = envelope(session_events("s-race", now_ms(), 40));
    let accepted: Vec<i64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|_| scope.spawn(|| server.post_events(&server.token, &batch).1["accepted"].as_i64().unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(accepted.iter().sum::<i64>(), 40, "exactly one delivery stores each event: {accepted:?}");
    assert_eq!(session_aggregates(&server.main_db(), "s-race")[0], 40);
}

#[test]
fn reordered_and_resplit_batches_yield_the_same_session() {
    let server = TestServer::spawn();
    let start = now_ms() - 60_000;
    let forward = session_events("s-order-a", start, 60);
    // The same events for another session id, delivered reversed in three batches.
    let mut reversed: Vec<Value> = forward
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e["session_id"] = json!("s-order-b");
            e["event_id"] = json!(uuid::Uuid::now_v7().to_string());
            e
        })
        .collect();
    reversed.reverse();
    assert_eq!(server.post_events(&server.token, &envelope(forward)).0, 200);
    for chunk in reversed.chunks(20) {
        assert_eq!(server.post_events(&server.token, &envelope(chunk.to_vec())).0, 200);
    }
    let conn = server.main_db();
    assert_eq!(session_aggregates(&conn, "s-order-a"), session_aggregates(&conn, "s-order-b"));
}

#[test]
fn session_aggregates_match_the_events_sent() {
    let server = TestServer::spawn();
    let start = now_ms() - 10_000;
    let mut events = vec![event("session_start", "s-agg", start)];
    events[0]["git"] = json!({"branch": "feature/x", "commit": "a1b2c3d4", "remote": "https://github.com/acme/app.git", "dirty": true});
    events[0]["permission_mode"] = json!("plan");
    events.push(event("prompt_submit", "s-agg", start + 1));
    events.push(event("tool_start", "s-agg", start + 2));
    let mut failed = event("tool_end", "s-agg", start + 3);
    failed["tool"]["status"] = json!("error");
    events.push(failed);
    let mut denied = event("tool_end", "s-agg", start + 4);
    denied["tool"]["status"] = json!("denied");
    denied["permission_mode"] = json!("bypass");
    events.push(denied);
    events.push(event("turn_end", "s-agg", start + 5));
    events.push(event("notification", "s-agg", start + 6));
    let mut end = event("session_end", "s-agg", start + 7);
    end["run_kind"] = json!("CI");
    events.push(end);
    assert_eq!(server.post_events(&server.token, &envelope(events)).0, 200);
    let (status, session) = server.session(&server.token, "s-agg");
    assert_eq!(status, 200, "{session}");
    assert_eq!(session["event_count"], 8);
    assert_eq!(session["prompt_count"], 1);
    assert_eq!(session["tool_call_count"], 2);
    assert_eq!(session["tool_error_count"], 1);
    assert_eq!(session["denial_count"], 1);
    assert_eq!(session["notification_count"], 1);
    assert_eq!(session["total_response_ms"], 1500);
    assert_eq!(session["response_sample_count"], 1);
    assert_eq!(session["usage"]["cache_write_1h_tokens"], 4000);
    assert_eq!(session["max_permission_mode"], "bypass");
    assert_eq!(session["run_kind"], "CI", "a session that was ever CI stays CI");
    assert_eq!(session["git"]["branch"], "feature/x");
    assert_eq!(session["models"]["claude-sonnet-4-5-20250929"], 1);
    assert_eq!(session["ended_at"], json!(ts_rfc3339(start + 7)));
    assert_eq!(session["machine_id"], "test-machine");
}

#[test]
fn credentials_are_required_and_checked() {
    let server = TestServer::spawn();
    let batch = envelope(vec![event("session_start", "s-auth", now_ms())]);
    for token in ["", "slh_hook_doesnotexist", "Basic abc", &server.token.replace("slh_hook_", "slh_refresh_")] {
        let (status, body) = server.post_events(token, &batch);
        assert_eq!(status, 401, "token {token:?}: {body}");
    }
    assert_eq!(count_stored_events(&server.data_dir), 0);
}

#[test]
fn malformed_envelopes_are_400_naming_the_problem() {
    let server = TestServer::spawn();
    let url = format!("{}/v1/events", server.ingest);
    let (status, body) = post_raw(&url, &server.token, &[], b"{not json".to_vec());
    assert_eq!(status, 400, "{body}");
    let (status, body) = server.post_events(&server.token, &json!({"events": []}));
    assert_eq!(status, 400);
    assert!(body["error"]["message"].as_str().unwrap().contains("client"), "{body}");
    let (status, body) = server.post_events(
        &server.token,
        &json!({"client": {"machine_id": "", "cli_version": "1", "os": "linux"}, "events": []}),
    );
    assert_eq!((status, body["error"]["field"].clone()), (400, json!("client.machine_id")), "{body}");
    let (status, body) = server.post_events(&server.token, &envelope(vec![]));
    assert_eq!((status, body), (200, json!({"accepted": 0, "duplicates": 0, "rejected": []})));
}

#[test]
fn size_limits_answer_413_and_store_nothing() {
    let server = TestServer::spawn_with_env(&[
        ("SIGHTLINE_INGEST_MAX_BODY_BYTES", "20000"),
        ("SIGHTLINE_INGEST_MAX_DECODED_BYTES", "60000"),
        ("SIGHTLINE_INGEST_MAX_EVENTS_PER_BATCH", "10"),
    ]);
    let url = format!("{}/v1/events", server.ingest);
    let many = envelope(session_events("s-big", now_ms(), 11));
    assert_eq!(server.post_events(&server.token, &many).0, 413);
    let huge = serde_json::to_vec(&envelope(vec![json!({"pad": "x".repeat(30_000)})])).unwrap();
    assert_eq!(post_raw(&url, &server.token, &[], huge).0, 413);
    // A small zstd body that inflates past the decoded limit: a decompression bomb.
    let bomb_json = serde_json::to_vec(&envelope(vec![json!({"pad": "a".repeat(200_000)})])).unwrap();
    let bomb = zstd::bulk::compress(&bomb_json, 19).unwrap();
    assert!(bomb.len() < 20_000);
    let (status, body) = post_raw(&url, &server.token, &[("Content-Encoding", "zstd")], bomb);
    assert_eq!(status, 413, "{body}");
    assert_eq!(count_stored_events(&server.data_dir), 0);
}

#[test]
fn zstd_and_gzip_bodies_are_accepted_and_unknown_encodings_refused() {
    let server = TestServer::spawn();
    let url = format!("{}/v1/events", server.ingest);
    let plain = serde_json::to_vec(&envelope(session_events("s-zstd", now_ms(), 5))).unwrap();
    let (status, body) =
        post_raw(&url, &server.token, &[("Content-Encoding", "zstd")], zstd::bulk::compress(&plain, 3).unwrap());
    assert_eq!((status, body["accepted"].clone()), (200, json!(5)), "{body}");
    let plain = serde_json::to_vec(&envelope(session_events("s-gzip", now_ms(), 5))).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain).unwrap();
    let (status, body) = post_raw(&url, &server.token, &[("Content-Encoding", "gzip")], gz.finish().unwrap());
    assert_eq!((status, body["accepted"].clone()), (200, json!(5)), "{body}");
    assert_eq!(post_raw(&url, &server.token, &[("Content-Encoding", "br")], plain.clone()).0, 415);
    assert_eq!(post_raw(&url, &server.token, &[("Content-Encoding", "zstd")], plain).0, 400);
}

#[test]
fn price_table_is_served_with_an_etag_and_revalidates_with_304() {
    let server = TestServer::spawn();
    let agent = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
    let url = format!("{}/v1/price-table?agent=claude_code", server.ingest);
    let response = agent.get(&url).call().unwrap();
    assert_eq!(response.status(), 200);
    let etag = response.headers().get("etag").unwrap().to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.len() > 10, "{etag}");
    let body: Value = serde_json::from_str(&response.into_body().read_to_string().unwrap()).unwrap();
    assert_eq!(body["agent"], "claude_code");
    let revalidated = agent.get(&url).header("If-None-Match", &etag).call().unwrap();
    assert_eq!(revalidated.status(), 304);
    let weak = agent.get(&url).header("If-None-Match", format!("\"x\", W/{etag}")).call().unwrap();
    assert_eq!(weak.status(), 304, "weak comparison, list of tags");
    let stale = agent.get(&url).header("If-None-Match", "\"something-else\"").call().unwrap();
    assert_eq!(stale.status(), 200);
    let (status, body) = get(&format!("{}/v1/price-table?agent=vim", server.ingest));
    assert_eq!((status, body["error"]["field"].clone()), (400, json!("agent")));
    assert_eq!(get(&format!("{}/v1/price-table?agent=claude-code", server.ingest)).0, 200);
}

#[test]
fn server_recomputes_cost_and_keeps_the_client_claim_apart() {
    let server = TestServer::spawn();
    let mut turn = event("turn_end", "s-cost", now_ms());
    turn["client_cost_usd"] = json!(999.0);
    let mut unknown = event("turn_end", "s-cost", now_ms() + 1);
    unknown["model"] = json!("mystery-model-9");
    let (turn_again, unknown_again) = (turn.clone(), unknown.clone());
    assert_eq!(server.post_events(&server.token, &envelope(vec![turn, unknown])).0, 200);
    let (_, session) = server.session(&server.token, "s-cost");
    // Sonnet 4.5: 1000 in x $3 + 500 out x $15 + 10000 cache read x $0.30
    // + 2000 5-minute writes x $3.75 + 4000 1-hour writes x $6, per million tokens.
    let expected_nusd = 1000 * 3000 + 500 * 15000 + 10_000 * 300 + 2000 * 3750 + 4000 * 6000;
    assert_eq!(session["cost_nusd"], expected_nusd, "{session}");
    assert_eq!(session["client_cost_usd"], 999.0);
    assert_eq!(session["unknown_model_events"], 1);
    // Replaying the batch must not count the unknown model again, anywhere.
    let (_, replay) = server.post_events(&server.token, &envelope(vec![turn_again, unknown_again]));
    assert_eq!(replay["duplicates"], 2);
    let (_, Value::String(metrics)) = get(&format!("{}/metrics", server.ingest)) else { panic!("metrics text") };
    assert!(metrics.contains("sightline_ingest_unknown_model_events_total 1\n"), "{metrics}");
    let unknown_rows: i64 = server
        .main_db()
        .query_row("SELECT event_count FROM unknown_models WHERE model = 'mystery-model-9'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(unknown_rows, 1);
}

#[test]
fn metadata_is_redacted_before_it_is_stored() {
    let server = TestServer::spawn();
    let mut start = event("session_start", "s-redact", now_ms());
    let github_token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    start["metadata"] =
        json!({"GITHUB_TOKEN": github_token, "note": "ping ada@example.com", "nested": {"password": "hunter22"}});
    start["git"] = json!({"branch": "main", "remote": format!("https://ada:{github_token}@github.com/acme/app.git")});
    assert_eq!(server.post_events(&server.token, &envelope(vec![start])).0, 200);
    let day = &ts_rfc3339(now_ms())[..10];
    let conn = rusqlite::Connection::open(server.data_dir.join(format!("events/{day}.db"))).unwrap();
    let stored: String = conn.query_row("SELECT metadata FROM events", [], |r| r.get(0)).unwrap();
    assert!(!stored.contains(&github_token), "{stored}");
    assert!(!stored.contains("ada@example.com"), "{stored}");
    assert!(!stored.contains("hunter22"), "{stored}");
    assert!(stored.contains("[REDACTED:"), "{stored}");
    let remote: String = conn.query_row("SELECT git_remote FROM events", [], |r| r.get(0)).unwrap();
    assert!(!remote.contains(&github_token) && remote.ends_with("@github.com/acme/app.git"), "{remote}");
    let session_remote: String =
        server.main_db().query_row("SELECT git_remote FROM sessions", [], |r| r.get(0)).unwrap();
    assert_eq!(session_remote, remote);
}

#[test]
fn own_sessions_are_readable_and_others_are_not_found() {
    let server = TestServer::spawn();
    let other = user_with_token(&server.data_dir, "other@example.com");
    let start = now_ms() - 5000;
    assert_eq!(server.post_events(&server.token, &envelope(session_events("s-mine", start, 25))).0, 200);
    assert_eq!(server.session(&server.token, "s-mine").0, 200);
    assert_eq!(server.session(&other, "s-mine").0, 404, "another user's session is invisible");
    assert_eq!(server.session(&server.token, "s-none").0, 404);
    let base = format!("{}/v1/me/sessions/claude_code/s-mine/events", server.ingest);
    assert_eq!(get_auth(&base, &other).0, 404);
    let mut seen = Vec::new();
    let mut url = format!("{base}?limit=10");
    loop {
        let (status, page) = get_auth(&url, &server.token);
        assert_eq!(status, 200, "{page}");
        seen.extend(page["events"].as_array().unwrap().iter().map(|e| e["event_id"].as_str().unwrap().to_string()));
        match page["next_cursor"].as_str() {
            Some(cursor) => url = format!("{base}?limit=10&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 25);
    let mut unique = seen.clone();
    unique.dedup();
    assert_eq!(unique.len(), 25, "pages neither repeat nor skip");
    assert_eq!(get_auth(&format!("{base}?limit=0"), &server.token).0, 400);
    let (status, body) = get_auth(&format!("{base}?limit=abc"), &server.token);
    assert_eq!((status, body["error"]["field"].clone()), (400, json!("limit")), "{body}");
    assert_eq!(get_auth(&format!("{base}?cursor=garbage"), &server.token).0, 400);
    assert_eq!(get_auth(&format!("{}/v1/me/sessions/vim/s-mine", server.ingest), &server.token).0, 400);
}

#[test]
fn health_readiness_and_metrics_are_served() {
    let server = TestServer::spawn();
    assert_eq!(get(&format!("{}/health", server.ingest)).0, 200);
    assert_eq!(get(&format!("{}/health", server.web)).0, 200);
    assert_eq!(get(&format!("{}/health", server.github)).0, 200);
    assert_eq!(get(&format!("{}/readyz", server.ingest)).0, 200);
    assert_eq!(server.post_events(&server.token, &envelope(session_events("s-metrics", now_ms(), 3))).0, 200);
    server.post_events(&server.token, &envelope(vec![json!({"type": "x"})]));
    let (status, Value::String(text)) = get(&format!("{}/metrics", server.ingest)) else { panic!("metrics is text") };
    assert_eq!(status, 200);
    for needle in [
        r#"sightline_http_requests_total{listener="ingest",route="/v1/events",status="200"}"#,
        r#"sightline_http_request_duration_seconds_bucket{le="0.005",listener="ingest",route="/v1/events",status="200"}"#,
        r#"sightline_ingest_events_total{outcome="accepted"} 3"#,
        r#"sightline_ingest_events_total{outcome="rejected"} 1"#,
        "sightline_writer_queue_depth",
        "sightline_writer_commit_duration_seconds_count",
        r#"sightline_writer_step_duration_seconds_count{step="partition_rows"} 1"#,
        r#"sightline_writer_step_duration_seconds_count{step="partition_commit"} 1"#,
        r#"sightline_writer_step_duration_seconds_count{step="fold_sessions"} 1"#,
        r#"sightline_writer_step_duration_seconds_count{step="fold_links"} 1"#,
        r#"sightline_writer_step_duration_seconds_count{step="fold_redactions"} 1"#,
        r#"sightline_writer_step_duration_seconds_count{step="main_commit"} 1"#,
        r#"sightline_writer_step_duration_seconds_count{step="wal_cap"} 1"#,
        "sightline_wal_main_bytes",
    ] {
        assert!(text.contains(needle), "metrics lack {needle}:\n{text}");
    }
}

#[test]
fn sigterm_drains_commits_and_exits_cleanly() {
    let mut server = TestServer::spawn();
    let url = format!("{}/v1/events", server.ingest);
    let token = server.token.clone();
    let senders: Vec<_> = (0..4)
        .map(|i| {
            let url = url.clone();
            let token = token.clone();
            std::thread::spawn(move || {
                let mut acked = 0;
                for round in 0..20 {
                    let (status, body) = post_json(
                        &url,
                        &token,
                        &envelope(session_events(&format!("s-term-{i}-{round}"), now_ms(), 20)),
                    );
                    if status == 200 {
                        acked += body["accepted"].as_i64().unwrap();
                    }
                }
                acked
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(server.terminate(), Some(0), "clean exit on SIGTERM");
    let acked: i64 = senders.into_iter().map(|h| h.join().unwrap()).sum();
    assert!(!server.data_dir.join("run/addresses.json").exists());
    assert_eq!(count_stored_events(&server.data_dir), acked, "every acknowledged event is on disk, nothing else");
}

#[test]
fn uuid_v4_event_ids_are_stored_and_deduplicated_like_v7() {
    let server = TestServer::spawn();
    let mut events = session_events("s-v4", now_ms() - 1000, 30);
    for e in &mut events {
        e["event_id"] = json!(uuid::Uuid::new_v4().to_string());
    }
    let batch = envelope(events);
    assert_eq!(server.post_events(&server.token, &batch).1["accepted"], 30);
    assert_eq!(server.post_events(&server.token, &batch).1["duplicates"], 30);
    assert_eq!(session_aggregates(&server.main_db(), "s-v4")[0], 30);
    assert_eq!(count_stored_events(&server.data_dir), 30);
}

#[test]
fn a_tool_name_of_another_agent_is_rejected() {
    let server = TestServer::spawn();
    let mut e = event("tool_end", "s-prefix", now_ms());
    e["tool"]["name"] = json!("codex:shell");
    let (_, body) = server.post_events(&server.token, &envelope(vec![e]));
    assert_eq!(body["rejected"][0]["field"], "tool.name", "{body}");
    assert!(body["rejected"][0]["reason"].as_str().unwrap().contains("claude_code:"), "{body}");
}

/// `sessions.mode` (spec §2) is the session's permission mode of the highest autonomy
/// seen, whatever order the events came in; a session reporting none has none.
#[test]
fn a_sessions_mode_is_its_most_autonomous_permission_mode() {
    let server = TestServer::spawn();
    let now = now_ms();
    let mut events = Vec::new();
    for (i, mode) in ["accept_edits", "bypass", "plan"].iter().enumerate() {
        let mut e = event("tool_end", "moded", now + i as i64);
        e["permission_mode"] = json!(mode);
        events.push(e);
    }
    events.push(event("session_start", "plain", now));
    assert_eq!(server.post_events(&server.token, &envelope(events)).0, 200);
    let mode = |session: &str| -> Option<String> {
        server
            .main_db()
            .query_row("SELECT mode FROM sessions WHERE agent_session_id = ?1", [session], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(mode("moded").as_deref(), Some("bypass"));
    assert_eq!(mode("plain"), None);
}

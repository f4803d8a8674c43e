//! Alerts (issue 20) on the real server: events ingested the way the hook sends them
//! fire the rules they should (spend spike, error rate, unknown-model surge, autonomy
//! surge) when `evaluate-alerts` runs, through the administrator's trigger; a second run
//! keeps the events open without opening new ones, and the disabled rules stay quiet.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};

const DAY: i64 = 86_400_000;

fn turn(session: &str, ts: i64, model: &str, input_tokens: i64) -> Value {
    let mut turn = event("turn_end", session, ts);
    turn["model"] = json!(model);
    turn["usage"] = json!({"input_tokens": input_tokens, "output_tokens": 0});
    turn
}

fn tool_end(session: &str, ts: i64, status: &str, mode: &str) -> Value {
    let mut end = event("tool_end", session, ts);
    end["tool"]["status"] = json!(status);
    end["permission_mode"] = json!(mode);
    end
}

fn admin_post(server: &TestServer, path: &str) -> (u16, Value) {
    let token = access_token(server, "ari@example.com");
    read(
        agent()
            .post(format!("{}{path}", server.web))
            .header("Authorization", format!("Bearer {token}"))
            .header("Content-Type", "application/json")
            .send("{}"),
    )
}

fn open_events(server: &TestServer) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(server.data_dir.join("main.db")).unwrap();
    let mut stmt =
        conn.prepare("SELECT rule_id, state FROM alert_events WHERE state <> 'resolved' ORDER BY rule_id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// Runs `evaluate-alerts` as the administrator and waits for its run to end.
fn evaluate(server: &TestServer) -> Value {
    let (status, started) = admin_post(server, "/admin/jobs/evaluate-alerts/run");
    assert_eq!(status, 202, "{started}");
    let run_id = started["run_id"].as_str().unwrap().to_string();
    let token = access_token(server, "ari@example.com");
    let mut finished = Value::Null;
    wait_until(Duration::from_secs(20), "the evaluation", || {
        let (_, runs) = read(
            agent()
                .get(format!("{}/admin/jobs/evaluate-alerts/runs", server.web))
                .header("Authorization", format!("Bearer {token}"))
                .call(),
        );
        let run = runs["runs"].as_array().unwrap().iter().find(|r| r["id"] == run_id.as_str()).cloned();
        match run {
            Some(run) if run["outcome"] != "running" => {
                finished = run;
                true
            }
            _ => false,
        }
    });
    finished
}

#[test]
fn ingested_events_fire_the_rules_that_should_fire() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "ari@example.com", "ADMIN");
    let now = now_ms();
    let mut events = Vec::new();
    // Quiet days before: $6 a day on a known model (a million input tokens is long-context
    // pricing); 20 tool calls a day, 2 of them in bypass mode, all succeeding.
    for day in 2..=8 {
        let at = now - day * DAY;
        let session = format!("before-{day}");
        events.push(turn(&session, at, "claude-sonnet-4-5-20250929", 1_000_000));
        for i in 0..20 {
            events.push(tool_end(&session, at + i * 1_000, "success", if i < 2 { "bypass" } else { "normal" }));
        }
    }
    // The last hour: $60 of spend, 120 tool calls with 40 failures and half of them in
    // bypass mode, and 100 turns of a model the price table does not know.
    let at = now - 3_600_000;
    for i in 0..10 {
        events.push(turn("today", at + i * 1_000, "claude-sonnet-4-5-20250929", 1_000_000));
    }
    for i in 0..120 {
        let status = if i % 3 == 0 { "error" } else { "success" };
        events.push(tool_end("today", at + 20_000 + i * 100, status, if i % 2 == 0 { "bypass" } else { "normal" }));
    }
    for i in 0..100 {
        events.push(turn("mystery", at + 40_000 + i * 100, "mystery-model-9", 10));
    }
    let (status, body) = server.post_events(&server.token, &envelope(events));
    assert_eq!(status, 200, "{body}");
    let conn = rusqlite::Connection::open(server.data_dir.join("main.db")).unwrap();
    wait_until(Duration::from_secs(30), "the aggregates' refresh", || {
        conn.query_row("SELECT count(*) FROM aggregate_dirty_buckets", [], |r| r.get::<_, i64>(0)).unwrap() == 0
    });

    let run = evaluate(&server);
    assert_eq!(run["outcome"], "succeeded", "{run}");
    let want: Vec<(String, String)> = ["autonomy_surge", "error_rate", "spend_spike", "unknown_model_surge"]
        .iter()
        .map(|rule| (rule.to_string(), "firing".to_string()))
        .collect();
    assert_eq!(open_events(&server), want, "{run}");
    let summary = run["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("spend_spike opened: $60.00 in the last 24 hours"), "{summary}");
    assert!(summary.contains("error_rate opened: 40 of 120 tool calls failed"), "{summary}");

    // Again: the same four go on, none opens twice, the disabled two stay quiet.
    let again = evaluate(&server);
    assert_eq!(again["outcome"], "succeeded", "{again}");
    assert_eq!(open_events(&server), want);
    assert!(again["summary"].as_str().unwrap().matches("still breaching").count() == 4, "{again}");
    let total: i64 = conn.query_row("SELECT count(*) FROM alert_events", [], |r| r.get(0)).unwrap();
    assert_eq!(total, 4);
}

//! Alerts (issue 20) on the real server: events ingested the way the hook sends them
//! fire the rules they should (spend spike, error rate, unknown-model surge, autonomy
//! surge) when `evaluate-alerts` runs, through the administrator's trigger; a second run
//! keeps the events open without opening new ones, and the disabled rules stay quiet.
//! Each opening reaches a loopback chat webhook (Slack-compatible text) and a loopback
//! webhook that checks the HMAC signature and fails its first try of each, which is
//! retried, and a loopback SMTP server that receives the e-mail; every attempt is in
//! `alert_delivery_log`.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::receiver::Receiver;
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

const SECRET: &str = "a webhook secret of the ops team";

/// A loopback SMTP server speaking just enough of RFC 5321 to take mail: each message's
/// data as received.
fn smtp_stand_in() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("smtp://{}", listener.local_addr().unwrap());
    let mails: Arc<Mutex<Vec<String>>> = Arc::default();
    let kept = mails.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let _ = stream.write_all(b"220 stand-in ESMTP\r\n");
            let mut line = String::new();
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let verb = line.get(..4).unwrap_or("").to_ascii_uppercase();
                let answer: &[u8] = match verb.as_str() {
                    "EHLO" | "HELO" => b"250 stand-in\r\n",
                    "DATA" => {
                        let _ = stream.write_all(b"354 end with a dot\r\n");
                        let mut data = String::new();
                        loop {
                            line.clear();
                            reader.read_line(&mut line).unwrap();
                            if line == ".\r\n" {
                                break;
                            }
                            data.push_str(&line);
                        }
                        kept.lock().unwrap().push(data);
                        b"250 queued\r\n"
                    }
                    "QUIT" => {
                        let _ = stream.write_all(b"221 bye\r\n");
                        break;
                    }
                    _ => b"250 ok\r\n",
                };
                let _ = stream.write_all(answer);
            }
        }
    });
    (url, mails)
}

/// Whether the request carries a valid signature: HMAC-SHA256 over `timestamp.body`.
fn signed(headers: &[(String, String)], body: &str) -> bool {
    let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default();
    let Some(hex) = header("x-sightline-signature").strip_prefix("sha256=").map(str::to_string) else { return false };
    let Ok(tag) =
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16)).collect::<Result<Vec<u8>, _>>()
    else {
        return false;
    };
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, SECRET.as_bytes());
    ring::hmac::verify(&key, format!("{}.{body}", header("x-sightline-timestamp")).as_bytes(), &tag).is_ok()
}

#[test]
fn ingested_events_fire_the_rules_that_should_fire() {
    let chat = Receiver::start(|_, _, _| 200);
    // The webhook refuses a bad signature (401), and fails every first try with a 503.
    let tries: Arc<Mutex<std::collections::HashMap<String, u32>>> = Arc::default();
    let seen = tries.clone();
    let webhook = Receiver::start(move |headers, body, _| {
        if !signed(headers, body) {
            return 401;
        }
        let event: Value = serde_json::from_str(body).unwrap();
        let mut seen = seen.lock().unwrap();
        let count = seen.entry(event["event_id"].as_str().unwrap().to_string()).or_default();
        *count += 1;
        if *count == 1 { 503 } else { 200 }
    });
    let (smtp, mails) = smtp_stand_in();
    let server = TestServer::spawn_with_env(&[
        ("SIGHTLINE_ALERT_SMTP_URL", &smtp),
        ("SIGHTLINE_ALERT_EMAIL_FROM", "Sightline <alerts@sightline.example>"),
        ("SIGHTLINE_ALERT_EMAIL_TO", "ops@example.com"),
        ("SIGHTLINE_ALERT_CHAT_WEBHOOK_URL", &chat.url),
        ("SIGHTLINE_ALERT_WEBHOOK_URL", &webhook.url),
        ("SIGHTLINE_ALERT_WEBHOOK_SECRET", SECRET),
    ]);
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
    assert!(summary.contains("12 notifications delivered, 4 failed attempts"), "{summary}");
    let mails = mails.lock().unwrap().clone();
    assert_eq!(mails.len(), 4, "{mails:?}");
    assert!(mails.iter().any(|m| m.contains("Subject: [Sightline] alert error_rate opened")), "{mails:?}");
    assert!(mails.iter().all(|m| m.contains("To: ops@example.com")), "{mails:?}");
    let texts = chat.bodies();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("Sightline alert spend_spike opened: $60.00")), "{texts:?}");
    let sent = webhook.bodies();
    assert_eq!(sent.len(), 8, "each of the four, failed once then delivered: {sent:?}");
    assert!(webhook.got.lock().unwrap().iter().all(|(headers, body)| signed(headers, body)), "every one signed");
    let logged: Vec<(String, String, i64)> = {
        let mut stmt = conn
            .prepare("SELECT channel, outcome, attempt FROM alert_delivery_log ORDER BY channel, event_id, attempt")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(logged.len(), 16, "{logged:?}");
    assert_eq!(logged.iter().filter(|(c, o, _)| c == "email" && o == "delivered").count(), 4, "{logged:?}");
    assert_eq!(logged.iter().filter(|(c, o, _)| c == "webhook" && o == "failed").count(), 4, "{logged:?}");
    assert!(logged.iter().filter(|(c, _, _)| c == "chat_webhook").all(|(_, o, a)| o == "delivered" && *a == 1));

    // Again: the same four go on, none opens twice, the disabled two stay quiet.
    let again = evaluate(&server);
    assert_eq!(again["outcome"], "succeeded", "{again}");
    assert_eq!(open_events(&server), want);
    assert!(again["summary"].as_str().unwrap().matches("still breaching").count() == 4, "{again}");
    let total: i64 = conn.query_row("SELECT count(*) FROM alert_events", [], |r| r.get(0)).unwrap();
    assert_eq!(total, 4);
    assert_eq!(chat.bodies().len(), 4, "an event that goes on is not told again");
}

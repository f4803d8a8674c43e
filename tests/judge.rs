//! `judge-sessions` on the real binary against a loopback stand-in of an
//! OpenAI-compatible chat completions API (its documented request and answer shapes):
//! only opted-in owners' transcripts are sent, every read is in the owner's audit, the
//! verdict's spend is recorded and the rationale is stored by reference (redacted),
//! the daily cap stops the calls, and without the two variables nothing is sent.

use crate::common;

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use common::transcripts::{Transcript, Turn, session_with_transcript};
use common::*;
use serde_json::{Value, json};

const KEY: &str = "sk-judge-standin-key";

struct ChatStandIn {
    url: String,
    requests: Arc<Mutex<Vec<Value>>>,
    /// How long it takes to answer (a slow model).
    delay: Arc<Mutex<std::time::Duration>>,
    _runtime: tokio::runtime::Runtime,
}

type Shared = (Arc<Mutex<Vec<Value>>>, Arc<Mutex<std::time::Duration>>);

async fn completions(State((requests, delay)): State<Shared>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let delay = *delay.lock().unwrap();
    tokio::time::sleep(delay).await;
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&format!("Bearer {KEY}")) {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})),
        )
            .into_response();
    }
    requests.lock().unwrap().push(body.clone());
    let leaked = format!("ghp_{}", "Zz9".repeat(12));
    let content =
        json!({"score": 4, "rationale": format!("Ran the tests before finishing; it printed {leaked} once.")});
    Json(json!({
        "id": "chatcmpl-standin", "object": "chat.completion", "created": 1_764_000_000, "model": body["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content.to_string()}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 2000, "completion_tokens": 100, "total_tokens": 2100}
    }))
    .into_response()
}

impl ChatStandIn {
    fn start() -> ChatStandIn {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let delay = Arc::new(Mutex::new(std::time::Duration::ZERO));
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(completions))
            .with_state((requests.clone(), delay.clone()));
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        runtime.spawn(async move { axum::serve(listener, app).await.unwrap() });
        ChatStandIn { url, requests, delay, _runtime: runtime }
    }
}

fn judge(server: &TestServer, env: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new(BIN)
        .args(["jobs", "run", "--data-dir", server.data_dir.to_str().unwrap(), "judge-sessions"])
        .env_remove("SIGHTLINE_JUDGE_URL")
        .env_remove("SIGHTLINE_JUDGE_KEY")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// The test user opts in to the judge, as on their settings page.
fn opt_in(server: &TestServer) {
    let owner = access_token(server, "dev@example.com");
    let mut answer = agent()
        .patch(&format!("{}/api/me/visibility", server.web))
        .header("Authorization", format!("Bearer {owner}"))
        .header("Content-Type", "application/json")
        .send(json!({"judge_opt_in": true}).to_string())
        .unwrap();
    assert_eq!(answer.status(), 200, "{}", answer.body_mut().read_to_string().unwrap());
}

fn transcript<'a>(session: &'a str, words: &'a [Turn<'a>]) -> Transcript<'a> {
    Transcript {
        agent: "claude_code",
        session,
        model: "claude-sonnet-4-5-20250929",
        start_ms: now_ms() - 60_000,
        turns: words,
    }
}

#[test]
fn only_opted_in_transcripts_are_judged_audited_priced_and_capped() {
    let server = TestServer::spawn();
    opt_in(&server);
    let owner = access_token(&server, "dev@example.com");
    let first = [Turn::User("fix the flaky checkout test"), Turn::Assistant("FIRSTSESSIONMARK done")];
    let second = [Turn::User("add pagination"), Turn::Assistant("SECONDSESSIONMARK done")];
    let private = [Turn::User("PRIVATEMARK do not send me"), Turn::Assistant("ok")];
    session_with_transcript(&server, &server.token, &transcript("judge-1", &first));
    session_with_transcript(&server, &server.token, &transcript("judge-2", &second));
    let other_token = user_with_token(&server.data_dir, "other@example.com");
    session_with_transcript(&server, &other_token, &transcript("judge-3", &private));

    // Without the two variables nothing is read or sent.
    let refused = judge(&server, &[]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("SIGHTLINE_JUDGE_URL and SIGHTLINE_JUDGE_KEY"), "{}", stderr(&refused));

    let chat = ChatStandIn::start();
    // One verdict costs 2000 × $0.15/M + 100 × $0.60/M = $0.00036; the cap stops after it.
    let env = [
        ("SIGHTLINE_JUDGE_URL", chat.url.as_str()),
        ("SIGHTLINE_JUDGE_KEY", KEY),
        ("SIGHTLINE_JUDGE_DAILY_CAP_USD", "0.0003"),
    ];
    let ran = judge(&server, &env);
    assert!(ran.status.success(), "{}", stderr(&ran));
    assert!(stdout(&ran).contains("1 sessions judged for $0.0004; the daily cap is reached"), "{}", stdout(&ran));
    let sent = chat.requests.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["model"], "gpt-4o-mini");
    let text = sent[0]["messages"][1]["content"].as_str().unwrap();
    assert!(text.contains("SESSIONMARK") && !text.contains("PRIVATEMARK"), "{text}");

    let conn = server.main_db();
    let (value, cost, reference, label): (f64, i64, String, String) = conn
        .query_row(
            "SELECT value, cost_nusd, rationale_ref, label FROM scores WHERE scorer_name = 'judge' AND source = 'JUDGE'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((value, cost, label.as_str()), (0.8, 360_000, "4 of 5"));
    let rationale = std::fs::read_to_string(server.data_dir.join(&reference)).unwrap();
    assert!(rationale.starts_with("Ran the tests") && rationale.contains("[REDACTED:"), "stored redacted: {rationale}");
    let inline: i64 = conn
        .query_row(
            "SELECT count(*) FROM scores WHERE label LIKE '%Ran the tests%' OR rationale_ref LIKE '%Ran%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(inline, 0, "never inline");
    // The owner sees the read in "who read my data".
    let (status, audit) = get_auth(&format!("{}/api/me/audit", server.web), &owner);
    assert_eq!(status, 200);
    let reads: Vec<&Value> =
        audit["entries"].as_array().unwrap().iter().filter(|e| e["action"] == "JUDGE_READ").collect();
    assert_eq!(reads.len(), 1, "{audit}");

    // A higher cap: the second opted-in session, never the other person's.
    let env = [
        ("SIGHTLINE_JUDGE_URL", chat.url.as_str()),
        ("SIGHTLINE_JUDGE_KEY", KEY),
        ("SIGHTLINE_JUDGE_DAILY_CAP_USD", "1"),
    ];
    let ran = judge(&server, &env);
    assert!(stdout(&ran).contains("1 sessions judged"), "{}", stdout(&ran));
    let ran = judge(&server, &env);
    assert!(stdout(&ran).contains("0 sessions judged"), "nothing left: {}", stdout(&ran));
    let sent = chat.requests.lock().unwrap().clone();
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|r| !r.to_string().contains("PRIVATEMARK")));
}

/// A judge slower than its timeout: the run fails saying it timed out, no score and no
/// rationale is half-written, and the next run, the judge quick again, judges them.
#[test]
fn a_judge_slower_than_its_timeout_fails_the_run_and_the_next_carries_on() {
    let server = TestServer::spawn();
    opt_in(&server);
    let words = [Turn::User("rename the module"), Turn::Assistant("renamed")];
    session_with_transcript(&server, &server.token, &transcript("slow-1", &words));
    session_with_transcript(&server, &server.token, &transcript("slow-2", &words));
    let chat = ChatStandIn::start();
    *chat.delay.lock().unwrap() = std::time::Duration::from_secs(3);
    let env = [
        ("SIGHTLINE_JUDGE_URL", chat.url.as_str()),
        ("SIGHTLINE_JUDGE_KEY", KEY),
        ("SIGHTLINE_JUDGE_TIMEOUT_SECS", "1"),
    ];
    let slow = judge(&server, &env);
    assert!(!slow.status.success());
    let said = stderr(&slow);
    assert!(said.contains("the judge") && said.to_lowercase().contains("timeout"), "{said}");
    let scores = |conn: &rusqlite::Connection| -> i64 {
        conn.query_row("SELECT count(*) FROM scores WHERE scorer_name = 'judge'", [], |r| r.get(0)).unwrap()
    };
    let main = server.main_db();
    assert_eq!(scores(&main), 0, "nothing half-written");
    let rationales = std::fs::read_dir(server.data_dir.join("judge")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(rationales, 0, "no rationale without its score");
    let (outcome, error): (String, String) = main
        .query_row(
            "SELECT outcome, error FROM job_runs WHERE job = 'judge-sessions' ORDER BY started_at_ms DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(outcome == "failed" && error.to_lowercase().contains("timeout"), "{outcome}: {error}");

    *chat.delay.lock().unwrap() = std::time::Duration::ZERO;
    let quick = judge(&server, &env);
    assert!(quick.status.success(), "{}", stderr(&quick));
    assert_eq!(scores(&main), 2, "the next run judges both");
}

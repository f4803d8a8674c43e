//! `compute-trajectory-scores` on the real binary: a session sent through ingest is
//! scored from its stored events (the same values as the hand-worked Claude Code
//! fixture in `scoring::trajectory`), CI runs are never scored, a second run finds
//! nothing due, and a late event makes the session due again.

mod common;

use common::*;
use serde_json::{Value, json};

fn hex(text: &str) -> String {
    sightline::model::sha256_hex(text.as_bytes())
}

fn call(session: &str, t: i64, name: &str, action: &str, target: &str, input: &str, status: &str) -> Value {
    let mut e = event("tool_end", session, t);
    e["tool"] = json!({"name": format!("claude_code:{name}"), "status": status, "action": action,
                       "target_hash": hex(target), "input_sha256": hex(input)});
    e
}

/// The fixture's debugging session, as the hook would send it, in `run_kind`.
fn debugging(session: &str, t0: i64, run_kind: &str) -> Vec<Value> {
    let mut events = vec![event("session_start", session, t0), event("prompt_submit", session, t0 + 1)];
    let calls = [
        ("Read", "read", "src/invoice.rs", "{\"file_path\":\"src/invoice.rs\"}", "success"),
        ("Bash", "exec", "cargo", "cargo test invoice", "error"),
        ("Bash", "exec", "cargo", "cargo test invoice", "error"),
        ("Bash", "exec", "cargo", "cargo test invoice", "error"),
        ("Read", "read", "src/invoice.rs", "{\"file_path\":\"src/invoice.rs\"}", "success"),
        ("Edit", "edit", "src/invoice.rs", "round half up", "success"),
    ];
    for (i, (name, action, target, input, status)) in calls.iter().enumerate() {
        events.push(call(session, t0 + 10 + i as i64 * 10, name, action, target, input, status));
    }
    events.push(event("notification", session, t0 + 100));
    events.push(call(session, t0 + 110, "Bash", "exec", "rm", "rm -rf target", "denied"));
    events.push(call(session, t0 + 120, "Bash", "exec", "cargo", "cargo test invoice --release", "success"));
    events.push(event("session_end", session, t0 + 130));
    for e in &mut events {
        e["run_kind"] = json!(run_kind);
    }
    events
}

fn run_job(server: &TestServer) -> String {
    let output =
        sightline(&["jobs", "run", "--data-dir", server.data_dir.to_str().unwrap(), "compute-trajectory-scores"]);
    assert!(output.status.success(), "{}", stderr(&output));
    stdout(&output)
}

#[test]
fn sessions_are_scored_from_their_stored_events_once_and_again_when_they_change() {
    let server = TestServer::spawn();
    let t0 = now_ms() - 3_600_000;
    let mut events = debugging("s-debug", t0, "INTERACTIVE");
    events.extend(debugging("s-ci", t0, "CI"));
    assert_eq!(server.post_events(&server.token, &envelope(events)).0, 200);

    let out = run_job(&server);
    assert!(out.contains("1 sessions scored from 12 events"), "{out}");
    let conn = server.main_db();
    let scores: Vec<(String, Option<f64>, Option<String>)> = {
        let mut stmt = conn
            .prepare(
                "SELECT sc.scorer_name, sc.value, sc.label FROM scores sc JOIN sessions s ON s.id = sc.subject_id
                 WHERE s.agent_session_id = 's-debug' AND sc.scorer_version = '1' ORDER BY sc.scorer_name",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    };
    let value = |name: &str| scores.iter().find(|s| s.0 == name).unwrap_or_else(|| panic!("{name}: {scores:?}")).1;
    assert_eq!(scores.len(), 8, "{scores:?}");
    assert_eq!(value("retry_loops"), Some(1.0));
    assert_eq!(value("redundant_reads"), Some(1.0));
    assert_eq!(value("edit_thrash"), Some(0.0));
    assert_eq!(value("denial_retry_success"), Some(1.0));
    assert_eq!(value("tests_before_merge"), Some(1.0));
    assert_eq!(value("step_efficiency"), Some(3.0 / 8.0));
    assert_eq!(value("friction"), Some(37.8));
    let (friction, shape): (Option<f64>, Option<String>) = conn
        .query_row("SELECT friction_score, shape_label FROM sessions WHERE agent_session_id = 's-debug'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((friction, shape.as_deref()), (Some(37.8), Some("debugging")));
    let ci_scores: i64 = conn
        .query_row(
            "SELECT count(*) FROM scores sc JOIN sessions s ON s.id = sc.subject_id WHERE s.run_kind = 'CI'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ci_scores, 0, "a CI run is never scored");

    // The owner's session page and insights show them.
    let access = access_token(&server, "dev@example.com");
    let page = |path: &str| {
        let mut answer = agent()
            .get(&format!("{}{path}", server.web))
            .header("Authorization", format!("Bearer {access}"))
            .call()
            .unwrap();
        answer.body_mut().read_to_string().unwrap()
    };
    let id: String =
        conn.query_row("SELECT id FROM sessions WHERE agent_session_id = 's-debug'", [], |r| r.get(0)).unwrap();
    let html = page(&format!("/me/sessions/{id}"));
    assert!(html.contains("<td><code>friction</code></td><td>1</td><td>37.8 of 100</td>"), "{html}");
    assert!(html.contains("<td><code>step_efficiency</code></td><td>1</td><td>38% (debugging)</td>"), "{html}");
    let html = page("/me/insights");
    assert!(html.contains("<tr><td>Mean friction (0–100)</td><td>37.8</td><td>—</td></tr>"), "{html}");
    assert!(html.contains(&format!("href=\"/me/sessions/{id}\"")), "linked to the session: {html}");

    // The daily aggregate gains the day's friction at the server's next refresh.
    wait_until(std::time::Duration::from_secs(60), "friction in the daily aggregate", || {
        conn.query_row(
            "SELECT coalesce(sum(friction_sum), 0), coalesce(sum(friction_sessions), 0) FROM agg_sessions_daily",
            [],
            |r| Ok((r.get::<_, f64>(0)?, r.get::<_, i64>(1)?)),
        )
        .unwrap()
            == (37.8, 1)
    });

    let out = run_job(&server);
    assert!(out.contains("0 sessions scored"), "nothing due: {out}");
    // A late event (the session resumed and ended again) makes it due.
    let mut late = vec![
        event("session_start", "s-debug", now_ms() - 60_000),
        call("s-debug", now_ms() - 50_000, "Edit", "edit", "src/invoice.rs", "one more", "success"),
        event("session_end", "s-debug", now_ms() - 40_000),
    ];
    for e in &mut late {
        e["run_kind"] = json!("INTERACTIVE");
    }
    assert_eq!(server.post_events(&server.token, &envelope(late)).0, 200);
    let out = run_job(&server);
    assert!(out.contains("1 sessions scored from 15 events"), "{out}");
    let tests_after: Option<f64> = conn
        .query_row(
            "SELECT sc.value FROM scores sc JOIN sessions s ON s.id = sc.subject_id
             WHERE s.agent_session_id = 's-debug' AND sc.scorer_name = 'tests_before_merge'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tests_after, Some(0.0), "the last edit now comes after the test run");
}

#[test]
fn the_owner_gives_feedback_with_the_rubric_and_nobody_else_can() {
    let server = TestServer::spawn();
    let t0 = now_ms() - 3_600_000;
    assert_eq!(server.post_events(&server.token, &envelope(debugging("s-mine", t0, "INTERACTIVE"))).0, 200);
    let id: String = server
        .main_db()
        .query_row("SELECT id FROM sessions WHERE agent_session_id = 's-mine'", [], |r| r.get(0))
        .unwrap();
    let owner = access_token(&server, "dev@example.com");
    let url = format!("{}/me/sessions/{id}/feedback", server.web);
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4)).chars().take(40).collect::<String>();
    let body = format!("thumbs=up&done=partly&unsteered=no&note=it+leaked+{token}+then+fixed+it");
    assert_eq!(post_form(&url, &owner, &body), (303, Some(format!("/me/sessions/{id}#feedback"))));

    let conn = server.main_db();
    let (thumbs, note, rubric): (i64, String, i64) = conn
        .query_row("SELECT thumbs, note, rubric_version FROM session_feedback WHERE session_id = ?1", [&id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!((thumbs, rubric), (1, 1));
    assert!(note.starts_with("it leaked [REDACTED:") && !note.contains(&token), "{note}");
    let answers: Vec<(String, f64, String)> = {
        let mut stmt = conn
            .prepare(
                "SELECT scorer_name, value, source FROM scores WHERE subject_id = ?1 AND source = 'HUMAN' ORDER BY 1",
            )
            .unwrap();
        stmt.query_map([&id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(
        answers,
        [("feedback_done".into(), 0.5, "HUMAN".into()), ("feedback_unsteered".into(), 0.0, "HUMAN".into())]
    );
    // The page shows the form filled in.
    let mut page = agent()
        .get(&format!("{}/me/sessions/{id}", server.web))
        .header("Authorization", format!("Bearer {owner}"))
        .call()
        .unwrap();
    let html = page.body_mut().read_to_string().unwrap();
    assert!(
        html.contains(r#"name="thumbs" value="up" checked"#) && html.contains(r#"name="done" value="partly" checked"#)
    );

    // Changed: the answers follow; cleared: the score goes.
    assert_eq!(post_form(&url, &owner, "thumbs=down&done=yes").0, 303);
    let done: f64 = conn
        .query_row("SELECT value FROM scores WHERE subject_id = ?1 AND scorer_name = 'feedback_done'", [&id], |r| {
            r.get(0)
        })
        .unwrap();
    let unsteered: i64 = conn
        .query_row(
            "SELECT count(*) FROM scores WHERE subject_id = ?1 AND scorer_name = 'feedback_unsteered'",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!((done, unsteered), (1.0, 0));

    // Bad answers are 400s naming the field; anyone else's session is a 404.
    assert_eq!(post_form(&url, &owner, "done=maybe").0, 400);
    assert_eq!(post_form(&url, &owner, "thumbs=sideways").0, 400);
    user_with_token(&server.data_dir, "other@example.com");
    let other = access_token(&server, "other@example.com");
    assert_eq!(post_form(&url, &other, "thumbs=down").0, 404);
    let thumbs: i64 =
        conn.query_row("SELECT thumbs FROM session_feedback WHERE session_id = ?1", [&id], |r| r.get(0)).unwrap();
    assert_eq!(thumbs, -1, "unchanged by the other person");
}

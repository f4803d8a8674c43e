//! The GitHub App end to end, on the real binary: deliveries signed as GitHub signs them
//! (payloads from `common::github_payloads`, written from GitHub's documentation) to
//! `POST /github/webhooks` on the App listener, and the REST calls the App makes
//! answered by a loopback stand-in (`common::github_app_standin`).
//!
//! What is checked: every action of the four events, `ping` and an unknown event are
//! acknowledged and settled as they should be; 1,000 mutated signatures and 1,000
//! mutated bodies are refused with nothing stored; a replayed delivery is applied once;
//! deliveries acknowledged and then lost to a kill -9 before processing are applied after
//! restart; sessions link to pull requests only on exact evidence (branch, commit,
//! named), at ingest and by backfill, and the merge rollup keeps CI apart and EVAL out;
//! the bot comment is posted as the App, edited in place, and hides session figures of a
//! person who keeps them out of shared views; `sync-teams` copies teams and members and
//! removes (never deletes) a person no longer on a team.

use crate::common;

use std::time::Duration;

use common::github_payloads::{self as gh, Pr};
use common::{TestServer, envelope, event, now_ms, wait_until};
use serde_json::{Value, json};

const SECRET: &str = "whsec-3c1f9a7e-b2d4-4e8a-9f61-0d2c5b7a8e90";

fn server(extra: &[(&str, &str)]) -> TestServer {
    let mut env = vec![("SIGHTLINE_GITHUB_WEBHOOK_SECRET", SECRET)];
    env.extend_from_slice(extra);
    TestServer::spawn_with_env(&env)
}

fn sign(body: &[u8]) -> String {
    sightline::github::signature::sign(SECRET.as_bytes(), body)
}

/// Sends a delivery as GitHub does; answers the status and JSON body.
fn deliver_raw(server: &TestServer, event: &str, id: &str, body: &[u8], signature: Option<&str>) -> (u16, Value) {
    let mut request = common::agent()
        .post(&format!("{}/github/webhooks", server.github))
        .header("Content-Type", "application/json")
        .header("User-Agent", "GitHub-Hookshot/7d5e8a1")
        .header("X-GitHub-Event", event)
        .header("X-GitHub-Delivery", id)
        .header("X-GitHub-Hook-ID", "30")
        .header("X-GitHub-Hook-Installation-Target-Type", "integration");
    if let Some(signature) = signature {
        request = request.header("X-Hub-Signature-256", signature);
    }
    common::read(request.send(body))
}

fn deliver(server: &TestServer, event: &str, payload: &Value) -> (u16, Value) {
    let body = serde_json::to_vec(payload).unwrap();
    deliver_raw(server, event, &uuid::Uuid::new_v4().to_string(), &body, Some(&sign(&body)))
}

fn settled(server: &TestServer) {
    let conn = server.main_db();
    wait_until(Duration::from_secs(30), "every delivery settled", || {
        conn.query_row("SELECT count(*) FROM webhook_deliveries WHERE outcome = 'pending'", [], |r| r.get::<_, i64>(0))
            .unwrap()
            == 0
    });
}

fn outcomes(server: &TestServer) -> Vec<(String, String, String, String)> {
    let conn = server.main_db();
    let mut stmt = conn
        .prepare(
            "SELECT event, coalesce(action, ''), outcome, coalesce(error, '') FROM webhook_deliveries
             ORDER BY received_at_ms, rowid",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect()
}

fn pr_row(server: &TestServer, number: i64) -> Value {
    let conn = server.main_db();
    conn.query_row(
        "SELECT state, is_draft, issue_key, check_failures_count, ci_decision, review_decision, review_rounds,
           reverted_by_number, reverts_number, head_sha, updated_at_ms
         FROM pull_requests WHERE id = ?1",
        [format!("acme/api#{number}")],
        |r| {
            Ok(json!({"state": r.get::<_, String>(0)?, "draft": r.get::<_, bool>(1)?, "issue_key": r.get::<_, Option<String>>(2)?,
                "failures": r.get::<_, i64>(3)?, "ci": r.get::<_, Option<String>>(4)?, "review": r.get::<_, Option<String>>(5)?,
                "rounds": r.get::<_, i64>(6)?, "reverted_by": r.get::<_, Option<i64>>(7)?, "reverts": r.get::<_, Option<i64>>(8)?,
                "head": r.get::<_, Option<String>>(9)?, "updated": r.get::<_, i64>(10)?}))
        },
    )
    .unwrap()
}

fn at(minute: u32) -> String {
    format!("2026-11-20T10:{minute:02}:00Z")
}

#[test]
fn every_action_of_the_four_events_ping_and_an_unknown_event() {
    let server = server(&[]);
    let (status, pong) = deliver(&server, "ping", &gh::ping_event());
    assert_eq!((status, pong["zen"].as_str()), (200, Some("pong")), "{pong}");
    assert_eq!(deliver(&server, "star", &gh::star_event()).0, 202);

    let mut pr = Pr::new(7, "Fix rounding in invoices", "feat/PAY-7-rounding", &"a1".repeat(20));
    for (minute, action) in gh::PULL_REQUEST_ACTIONS.iter().filter(|a| **a != "closed").enumerate() {
        pr.updated_at = at(minute as u32 + 1);
        pr.draft = *action == "converted_to_draft";
        assert_eq!(deliver(&server, "pull_request", &gh::pull_request_event(action, &pr)).0, 202, "{action}");
        if *action == "converted_to_draft" {
            settled(&server);
            assert_eq!(pr_row(&server, 7)["draft"], false, "a draft-only transition does not upsert");
        }
    }
    // A snapshot older than the stored one (deliveries out of order) changes nothing.
    let mut stale = pr.clone();
    stale.title = "An old title".into();
    stale.updated_at = at(0);
    assert_eq!(deliver(&server, "pull_request", &gh::pull_request_event("edited", &stale)).0, 202);

    let checks = [
        ("created", 11, "test", None),
        ("completed", 11, "test", Some("failure")),
        ("rerequested", 11, "test", Some("failure")),
        ("requested_action", 11, "test", Some("failure")),
        ("completed", 12, "lint", Some("success")),
    ];
    for (action, id, name, conclusion) in checks {
        assert_eq!(deliver(&server, "check_run", &gh::check_run_event(action, id, name, &pr, conclusion)).0, 202);
    }
    let (first, second) = ("c".repeat(40), "d".repeat(40));
    for (action, id, reviewer, state, commit) in [
        ("submitted", 1, "grace", "changes_requested", &first),
        ("edited", 1, "grace", "changes_requested", &first),
        ("submitted", 2, "linus", "approved", &second),
        ("dismissed", 1, "grace", "dismissed", &first),
    ] {
        assert_eq!(
            deliver(&server, "pull_request_review", &gh::review_event(action, id, reviewer, state, commit, &pr)).0,
            202
        );
    }
    // Pull request 8 is merged, then reverted by a commit pushed to the default branch.
    let mut merged = Pr::new(8, "Add the ledger (OPS-12)", "feat/ledger", &"b2".repeat(20));
    assert_eq!(deliver(&server, "pull_request", &gh::pull_request_event("opened", &merged)).0, 202);
    merged.state = "closed";
    merged.merged_at = Some(at(30));
    merged.closed_at = Some(at(30));
    merged.updated_at = at(30);
    assert_eq!(deliver(&server, "pull_request", &gh::pull_request_event("closed", &merged)).0, 202);
    let revert = "Revert \"Add the ledger\"\n\nThis reverts commit 9f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6.";
    let push = gh::push_event("main", &"0".repeat(40), &[(&"e5".repeat(20), revert)]);
    assert_eq!(deliver(&server, "push", &push).0, 202);
    settled(&server);

    let seen = outcomes(&server);
    let settled_as = |event: &str, action: &str| -> Vec<String> {
        seen.iter().filter(|(e, a, _, _)| e == event && a == action).map(|(_, _, o, _)| o.clone()).collect()
    };
    assert_eq!(settled_as("ping", ""), ["applied"]);
    assert_eq!(settled_as("star", "created"), ["ignored"]);
    for action in gh::PULL_REQUEST_ACTIONS.iter().filter(|a| **a != "closed") {
        let want = if matches!(*action, "ready_for_review" | "converted_to_draft") { "ignored" } else { "applied" };
        let mut got = settled_as("pull_request", action);
        if *action == "edited" {
            assert_eq!(got.pop().as_deref(), Some("ignored"), "the stale snapshot");
        }
        let times = if *action == "opened" { 2 } else { 1 }; // pull requests 7 and 8
        assert_eq!(got, vec![want; times], "pull_request {action}");
    }
    for action in gh::CHECK_RUN_ACTIONS {
        assert!(settled_as("check_run", action).iter().all(|o| o == "applied"), "check_run {action}: {seen:?}");
    }
    for action in gh::REVIEW_ACTIONS {
        assert!(settled_as("pull_request_review", action).iter().all(|o| o == "applied"), "review {action}");
    }
    assert_eq!(settled_as("push", ""), ["applied"]);
    assert!(seen.iter().all(|(_, _, outcome, _)| outcome != "failed"), "{seen:?}");

    let seven = pr_row(&server, 7);
    assert_eq!(
        (seven["state"].as_str(), seven["draft"].as_bool(), seven["issue_key"].as_str()),
        (Some("open"), Some(false), Some("PAY-7")),
        "the draft flag did not follow converted_to_draft alone: {seven}"
    );
    assert_eq!((seven["failures"].as_i64(), seven["ci"].as_str()), (Some(1), Some("failing")), "{seven}");
    assert_eq!((seven["review"].as_str(), seven["rounds"].as_i64()), (Some("approved"), Some(2)), "{seven}");
    let title: String = server
        .main_db()
        .query_row("SELECT title FROM pull_requests WHERE id = 'acme/api#7'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(title, "Fix rounding in invoices", "the stale snapshot changed nothing");
    let eight = pr_row(&server, 8);
    assert_eq!((eight["state"].as_str(), eight["reverted_by"].as_i64()), (Some("merged"), Some(0)), "{eight}");
    assert_eq!(eight["issue_key"], "OPS-12");
    let rollup_reverted: bool = server
        .main_db()
        .query_row("SELECT reverted FROM pr_rollups WHERE pr_id = 'acme/api#8'", [], |r| r.get(0))
        .unwrap();
    assert!(rollup_reverted, "the rollup follows the revert");
    // The repository is renamed (same GitHub id): its pull requests and what hangs off
    // them move to the new name.
    let mut renamed = gh::pull_request_event("edited", &Pr { updated_at: at(59), ..pr.clone() });
    renamed["repository"]["full_name"] = json!("acme/api-v2");
    assert_eq!(deliver(&server, "pull_request", &renamed).0, 202);
    settled(&server);
    let conn = server.main_db();
    let ids: Vec<String> = {
        let mut stmt = conn.prepare("SELECT id FROM pull_requests ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(ids, ["acme/api-v2#7", "acme/api-v2#8"]);
    let checks: i64 =
        conn.query_row("SELECT count(*) FROM pr_check_runs WHERE pr_id = 'acme/api-v2#7'", [], |r| r.get(0)).unwrap();
    assert_eq!(checks, 2, "the check runs followed");
    let metrics =
        common::agent().get(&format!("{}/metrics", server.ingest)).call().unwrap().body_mut().read_to_string().unwrap();
    assert!(metrics.contains("sightline_webhook_delivery_success_ratio 1.0"), "{metrics}");
    assert!(metrics.contains("sightline_webhook_deliveries_pending 0"), "{metrics}");
}

#[test]
fn mutated_signatures_and_bodies_are_refused_and_nothing_is_stored() {
    let server = server(&[]);
    let pr = Pr::new(3, "Tidy", "tidy", &"f".repeat(40));
    let body = serde_json::to_vec(&gh::pull_request_event("opened", &pr)).unwrap();
    let good = sign(&body);
    assert_eq!(deliver_raw(&server, "pull_request", "missing", &body, None).0, 401);
    let mut rng = fastrand::Rng::with_seed(17);
    let hex = b"0123456789abcdef";
    for round in 0..1000 {
        let mut signature = good.clone().into_bytes();
        let at = 7 + rng.usize(..64);
        let original = signature[at];
        while signature[at] == original {
            signature[at] = hex[rng.usize(..16)];
        }
        let signature = String::from_utf8(signature).unwrap();
        let (status, answer) = deliver_raw(&server, "pull_request", &format!("sig-{round}"), &body, Some(&signature));
        assert_eq!(status, 401, "{signature}: {answer}");
    }
    for round in 0..1000 {
        let mut mutated = body.clone();
        match rng.u8(..3) {
            0 => {
                let at = rng.usize(..mutated.len());
                mutated[at] ^= 1 << rng.u8(..8);
            }
            1 => {
                mutated.truncate(rng.usize(..mutated.len()));
            }
            _ => mutated.insert(rng.usize(..mutated.len()), b' '),
        }
        let (status, _) = deliver_raw(&server, "pull_request", &format!("body-{round}"), &mutated, Some(&good));
        assert_eq!(status, 401, "round {round}");
    }
    let stored: i64 = server.main_db().query_row("SELECT count(*) FROM webhook_deliveries", [], |r| r.get(0)).unwrap();
    assert_eq!(stored, 0);
    let (status, _) = deliver_raw(&server, "pull_request", "good", &body, Some(&good));
    assert_eq!(status, 202, "the unmutated delivery is taken");

    let off = TestServer::spawn();
    let (status, answer) = deliver_raw(&off, "pull_request", "no-secret", &body, Some(&good));
    assert_eq!(status, 503, "no webhook secret configured: {answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("github.webhook_secret"), "{answer}");
}

#[test]
fn a_replayed_delivery_is_applied_once_and_a_lost_one_after_a_kill_9() {
    let mut server = server(&[("SIGHTLINE_GITHUB_PROCESS_DELIVERIES", "false")]);
    let pr = Pr::new(5, "Speed up the export", "perf/export", &"ab".repeat(20));
    let opened = serde_json::to_vec(&gh::pull_request_event("opened", &pr)).unwrap();
    let failed = serde_json::to_vec(&gh::check_run_event("completed", 51, "test", &pr, Some("failure"))).unwrap();
    assert_eq!(deliver_raw(&server, "pull_request", "d-opened", &opened, Some(&sign(&opened))).0, 202);
    for _ in 0..3 {
        let (status, answer) = deliver_raw(&server, "check_run", "d-failed", &failed, Some(&sign(&failed)));
        assert_eq!(status, 202, "{answer}");
    }
    // Acknowledged, not yet applied: the process dies.
    server.kill9();
    let conn = server.main_db();
    let pending: i64 =
        conn.query_row("SELECT count(*) FROM webhook_deliveries WHERE outcome = 'pending'", [], |r| r.get(0)).unwrap();
    let prs: i64 = conn.query_row("SELECT count(*) FROM pull_requests", [], |r| r.get(0)).unwrap();
    assert_eq!((pending, prs), (2, 0), "two deliveries stored (the replays were not), none applied");
    drop(conn);

    server.extra_env.retain(|(k, _)| k != "SIGHTLINE_GITHUB_PROCESS_DELIVERIES");
    server.start();
    settled(&server);
    assert_eq!(pr_row(&server, 5)["failures"], 1, "applied after the restart, once");
    let (status, answer) = deliver_raw(&server, "check_run", "d-failed", &failed, Some(&sign(&failed)));
    assert_eq!((status, answer["duplicate"].as_bool()), (202, Some(true)), "{answer}");
    // The same check run in another delivery does not count twice either.
    assert_eq!(
        deliver(&server, "check_run", &gh::check_run_event("completed", 51, "test", &pr, Some("failure"))).0,
        202
    );
    settled(&server);
    assert_eq!(pr_row(&server, 5)["failures"], 1);
    let attempts: Vec<i64> = {
        let conn = server.main_db();
        let mut stmt = conn.prepare("SELECT attempts FROM webhook_deliveries ORDER BY received_at_ms").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(attempts, [1, 1, 1], "each applied in one attempt");

    // A payload that cannot be applied fails at once, naming what is missing; GitHub's
    // "Redeliver" (same delivery id) with a good body applies it.
    let broken = br#"{"action": "opened", "repository": {"full_name": "acme/api"}}"#;
    assert_eq!(deliver_raw(&server, "pull_request", "d-broken", broken, Some(&sign(broken))).0, 202);
    settled(&server);
    let (outcome, error): (String, String) = server
        .main_db()
        .query_row("SELECT outcome, error FROM webhook_deliveries WHERE delivery_id = 'd-broken'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(outcome, "failed");
    assert!(error.contains("pull_request"), "{error}");
    let fixed =
        serde_json::to_vec(&gh::pull_request_event("opened", &Pr::new(6, "Fixed", "fix/6", &"c6".repeat(20)))).unwrap();
    let (status, answer) = deliver_raw(&server, "pull_request", "d-broken", &fixed, Some(&sign(&fixed)));
    assert_eq!((status, answer["retried"].as_bool()), (202, Some(true)), "{answer}");
    settled(&server);
    assert_eq!(pr_row(&server, 6)["state"], "open", "applied on redelivery");
}

/// A session of `agent` with a start carrying `git` (and `metadata`), a priced turn, and
/// an end carrying `end_git`.
fn session(id: &str, run_kind: &str, git: Value, start_metadata: Value, end_git: Value, t0: i64) -> Vec<Value> {
    let mut start = event("session_start", id, t0);
    if !git.is_null() {
        start["git"] = git;
    }
    if !start_metadata.is_null() {
        start["metadata"] = start_metadata;
    }
    let turn = event("turn_end", id, t0 + 1_000);
    let mut end = event("session_end", id, t0 + 2_000);
    if !end_git.is_null() {
        end["git"] = end_git;
    }
    let mut events = vec![start, turn, end];
    for e in &mut events {
        e["run_kind"] = json!(run_kind);
    }
    events
}

fn links(server: &TestServer) -> Vec<(String, String)> {
    let conn = server.main_db();
    let mut stmt = conn
        .prepare(
            "SELECT s.agent_session_id, l.evidence FROM session_pr_links l JOIN sessions s ON s.id = l.session_id
             WHERE l.pr_id = 'acme/api#7' ORDER BY s.agent_session_id",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

#[test]
fn sessions_link_on_exact_evidence_and_the_merge_rollup_keeps_ci_apart() {
    let server = server(&[]);
    let token = server.token.clone();
    is_the_author(&server, "dev@example.com");
    let t0 = now_ms() - 3_600_000;
    let remote = "git@github.com:Acme/API.git";
    let branch = "feat/PAY-7-rounding";
    let (c0, c1) = ("0".repeat(39) + "1", "c1".repeat(20));
    let mut events = Vec::new();
    events.extend(session(
        "s-branch",
        "INTERACTIVE",
        json!({"remote": remote, "branch": branch, "commit": c0}),
        Value::Null,
        Value::Null,
        t0,
    ));
    events.extend(session(
        "s-commit",
        "INTERACTIVE",
        json!({"remote": remote, "branch": "scratch", "commit": c0}),
        Value::Null,
        json!({"remote": remote, "branch": "scratch", "commit": c1}),
        t0 + 10_000,
    ));
    events.extend(session(
        "s-other-repo",
        "INTERACTIVE",
        json!({"remote": "https://github.com/other/api", "branch": branch}),
        Value::Null,
        Value::Null,
        t0 + 20_000,
    ));
    events.extend(session(
        "s-main",
        "INTERACTIVE",
        json!({"remote": remote, "branch": "main", "commit": c0}),
        Value::Null,
        Value::Null,
        t0 + 30_000,
    ));
    events.extend(session("s-time-only", "INTERACTIVE", Value::Null, Value::Null, Value::Null, t0 + 40_000));
    events.extend(session(
        "s-ci",
        "CI",
        json!({"remote": "https://github.com/acme/api", "commit": "9".repeat(40)}),
        json!({"pull_request": 7}),
        Value::Null,
        t0 + 50_000,
    ));
    events.extend(session(
        "s-eval",
        "EVAL",
        json!({"remote": remote, "branch": branch}),
        Value::Null,
        Value::Null,
        t0 + 60_000,
    ));
    assert_eq!(server.post_events(&token, &envelope(events)).0, 200);
    // Someone else on a branch of the same name: neither author nor committer of it.
    let stranger = common::user_with_token(&server.data_dir, "bo@example.com");
    let theirs = session(
        "s-stranger",
        "INTERACTIVE",
        json!({"remote": remote, "branch": branch, "commit": "b0".repeat(20)}),
        Value::Null,
        Value::Null,
        t0 + 5_000,
    );
    assert_eq!(server.post_events(&stranger, &envelope(theirs)).0, 200);

    let mut pr = Pr::new(7, "Fix rounding", branch, &"a1".repeat(20));
    assert_eq!(deliver(&server, "pull_request", &gh::pull_request_event("opened", &pr)).0, 202);
    settled(&server);
    assert_eq!(
        links(&server),
        [("s-branch".into(), "branch".into()), ("s-ci".into(), "named".into()), ("s-eval".into(), "branch".into())],
        "backfilled on the pull request's event; other repository, default branch, time alone and another person's session on the same branch never link"
    );
    let push = gh::push_event(branch, &"a1".repeat(20), &[(&c1, "Round half away from zero")]);
    assert_eq!(deliver(&server, "push", &push).0, 202);
    settled(&server);
    assert!(links(&server).contains(&("s-commit".into(), "commit".into())), "{:?}", links(&server));

    // A fork's pull request whose head is its own `main`: pushes to acme/api's main are
    // not its commits, so sessions that reported them do not link to it.
    let mut fork = gh::pull_request_event("opened", &Pr::new(9, "Fork tweak", "main", &"f0".repeat(20)));
    fork["pull_request"]["head"]["repo"]["full_name"] = json!("contrib/api");
    assert_eq!(deliver(&server, "pull_request", &fork).0, 202);
    let on_main = gh::push_event("main", &"0".repeat(40), &[(&c0, "Merge the release")]);
    assert_eq!(deliver(&server, "push", &on_main).0, 202);
    settled(&server);
    let id_of_main: String = server
        .main_db()
        .query_row("SELECT id FROM sessions WHERE agent_session_id = 's-main'", [], |r| r.get(0))
        .unwrap();
    let fork_links: i64 = server
        .main_db()
        .query_row("SELECT count(*) FROM session_pr_links WHERE pr_id = 'acme/api#9'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fork_links, 0, "nothing links to the fork's pull request");

    // A session that arrives after the pull request is linked at ingest.
    let late = session(
        "s-late",
        "INTERACTIVE",
        json!({"remote": remote, "branch": branch}),
        Value::Null,
        Value::Null,
        t0 + 70_000,
    );
    assert_eq!(server.post_events(&token, &envelope(late)).0, 200);
    assert!(links(&server).contains(&("s-late".into(), "branch".into())), "{:?}", links(&server));

    pr.state = "closed";
    pr.merged_at = Some(at(50));
    pr.closed_at = Some(at(50));
    pr.updated_at = at(50);
    assert_eq!(deliver(&server, "pull_request", &gh::pull_request_event("closed", &pr)).0, 202);
    settled(&server);
    let conn = server.main_db();
    let (sessions, people, agents, cost, ci_sessions, ci_cost, per_line): (
        i64,
        i64,
        String,
        i64,
        i64,
        i64,
        Option<i64>,
    ) = conn
        .query_row(
            "SELECT sessions, people, agents, cost_nusd, ci_sessions, ci_cost_nusd, cost_per_changed_line_nusd
             FROM pr_rollups WHERE pr_id = 'acme/api#7'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)),
        )
        .unwrap();
    let session_cost = |name: &str| -> i64 {
        conn.query_row("SELECT cost_nusd FROM sessions WHERE agent_session_id = ?1", [name], |r| r.get(0)).unwrap()
    };
    let interactive = session_cost("s-branch") + session_cost("s-commit") + session_cost("s-late");
    assert!(interactive > 0);
    assert_eq!((sessions, people, agents.as_str(), cost), (3, 1, "claude_code", interactive), "EVAL out, CI apart");
    assert_eq!((ci_sessions, ci_cost), (1, session_cost("s-ci")));
    assert_eq!(per_line, Some(interactive / 150), "120 additions + 30 deletions");

    // The pages: my pull requests, and the link on the session.
    let access = common::access_token(&server, "dev@example.com");
    let page = |path: &str| {
        let mut answer = common::agent()
            .get(&format!("{}{path}", server.web))
            .header("Authorization", format!("Bearer {access}"))
            .call()
            .unwrap();
        answer.body_mut().read_to_string().unwrap()
    };
    let html = page("/me/prs");
    assert!(html.contains("acme/api#7") && html.contains("Fix rounding") && html.contains("merged"), "{html}");
    assert!(html.contains("PAY-7"), "the issue key: {html}");
    let id: String =
        conn.query_row("SELECT id FROM sessions WHERE agent_session_id = 's-branch'", [], |r| r.get(0)).unwrap();
    let html = page(&format!("/sessions/{id}"));
    assert!(html.contains("acme/api#7") && html.contains("branch"), "the session's pull request and evidence: {html}");
    // Outcome scores: the linked interactive sessions and the pull request itself.
    for job in ["compute-effectiveness", "compute-subject-scores"] {
        let ran = common::sightline(&["jobs", "run", "--data-dir", server.data_dir.to_str().unwrap(), job]);
        assert!(ran.status.success(), "{job}: {}", common::stderr(&ran));
    }
    let outcome = |subject: &str, scorer: &str| -> Option<(f64, String)> {
        conn.query_row(
            "SELECT value, label FROM scores WHERE subject_id = ?1 AND scorer_name = ?2",
            [subject, scorer],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok()
    };
    let session_id = |name: &str| -> String {
        conn.query_row("SELECT id FROM sessions WHERE agent_session_id = ?1", [name], |r| r.get(0)).unwrap()
    };
    assert_eq!(outcome(&session_id("s-branch"), "effectiveness"), Some((1.0, "acme/api#7".into())), "a clean merge");
    assert_eq!(outcome(&session_id("s-ci"), "effectiveness"), None, "a CI run is not scored");
    assert_eq!(outcome("acme/api#7", "pr_effectiveness"), Some((1.0, "merged".into())));
    let per_line = outcome("acme/api#7", "pr_cost_per_line").unwrap().0;
    assert!((per_line - (interactive / 150) as f64 / 1e9).abs() < 1e-12, "{per_line}");
    let html = page(&format!("/sessions/{id_of_main}"));
    assert!(html.contains(&format!("Landed on the default branch: acme/api <code>{c0}</code>")), "{html}");
}

/// Makes `email` the GitHub account `ada-l`, who authors the test's pull requests.
fn is_the_author(server: &TestServer, email: &str) {
    let id = user_id(server, email);
    server
        .main_db()
        .execute("UPDATE users SET github_id = 583231, github_login = 'ada-l' WHERE id = ?1", [&id])
        .unwrap();
}

fn user_id(server: &TestServer, email: &str) -> String {
    server.main_db().query_row("SELECT id FROM users WHERE email = ?1", [email], |r| r.get(0)).unwrap()
}

fn merge(server: &TestServer, pr: &mut Pr, minute: u32) {
    assert_eq!(deliver(server, "pull_request", &gh::pull_request_event("opened", pr)).0, 202);
    pr.state = "closed";
    pr.merged_at = Some(at(minute));
    pr.closed_at = Some(at(minute));
    pr.updated_at = at(minute);
    assert_eq!(deliver(server, "pull_request", &gh::pull_request_event("closed", pr)).0, 202);
    settled(server);
}

const APP_FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/github-app");

/// A GitHub App stand-in that accepts the fixture key's tokens.
fn app_standin() -> common::github_app_standin::AppStandIn {
    common::github_app_standin::AppStandIn::start(&std::fs::read(format!("{APP_FIXTURES}/public-key.pem")).unwrap())
}

/// The settings that point a server, or a command, at the App's API at `api_url`.
fn app_settings(api_url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("SIGHTLINE_AUTH_GITHUB_API_URL", api_url.to_string()),
        ("SIGHTLINE_GITHUB_APP_ID", common::github_app_standin::APP_ID.to_string()),
        ("SIGHTLINE_GITHUB_PRIVATE_KEY_PATH", format!("{APP_FIXTURES}/private-key.pem")),
        ("SIGHTLINE_GITHUB_ORGANISATION", gh::OWNER.to_string()),
    ]
}

fn borrowed<'a>(settings: &'a [(&'static str, String)]) -> Vec<(&'a str, &'a str)> {
    settings.iter().map(|(name, value)| (*name, value.as_str())).collect()
}

#[test]
fn the_bot_comment_is_posted_as_the_app_edited_in_place_and_respects_privacy_and_teams_sync() {
    let standin = app_standin();
    let app_env = app_settings(&standin.url);
    let server = server(&borrowed(&app_env));
    is_the_author(&server, "dev@example.com");
    standin
        .hub
        .lock()
        .unwrap()
        .files
        .insert((gh::FULL_NAME.into(), ".sightline.yml".into(), "main".into()), "comment:\n  enabled: true\n".into());
    let remote = "https://github.com/acme/api.git";
    let t0 = now_ms() - 600_000;
    let mine =
        session("s-mine", "INTERACTIVE", json!({"remote": remote, "branch": "feat/a"}), Value::Null, Value::Null, t0);
    assert_eq!(server.post_events(&server.token, &envelope(mine)).0, 200);

    let mut first = Pr::new(21, "Feature A", "feat/a", &"21".repeat(20));
    merge(&server, &mut first, 40);
    let comments = || standin.hub.lock().unwrap().comments.clone();
    wait_until(Duration::from_secs(20), "the bot comment", || !comments().is_empty());
    let (comment_id, (repo, number, body)) = comments().into_iter().next().unwrap();
    assert_eq!((repo.as_str(), number), (gh::FULL_NAME, 21));
    assert!(body.starts_with(sightline::github::comment::MARKER), "{body}");
    assert!(body.contains("| Agent sessions | 1 |") && body.contains("| Agent cost | $"), "{body}");
    assert!(body.contains("| Failed checks | 0 |"), "{body}");
    let calls = standin.hub.lock().unwrap().calls.clone();
    assert!(
        calls.iter().any(|c| c == &format!("POST /app/installations/{}/access_tokens", gh::INSTALLATION)),
        "an installation token from the app JWT: {calls:?}"
    );
    assert!(calls.iter().any(|c| c.starts_with("GET /repos/acme/api/contents/.sightline.yml?ref=main")), "{calls:?}");

    // A check run on the merged pull request: the same comment, edited.
    let failing = gh::check_run_event("completed", 77, "test", &first, Some("failure"));
    assert_eq!(deliver(&server, "check_run", &failing).0, 202);
    wait_until(Duration::from_secs(20), "the comment edited in place", || {
        comments().get(&comment_id).is_some_and(|(_, _, body)| body.contains("| Failed checks | 1 |"))
    });
    assert_eq!(comments().len(), 1, "edited, not posted again");

    // Someone who keeps their figures out of shared views: no session figure about them.
    let private_token = common::user_with_token(&server.data_dir, "private@example.com");
    let private_id = user_id(&server, "private@example.com");
    server
        .main_db()
        .execute(
            "INSERT INTO visibility_policies (user_id, share_transcripts, team_drill_in, named_in_team_views, judge_opt_in,
               updated_at_ms) VALUES (?1, 0, 1, 0, 0, 0)",
            [&private_id],
        )
        .unwrap();
    // Feature B: my session, and the private person's CI run naming the pull request.
    let mine_b =
        session("s-mine-b", "INTERACTIVE", json!({"remote": remote, "branch": "feat/b"}), Value::Null, Value::Null, t0);
    assert_eq!(server.post_events(&server.token, &envelope(mine_b)).0, 200);
    let theirs = session("s-private-ci", "CI", json!({"remote": remote}), json!({"pull_request": 22}), Value::Null, t0);
    assert_eq!(server.post_events(&private_token, &envelope(theirs)).0, 200);
    let mut second = Pr::new(22, "Feature B", "feat/b", &"22".repeat(20));
    merge(&server, &mut second, 45);
    wait_until(Duration::from_secs(20), "the second comment", || comments().values().any(|(_, n, _)| *n == 22));
    let body = comments().into_values().find(|(_, n, _)| *n == 22).unwrap().2;
    assert!(
        !body.contains("Agent cost") && !body.contains("Agent sessions") && !body.contains("CI agent cost"),
        "{body}"
    );
    assert!(body.contains("Session figures are not shown") && body.contains("| Failed checks | 0 |"), "{body}");

    // I turn "named in team views" off: my comment is edited to drop my figures.
    let access = common::access_token(&server, "dev@example.com");
    let mut answer = common::agent()
        .patch(&format!("{}/api/me/visibility", server.web))
        .header("Authorization", format!("Bearer {access}"))
        .header("Origin", &server.web)
        .header("Content-Type", "application/json")
        .send(json!({"named_in_team_views": false}).to_string())
        .unwrap();
    assert_eq!(answer.status(), 200, "{}", answer.body_mut().read_to_string().unwrap());
    wait_until(Duration::from_secs(20), "my comment edited without my figures", || {
        comments().get(&comment_id).is_some_and(|(_, _, body)| !body.contains("Agent cost"))
    });
    assert_eq!(comments().len(), 2, "edited in place");

    // No `.sightline.yml`: no comment.
    standin.hub.lock().unwrap().files.clear();
    let mut third = Pr::new(23, "Feature C", "feat/c", &"23".repeat(20));
    merge(&server, &mut third, 50);
    let asked = || standin.hub.lock().unwrap().calls.iter().filter(|c| c.contains("/contents/.sightline.yml")).count();
    wait_until(Duration::from_secs(20), "the settings asked for", || asked() >= 3);
    assert!(!comments().values().any(|(_, n, _)| *n == 23), "opted out");

    // sync-teams: teams, parents and members, people matched by their GitHub id.
    let dev = user_id(&server, "dev@example.com");
    server
        .main_db()
        .execute("UPDATE users SET github_id = 583231, github_login = 'ada-l' WHERE id = ?1", [&dev])
        .unwrap();
    standin.hub.lock().unwrap().teams = vec![
        ("platform".into(), "Platform".into(), None, vec![(583_231, "ada-l".into()), (5, "not-here".into())]),
        ("payments".into(), "Payments".into(), Some("platform".into()), vec![(583_231, "ada-l".into())]),
    ];
    let run = |what: &str| {
        let output = std::process::Command::new(common::BIN)
            .args(["jobs", "run", "--data-dir", server.data_dir.to_str().unwrap(), "sync-teams"])
            .envs(app_env.clone())
            .env_remove("SIGHTLINE_CONFIG")
            .output()
            .unwrap();
        assert!(output.status.success(), "{what}: {}", common::stderr(&output));
        common::stdout(&output)
    };
    let out = run("first sync");
    assert!(out.contains("2 teams added"), "{out}");
    let memberships = || -> Vec<(String, Option<String>, String)> {
        let conn = server.main_db();
        let mut stmt = conn
            .prepare(
                "SELECT t.slug, p.slug, m.user_id FROM teams t LEFT JOIN teams p ON p.id = t.parent_id
                 JOIN team_members m ON m.team_id = t.id ORDER BY t.slug",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(
        memberships(),
        [("payments".into(), Some("platform".into()), dev.clone())],
        "a direct member of the child team only (GitHub lists child members under the parent too)"
    );
    standin.hub.lock().unwrap().teams[1].3.clear();
    let out = run("second sync");
    assert!(out.contains("1 memberships added, 1 removed"), "{out}");
    assert_eq!(memberships(), [("platform".into(), None, dev.clone())], "left the child team, so now the parent's own");
    let still: i64 =
        server.main_db().query_row("SELECT count(*) FROM users WHERE id = ?1", [&dev], |r| r.get(0)).unwrap();
    assert_eq!(still, 1, "never deleted");
}

/// GitHub's rate limits (403 with `x-ratelimit-remaining: 0`; 429 with `Retry-After`):
/// `sync-teams` fails saying so and sends nothing more; the server's bot comment waits
/// out the time GitHub named without calling again, then is posted once.
#[test]
fn a_rate_limited_app_rests_until_github_says_and_then_carries_on() {
    use common::github_app_standin::Limit;
    let standin = app_standin();
    let app_env = app_settings(&standin.url);
    let server = server(&borrowed(&app_env));
    is_the_author(&server, "dev@example.com");
    let calls = || standin.hub.lock().unwrap().calls.len();

    // sync-teams against the primary limit: one call, a failed run that says why.
    standin.hub.lock().unwrap().limited = Some(Limit::Primary { reset_in_secs: 3600 });
    let ran = std::process::Command::new(common::BIN)
        .args(["jobs", "run", "--data-dir", server.data_dir.to_str().unwrap(), "sync-teams"])
        .envs(app_env.clone())
        .env_remove("SIGHTLINE_CONFIG")
        .output()
        .unwrap();
    assert!(!ran.status.success());
    let said = common::stderr(&ran);
    assert!(said.contains("GitHub's rate limit") && said.contains("answered 403"), "{said}");
    let waited: i64 = said.split("try again in ").nth(1).and_then(|t| t.split(' ').next()).unwrap().parse().unwrap();
    assert!((3500..=3600).contains(&waited), "the wait is GitHub's reset time: {said}");
    assert_eq!(calls(), 1, "nothing more is sent once limited");

    // The server's bot comment against a secondary limit of 8 seconds.
    standin.hub.lock().unwrap().calls.clear();
    standin.hub.lock().unwrap().limited = Some(Limit::Secondary { retry_after_secs: 8 });
    standin
        .hub
        .lock()
        .unwrap()
        .files
        .insert((gh::FULL_NAME.into(), ".sightline.yml".into(), "main".into()), "comment:\n  enabled: true\n".into());
    let remote = "https://github.com/acme/api.git";
    let mine = session(
        "s-rl",
        "INTERACTIVE",
        json!({"remote": remote, "branch": "feat/rl"}),
        Value::Null,
        Value::Null,
        now_ms() - 600_000,
    );
    assert_eq!(server.post_events(&server.token, &envelope(mine)).0, 200);
    let mut pr = Pr::new(31, "Rate limited", "feat/rl", &"31".repeat(20));
    merge(&server, &mut pr, 40);
    wait_until(Duration::from_secs(20), "the first try", || calls() >= 1);
    // The worker polls every 5 s; while resting it sends nothing.
    std::thread::sleep(Duration::from_millis(6000));
    assert_eq!(calls(), 1, "one refused call, then a rest: {:?}", standin.hub.lock().unwrap().calls);
    standin.hub.lock().unwrap().limited = None;
    let comments = || standin.hub.lock().unwrap().comments.clone();
    wait_until(Duration::from_secs(30), "the comment after the rest", || !comments().is_empty());
    assert_eq!(comments().len(), 1);
}

/// GitHub's API not answering: `sync-teams` gives up after `github.api_timeout_secs`,
/// its run fails saying it timed out, and nothing about teams is written.
#[test]
fn a_github_that_does_not_answer_times_out_and_the_run_says_so() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let server = TestServer::spawn();
    let teams_before: i64 = server.main_db().query_row("SELECT count(*) FROM teams", [], |r| r.get(0)).unwrap();
    let ran = std::process::Command::new(common::BIN)
        .args(["jobs", "run", "--data-dir", server.data_dir.to_str().unwrap(), "sync-teams"])
        .envs(app_settings(&silent))
        .env("SIGHTLINE_GITHUB_API_TIMEOUT_SECS", "1")
        .env_remove("SIGHTLINE_CONFIG")
        .output()
        .unwrap();
    assert!(!ran.status.success());
    let said = common::stderr(&ran);
    assert!(said.contains("cannot reach") && said.to_lowercase().contains("timeout"), "{said}");
    let main = server.main_db();
    let error: String = main
        .query_row("SELECT error FROM job_runs WHERE job = 'sync-teams' ORDER BY started_at_ms DESC LIMIT 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(error.to_lowercase().contains("timeout"), "{error}");
    let teams_after: i64 = main.query_row("SELECT count(*) FROM teams", [], |r| r.get(0)).unwrap();
    assert_eq!(teams_after, teams_before);
}

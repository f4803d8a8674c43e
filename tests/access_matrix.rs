//! The authorization matrix: every org role (and a team lead) against every
//! session-reading route, for their own session, another person's, another person's
//! with an active grant, and with an expired grant — on the real server (in-process,
//! with a manual clock so expiry is a clock move, not a sleep). It ends by proving
//! that every cross-user read that succeeded left exactly one audit row.

use crate::common;

use std::collections::BTreeMap;

use common::inprocess::InProcess;
use common::transcripts::{Transcript, Turn, session_with_transcript, user_id};
use common::{access_token, add_user, agent, read, sightline, stderr, stdout};
use serde_json::{Value, json};

const SUBJECT: &str = "sam@example.com";
const ROUTES: [&str; 3] = ["", "/events", "/transcript"];

struct Reader {
    name: &'static str,
    email: &'static str,
    role: &'static str,
}

const READERS: [Reader; 6] = [
    Reader { name: "admin", email: "ari@example.com", role: "ADMIN" },
    Reader { name: "investigator", email: "ivy@example.com", role: "INVESTIGATOR" },
    Reader { name: "member", email: "max@example.com", role: "MEMBER" },
    Reader { name: "viewer_aggregate", email: "vera@example.com", role: "VIEWER_AGGREGATE" },
    Reader { name: "team_lead", email: "lee@example.com", role: "MEMBER" },
    Reader { name: "eval_engineer", email: "eve@example.com", role: "EVAL_ENGINEER" },
];
/// Approves requests (an administrator other than the requester and the subject).
const APPROVER: &str = "abe@example.com";

fn cli(data_dir: &std::path::Path, args: &[&str]) -> String {
    let mut full = args.to_vec();
    full.extend(["--data-dir", data_dir.to_str().unwrap()]);
    let output = sightline(&full);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    stdout(&output)
}

fn hook_token(data_dir: &std::path::Path, email: &str) -> String {
    cli(data_dir, &["token", "create", "--user", email, "--kind", "hook"]).trim().to_string()
}

fn get_as(url: &str, token: &str) -> (u16, Value) {
    read(agent().get(url).header("Authorization", format!("Bearer {token}")).call())
}

fn post_as(url: &str, token: &str, body: &Value) -> (u16, Value) {
    read(
        agent()
            .post(url)
            .header("Authorization", format!("Bearer {token}"))
            .header("Content-Type", "application/json")
            .send(body.to_string()),
    )
}

/// A session for `email` with one transcript; returns its row id.
fn session_of(running: &InProcess, email: &str, agent_session: &str) -> String {
    let token = hook_token(&running.server.data_dir, email);
    let turns = [Turn::User("where is the ledger"), Turn::Assistant("in the vault")];
    let transcript = Transcript {
        agent: "claude_code",
        session: agent_session,
        model: "claude-sonnet-4-5",
        start_ms: common::now_ms(),
        turns: &turns,
    };
    session_with_transcript(&running.server, &token, &transcript)
}

struct World {
    running: InProcess,
    subject_session: String,
    own_sessions: BTreeMap<&'static str, String>,
    tokens: BTreeMap<&'static str, String>,
    approver: String,
    subject: String,
}

fn world() -> (tempfile::TempDir, World) {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("data");
    add_user(&data_dir, SUBJECT, "MEMBER");
    add_user(&data_dir, APPROVER, "ADMIN");
    for reader in &READERS {
        add_user(&data_dir, reader.email, reader.role);
    }
    cli(&data_dir, &["team", "add", "--slug", "shop", "--name", "Shop"]);
    cli(&data_dir, &["team", "add", "--slug", "shop-payments", "--name", "Payments", "--parent", "shop"]);
    cli(&data_dir, &["team", "add-member", "--team", "shop-payments", "--email", SUBJECT]);
    // The lead leads the parent team: drill-in reaches members of nested teams.
    cli(&data_dir, &["team", "add-member", "--team", "shop", "--email", "lee@example.com", "--role", "lead"]);
    let running = InProcess::start(&data_dir, "");
    let subject_session = session_of(&running, SUBJECT, "sam-0001");
    let mut own_sessions = BTreeMap::new();
    let mut tokens = BTreeMap::new();
    for (i, reader) in READERS.iter().enumerate() {
        own_sessions.insert(reader.name, session_of(&running, reader.email, &format!("own-{i}")));
        tokens.insert(reader.name, access_token(&running.server, reader.email));
    }
    let approver = access_token(&running.server, APPROVER);
    let subject = access_token(&running.server, SUBJECT);
    (temp, World { running, subject_session, own_sessions, tokens, approver, subject })
}

impl World {
    fn web(&self) -> &str {
        &self.running.server.web
    }

    /// The status of each API route for `reader` on `session`, then of the two pages,
    /// which must answer as the API does (the session page as the session, the
    /// transcript page as the transcript): one rule, two doors.
    fn statuses(&self, reader: &str, session: &str) -> Vec<u16> {
        let token = &self.tokens[reader];
        let api: Vec<u16> = ROUTES
            .iter()
            .map(|route| get_as(&format!("{}/api/sessions/{session}{route}", self.web()), token).0)
            .collect();
        let page = |path: String| {
            let response =
                agent().get(format!("{}{path}", self.web())).header("Authorization", format!("Bearer {token}"));
            response.call().unwrap().status().as_u16()
        };
        let pages = [page(format!("/sessions/{session}")), page(format!("/sessions/{session}/transcript"))];
        assert_eq!(pages, [api[0], api[2]], "{reader}: /sessions/{session} and its transcript page answer as the API");
        api.into_iter().chain(pages).collect()
    }

    fn cross_user_audit_rows(&self) -> i64 {
        let conn = self.running.server.main_db();
        conn.query_row(
            "SELECT count(*) FROM audit_log WHERE action IN ('GRANT_USED', 'SESSION_READ', 'TRANSCRIPT_READ')",
            [],
            |row| row.get(0),
        )
        .unwrap()
    }
}

#[test]
fn every_role_against_every_route_for_own_other_granted_and_expired() {
    let (_temp, world) = world();
    let subject_session = world.subject_session.clone();
    let mut successful_cross_user_reads = 0i64;
    let mut check = |situation: &str, expected: &[(&str, [u16; 3])]| {
        for (reader, want) in expected {
            let got = world.statuses(reader, &subject_session);
            assert_eq!(got[..3], want[..], "{reader}, {situation}");
            successful_cross_user_reads += got.iter().filter(|status| **status == 200).count() as i64;
        }
    };

    // Own: everyone reads their own session, events and transcript; no audit needed.
    for reader in &READERS {
        assert_eq!(world.statuses(reader.name, &world.own_sessions[reader.name]), vec![200; 5], "{} own", reader.name);
    }
    assert_eq!(world.cross_user_audit_rows(), 0, "own reads are not privileged reads");

    // Other, no grant: only the team lead reaches the session (drill-in is on by
    // default); nobody reads the transcript (sharing is off by default).
    check(
        "other",
        &[
            ("admin", [404, 404, 404]),
            ("investigator", [404, 404, 404]),
            ("member", [404, 404, 404]),
            ("viewer_aggregate", [404, 404, 404]),
            ("team_lead", [200, 200, 404]),
            ("eval_engineer", [404, 404, 404]),
        ],
    );

    // Grants: investigators and administrators may ask; the others may not.
    let mut grants = BTreeMap::new();
    for reader in &READERS {
        let (status, grant) = post_as(
            &format!("{}/api/grants", world.web()),
            &world.tokens[reader.name],
            &json!({"subject": SUBJECT, "justification": "friction study of checkout sessions", "duration_hours": 1}),
        );
        if matches!(reader.name, "admin" | "investigator") {
            assert_eq!(status, 201, "{}: {grant}", reader.name);
            let id = grant["id"].as_str().unwrap().to_string();
            let (status, approved) =
                post_as(&format!("{}/api/grants/{id}/approve", world.web()), &world.approver, &json!({}));
            assert_eq!((status, approved["status"].as_str()), (200, Some("APPROVED")), "{approved}");
            grants.insert(reader.name, id);
        } else {
            assert_eq!(status, 403, "{} may not request access: {grant}", reader.name);
        }
    }
    check(
        "other with grant, transcripts not shared",
        &[
            ("admin", [200, 200, 404]),
            ("investigator", [200, 200, 404]),
            ("member", [404, 404, 404]),
            ("viewer_aggregate", [404, 404, 404]),
            ("team_lead", [200, 200, 404]),
            ("eval_engineer", [404, 404, 404]),
        ],
    );
    // What the subject's settings page promises is what just happened, and what follows.
    let (_, settings) = get_as(&format!("{}/me/settings", world.web()), &world.subject);
    let settings = settings.as_str().map(str::to_string).unwrap_or_else(|| settings.to_string());
    for promise in [
        "not your team lead, not an investigator or administrator even with a grant",
        "(your team lead, while you let them; someone holding a grant on your data",
        "Your team lead may open your sessions&#39; metadata (never transcripts unless shared)",
    ] {
        assert!(settings.contains(promise), "the settings page says {promise:?}: {settings}");
    }

    // The subject shares transcripts: grant holders and the lead may now read them.
    let (status, _) = read(
        agent()
            .patch(format!("{}/api/me/visibility", world.web()))
            .header("Authorization", format!("Bearer {}", world.subject))
            .header("Content-Type", "application/json")
            .send(json!({"share_transcripts": true}).to_string()),
    );
    assert_eq!(status, 200);
    check(
        "other with grant, transcripts shared",
        &[
            ("admin", [200, 200, 200]),
            ("investigator", [200, 200, 200]),
            ("member", [404, 404, 404]),
            ("viewer_aggregate", [404, 404, 404]),
            ("team_lead", [200, 200, 200]),
            ("eval_engineer", [404, 404, 404]),
        ],
    );

    // A millisecond before the end the grant still works; at the end it does not.
    world.running.clock.advance_ms(3_600_000 - 1);
    check("other, grant in its last millisecond", &[("investigator", [200, 200, 200])]);
    world.running.clock.advance_ms(1);
    check(
        "other with expired grant",
        &[
            ("admin", [404, 404, 404]),
            ("investigator", [404, 404, 404]),
            ("member", [404, 404, 404]),
            ("viewer_aggregate", [404, 404, 404]),
            ("team_lead", [200, 200, 200]),
            ("eval_engineer", [404, 404, 404]),
        ],
    );

    // Zero unaudited cross-user reads: one audit row per successful read of another
    // person's data, each naming the subject.
    assert_eq!(world.cross_user_audit_rows(), successful_cross_user_reads);
    let subject_id = user_id(&world.running.server.data_dir, SUBJECT);
    let conn = world.running.server.main_db();
    let about_others: i64 = conn
        .query_row(
            "SELECT count(*) FROM audit_log WHERE action IN ('GRANT_USED', 'SESSION_READ', 'TRANSCRIPT_READ')
               AND (subject_user_id IS NOT ?1 OR target IS NOT ?2)",
            [&subject_id, &subject_session],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(about_others, 0);

    // The subject sees all of it: the reads, and the grants (now expired).
    let (status, audit) = get_as(&format!("{}/api/me/audit", world.web()), &world.subject);
    assert_eq!(status, 200);
    let actions: Vec<&str> =
        audit["entries"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    for action in ["GRANT_REQUESTED", "GRANT_APPROVED", "GRANT_USED", "SESSION_READ", "TRANSCRIPT_READ"] {
        assert!(actions.contains(&action), "{action} missing from {actions:?}");
    }
    let (_, mine) = get_as(&format!("{}/api/me/grants", world.web()), &world.subject);
    let states: Vec<&str> = mine["grants"].as_array().unwrap().iter().map(|g| g["state"].as_str().unwrap()).collect();
    assert_eq!(states, vec!["expired", "expired"]);
}

#[test]
fn grants_need_a_different_admin_and_end_when_denied_or_revoked() {
    let (_temp, world) = world();
    let request = |token: &str, body: Value| post_as(&format!("{}/api/grants", world.web()), token, &body);
    let session_scope = json!({"subject": SUBJECT, "session_id": world.subject_session,
        "justification": "incident 4411: leaked key in a session", "duration_hours": 2});

    // The requesting admin cannot approve their own request; the subject's own admin
    // rights do not matter either.
    let (status, grant) = request(&world.tokens["admin"], session_scope.clone());
    let id = grant["id"].as_str().unwrap_or_else(|| panic!("the grant request answered {status}: {grant}"));
    assert_eq!(grant["scope"], "SESSION");
    let (status, body) =
        post_as(&format!("{}/api/grants/{id}/approve", world.web()), &world.tokens["admin"], &json!({}));
    assert_eq!(status, 403, "{body}");
    let (status, _) =
        post_as(&format!("{}/api/grants/{id}/approve", world.web()), &world.tokens["investigator"], &json!({}));
    assert_eq!(status, 403, "investigators do not decide grants");
    let (status, denied) = post_as(
        &format!("{}/api/grants/{id}/deny", world.web()),
        &world.approver,
        &json!({"note": "use the incident tooling"}),
    );
    assert_eq!((status, denied["status"].as_str()), (200, Some("DENIED")));
    assert_eq!(world.statuses("admin", &world.subject_session)[0], 404, "a denied grant grants nothing");
    let (status, _) = post_as(&format!("{}/api/grants/{id}/approve", world.web()), &world.approver, &json!({}));
    assert_eq!(status, 409, "a decided grant cannot be decided again");

    // Approved, used, then revoked: access ends at once.
    let (_, grant) = request(&world.tokens["investigator"], session_scope.clone());
    let id = grant["id"].as_str().unwrap();
    post_as(&format!("{}/api/grants/{id}/approve", world.web()), &world.approver, &json!({}));
    assert_eq!(world.statuses("investigator", &world.subject_session)[0], 200);
    // A session grant does not reach the subject's other sessions.
    let other = session_of(&world.running, SUBJECT, "sam-0002");
    assert_eq!(world.statuses("investigator", &other)[0], 404);
    let (status, revoked) = post_as(&format!("{}/api/grants/{id}/revoke", world.web()), &world.approver, &json!({}));
    assert_eq!((status, revoked["status"].as_str()), (200, Some("REVOKED")));
    assert_eq!(world.statuses("investigator", &world.subject_session)[0], 404);

    // Bad requests name what is wrong.
    let (status, body) = request(
        &world.tokens["investigator"],
        json!({"subject": SUBJECT, "justification": "short", "duration_hours": 1}),
    );
    assert_eq!((status, body["error"]["field"].as_str()), (400, Some("justification")));
    let (status, body) = request(
        &world.tokens["investigator"],
        json!({"subject": SUBJECT, "justification": "a long enough reason", "duration_hours": 200}),
    );
    assert_eq!((status, body["error"]["field"].as_str()), (400, Some("duration_hours")));
    let (status, _) = request(
        &world.tokens["investigator"],
        json!({"subject": "ivy@example.com", "justification": "a long enough reason", "duration_hours": 1}),
    );
    assert_eq!(status, 400, "nobody requests access to themselves");

    let conn = world.running.server.main_db();
    let count = |action: &str| -> i64 {
        conn.query_row("SELECT count(*) FROM audit_log WHERE action = ?1", [action], |row| row.get(0)).unwrap()
    };
    assert_eq!(
        (count("GRANT_REQUESTED"), count("GRANT_DENIED"), count("GRANT_APPROVED"), count("GRANT_REVOKED")),
        (2, 1, 1, 1)
    );
}

#[test]
fn an_administrator_may_lower_visibility_but_never_raise_it() {
    let (_temp, world) = world();
    let subject_id = user_id(&world.running.server.data_dir, SUBJECT);
    let patch = |token: &str, url: String, body: Value| {
        read(
            agent()
                .patch(url)
                .header("Authorization", format!("Bearer {token}"))
                .header("Content-Type", "application/json")
                .send(body.to_string()),
        )
    };
    let url = format!("{}/api/users/{subject_id}/visibility", world.web());
    let (status, body) = patch(&world.approver, url.clone(), json!({"share_transcripts": true}));
    assert_eq!(status, 403, "{body}");
    let (status, body) = patch(&world.approver, url.clone(), json!({"team_drill_in": false}));
    assert_eq!((status, body["team_drill_in"].as_bool()), (200, Some(false)));
    let (status, _) = patch(&world.tokens["member"], url.clone(), json!({"team_drill_in": false}));
    assert_eq!(status, 403, "only administrators");
    // With drill-in off, the lead no longer reaches the session.
    assert_eq!(world.statuses("team_lead", &world.subject_session), vec![404; 5]);
    // The subject may turn it back on; the defaults keep transcripts private.
    let (status, body) =
        patch(&world.subject, format!("{}/api/me/visibility", world.web()), json!({"team_drill_in": true}));
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"share_transcripts": false, "team_drill_in": true, "named_in_team_views": true, "judge_opt_in": false})
    );
    let (status, body) = patch(&world.subject, format!("{}/api/me/visibility", world.web()), json!({"nonsense": true}));
    assert_eq!(status, 422, "{body}");
}

/// The job routes: only an administrator sees and triggers jobs; a one-shot never runs
/// over HTTP, a job this build cannot run is refused (and the refusal recorded), and a
/// job with a run going answers 409.
#[test]
fn only_administrators_see_and_run_jobs() {
    let (_temp, world) = world();
    let web = world.web().to_string();
    let routes = |name: &str| {
        [
            ("GET", format!("{web}/admin/jobs")),
            ("GET", format!("{web}/admin/jobs/{name}/runs")),
            ("POST", format!("{web}/admin/jobs/{name}/run")),
        ]
    };
    for reader in &READERS {
        for (method, url) in routes("sync-jira") {
            let token = &world.tokens[reader.name];
            let (status, body) = if method == "GET" { get_as(&url, token) } else { post_as(&url, token, &json!({})) };
            let want = if reader.role == "ADMIN" { if method == "GET" { 200 } else { 202 } } else { 403 };
            assert_eq!(status, want, "{} {method} {url}: {body}", reader.name);
        }
    }
    let (status, _) = read(agent().get(&format!("{web}/admin/jobs")).call());
    assert_eq!(status, 401, "no credentials");

    let admin = &world.tokens["admin"];
    let (_, listed) = get_as(&format!("{web}/admin/jobs"), admin);
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 20, "{listed}");
    let (status, body) = post_as(&format!("{web}/admin/jobs/reconcile-cost/run"), admin, &json!({}));
    assert_eq!(status, 403, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("sightline jobs run reconcile-cost"), "{body}");
    let (status, _) = post_as(&format!("{web}/admin/jobs/no-such-job/run"), admin, &json!({}));
    assert_eq!(status, 404);

    let (status, started) = post_as(&format!("{web}/admin/jobs/run-deletions/run"), admin, &json!({}));
    assert_eq!((status, started["outcome"].as_str()), (202, Some("running")), "{started}");
    let run_id = started["run_id"].as_str().unwrap().to_string();
    common::wait_until(std::time::Duration::from_secs(10), "the triggered run ends", || {
        let (_, runs) = get_as(&format!("{web}/admin/jobs/run-deletions/runs"), admin);
        runs["runs"].as_array().unwrap().iter().any(|run| run["id"] == run_id.as_str() && run["outcome"] == "succeeded")
    });
    // The administrator's trigger ran (Jira unconfigured: a run that says so and changes
    // nothing); the others' 403s left no run.
    let mut outcomes: Vec<(String, String)> = Vec::new();
    common::wait_until(std::time::Duration::from_secs(10), "the sync-jira run ends", || {
        let (_, runs) = get_as(&format!("{web}/admin/jobs/sync-jira/runs"), admin);
        outcomes = runs["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|run| {
                (run["outcome"].as_str().unwrap().to_string(), run["summary"].as_str().unwrap_or("").to_string())
            })
            .collect();
        outcomes.iter().all(|(outcome, _)| outcome != "running")
    });
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert_eq!(outcomes[0].0, "succeeded");
    assert!(outcomes[0].1.starts_with("Jira is not configured"), "{outcomes:?}");

    // A run going (here: one written straight into the table) blocks another.
    rusqlite::Connection::open(world.running.server.data_dir.join("main.db"))
        .unwrap()
        .execute(
            "INSERT INTO job_runs (id, job, trigger, started_at_ms, outcome) VALUES ('going', 'run-deletions', 'schedule', 1, 'running')",
            [],
        )
        .unwrap();
    let (status, body) = post_as(&format!("{web}/admin/jobs/run-deletions/run"), admin, &json!({}));
    assert_eq!(status, 409, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("run going"), "{body}");

    // The reprice report runs in the server and says what it found; while an apply runs,
    // a report is refused, naming the apply.
    let (status, started) = post_as(&format!("{web}/admin/jobs/reprice-events/run"), admin, &json!({}));
    assert_eq!(status, 202, "{started}");
    common::wait_until(std::time::Duration::from_secs(10), "the report ends", || {
        let (_, runs) = get_as(&format!("{web}/admin/jobs/reprice-events/runs"), admin);
        runs["runs"][0]["outcome"] == "succeeded"
    });
    let (_, runs) = get_as(&format!("{web}/admin/jobs/reprice-events/runs"), admin);
    assert_eq!(runs["runs"][0]["summary"], "no stored cost differs under the price tables in force", "{runs}");
    assert_eq!(runs["runs"][0]["rows_touched"], 0, "{runs}");
    rusqlite::Connection::open(world.running.server.data_dir.join("main.db"))
        .unwrap()
        .execute(
            "INSERT INTO job_runs (id, job, trigger, started_at_ms, outcome) VALUES ('applying', 'reprice-events-apply', 'http', 1, 'running')",
            [],
        )
        .unwrap();
    let (status, body) = post_as(&format!("{web}/admin/jobs/reprice-events/run"), admin, &json!({}));
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        body["error"]["message"],
        "reprice-events never runs while reprice-events-apply runs, and reprice-events-apply is running (run applying)"
    );
}

/// The developer's own pages: every role opens `/me` and `/me/sessions`, and they are
/// their own (their name, their sessions); without credentials it is the login page.
#[test]
fn every_role_sees_its_own_overview_and_nobody_elses() {
    let (_temp, world) = world();
    // Everyone is "Test User" by default: name each person after their address.
    world.running.server.main_db().execute("UPDATE users SET name = email", []).unwrap();
    let no_redirects = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
    let anonymous = no_redirects.get(format!("{}/me", world.web())).call().unwrap();
    assert_eq!(anonymous.status(), 303);
    for reader in &READERS {
        let mut response = no_redirects
            .get(format!("{}/me", world.web()))
            .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
            .call()
            .unwrap();
        let html = response.body_mut().read_to_string().unwrap();
        assert_eq!(response.status(), 200, "{}: {html}", reader.name);
        let name: String = world
            .running
            .server
            .main_db()
            .query_row("SELECT name FROM users WHERE email = ?1", [reader.email], |row| row.get(0))
            .unwrap();
        assert!(html.contains(&format!("<h1>{name}: the last 30 days</h1>")), "{}: {html}", reader.name);
        let i = READERS.iter().position(|r| r.email == reader.email).unwrap();
        let mut response = no_redirects
            .get(format!("{}/me/sessions", world.web()))
            .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
            .call()
            .unwrap();
        let list = response.body_mut().read_to_string().unwrap();
        assert!(list.contains(&format!(" session own-{i}\"")), "{}: {list}", reader.name);
        for j in (0..READERS.len()).filter(|j| *j != i) {
            assert!(!list.contains(&format!(" session own-{j}\"")), "{} lists another's session", reader.name);
        }
        assert!(!list.contains("sam-0001"), "{} lists the subject's session", reader.name);
        // The search page searches my own transcripts only (tests/transcripts_search.rs
        // proves the scope); every role may open it.
        let status = no_redirects
            .get(format!("{}/me/search?q=anything", world.web()))
            .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
            .call()
            .unwrap()
            .status();
        assert_eq!(status, 200, "{} opens /me/search", reader.name);
        let status = no_redirects
            .get(format!("{}/me/prs", world.web()))
            .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
            .call()
            .unwrap()
            .status();
        assert_eq!(status, 200, "{} opens /me/prs", reader.name);
        let status = no_redirects
            .get(format!("{}/me/runs", world.web()))
            .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
            .call()
            .unwrap()
            .status();
        assert_eq!(status, 200, "{} opens /me/runs", reader.name);
        // The GitHub App's receiver takes no person's credentials, only GitHub's signature.
        let (status, _) = common::read(
            no_redirects
                .post(format!("{}/github/webhooks", world.running.server.github))
                .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
                .header("X-GitHub-Event", "pull_request")
                .header("X-GitHub-Delivery", "matrix")
                .send("{}"),
        );
        assert_eq!(status, 401, "{} at /github/webhooks", reader.name);
        let status = no_redirects
            .get(format!("{}/me/insights", world.web()))
            .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
            .call()
            .unwrap()
            .status();
        assert_eq!(status, 200, "{} opens /me/insights", reader.name);
        let status = no_redirects
            .get(format!("{}/me/settings", world.web()))
            .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
            .call()
            .unwrap()
            .status();
        assert_eq!(status, 200, "{} opens /me/settings", reader.name);
        // The old address of a session page sends everyone to the one address, where the
        // matrix above decides (`statuses`).
        for tail in ["", "/transcript"] {
            let response = no_redirects
                .get(format!("{}/me/sessions/{}{tail}?after=x", world.web(), world.subject_session))
                .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
                .call()
                .unwrap();
            assert_eq!(response.status(), 308, "{}", reader.name);
            let location = response.headers()["location"].to_str().unwrap().to_string();
            assert_eq!(location, format!("/sessions/{}{tail}?after=x", world.subject_session));
        }
        // Nor may anyone give feedback on it, or flip its sharing switch.
        for (path, body) in [("feedback", "thumbs=down"), ("sharing", "transcript=share")] {
            let (status, _) = common::read(
                no_redirects
                    .post(format!("{}/me/sessions/{}/{path}", world.web(), world.subject_session))
                    .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
                    .content_type("application/x-www-form-urlencoded")
                    .send(body),
            );
            assert_eq!(status, 404, "{} posts {path} on the subject's session", reader.name);
        }
        let own = &world.own_sessions[reader.name];
        let status = no_redirects
            .get(format!("{}/sessions/{own}", world.web()))
            .header("Authorization", format!("Bearer {}", world.tokens[reader.name]))
            .call()
            .unwrap()
            .status();
        assert_eq!(status, 200, "{} opens their own session", reader.name);
        for other in READERS.iter().filter(|other| other.email != reader.email) {
            let other_name: String = world
                .running
                .server
                .main_db()
                .query_row("SELECT name FROM users WHERE email = ?1", [other.email], |row| row.get(0))
                .unwrap();
            assert!(!html.contains(&format!("<h1>{other_name}:")), "{} sees {}", reader.name, other.name);
        }
    }
}

/// Every team and organisation route against every role. A team's pages open for the
/// roles that see every team, for its lead (the parent's lead too) and its members, and
/// are a 404 for anyone else. One person was active in the teams here, fewer than the
/// minimum group size: no role sees a figure of theirs on any team page, and no role gets
/// a CSV of one. Members are listed one by one only to whom they may be (themself, their
/// lead with drill-in on), each such view audited; `VIEWER_AGGREGATE` never sees a list.
/// Every `/org` page opens for every role (their figures: `tests/team_org_pages.rs`).
#[test]
fn every_role_against_the_team_and_organisation_pages() {
    let (_temp, world) = world();
    let no_redirects = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
    let open = |token: &str, path: &str| {
        let mut response = no_redirects
            .get(format!("{}{path}", world.web()))
            .header("Authorization", format!("Bearer {token}"))
            .call()
            .unwrap();
        (response.status().as_u16(), response.body_mut().read_to_string().unwrap_or_default())
    };
    let anonymous = no_redirects.get(format!("{}/org", world.web())).call().unwrap();
    assert_eq!(anonymous.status(), 303, "not signed in: the login page");
    let subject_id = user_id(&world.running.server.data_dir, SUBJECT);
    let member_viewed = || -> i64 {
        let conn = world.running.server.main_db();
        conn.query_row(
            "SELECT count(*) FROM audit_log WHERE action = 'MEMBER_VIEWED' AND subject_user_id = ?1",
            [&subject_id],
            |row| row.get(0),
        )
        .unwrap()
    };
    // Guarded team pages, with a table of each for the CSV.
    let guarded = [
        ("", "agents"),
        ("/adoption", "summary"),
        ("/tools", "tools"),
        ("/tool-servers", "servers"),
        ("/agents", "agents"),
        ("/skills", "skills"),
    ];
    // (reader, /team/shop, /team/shop-payments, sees the subject one by one)
    let expected = [
        ("admin", 200, 200, false),
        ("investigator", 200, 200, false),
        ("member", 404, 404, false),
        ("viewer_aggregate", 200, 200, false),
        ("team_lead", 200, 200, true),
    ];
    let mut readers: Vec<(&str, &str, u16, u16, bool)> = expected
        .iter()
        .map(|(name, shop, payments, sees)| (*name, world.tokens[name].as_str(), *shop, *payments, *sees))
        .collect();
    readers.push(("subject (a member of shop-payments)", world.subject.as_str(), 404, 200, true));
    for (name, token, shop, payments, sees_subject) in readers {
        assert_eq!(open(token, "/team").0, 200, "{name} opens /team");
        for (slug, status) in [("shop", shop), ("shop-payments", payments)] {
            for (page, table) in guarded {
                let path = format!("/team/{slug}{page}");
                let (got, html) = open(token, &path);
                assert_eq!(got, status, "{name} opens {path}");
                if status == 200 {
                    assert!(html.contains("figures are shown only for groups of at least 5 people"), "{name} {path}");
                    // The organisation's figures of the same page are offered beside the notice.
                    let org = format!("href=\"/org{page}?days=30\"");
                    assert!(html.contains(&org), "{name} {path}: {org}");
                    assert!(!html.contains("<table>"), "{name} {path}: no table of a group of one");
                }
                let (got, _) = open(token, &format!("{path}?format=csv&table={table}"));
                assert_eq!(got, if status == 200 { 403 } else { 404 }, "{name}: the CSV of {path}");
            }
            assert_eq!(open(token, &format!("/team/{slug}/roster")).0, status, "{name}: roster of {slug}");
            // Months are withheld month by month, never by the page: it opens as the team does.
            let (got, html) = open(token, &format!("/team/{slug}/months"));
            assert_eq!(got, status, "{name}: months of {slug}");
            if status == 200 {
                assert!(html.contains("Month by month") && !html.contains("past the budget"), "{name}");
            }
            let before = member_viewed();
            let (got, html) = open(token, &format!("/team/{slug}/sessions"));
            assert_eq!(got, status, "{name}: sessions of {slug}");
            if status == 200 {
                let listed = html.contains(&format!("/team/{slug}/members/{subject_id}"));
                assert_eq!(listed, sees_subject, "{name}: the subject listed one by one on {slug}");
                if name == "viewer_aggregate" {
                    assert!(html.contains("Your role sees aggregates only"), "{name}");
                }
                let audited = member_viewed() - before;
                let expected_rows = i64::from(sees_subject && !name.starts_with("subject"));
                assert_eq!(audited, expected_rows, "{name}: MEMBER_VIEWED rows for the sessions of {slug}");
            }
            let (got, html) = open(token, &format!("/team/{slug}/pulls"));
            assert_eq!(got, status, "{name}: pull requests of {slug}");
            if status == 200 {
                assert!(html.contains("figures are shown only for groups of at least 5 people"), "{name}");
            }
            let drill_in = format!("/team/{slug}/members/{subject_id}");
            let want = if status == 200 && sees_subject { 200 } else { 404 };
            let before = member_viewed();
            let (got, html) = open(token, &drill_in);
            assert_eq!(got, want, "{name} opens {drill_in}");
            if want == 200 {
                assert!(html.contains("Figures"), "{name}: {drill_in}");
                let audited = member_viewed() - before;
                assert_eq!(audited, i64::from(!name.starts_with("subject")), "{name}: {drill_in} audited");
            }
            assert_eq!(open(token, &format!("/team/{slug}/members/nobody")).0, 404, "{name}: no such member");
        }
        assert_eq!(open(token, "/team/shop/nonsense").0, 404, "{name}: no such team page");
        for page in [
            "",
            "/adoption",
            "/delivery",
            "/benchmarks",
            "/teams",
            "/search",
            "/tools",
            "/tool-servers",
            "/skills",
            "/agents",
            "/models",
            "/governance",
            "/roi",
            "/security",
            "/knowledge",
            "/months",
        ] {
            let path = format!("/org{page}");
            let (got, html) = open(token, &path);
            assert_eq!(got, 200, "{name} opens {path}");
            assert!(!html.contains("<td>shop</td>"), "{name} {path}: a team of one is not shown alone");
            assert!(!html.contains(">shop</a></td>"), "{name} {path}: a team of one is not shown alone");
        }
        // No aggregate has been refreshed in this world: the organisation had no active
        // person in the period either, so its figures are refused as CSV too.
        assert_eq!(open(token, "/org/teams?format=csv&table=all-teams").0, 403, "{name}");
        assert_eq!(open(token, "/org/adoption?days=14").0, 400, "{name}: an unknown period");
        assert_eq!(open(token, "/org/nonsense").0, 404, "{name}: no such organisation page");
    }
}

/// `/org/search` finds another person's transcript only once they share it, and only for
/// a reader who may open their sessions (here their team lead); each hit shown is an
/// audited transcript read. An administrator without a grant and `VIEWER_AGGREGATE` find
/// only their own.
#[test]
fn organisation_search_covers_shared_transcripts_the_reader_may_open() {
    let (_temp, world) = world();
    let search = |reader: &str| {
        let (status, body) = get_text(&format!("{}/org/search?q=ledger", world.web()), &world.tokens[reader]);
        assert_eq!(status, 200, "{reader}");
        body
    };
    let subject_session = world.subject_session.clone();
    let transcript_reads = || -> i64 {
        world
            .running
            .server
            .main_db()
            .query_row(
                "SELECT count(*) FROM audit_log WHERE action = 'TRANSCRIPT_READ' AND target = ?1",
                [&subject_session],
                |r| r.get(0),
            )
            .unwrap()
    };
    for reader in ["admin", "team_lead", "viewer_aggregate"] {
        let html = search(reader);
        assert!(html.contains("your claude_code session"), "{reader} finds their own: {html}");
        assert!(!html.contains(&subject_session), "{reader}: not shared yet");
    }
    let (status, _) = read(
        agent()
            .patch(format!("{}/api/me/visibility", world.web()))
            .header("Authorization", format!("Bearer {}", world.subject))
            .header("Content-Type", "application/json")
            .send(json!({"share_transcripts": true}).to_string()),
    );
    assert_eq!(status, 200);
    assert_eq!(transcript_reads(), 0);
    assert!(search("team_lead").contains(&subject_session), "the lead finds the shared transcript");
    assert_eq!(transcript_reads(), 1, "the hit shown is an audited transcript read");
    assert!(!search("admin").contains(&subject_session), "no grant, no drill-in: not found");
    let viewer = search("viewer_aggregate");
    assert!(!viewer.contains(&subject_session));
    assert!(viewer.contains("Your role sees aggregates only"));
    assert_eq!(transcript_reads(), 1);
}

fn get_text(url: &str, token: &str) -> (u16, String) {
    let mut response = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent()
        .get(url)
        .header("Authorization", format!("Bearer {token}"))
        .call()
        .unwrap();
    (response.status().as_u16(), response.body_mut().read_to_string().unwrap_or_default())
}

/// The eval dashboard's routes: the eval engineers' role only, every other role refused
/// by name (403), whatever it may read elsewhere.
#[test]
fn every_role_against_the_eval_routes() {
    let (_temp, world) = world();
    for reader in &READERS {
        let token = &world.tokens[reader.name];
        for path in ["/api/evals/cells/h__m__t__r0?run=nightly", "/api/evals/runs/nightly"] {
            let (status, body) = get_as(&format!("{}{path}", world.web()), token);
            let want = if reader.role == "EVAL_ENGINEER" { 200 } else { 403 };
            assert_eq!(status, want, "{} {path}: {body}", reader.name);
            if want == 403 {
                assert!(body.to_string().contains("EVAL_ENGINEER"), "{body}");
            } else {
                assert_eq!(body["sessions"], json!([]), "no session is linked: {body}");
            }
        }
    }
    assert_eq!(world.cross_user_audit_rows(), 0);
}

//! An eval cell and the agent session behind it, end to end: a stand-in harness runs the
//! real hook for a few cells of a run with `SIGHTLINE_EVAL_CELL`, `SIGHTLINE_EVAL_RUN`
//! (and, for a multi-phase cell, `SIGHTLINE_EVAL_PHASE`) set, on a machine signed in with
//! an EVAL-only token; it writes a `results.db`; the eval dashboard, given the platform's
//! address and an eval engineer's eval token, shows each cell's session with its trace and
//! transcript, and flags the cell whose harness cost is wrong. Only the eval engineers'
//! role reads those sessions, every read is audited, and a person's own sessions never
//! show.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::machine::{client, replay_as};
use common::results::{CellSpec, create, insert};
use common::{BIN, TestServer, access_token, add_user, agent, read, sightline, stderr, stdout};
use serde_json::{Value, json};

const RUN: &str = "nightly-2026-11-27";
const WRONG_COST: &str = "claude-code__claude-sonnet-4-5__login-500__r0";
const RIGHT_COST: &str = "claude-code__claude-sonnet-4-5__login-500__r1";
const PHASED: &str = "claude-code__claude-sonnet-4-5__django__django-11099__r0";

fn token(server: &TestServer, args: &[&str]) -> String {
    let mut full = vec!["token", "create", "--data-dir", server.data_dir.to_str().unwrap()];
    full.extend(args);
    let out = sightline(&full);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out).trim().to_string()
}

struct Dashboard(Child, String);

impl Drop for Dashboard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The dashboard's own sign-in: it shows the eval engineer's reads to whoever passes it.
const DASHBOARD_TOKEN: &str = "eval-dashboard-token-0123456789";

fn dashboard(db: &std::path::Path, platform: &str, eval_token: &str) -> Dashboard {
    let mut child = Command::new(BIN)
        .args(["dashboard", "--db", db.to_str().unwrap(), "--port", "0", "--platform-url", platform])
        .env("SIGHTLINE_DASHBOARD_TOKEN", DASHBOARD_TOKEN)
        .env("SIGHTLINE_PLATFORM_TOKEN", eval_token)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let base = line.split_whitespace().nth(1).unwrap().trim_end_matches('/').to_string();
    Dashboard(child, base)
}

fn page(url: &str) -> (u16, String) {
    let mut response = agent().get(url).header("Authorization", format!("Bearer {DASHBOARD_TOKEN}")).call().unwrap();
    (response.status().as_u16(), response.body_mut().read_to_string().unwrap())
}

fn get_as(url: &str, token: &str) -> (u16, Value) {
    read(agent().get(url).header("Authorization", format!("Bearer {token}")).call())
}

#[test]
fn the_dashboards_cell_page_shows_the_agent_session_a_harness_linked_to_it() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "harness@example.com", "MEMBER");
    add_user(&server.data_dir, "eve@example.com", "EVAL_ENGINEER");
    add_user(&server.data_dir, "max@example.com", "MEMBER");
    let hook_token = token(&server, &["--user", "harness@example.com", "--kind", "hook", "--run-kind", "eval"]);
    let eval_token = token(&server, &["--user", "eve@example.com", "--kind", "eval"]);
    // An eval token is an eval engineer's only, refused by name for anyone else.
    let refused = sightline(&[
        "token",
        "create",
        "--data-dir",
        server.data_dir.to_str().unwrap(),
        "--user",
        "max@example.com",
        "--kind",
        "eval",
    ]);
    assert!(!refused.status.success() && stderr(&refused).contains("not EVAL_ENGINEER"), "{}", stderr(&refused));

    // The stand-in harness: one machine signed in with the EVAL-only token runs the agent
    // for each cell (the Claude Code fixture session), naming the cell, run and phase.
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let work = tempfile::tempdir().unwrap();
    assert!(client(home, &["login", "--server", &server.ingest, "--token", &hook_token], None).status.success());
    let cells: [(&str, &str, Option<&str>); 4] = [
        ("cell-wrong-0000-0000-000000000001", WRONG_COST, None),
        ("cell-right-0000-0000-000000000002", RIGHT_COST, None),
        ("cell-phase-0000-0000-000000000003", PHASED, Some("implement")),
        ("cell-phase-0000-0000-000000000004", PHASED, Some("review")),
    ];
    for (session, cell, phase) in cells {
        let mut env = vec![("SIGHTLINE_EVAL_CELL", cell), ("SIGHTLINE_EVAL_RUN", RUN)];
        if let Some(phase) = phase {
            env.push(("SIGHTLINE_EVAL_PHASE", phase));
        }
        replay_as(home, "claude_code", work.path(), Some(session), &env);
        let flushed = client(home, &["flusher", "--once"], None);
        assert!(flushed.status.success(), "{}", stderr(&flushed));
    }
    let db = server.main_db();
    let cost_of = |session: &str| -> f64 {
        let nusd: i64 = db
            .query_row("SELECT cost_nusd FROM sessions WHERE agent_session_id = ?1", [session], |row| row.get(0))
            .unwrap();
        nusd as f64 / 1e9
    };
    let sightline_cost = cost_of("cell-right-0000-0000-000000000002");
    assert!(sightline_cost > 0.0);
    let linked: i64 = db
        .query_row("SELECT count(*) FROM sessions WHERE run_kind = 'EVAL' AND eval_run = ?1", [RUN], |row| row.get(0))
        .unwrap();
    assert_eq!(linked, 4);

    // The harness's results: one cell priced right, one priced at ten times, one in two phases.
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.db");
    let conn = create(&results);
    for (repeat, cost) in [(0, sightline_cost * 10.0), (1, sightline_cost)] {
        let spec = CellSpec {
            harness: "claude-code",
            model: "claude-sonnet-4-5",
            task: "login-500",
            repeat,
            track: "swe",
            success: 1.0 - repeat as f64,
            error: (repeat == 0).then_some("the login test still fails"),
            cost,
        };
        insert(&conn, RUN, &spec);
    }
    let spec = CellSpec {
        harness: "claude-code",
        model: "claude-sonnet-4-5",
        task: "django__django-11099",
        repeat: 0,
        track: "multi_phase",
        success: 1.0,
        error: None,
        cost: sightline_cost * 2.0,
    };
    insert(&conn, RUN, &spec);
    let phases = json!({"phases": [
        {"name": "implement", "model": "claude-sonnet-4-5", "total_cost": sightline_cost},
        {"name": "review", "model": "claude-sonnet-4-5", "total_cost": sightline_cost * 3.0},
    ], "review_model": "claude-sonnet-4-5"});
    conn.execute(
        "UPDATE run_results SET harness_metadata = ?1 WHERE cell_id = ?2",
        [phases.to_string(), PHASED.into()],
    )
    .unwrap();
    drop(conn);

    // Without its own sign-in the dashboard would show the agents' transcripts to anyone
    // who reaches it: with a platform, it refuses to start without a token.
    let open = Command::new(BIN)
        .args(["dashboard", "--db", results.to_str().unwrap(), "--port", "0", "--platform-url", &server.web])
        .env_remove("SIGHTLINE_DASHBOARD_TOKEN")
        .env("SIGHTLINE_PLATFORM_TOKEN", &eval_token)
        .output()
        .unwrap();
    assert!(!open.status.success() && stderr(&open).contains("SIGHTLINE_DASHBOARD_TOKEN"), "{}", stderr(&open));
    let dash = dashboard(&results, &server.web, &eval_token);
    let cell_page = |cell: &str| page(&format!("{}/run/{RUN}/cell/{cell}", dash.1));
    let (status, wrong) = cell_page(WRONG_COST);
    assert_eq!(status, 200, "{wrong}");
    assert!(wrong.contains("The agent") && wrong.contains("Session 1"), "{wrong}");
    // Its transcript (redacted, with tool calls), its trace and the turns behind it.
    assert!(wrong.contains("The login test fails with a 500"), "the transcript's first prompt: {wrong}");
    assert!(wrong.contains("calls <code>Bash</code>"), "a tool call with its input: {wrong}");
    assert!(wrong.contains("<svg") && wrong.contains("Trace of session 1"), "{wrong}");
    assert!(wrong.contains("Turn 1"), "{wrong}");
    assert!(wrong.contains("differs beyond 5 %"), "the wrong harness cost is flagged: {wrong}");
    assert!(wrong.contains("/sessions/"), "a link to the session on the platform: {wrong}");
    let (_, right) = cell_page(RIGHT_COST);
    assert!(right.contains("Session 1") && right.contains("agrees") && !right.contains("differs beyond"), "{right}");
    assert!(!right.contains("Session 2"), "one session for one cell: {right}");
    // The multi-phase cell: one session per phase against harness_metadata.phases.
    let (_, phased) = cell_page(PHASED);
    assert!(phased.contains("Session 1 · phase implement") && phased.contains("Session 2 · phase review"), "{phased}");
    assert!(phased.contains("Phases and their sessions"), "{phased}");
    assert!(phased.contains("<strong class=\"fail\">differs</strong>"), "the review phase's cost: {phased}");

    // In a browser, at a laptop's and a phone's width, light and dark: no console error,
    // nothing wider than the window, no chart label cut or overlapping.
    let browser = common::webdriver::Browser::start();
    browser.goto(&format!("{}/run/{RUN}", dash.1));
    browser.wait_for(std::time::Duration::from_secs(15), "the login form", |b| b.url().contains("/login"));
    browser.type_into("input[name=token]", DASHBOARD_TOKEN);
    browser.click("form[action='/login'] button[type=submit]");
    browser.wait_for(std::time::Duration::from_secs(15), "the run page", |b| !b.url().contains("/login"));
    let artefacts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artefacts");
    for (name, path) in [
        ("eval-cell", format!("/run/{RUN}/cell/{WRONG_COST}")),
        ("eval-phases", format!("/run/{RUN}/cell/{PHASED}")),
        ("eval-run", format!("/run/{RUN}")),
    ] {
        browser.goto(&format!("{}{path}", dash.1));
        browser.wait_for(std::time::Duration::from_secs(15), name, |b| b.find("h1").is_some());
        browser.at_each_width(name, |width| {
            for theme in ["light", "dark"] {
                browser.script(&format!("document.documentElement.dataset.theme = '{theme}';"));
                browser.screenshot(&artefacts.join(format!("{name}-{width}-{theme}.png")));
            }
        });
    }
    assert_eq!(browser.console_errors(), Vec::<String>::new(), "no console error");

    // The run page: the agents' behaviour per harness and model, beside success.
    let (status, run_page) = page(&format!("{}/run/{RUN}", dash.1));
    assert_eq!(status, 200);
    assert!(run_page.contains("The agents' behaviour") && run_page.contains("Tool calls / cell"), "{run_page}");
    assert!(
        run_page
            .contains("<td>claude-sonnet-4-5</td><td>claude-code</td><td class=\"num\">3</td><td class=\"num\">4</td>"),
        "3 cells, 4 sessions: {run_page}"
    );
    // The comparison page sets the two sides' behaviour side by side.
    let (status, compared) = page(&format!("{}/compare?a={RUN}&b={RUN}&b_harness=claude-code", dash.1));
    assert_eq!(status, 200);
    assert!(compared.contains("The agents' behaviour") && compared.contains("Step efficiency"), "{compared}");

    // The report files carry each cell's sessions.
    let out = dir.path().join("report");
    let made = Command::new(BIN)
        .args(["report", "--db", results.to_str().unwrap(), RUN, "--output", out.to_str().unwrap()])
        .env("SIGHTLINE_PLATFORM_URL", &server.web)
        .env("SIGHTLINE_PLATFORM_TOKEN", &eval_token)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(format!("{RUN}_report.json"))).unwrap()).unwrap();
    let ids_of = |cell: &str| -> usize {
        report["results"].as_array().unwrap().iter().find(|r| r["cell_id"] == cell).unwrap()["session_ids"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!((ids_of(WRONG_COST), ids_of(RIGHT_COST), ids_of(PHASED)), (1, 1, 2));
    let csv = std::fs::read_to_string(out.join(format!("{RUN}_report.csv"))).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",session_ids"), "{csv}");
    let html = std::fs::read_to_string(out.join(format!("{RUN}_report.html"))).unwrap();
    assert!(html.contains(&format!("href=\"{}/sessions/", server.web)), "{html}");

    // Every read was the eval engineer's, audited per owner, with the sessions named.
    let audited: Vec<String> = db
        .prepare("SELECT detail FROM audit_log WHERE action = 'TRANSCRIPT_READ'")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // Three cell pages read directly and two in the browser: one row each (one owner).
    assert_eq!(audited.len(), 5, "one row per cell page read: {audited:?}");
    assert!(audited.iter().all(|detail| detail.contains("eval_engineer")), "{audited:?}");

    // The API: only the eval engineers' role; a bad cell id is named.
    let cell_api = format!("{}/api/evals/cells/{WRONG_COST}?run={RUN}", server.web);
    let (status, body) = get_as(&cell_api, &access_token(&server, "max@example.com"));
    assert_eq!(status, 403, "{body}");
    assert!(body.to_string().contains("EVAL_ENGINEER"), "{body}");
    let (status, body) = get_as(&cell_api, &access_token(&server, "eve@example.com"));
    assert_eq!((status, body["sessions"].as_array().map(Vec::len)), (200, Some(1)), "{body}");
    let (status, body) = get_as(&format!("{}/api/evals/cells/login-500?run={RUN}", server.web), &eval_token);
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("cell_id"), "{body}");
    // The run's figures, per session, for the run and comparison pages.
    let (status, body) = get_as(&format!("{}/api/evals/runs/{RUN}", server.web), &eval_token);
    assert_eq!((status, body["sessions"].as_array().map(Vec::len)), (200, Some(4)), "{body}");
    assert!(body["sessions"][0]["behaviour"]["step_efficiency"].is_number(), "{body}");
    // An eval token is nothing else: not an access token.
    let session_id = body["sessions"][0]["id"].as_str().unwrap().to_string();
    let (status, _) = get_as(&format!("{}/api/sessions/{session_id}", server.web), &eval_token);
    assert_eq!(status, 401);
    // Signed in, the eval engineer opens the session itself; a member does not.
    let (status, _) =
        get_as(&format!("{}/api/sessions/{session_id}", server.web), &access_token(&server, "eve@example.com"));
    assert_eq!(status, 200);
    let (status, _) =
        get_as(&format!("{}/api/sessions/{session_id}", server.web), &access_token(&server, "max@example.com"));
    assert_eq!(status, 404);
    // Its page on the platform names its cell, says on what ground it is read, and opens
    // its transcript for the eval engineer.
    let eve = access_token(&server, "eve@example.com");
    let session_page = |path: &str| {
        let mut response = agent()
            .get(format!("{}{path}", server.web))
            .header("Authorization", format!("Bearer {eve}"))
            .call()
            .unwrap();
        (response.status().as_u16(), response.body_mut().read_to_string().unwrap())
    };
    let (status, html) = session_page(&format!("/sessions/{session_id}"));
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("An evaluation run of cell") && html.contains("as an eval engineer"), "{html}");
    assert!(html.contains(&format!("/sessions/{session_id}/transcript")), "{html}");
    let (status, transcript) = session_page(&format!("/sessions/{session_id}/transcript"));
    assert_eq!(status, 200, "{transcript}");
}

/// The eval engineer reads evaluation runs linked to a cell: not a person's interactive
/// session, not an EVAL run no harness linked, and not the transcript of a linked run its
/// owner marked private. Anything else is decided as for a member: as a team lead, they
/// drill into their members' sessions.
#[test]
fn an_eval_engineer_reads_linked_evaluation_runs_only() {
    use common::transcripts::{Transcript, Turn, owner_email, upload};
    let server = TestServer::spawn();
    add_user(&server.data_dir, "eve@example.com", "EVAL_ENGINEER");
    let owner = owner_email(&server, &server.token);
    let post = |session: &str, change: &dyn Fn(&mut Value)| {
        let mut events = common::session_events(session, common::now_ms() - 60_000, 3);
        events.iter_mut().for_each(change);
        let (status, body) = server.post_events(&server.token, &common::envelope(events));
        assert_eq!(status, 200, "{body}");
    };
    post("mine-1", &|_| {});
    post("unlinked-eval", &|event| event["run_kind"] = json!("EVAL"));
    // A cell is linked by a harness machine's token (fixed to EVAL), never a person's own.
    let harness = token(&server, &["--user", "dev@example.com", "--kind", "hook", "--run-kind", "EVAL"]);
    let mut events = common::session_events("linked-eval", common::now_ms() - 60_000, 3);
    events.iter_mut().for_each(|event| event["eval"] = json!({"cell_id": "h__m__t__r0", "run_name": "nightly"}));
    let (status, body) = server.post_events(&harness, &common::envelope(events));
    assert_eq!(status, 200, "{body}");
    let turns = [Turn::User("fix the flaky test"), Turn::Assistant("done")];
    let transcript = Transcript {
        agent: "claude_code",
        session: "linked-eval",
        model: "claude-sonnet-4-5",
        start_ms: common::now_ms() - 50_000,
        turns: &turns,
    };
    let (status, body) = upload(&server, &server.token, "claude_code", "linked-eval", &transcript.text());
    assert_eq!(status, 200, "{body}");
    let eve = access_token(&server, "eve@example.com");
    let db = server.main_db();
    let id = |session: &str| -> String {
        db.query_row("SELECT id FROM sessions WHERE agent_session_id = ?1", [session], |row| row.get(0)).unwrap()
    };
    let status_of = |path: String| get_as(&format!("{}{path}", server.web), &eve).0;
    for session in ["mine-1", "unlinked-eval"] {
        assert_eq!(status_of(format!("/api/sessions/{}", id(session))), 404, "{session}");
    }
    let audited = || -> i64 { db.query_row("SELECT count(*) FROM audit_log", [], |row| row.get(0)).unwrap() };
    assert_eq!(audited(), 0);
    let linked = id("linked-eval");
    assert_eq!(status_of(format!("/api/sessions/{linked}")), 200);
    assert_eq!(status_of(format!("/api/sessions/{linked}/transcript")), 200);
    assert_eq!(audited(), 2, "each read audited");
    // Its owner marks it private: the session stays an evaluation run, its conversation theirs.
    let own = access_token(&server, &owner);
    let (status, _) =
        common::post_form(&format!("{}/me/sessions/{linked}/sharing", server.web), &own, "transcript=private");
    assert_eq!(status, 303);
    assert_eq!(status_of(format!("/api/sessions/{linked}")), 200);
    assert_eq!(status_of(format!("/api/sessions/{linked}/transcript")), 404);
    // As their team lead, the eval engineer drills into the member's sessions.
    let dir = server.data_dir.to_str().unwrap();
    for args in [
        vec!["team", "add", "--slug", "evals", "--name", "Evals", "--data-dir", dir],
        vec!["team", "add-member", "--team", "evals", "--email", owner.as_str(), "--data-dir", dir],
        vec![
            "team",
            "add-member",
            "--team",
            "evals",
            "--email",
            "eve@example.com",
            "--role",
            "lead",
            "--data-dir",
            dir,
        ],
    ] {
        let out = sightline(&args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(status_of(format!("/api/sessions/{}", id("mine-1"))), 200);
}

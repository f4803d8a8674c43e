//! `compute-trajectory-scores` on the real binary: a session sent through ingest is
//! scored from its stored events (the same values as the hand-worked Claude Code
//! fixture in `scoring::trajectory`), CI runs are never scored, a second run finds
//! nothing due, and a late event makes the session due again.

use crate::common;

use common::*;
use serde_json::{Value, json};
use sightline::hook::adapters::{self, Context};
use sightline::hook::queue::Queue;
use sightline::model::wire::{EventLimits, parse_event};
use sightline::model::{AgentType, EventType};
use sightline::scoring::commands::Commands;
use sightline::scoring::trajectory::{self, Step, TestsEvidence};
use sightline::transcripts::parse::parse;

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
                 WHERE s.agent_session_id = 's-debug' AND sc.scorer_version = '2' ORDER BY sc.scorer_name",
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
    let html = page(&format!("/sessions/{id}"));
    // Scores in words: the plain name (scorer and version on hover), the value said.
    assert!(
        html.contains(
            "<td><abbr title=\"friction version 2\">Friction</abbr></td><td>37.8 of 100 (higher: more friction)</td>"
        ),
        "{html}"
    );
    assert!(
        html.contains("<td><abbr title=\"step_efficiency version 2\">Productive tool calls</abbr></td><td>38% of tool calls (debugging)</td>"),
        "{html}"
    );
    assert!(!html.contains("<th>Version</th>"), "no version column: {html}");
    let html = page("/me/insights");
    assert!(html.contains("<tr><td>Mean friction (0–100)</td><td>37.8</td><td>—</td></tr>"), "{html}");
    assert!(html.contains(&format!("href=\"/sessions/{id}\"")), "linked to the session: {html}");
    // Efficiency within its shape, linked to the period's sessions of that shape.
    let shape_link = html
        .split("<a href=\"/me/sessions?shape=debugging&#38;")
        .nth(1)
        .unwrap_or_else(|| panic!("a shape line: {html}"));
    assert!(
        shape_link.contains("sort=friction\">debugging</a></td><td>1</td><td>38%</td><td>—</td><td>0</td><td>—</td>"),
        "{html}"
    );
    let listed = page("/me/sessions?shape=debugging&sort=friction");
    assert!(listed.contains(&format!("href=\"/sessions/{id}\"")), "{listed}");
    assert!(!page("/me/sessions?shape=feature").contains(&format!("href=\"/sessions/{id}\"")));

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
    assert_eq!(post_form(&url, &owner, &body), (303, Some(format!("/sessions/{id}#feedback"))));

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
        .get(&format!("{}/sessions/{id}", server.web))
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

/// The steps the real adapter makes of a fixture's tool hook lines (as `sightline hook`
/// would send them), for the agent's shell calls to be looked up in its transcript.
fn tool_steps(agent: AgentType, hooks: &str, dir: &std::path::Path) -> Vec<Step> {
    let mut queue = Queue::open(&dir.join("queue.db")).unwrap();
    let mut steps = Vec::new();
    for line in hooks.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let Some(hook_event) = record["event"].as_str().filter(|e| e.contains("Tool")) else { continue };
        let payload = record["payload"]
            .to_string()
            .replace("${CWD}", dir.to_str().unwrap())
            .replace("${TRANSCRIPT}", dir.join("absent.jsonl").to_str().unwrap());
        let payload: Value = serde_json::from_str(&payload).unwrap();
        let tx = queue.begin().unwrap();
        let events = adapters::map(agent, hook_event, &payload, &mut Context { now_ms: now_ms(), state: &tx }).unwrap();
        tx.commit().unwrap();
        for event in events {
            let raw = serde_json::value::to_raw_value(&event).unwrap();
            let parsed = parse_event(&raw, &EventLimits::default(), now_ms()).unwrap();
            steps.push(Step::of(&parsed.event));
        }
    }
    steps
}

/// Each finished shell call's verdict read from the transcript (None: not found there).
fn shell_verdicts(steps: &[Step], commands: &Commands) -> Vec<Option<bool>> {
    steps
        .iter()
        .filter(|s| s.kind == EventType::ToolEnd)
        .filter_map(|s| s.tool.as_ref())
        .filter(|t| t.action == "exec")
        .map(|t| commands.runs_tests(t.use_id.as_deref(), t.input.as_ref()))
        .collect()
}

/// The real Claude Code and Codex fixtures: every shell call the hook reports is found in
/// the transcript the agent wrote (by its call id), and judged by its command line.
#[test]
fn shell_calls_are_found_in_the_real_agents_transcripts() {
    for (agent, expected) in [
        // `cargo test login -- --nocapture`.
        (AgentType::ClaudeCode, vec![Some(true)]),
        // `rg -n "fn parse_header" src`, `cargo test -p widget-parser` (failed), and the
        // subagent's `rg`: its calls are in the subagent's own rollout, not this one, so
        // it is not found (and is judged by its program's name).
        (AgentType::Codex, vec![Some(false), Some(true), None]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let fixtures =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents").join(agent.as_str());
        let steps = tool_steps(agent, &std::fs::read_to_string(fixtures.join("hooks.jsonl")).unwrap(), dir.path());
        let transcript = std::fs::read_to_string(fixtures.join("transcript.jsonl")).unwrap();
        let commands = Commands::of_transcript(&parse(agent.as_str(), &transcript));
        assert_eq!(shell_verdicts(&steps, &commands), expected, "{agent:?}");
    }
}

/// Gemini CLI gives no call id: its shell call is found by the digest of its input. After
/// the last edit the agent ran `npm run build`: the event says only `npm`, a test runner's
/// program, so without the transcript the session counts as tested; with it, it does not,
/// until `npm test` runs.
#[test]
fn a_build_after_the_last_edit_is_not_a_test_run_once_the_transcript_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let session = "3f9c2a71-5b8e-4d16-9a0c-7e21d4b6f853";
    let hook = |event: &str, tool: &str, input: Value| {
        let mut payload = json!({"session_id": session, "transcript_path": "${TRANSCRIPT}", "cwd": "${CWD}",
            "hook_event_name": event, "timestamp": "2026-05-20T10:15:13.236Z", "tool_name": tool, "tool_input": input});
        if event == "AfterTool" {
            payload["tool_response"] = json!({"llmContent": "done", "returnDisplay": ""});
        }
        json!({"event": event, "payload": payload}).to_string()
    };
    let edit = json!({"file_path": "src/parser.ts", "old_string": "a", "new_string": "b"});
    let build = json!({"command": "npm run build", "description": "Build the package"});
    let test = json!({"command": "npm test -- parser", "description": "Run the parser tests"});
    let mut hooks = [hook("BeforeTool", "replace", edit.clone()), hook("AfterTool", "replace", edit.clone())];
    let mut lines: Vec<String> = hooks.to_vec();
    lines.extend([
        hook("BeforeTool", "run_shell_command", build.clone()),
        hook("AfterTool", "run_shell_command", build.clone()),
    ]);
    let record = |id: &str, name: &str, args: &Value| {
        json!({"id": format!("m-{id}"), "timestamp": "2026-05-20T10:15:13.100Z", "type": "gemini", "content": "",
               "model": "gemini-2.5-pro", "toolCalls": [{"id": id, "name": name, "args": args, "status": "success",
               "timestamp": "2026-05-20T10:15:13.240Z"}]})
        .to_string()
    };
    let transcript =
        [record("replace-1", "replace", &edit), record("run_shell_command-2", "run_shell_command", &build)];
    let built = tool_steps(AgentType::GeminiCli, &lines.join("\n"), dir.path());
    let commands = Commands::of_transcript(&parse("gemini_cli", &transcript.join("\n")));

    let events_only = trajectory::score(built.clone());
    assert_eq!((events_only.tests_before_merge, events_only.tests_evidence), (Some(true), TestsEvidence::ProgramName));
    let with_transcript = trajectory::score_with(built.clone(), &commands);
    assert_eq!(
        (with_transcript.tests_before_merge, with_transcript.tests_evidence),
        (Some(false), TestsEvidence::Transcript)
    );

    hooks =
        [hook("BeforeTool", "run_shell_command", test.clone()), hook("AfterTool", "run_shell_command", test.clone())];
    lines.extend(hooks);
    let tested = tool_steps(AgentType::GeminiCli, &lines.join("\n"), tempfile::tempdir().unwrap().path());
    let transcript =
        [transcript[0].clone(), transcript[1].clone(), record("run_shell_command-3", "run_shell_command", &test)];
    let commands = Commands::of_transcript(&parse("gemini_cli", &transcript.join("\n")));
    let t = trajectory::score_with(tested, &commands);
    assert_eq!((t.tests_before_merge, t.tests_evidence), (Some(true), TestsEvidence::Transcript));
}

/// The one-shot scoring jobs on the real binary: each runs to completion, and a rescoring
/// leaves no score of an older scorer version behind (trajectory and effectiveness alike),
/// while people's own answers stay whatever their rubric's version.
#[test]
fn one_shot_rescoring_jobs_run_and_sweep_older_scorer_versions() {
    let mut server = TestServer::spawn();
    let now = now_ms();
    assert_eq!(
        server.post_events(&server.token, &envelope(debugging("one-shot", now - 3_600_000, "INTERACTIVE"))).0,
        200
    );
    server.terminate();
    let conn = server.main_db();
    let session: String = conn.query_row("SELECT id FROM sessions LIMIT 1", [], |r| r.get(0)).unwrap();
    for (scorer, source) in [("effectiveness", "OUTCOME"), ("friction", "HEURISTIC"), ("feedback_done", "HUMAN")] {
        conn.execute(
            "INSERT INTO scores (subject_type, subject_id, scorer_name, scorer_version, value, source, created_at_ms)
             VALUES ('session', ?1, ?2, '0', 0.5, ?3, 0)",
            [&session, scorer, source],
        )
        .unwrap();
    }
    let old = |scorer: &str| -> i64 {
        conn.query_row("SELECT count(*) FROM scores WHERE scorer_name = ?1 AND scorer_version = '0'", [scorer], |r| {
            r.get(0)
        })
        .unwrap()
    };
    let data_dir = server.data_dir.to_str().unwrap().to_string();
    for job in ["compute-effectiveness-backfill", "rescore-effectiveness", "rescore-trajectory"] {
        let output = sightline(&["jobs", "run", "--data-dir", &data_dir, job]);
        assert!(output.status.success(), "{job}: {}", stderr(&output));
        if job == "compute-effectiveness-backfill" {
            assert_eq!(old("effectiveness"), 1, "a backfill is not a rescoring: nothing swept");
        }
    }
    assert_eq!((old("effectiveness"), old("friction")), (0, 0), "no older version outlives a rescoring");
    assert_eq!(old("feedback_done"), 1, "a person's answer stays");
    let scored: i64 = conn
        .query_row("SELECT count(*) FROM scores WHERE subject_id = ?1 AND scorer_name = 'friction'", [&session], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(scored, 1, "rescore-trajectory scored the session again under the current version");
}

/// A page as `access` reads it: status and body.
fn get_page(url: &str, access: &str) -> (u16, String, ()) {
    let mut answer = agent()
        .get(url)
        .header("Authorization", format!("Bearer {access}"))
        .config()
        .http_status_as_error(false)
        .build()
        .call()
        .unwrap();
    (answer.status().as_u16(), answer.body_mut().read_to_string().unwrap(), ())
}

/// A session that asked one question: a prompt, one read, the end.
fn question(session: &str, t0: i64) -> Vec<Value> {
    let mut events = vec![event("session_start", session, t0), event("prompt_submit", session, t0 + 1)];
    events.push(call(session, t0 + 10, "Read", "read", "README.md", "{\"file_path\":\"README.md\"}", "success"));
    events.push(event("session_end", session, t0 + 20));
    for e in &mut events {
        e["run_kind"] = json!("INTERACTIVE");
    }
    events
}

/// Each score reads in context: the organisation's middle half of the last 90 days (shown
/// once it covers the minimum group) and, to the owner only, their own median; a team
/// lead reading the same session sees the band and never the person's usual.
#[test]
fn a_sessions_scores_read_against_the_owners_usual_and_the_organisations_middle_half() {
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_ANALYTICS_MIN_GROUP_SIZE", "2")]);
    let bo = user_with_token(&server.data_dir, "bo@example.com");
    let t0 = now_ms() - 3_600_000;
    let mut mine = Vec::new();
    for i in 0..3 {
        mine.extend(debugging(&format!("d-{i}"), t0 + i * 1_000, "INTERACTIVE"));
    }
    for i in 0..2 {
        mine.extend(question(&format!("q-{i}"), t0 + 10_000 + i * 1_000));
    }
    assert_eq!(server.post_events(&server.token, &envelope(mine)).0, 200);
    let mut theirs = question("bo-0", t0);
    theirs.extend(question("bo-1", t0 + 1_000));
    assert_eq!(server.post_events(&bo, &envelope(theirs)).0, 200);
    let out = run_job(&server);
    assert!(out.contains("7 sessions scored"), "{out}");

    let conn = server.main_db();
    let friction = |session: &str| -> f64 {
        conn.query_row("SELECT friction_score FROM sessions WHERE agent_session_id = ?1", [session], |r| r.get(0))
            .unwrap()
    };
    let (debugging_friction, question_friction) = (friction("d-0"), friction("q-0"));
    assert!(question_friction < debugging_friction, "{question_friction} < {debugging_friction}");
    let id: String =
        conn.query_row("SELECT id FROM sessions WHERE agent_session_id = 'd-0'", [], |r| r.get(0)).unwrap();

    // Seven sessions of two people: the middle half runs from a question's friction to a
    // debugging session's; my five sessions' median is a debugging session's.
    let owner = access_token(&server, "dev@example.com");
    let (status, html, _) = get_page(&format!("{}/sessions/{id}", server.web), &owner);
    assert_eq!(status, 200);
    assert!(html.contains("<th>Your usual</th><th>Organisation's middle half</th>"), "{html}");
    let row = format!(
        "<td>{debugging_friction:.1} of 100 (higher: more friction)</td><td>{debugging_friction:.1}</td><td>{question_friction:.1}–{debugging_friction:.1}</td>"
    );
    assert!(html.contains(&row), "{row} in {html}");

    // Their lead reads the same session: the organisation's band, not the person's usual.
    add_user(&server.data_dir, "lead@example.com", "MEMBER");
    let dir = server.data_dir.to_str().unwrap();
    for args in [
        &["team", "add", "--data-dir", dir, "--slug", "shop", "--name", "Shop"][..],
        &["team", "add-member", "--data-dir", dir, "--team", "shop", "--email", "dev@example.com"][..],
        &["team", "add-member", "--data-dir", dir, "--team", "shop", "--email", "lead@example.com", "--role", "lead"][..],
    ] {
        assert!(sightline(args).status.success());
    }
    let lead = access_token(&server, "lead@example.com");
    let (status, html, _) = get_page(&format!("{}/sessions/{id}", server.web), &lead);
    assert_eq!(status, 200, "{html}");
    assert!(!html.contains("Your usual") && !html.contains("your usual"), "{html}");
    let row = format!(
        "<td>{debugging_friction:.1} of 100 (higher: more friction)</td><td>{question_friction:.1}–{debugging_friction:.1}</td>"
    );
    assert!(html.contains(&row), "{row} in {html}");
}

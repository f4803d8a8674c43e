//! The hook and OTLP reporting the same session on the real binary: a tool call or a
//! model request both report (the same `tool_use_id`, `request_id`, or for Gemini CLI the
//! same response's tokens) is stored once, whichever arrives first, with what only the
//! hook knows filled in; the hook's own reports are never joined with each other.

use serde_json::Value;

use crate::common::*;
use crate::otlp::{CLAUDE_SESSION, fixture, json_of, send, session_view};

/// The hook's reports of the fixture's Bash call and first model request (the same
/// `tool_use_id` and `request_id`), at `ts_ms`, with what only the hook knows: the
/// input's digest.
fn hook_twins(ts_ms: i64) -> Vec<Value> {
    let mut tool = event("tool_end", CLAUDE_SESSION, ts_ms);
    tool["tool"]["use_id"] = Value::from("toolu_01A9bQ");
    let mut turn = event("turn_end", CLAUDE_SESSION, ts_ms + 2_000);
    turn["usage"] = serde_json::json!({"input_tokens": 1200, "output_tokens": 350, "cache_read_tokens": 9000, "cache_write_5m_tokens": 400});
    turn["metadata"] = serde_json::json!({"request_id": "req_011CVzqR8T3u1fNcP7Y6AbcD"});
    vec![event("session_start", CLAUDE_SESSION, ts_ms - 5_000), tool, turn]
}

/// The hook's report of the fixture's prompt (no id both sides share: joined by time).
fn hook_prompt(ts_ms: i64) -> Value {
    let mut prompt = event("prompt_submit", CLAUDE_SESSION, ts_ms);
    prompt.as_object_mut().unwrap().remove("response_ms");
    prompt
}

/// Posts an OTLP/JSON log export, which every record of is accepted.
fn post_logs(server: &TestServer, export: &Value) {
    let (status, _, body) = send(
        &format!("{}/v1/logs", server.ingest),
        &server.token,
        "application/json",
        &[],
        serde_json::to_vec(export).unwrap(),
    );
    assert_eq!((status, json_of(&body)), (200, serde_json::json!({})));
}

fn stored_tool(server: &TestServer, use_id: &str) -> Vec<Value> {
    let url = format!("{}/v1/me/sessions/claude_code/{CLAUDE_SESSION}/events", server.ingest);
    let (status, page) = get_auth(&url, &server.token);
    assert_eq!(status, 200, "{page}");
    page["events"].as_array().unwrap().iter().filter(|e| e["tool"]["use_id"] == use_id).cloned().collect()
}

#[test]
fn a_call_and_a_request_seen_by_the_hook_and_by_otlp_are_counted_once_in_either_order() {
    for otlp_first in [false, true] {
        let server = TestServer::spawn();
        let export = fixture("claude_code_logs");
        let first_ms = (export["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["timeUnixNano"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            / 1_000_000) as i64;
        let send_otlp = || post_logs(&server, &export);
        let send_hook = || {
            // The hook's Bash end a few seconds after OTLP's, its turn's usage at the turn's end.
            let mut events = hook_twins(first_ms + 9_000);
            events.push(hook_prompt(first_ms + 500));
            let (status, answer) = server.post_events(&server.token, &envelope(events));
            assert_eq!(status, 200, "{answer}");
            answer
        };
        let hook_answer = if otlp_first {
            send_otlp();
            send_hook()
        } else {
            let answer = send_hook();
            send_otlp();
            answer
        };
        let view = session_view(&server, "claude_code", CLAUDE_SESSION);
        let order = if otlp_first { "OTLP first" } else { "hook first" };
        assert_eq!(view["tool_call_count"], 5, "{order}: one Bash call, not two: {view}");
        assert_eq!(view["usage"]["input_tokens"], 1200, "{order}: one request's tokens, not twice: {view}");
        assert_eq!(view["prompt_count"], 1, "{order}: one prompt, joined by time: {view}");
        assert_eq!(view["event_count"], 9, "{order}: 4 hook events and 8 OTLP events, three of them one: {view}");
        if otlp_first {
            assert_eq!(hook_answer["duplicates"], 3, "{hook_answer}");
        }
        let (otlp_events, events): (i64, i64) = server
            .main_db()
            .query_row(
                "SELECT otlp_events, event_count FROM sessions WHERE agent_session_id = ?1",
                [CLAUDE_SESSION],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let expected_otlp = if otlp_first { 8 } else { 5 };
        assert_eq!((otlp_events, events), (expected_otlp, 9), "{order}: the first report of each is the one kept");
        let bash = stored_tool(&server, "toolu_01A9bQ");
        assert_eq!(bash.len(), 1, "{order}: {bash:?}");
        assert_eq!(bash[0]["tool"]["input_sha256"], "ab".repeat(32), "{order}: the hook's digest is kept");
        // Counted columns are the first report's: the aggregates already hold them.
        let duration = if otlp_first { Value::from(1830) } else { Value::Null };
        assert_eq!(bash[0]["tool"]["duration_ms"], duration, "{order}");
    }
}

#[test]
fn the_hooks_own_reports_of_one_request_are_never_joined_with_each_other() {
    let server = TestServer::spawn();
    let now = now_ms() - 60_000;
    // OTLP has spoken for this session (a record of another request).
    let mut export = fixture("claude_code_logs_numeric");
    let records = export["resourceLogs"][0]["scopeLogs"][0]["logRecords"].as_array_mut().unwrap();
    records.truncate(1);
    for pair in records[0]["attributes"].as_array_mut().unwrap() {
        if pair["key"] == "session.id" {
            pair["value"]["stringValue"] = Value::from("s-growth");
        }
    }
    let (status, _, _) = send(
        &format!("{}/v1/logs", server.ingest),
        &server.token,
        "application/json",
        &[],
        serde_json::to_vec(&export).unwrap(),
    );
    assert_eq!(status, 200);
    // The hook reports one request's usage in two parts (it grew while streaming).
    let part = |ts: i64, input: i64| {
        let mut turn = event("turn_end", "s-growth", ts);
        turn["usage"] = serde_json::json!({"input_tokens": input});
        turn["metadata"] = serde_json::json!({"request_id": "req_grows"});
        turn
    };
    let (status, answer) = server.post_events(&server.token, &envelope(vec![part(now, 100), part(now + 1_000, 50)]));
    assert_eq!((status, answer["accepted"].as_i64()), (200, Some(2)), "{answer}");
    let view = session_view(&server, "claude_code", "s-growth");
    assert_eq!(view["usage"]["input_tokens"], 3000 + 150, "both parts count beside OTLP's other request: {view}");
}

/// Gemini CLI's hook reads each response's tokens from the transcript and its export
/// reports the same response's tokens: the same counts are one request, in either order.
#[test]
fn a_gemini_response_seen_by_the_hook_and_by_otlp_is_counted_once_by_its_tokens() {
    const SESSION: &str = "b7e4c1d2-3f4a-4b5c-9d6e-7f8a9b0c1d2e";
    for otlp_first in [false, true] {
        let server = TestServer::spawn();
        let export = fixture("gemini_cli_logs");
        let send_otlp = || post_logs(&server, &export);
        let send_hook = || {
            // The transcript's message: 5,000 input of which 4,000 cached, 600 output, 300 thoughts.
            let mut turn = event("turn_end", SESSION, now_ms() - 3_590_000);
            turn["agent_type"] = Value::from("gemini_cli");
            turn["model"] = Value::from("gemini-2.5-pro");
            turn["usage"] = serde_json::json!({"input_tokens": 1000, "output_tokens": 600, "cache_read_tokens": 4000, "reasoning_tokens": 300});
            let mut start = event("session_start", SESSION, now_ms() - 3_600_000);
            start["agent_type"] = Value::from("gemini_cli");
            // Only the hook knows the repository: the export's start has no git context.
            start["git"] = serde_json::json!({"branch": "fix/login-timeout", "commit": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                                              "remote": "https://github.com/acme/api.git", "dirty": false});
            let (status, body) = server.post_events(&server.token, &envelope(vec![start, turn]));
            assert_eq!(status, 200, "{body}");
        };
        if otlp_first {
            send_otlp();
            send_hook();
        } else {
            send_hook();
            send_otlp();
        }
        let view = session_view(&server, "gemini_cli", SESSION);
        assert_eq!(
            (view["usage"]["input_tokens"].as_i64(), view["usage"]["reasoning_tokens"].as_i64()),
            (Some(1000), Some(300)),
            "otlp first: {otlp_first}: {view}"
        );
        // The session has the hook's git context whichever start was stored (the export's,
        // first, has none), and the repository is recorded for pull-request links.
        let conn = server.main_db();
        let (branch, remote): (Option<String>, Option<String>) = conn
            .query_row("SELECT git_branch, git_remote FROM sessions WHERE agent_session_id = ?1", [SESSION], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(
            (branch.as_deref(), remote.as_deref()),
            (Some("fix/login-timeout"), Some("https://github.com/acme/api.git")),
            "otlp first: {otlp_first}"
        );
        let reports: i64 = conn
            .query_row(
                "SELECT count(*) FROM session_git g JOIN sessions s ON s.id = g.session_id
                 WHERE s.agent_session_id = ?1 AND g.branch = 'fix/login-timeout'",
                [SESSION],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(reports, 1, "otlp first: {otlp_first}");
    }
}

/// Codex's hook reads each response's tokens from the rollout's `token_count` lines and
/// its export reports the same response's `response.completed`: one request, in either
/// order; its shell call, `Bash` to the hook and `shell` to the export, is one call of one
/// tool, and the hook's start gives the session its branch.
#[test]
fn a_codex_response_and_call_seen_by_the_hook_and_by_otlp_are_counted_once() {
    const SESSION: &str = "0199a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b";
    for otlp_first in [false, true] {
        let server = TestServer::spawn();
        let mut export = fixture("codex_logs");
        // The fixture's records, an hour ago (the server keeps what is at most a year old).
        let records = export["resourceLogs"][0]["scopeLogs"][0]["logRecords"].as_array_mut().unwrap();
        let base_ms = now_ms() - 3_600_000;
        let first_ns: u64 = records[0]["timeUnixNano"].as_str().unwrap().parse().unwrap();
        for record in records.iter_mut() {
            let ns: u64 = record["timeUnixNano"].as_str().unwrap().parse().unwrap();
            record["timeUnixNano"] = Value::from((base_ms as u64 * 1_000_000 + (ns - first_ns)).to_string());
        }
        let send_otlp = || post_logs(&server, &export);
        let send_hook = || {
            let at = |offset_ms: i64, kind: &str| {
                let mut event = event(kind, SESSION, base_ms + offset_ms);
                event["agent_type"] = Value::from("codex");
                event["model"] = Value::from("gpt-5.4");
                event
            };
            let mut start = at(-200, "session_start");
            start["git"] = serde_json::json!({"branch": "feat/retry", "remote": "https://github.com/acme/api.git"});
            // The rollout's token_count: 10,234 input of which 9,600 cached, 812 output of
            // which 512 reasoning; the hook counts each kind apart, as the export's mapping does.
            let mut turn = at(4_500, "turn_end");
            turn["usage"] = serde_json::json!({"input_tokens": 634, "output_tokens": 300, "cache_read_tokens": 9600, "reasoning_tokens": 512});
            let mut shell = at(7_000, "tool_end");
            shell["tool"] = serde_json::json!({"name": "codex:Bash", "use_id": "call_Xy12", "status": "success", "duration_ms": 1900,
                                               "input_sha256": "cd".repeat(32)});
            let (status, body) = server.post_events(&server.token, &envelope(vec![start, turn, shell]));
            assert_eq!(status, 200, "{body}");
        };
        if otlp_first {
            send_otlp();
            send_hook();
        } else {
            send_hook();
            send_otlp();
        }
        let order = if otlp_first { "OTLP first" } else { "hook first" };
        let view = session_view(&server, "codex", SESSION);
        assert_eq!(
            (view["usage"]["input_tokens"].as_i64(), view["usage"]["output_tokens"].as_i64()),
            (Some(634), Some(300)),
            "{order}: one response's tokens, not twice: {view}"
        );
        assert_eq!(view["usage"]["cache_read_tokens"], 9600, "{order}: {view}");
        let conn = server.main_db();
        let url = format!("{}/v1/me/sessions/codex/{SESSION}/events", server.ingest);
        let (status, page) = get_auth(&url, &server.token);
        assert_eq!(status, 200, "{page}");
        let calls: Vec<&Value> =
            page["events"].as_array().unwrap().iter().filter(|e| e["tool"]["use_id"] == "call_Xy12").collect();
        assert_eq!(calls.len(), 1, "{order}: one call: {calls:?}");
        assert_eq!(calls[0]["tool"]["name"], "codex:shell", "{order}: one name whatever the source");
        assert_eq!(calls[0]["tool"]["input_sha256"], "cd".repeat(32), "{order}: the hook's digest is kept");
        let branch: Option<String> = conn
            .query_row("SELECT git_branch FROM sessions WHERE agent_session_id = ?1", [SESSION], |r| r.get(0))
            .unwrap();
        assert_eq!(branch.as_deref(), Some("feat/retry"), "{order}");
    }
}

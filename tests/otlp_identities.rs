//! Service accounts on the real binary: an administrator makes a collector's OTLP
//! token in `/admin/adapters`; the records it forwards count as the person their
//! exported `user.email` is mapped to, and until someone maps it they are refused by
//! count, shown to administrators with how many and when, and never stored under a
//! guess (Claude Code's documented export, whose records carry `user.email`).

use serde_json::Value;

use crate::admin_console::{ADMIN, world};
use crate::common::*;
use crate::otlp::{CLAUDE_SESSION, fixture, json_of, send};

fn post_logs(url: &str, token: &str, export: &Value) -> Value {
    let (status, _, body) = send(url, token, "application/json", &[], serde_json::to_vec(export).unwrap());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    json_of(&body)
}

#[test]
fn a_collectors_records_count_as_their_mapped_person_and_unknown_identities_are_shown_never_guessed() {
    let world = world();
    let (status, page, _) = world.form(Some(ADMIN), "/admin/adapters/service-tokens", &[("name", "otel-collector")]);
    assert_eq!(status, 200, "{page}");
    let start = page.find("slh_otlp_").expect("the token is shown once");
    let token: String =
        page[start..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect();
    assert_eq!(world.audited("OTLP_SERVICE_TOKEN_CREATED"), 1);
    let (_, again, _) = world.page(Some(ADMIN), "/admin/adapters");
    assert!(again.contains("otel-collector") && !again.contains(&token), "listed, never shown again");

    // The fixture's records say user.email ada@example.com: nobody has mapped it.
    let url = format!("{}/v1/logs", world.server.ingest);
    let export = fixture("claude_code_logs");
    let records = export["resourceLogs"][0]["scopeLogs"][0]["logRecords"].as_array().unwrap().len();
    let answer = post_logs(&url, &token, &export);
    assert_eq!(answer["partialSuccess"]["rejectedLogRecords"], records.to_string(), "{answer}");
    let message = answer["partialSuccess"]["errorMessage"].as_str().unwrap();
    assert!(message.contains("no administrator has mapped to a person"), "{message}");
    assert_eq!(world.count("SELECT count(*) FROM sessions"), 0, "nothing stored under a guess");
    let (_, adapters, _) = world.page(Some(ADMIN), "/admin/adapters");
    let section = &adapters[adapters.find("id=\"unknown-identities\"").expect("the section")..];
    assert!(
        section.contains("<td>ada@example.com</td>") && section.contains(&format!("<td>{records}</td>")),
        "{section}"
    );

    // Mapped to Max: the same export is now his session, and the count is gone.
    let said = world.change(
        "/admin/adapters/identities",
        &[("attribute", "user.email"), ("value", "ADA@example.com"), ("email", "max@example.com")],
    );
    assert_eq!(said, "user.email ADA@example.com is now max@example.com");
    assert_eq!(world.audited("OTLP_IDENTITY_MAPPED"), 1);
    assert_eq!(post_logs(&url, &token, &export), serde_json::json!({}));
    let (status, view) = world.server.session(&world.max_hook, CLAUDE_SESSION);
    assert_eq!(status, 200, "{view}");
    assert!(view["event_count"].as_i64().unwrap() > 0);
    let owners = world.count("SELECT count(DISTINCT user_id) FROM sessions");
    assert_eq!(owners, 1, "only the mapped person has sessions");
    let (_, adapters, _) = world.page(Some(ADMIN), "/admin/adapters");
    let (from, to) =
        (adapters.find("id=\"unknown-identities\"").unwrap(), adapters.find("id=\"identity-mappings\"").unwrap());
    assert!(!adapters[from..to].contains("ada@example.com"), "mapping clears the count");
    assert!(adapters[to..].contains("<td>ada@example.com</td>"), "and lists the mapping");

    // Another address in the same export is still refused, the mapped one stored.
    let mut mixed = fixture("claude_code_logs");
    let record = &mut mixed["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["attributes"];
    for pair in record.as_array_mut().unwrap() {
        if pair["key"] == "user.email" {
            pair["value"]["stringValue"] = Value::from("someone@else.example");
        }
    }
    let answer = post_logs(&url, &token, &mixed);
    assert_eq!(answer["partialSuccess"]["rejectedLogRecords"], "1", "{answer}");

    // A wrong attribute name or an unknown person is refused naming it.
    let (status, body, _) = world.form(
        Some(ADMIN),
        "/admin/adapters/identities",
        &[("attribute", "email"), ("value", "x"), ("email", ADMIN)],
    );
    assert!(status == 400 && body.contains("attribute must be user.email"), "{status} {body}");
    let (status, body, _) = world.form(
        Some(ADMIN),
        "/admin/adapters/identities",
        &[("attribute", "user.id"), ("value", "x"), ("email", "nobody@example.com")],
    );
    assert!(status == 400 && body.contains("there is nobody"), "{status} {body}");

    // Removing the mapping: the records are refused again.
    world.change("/admin/adapters/identities/unmap", &[("attribute", "user.email"), ("value", "ada@example.com")]);
    let answer = post_logs(&url, &token, &export);
    assert_eq!(answer["partialSuccess"]["rejectedLogRecords"], records.to_string());
}

#[test]
fn a_service_account_token_is_made_from_the_command_line_by_an_administrator_only() {
    let server = TestServer::spawn();
    let dir = server.data_dir.to_str().unwrap();
    let refused = sightline(&[
        "token",
        "create",
        "--data-dir",
        dir,
        "--user",
        "dev@example.com",
        "--kind",
        "otlp",
        "--service-account",
        "c",
    ]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("is not an administrator"), "{}", stderr(&refused));
    let refused = sightline(&[
        "token",
        "create",
        "--data-dir",
        dir,
        "--user",
        "dev@example.com",
        "--kind",
        "hook",
        "--service-account",
        "c",
    ]);
    assert!(stderr(&refused).contains("use it with --kind otlp"), "{}", stderr(&refused));
}

/// M2 and L5: a collector's token forwards a mapped person's records with
/// `sightline.run_kind=EVAL` and an evaluation cell in the resource. The person's session
/// stays interactive and unlinked, so no eval engineer reads it; a person's own hook
/// token naming a cell is stored without the link too (the answer says so). Only a
/// harness's token (fixed to EVAL) links, and a link made otherwise before this version
/// needs the owner's sharing.
#[test]
fn only_a_harnesss_token_links_a_session_to_an_evaluation_cell() {
    const CELL: &str = "claude-code__claude-sonnet-4-5__login-500__r0";
    let world = world();
    add_user(&world.server.data_dir, "eve@example.com", "EVAL_ENGINEER");
    let eve = access_token(&world.server, "eve@example.com");
    let (_, page, _) = world.form(Some(ADMIN), "/admin/adapters/service-tokens", &[("name", "otel-collector")]);
    let start = page.find("slh_otlp_").expect("the token is shown once");
    let collector: String =
        page[start..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect();
    world.change(
        "/admin/adapters/identities",
        &[("attribute", "user.email"), ("value", "ada@example.com"), ("email", "max@example.com")],
    );
    // Max's own interactive session, from his hook.
    let events = session_events(CLAUDE_SESSION, now_ms() - 7_200_000, 4);
    assert_eq!(world.server.post_events(&world.max_hook, &envelope(events)).0, 200);
    // The collector's export of the same session, marked as an evaluation of a cell.
    let mut export = fixture("claude_code_logs");
    let resource = export["resourceLogs"][0]["resource"]["attributes"].as_array_mut().unwrap();
    resource.push(serde_json::json!({"key": "sightline.run_kind", "value": {"stringValue": "EVAL"}}));
    resource.push(serde_json::json!({"key": "sightline.eval.cell", "value": {"stringValue": CELL}}));
    let url = format!("{}/v1/logs", world.server.ingest);
    post_logs(&url, &collector, &export);
    let db = world.db();
    let (run_kind, cell): (String, Option<String>) = db
        .query_row("SELECT run_kind, eval_cell_id FROM sessions WHERE agent_session_id = ?1", [CLAUDE_SESSION], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((run_kind.as_str(), cell), ("INTERACTIVE", None), "the person's session is theirs still");
    let (status, linked) = get_auth(&format!("{}/api/evals/cells/{CELL}", world.server.web), &eve);
    assert_eq!(status, 200, "{linked}");
    assert_eq!(linked["sessions"], serde_json::json!([]), "{linked}");
    let id: String =
        db.query_row("SELECT id FROM sessions WHERE agent_session_id = ?1", [CLAUDE_SESSION], |r| r.get(0)).unwrap();
    assert_eq!(get_auth(&format!("{}/api/sessions/{id}", world.server.web), &eve).0, 404);

    // Max's own hook token naming a cell: an evaluation run of his, not linked.
    let mut events = session_events("max-eval-1", now_ms() - 60_000, 3);
    events.iter_mut().for_each(|event| event["eval"] = serde_json::json!({"cell_id": CELL}));
    let (status, answer) = world.server.post_events(&world.max_hook, &envelope(events));
    assert_eq!((status, answer["unlinked_eval_events"].as_i64()), (200, Some(3)), "{answer}");
    let (run_kind, cell): (String, Option<String>) = db
        .query_row("SELECT run_kind, eval_cell_id FROM sessions WHERE agent_session_id = 'max-eval-1'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((run_kind.as_str(), cell), ("EVAL", None));

    // A harness machine's token links; a link without it (from before) needs sharing.
    let data = world.server.data_dir.to_str().unwrap().to_string();
    let out = sightline(&[
        "token",
        "create",
        "--data-dir",
        &data,
        "--user",
        "max@example.com",
        "--kind",
        "hook",
        "--run-kind",
        "EVAL",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let harness = stdout(&out).trim().to_string();
    let mut events = session_events("harness-1", now_ms() - 60_000, 3);
    events.iter_mut().for_each(|event| event["eval"] = serde_json::json!({"cell_id": CELL}));
    let (status, answer) = world.server.post_events(&harness, &envelope(events));
    assert_eq!((status, answer.get("unlinked_eval_events")), (200, None), "{answer}");
    let (_, linked) = get_auth(&format!("{}/api/evals/cells/{CELL}", world.server.web), &eve);
    assert_eq!(linked["sessions"].as_array().map(Vec::len), Some(1), "{linked}");
    let harness_id: String =
        db.query_row("SELECT id FROM sessions WHERE agent_session_id = 'harness-1'", [], |r| r.get(0)).unwrap();
    assert_eq!(get_auth(&format!("{}/api/sessions/{harness_id}", world.server.web), &eve).0, 200);
    db.execute("UPDATE sessions SET eval_harness = 0 WHERE id = ?1", [&harness_id]).unwrap();
    assert_eq!(get_auth(&format!("{}/api/sessions/{harness_id}", world.server.web), &eve).0, 404);
    let max = access_token(&world.server, "max@example.com");
    let (status, _) =
        post_form(&format!("{}/me/sessions/{harness_id}/sharing", world.server.web), &max, "transcript=share");
    assert_eq!(status, 303);
    assert_eq!(get_auth(&format!("{}/api/sessions/{harness_id}", world.server.web), &eve).0, 200);
}

/// The service account's token, made on `/admin/adapters` (shown once).
fn service_token(world: &crate::admin_console::World) -> String {
    let (status, page, _) = world.form(Some(ADMIN), "/admin/adapters/service-tokens", &[("name", "otel-collector")]);
    assert_eq!(status, 200, "{page}");
    let start = page.find("slh_otlp_").expect("the token is shown once");
    page[start..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect()
}

/// L6 and L7 of issue 52: a collector sending thousands of made-up identities, each
/// kilobytes long, leaves a bounded list (at most 1,000, each cut to 320 characters) and a
/// small console page; an identity mapped to a person who is then disabled stores
/// nothing more as them (its records are refused, saying why), and nobody can map an
/// identity to a disabled person.
#[test]
fn a_collector_cannot_grow_the_unknown_identities_or_store_as_a_disabled_person() {
    let world = world();
    let token = service_token(&world);
    let url = format!("{}/v1/logs", world.server.ingest);
    for round in 0..3 {
        let mut export = fixture("claude_code_logs");
        let template = export["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0].clone();
        let records: Vec<Value> = (0..500)
            .map(|i| {
                let mut record = template.clone();
                for pair in record["attributes"].as_array_mut().unwrap() {
                    if pair["key"] == "user.email" {
                        let made_up = format!("{round}-{i}-{}@example.com", "x".repeat(3000));
                        pair["value"]["stringValue"] = Value::from(made_up);
                    }
                }
                record
            })
            .collect();
        export["resourceLogs"][0]["scopeLogs"][0]["logRecords"] = Value::from(records);
        let answer = post_logs(&url, &token, &export);
        assert_eq!(answer["partialSuccess"]["rejectedLogRecords"], "500", "{answer}");
    }
    assert_eq!(world.count("SELECT count(*) FROM otlp_unknown_identities"), 1_000, "bounded in number");
    // An operator sees them refused in /metrics.
    let metrics = agent().get(format!("{}/metrics", world.server.ingest)).call().unwrap().into_body().read_to_string();
    let refused: f64 = metrics
        .unwrap()
        .lines()
        .filter(|line| {
            line.starts_with("sightline_otlp_records_total{")
                && line.contains("signal=\"logs\"")
                && line.contains("outcome=\"refused\"")
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert_eq!(refused, 1_500.0, "the unmapped records are counted as refused");
    assert_eq!(world.count("SELECT max(length(value)) FROM otlp_unknown_identities"), 321, "cut, with a mark");
    let (status, adapters, _) = world.page(Some(ADMIN), "/admin/adapters");
    assert_eq!(status, 200);
    assert!(adapters.len() < 1_000_000, "the console page stays small: {} bytes", adapters.len());

    // Mapped to Max, who is then disabled: nothing more is stored as him.
    world.change(
        "/admin/adapters/identities",
        &[("attribute", "user.email"), ("value", "ada@example.com"), ("email", "max@example.com")],
    );
    let max = world.user_id("max@example.com");
    world.change(&format!("/admin/people/{max}/disable"), &[]);
    let export = fixture("claude_code_logs");
    let answer = post_logs(&url, &token, &export);
    let message = answer["partialSuccess"]["errorMessage"].as_str().unwrap_or_default();
    assert!(message.contains("mapped to a disabled person"), "{answer}");
    assert_eq!(world.count("SELECT count(*) FROM sessions"), 0, "nothing stored as a disabled person");
    let (status, body, _) = world.form(
        Some(ADMIN),
        "/admin/adapters/identities",
        &[("attribute", "user.id"), ("value", "max-laptop"), ("email", "max@example.com")],
    );
    assert!(status == 400 && body.contains("is disabled"), "{status} {body}");
}

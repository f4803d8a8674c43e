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

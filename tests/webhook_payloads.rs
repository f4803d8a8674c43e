//! Generated GitHub webhook payloads (`fuzz_*`, docs/testing.md): the four events the App
//! applies (`pull_request`, `check_run`, `pull_request_review`, `push`), written from
//! GitHub's documentation (`common::github_payloads`), bent by edits (a null where a
//! string was, a number as a string, a list where an object was) and damaged bytes, and
//! applied to a real `main.db` in a transaction. Applying never panics; a payload that is
//! not what its event promises is refused as such (never a storage error), and a refused
//! one writes nothing.

use crate::common;

use common::github_payloads::{self as gh, Pr};
use proptest::prelude::*;
use serde_json::Value;
use sightline::github::apply::{self, ApplyError, Rules};

fn payloads() -> Vec<(&'static str, Value)> {
    let pr = Pr::new(7, "PAY-12 checkout", "feature/checkout", &"c".repeat(40));
    vec![
        ("pull_request", gh::pull_request_event("opened", &pr)),
        (
            "pull_request",
            gh::pull_request_event("closed", &Pr { merged_at: Some("2026-11-21T10:00:00Z".into()), ..pr.clone() }),
        ),
        ("check_run", gh::check_run_event("completed", 44, "ci", &pr, Some("failure"))),
        ("pull_request_review", gh::review_event("submitted", 9, "bo", "approved", &"c".repeat(40), &pr)),
        ("push", gh::push_event("main", &"0".repeat(40), &[(&"d".repeat(40), "PAY-12 merge")])),
    ]
}

fn edits() -> impl Strategy<Value = Vec<(usize, Option<Value>)>> {
    // The same generator the library's decoders use, built here from proptest alone.
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        Just(Value::from("12")),
        Just(Value::from("")),
        Just(Value::from("2026-13-45T99:99:99Z")),
        "[ -~]{0,20}".prop_map(Value::from),
    ];
    let json = leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,8}", inner), 0..4).prop_map(|p| Value::Object(p.into_iter().collect())),
        ]
    });
    prop::collection::vec((any::<usize>(), prop::option::weighted(0.85, json)), 0..4)
}

fn edited(document: &Value, edits: &[(usize, Option<Value>)]) -> Value {
    let mut out = document.clone();
    for (rank, replacement) in edits {
        let mut nodes = Vec::new();
        paths(&out, String::new(), &mut nodes);
        let pointer = &nodes[rank % nodes.len()];
        if pointer.is_empty() {
            out = replacement.clone().unwrap_or(Value::Null);
            continue;
        }
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        match (out.pointer_mut(parent), replacement) {
            (Some(Value::Object(fields)), None) => {
                fields.remove(key);
            }
            (Some(_), _) => *out.pointer_mut(pointer).unwrap() = replacement.clone().unwrap_or(Value::Null),
            (None, _) => {}
        }
    }
    out
}

fn paths(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Object(fields) => {
            for (key, inner) in fields {
                paths(inner, format!("{at}/{}", key.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                paths(inner, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn fuzz_webhook_payloads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("main.db");
    let mut conn = rusqlite::Connection::open(&path).unwrap();
    sightline::db::migrations::migrate(&mut conn, &path).unwrap();
    let conn = std::cell::RefCell::new(conn);
    let rules = Rules {
        host_prefix: sightline::github::links::host_prefix("https://github.com"),
        issue_key: regex::Regex::new(r"\b[A-Z][A-Z0-9]+-[0-9]+\b").unwrap(),
    };
    let payloads = payloads();
    let counted = |conn: &rusqlite::Connection| -> i64 {
        conn.query_row("SELECT (SELECT count(*) FROM pull_requests) + (SELECT count(*) FROM pr_check_runs) + (SELECT count(*) FROM pr_reviews) + (SELECT count(*) FROM default_branch_commits)", [], |r| r.get(0)).unwrap()
    };
    let mut runner = proptest::test_runner::TestRunner::default();
    runner
        .run(&(any::<usize>(), edits(), prop::option::weighted(0.15, any::<usize>())), |(which, edits, cut)| {
            let (event, payload) = &payloads[which % payloads.len()];
            let mut body = serde_json::to_vec(&edited(payload, &edits)).unwrap();
            if let Some(cut) = cut {
                body.truncate(cut % (body.len() + 1));
            }
            let mut conn = conn.borrow_mut();
            let tx = conn.transaction().unwrap();
            let before = counted(&tx);
            match apply::apply(&tx, event, &body, &rules, 1_795_000_000_000) {
                Ok(_) => {}
                Err(ApplyError::Payload(message)) => {
                    prop_assert!(!message.is_empty());
                    prop_assert_eq!(counted(&tx), before, "a refused payload writes nothing");
                }
                Err(ApplyError::Db(err)) => prop_assert!(false, "{event}: a payload is never a storage error: {err}"),
            }
            drop(tx);
            Ok(())
        })
        .unwrap();
}

//! The owner's session list against a migrated in-memory main.db: filters, sorting,
//! paging, refusals that name the parameter, and the machine runs counted apart.

use rusqlite::{Connection, params};

use super::*;

fn main_db() -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
    conn.execute_batch(
        "INSERT INTO users (id, email, name, created_at_ms) VALUES ('ada', 'a@x', 'Ada', 0), ('bo', 'b@x', 'Bo', 0);",
    )
    .unwrap();
    // (id, user, agent, run kind, first event, cost, remote, branch, ended, end reason)
    let sessions = [
        (
            "s1",
            "ada",
            "claude_code",
            "INTERACTIVE",
            1_000,
            500,
            Some("git@github.com:acme/shop.git"),
            Some("main"),
            Some(2_000),
            Some("ended"),
        ),
        ("s2", "ada", "codex", "INTERACTIVE", 3_000, 900, Some("git@github.com:acme/web.git"), Some("fix"), None, None),
        (
            "s3",
            "ada",
            "claude_code",
            "CI",
            5_000,
            100,
            Some("git@github.com:acme/shop.git"),
            Some("main"),
            Some(6_000),
            Some("abandoned"),
        ),
        (
            "s4",
            "bo",
            "claude_code",
            "INTERACTIVE",
            2_000,
            10_000,
            Some("git@github.com:acme/shop.git"),
            Some("main"),
            None,
            None,
        ),
    ];
    for (id, user, agent, kind, first, cost, remote, branch, ended, reason) in sessions {
        conn.execute(
            "INSERT INTO sessions (id, user_id, agent_type, agent_session_id, run_kind, first_event_ms, last_event_ms,
                 cost_nusd, git_remote, git_branch, ended_at_ms, end_reason, event_count)
             VALUES (?1, ?2, ?3, ?1, ?4, ?5, ?5 + 100, ?6, ?7, ?8, ?9, ?10, 3)",
            params![id, user, agent, kind, first, cost, remote, branch, ended, reason],
        )
        .unwrap();
    }
    conn.execute("INSERT INTO session_models (session_id, model, event_count) VALUES ('s2', 'gpt-5', 1)", []).unwrap();
    conn
}

fn ids(conn: &Connection, filter: &Filter, sort: &str, descending: bool) -> Vec<String> {
    own_sessions(conn, "ada", filter, sort, descending, 50, 0)
        .unwrap()
        .unwrap()
        .0
        .into_iter()
        .map(|row| row.id)
        .collect()
}

#[test]
fn the_list_holds_only_the_owners_sessions_narrowed_by_every_filter() {
    let conn = main_db();
    let all = Filter::default();
    assert_eq!(ids(&conn, &all, "started", true), ["s3", "s2", "s1"], "Bo's session never shows");
    assert_eq!(ids(&conn, &Filter { agent: "codex".into(), ..all.clone() }, "started", true), ["s2"]);
    assert_eq!(ids(&conn, &Filter { model: "gpt-5".into(), ..all.clone() }, "started", true), ["s2"]);
    assert_eq!(ids(&conn, &Filter { repo: "ACME/SHOP".into(), ..all.clone() }, "started", false), ["s1", "s3"]);
    assert_eq!(ids(&conn, &Filter { branch: "fix".into(), ..all.clone() }, "started", true), ["s2"]);
    assert_eq!(
        ids(&conn, &Filter { from_ms: Some(2_000), to_ms: Some(5_000), ..all.clone() }, "started", true),
        ["s2"]
    );
    assert_eq!(ids(&conn, &Filter { run_kind: "CI".into(), ..all.clone() }, "started", true), ["s3"]);
    assert_eq!(ids(&conn, &Filter { outcome: "open".into(), ..all.clone() }, "started", true), ["s2"]);
    assert_eq!(ids(&conn, &Filter { outcome: "abandoned".into(), ..all.clone() }, "started", true), ["s3"]);
    assert_eq!(ids(&conn, &Filter { outcome: "ended".into(), ..all.clone() }, "started", true), ["s1"]);
    // Bo's session has the same shape: still only Ada's.
    conn.execute_batch(
        "UPDATE sessions SET shape_label = 'debugging', friction_score = 40 WHERE id IN ('s1', 's4');
         UPDATE sessions SET shape_label = 'feature', friction_score = 70 WHERE id = 's2';",
    )
    .unwrap();
    assert_eq!(ids(&conn, &Filter { shape: "debugging".into(), ..all.clone() }, "started", true), ["s1"]);
    assert_eq!(ids(&conn, &all, "friction", true), ["s2", "s1", "s3"], "unscored last");
}

#[test]
fn sorting_paging_and_refusals() {
    let conn = main_db();
    let all = Filter::default();
    assert_eq!(ids(&conn, &all, "cost", true), ["s2", "s1", "s3"]);
    let (page, total) = own_sessions(&conn, "ada", &all, "cost", true, 2, 2).unwrap().unwrap();
    assert_eq!((page.len(), page[0].id.as_str(), total), (1, "s3", 3));
    let row = &own_sessions(&conn, "ada", &Filter { agent: "codex".into(), ..all.clone() }, "started", true, 1, 0)
        .unwrap()
        .unwrap()
        .0[0];
    assert_eq!((row.outcome.as_str(), row.duration_ms, row.cost_nusd), ("open", 100, 900));
    let refused = own_sessions(&conn, "ada", &all, "cost; DROP TABLE sessions", true, 5, 0).unwrap().unwrap_err();
    assert_eq!(refused.field, "sort");
    assert!(refused.message.starts_with("sort must be one of started, cost, duration, events, tools, friction"));
    let refused =
        own_sessions(&conn, "ada", &Filter { run_kind: "BATCH".into(), ..all.clone() }, "started", true, 5, 0)
            .unwrap()
            .unwrap_err();
    assert_eq!(
        refused,
        Refused { field: "run_kind", message: "run_kind must be one of INTERACTIVE, CI, EVAL, not \"BATCH\"".into() }
    );
    let refused = own_sessions(&conn, "ada", &Filter { outcome: "won".into(), ..all }, "started", true, 5, 0)
        .unwrap()
        .unwrap_err();
    assert_eq!(refused.field, "outcome");
    let refused =
        own_sessions(&conn, "ada", &Filter { shape: "epic".into(), ..Filter::default() }, "started", true, 5, 0)
            .unwrap()
            .unwrap_err();
    assert_eq!(refused.field, "shape");
    assert!(refused.message.contains("single_edit"), "{}", refused.message);
}

#[test]
fn machine_runs_are_counted_apart_per_kind() {
    let conn = main_db();
    let runs = machine_runs(&conn, "ada", 0).unwrap();
    assert_eq!(runs.iter().map(|r| (r.run_kind.as_str(), r.runs)).collect::<Vec<_>>(), [("CI", 1), ("EVAL", 0)]);
    assert_eq!(runs[0].cost_nusd, 100);
    assert_eq!(machine_runs(&conn, "ada", 6_000).unwrap()[0].runs, 0, "since a time");
    assert_eq!(machine_runs(&conn, "bo", 0).unwrap()[0].runs, 0, "the owner's only");
}

//! `sightline demo` (issue 16), the real binary: it fills an empty data directory
//! through the real ingest path (people in every role, a team tree, sessions of the
//! agents with CI and EVAL runs, transcripts, a grant, a deletion carried out, pull
//! requests through the GitHub App's webhook, linked to sessions), leaves the
//! aggregates caught up, prints how to sign in, refuses a directory that has people, and
//! the same seed makes the same organisation.

mod common;

use common::*;

fn demo(dir: &std::path::Path) -> std::process::Output {
    sightline_with_stdin(
        &["demo", "--data-dir", dir.to_str().unwrap(), "--developers", "8", "--days", "14", "--password-stdin"],
        "a long passphrase of the demo\n",
    )
}

fn count(conn: &rusqlite::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |row| row.get(0)).unwrap()
}

#[test]
fn the_demo_fills_an_empty_directory_through_the_product_and_says_how_to_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let made = demo(dir.path());
    assert!(made.status.success(), "{}", stderr(&made));
    let text = stdout(&made);
    for role in ["a developer", "a team lead", "an administrator", "an investigator", "a viewer of aggregates"] {
        assert!(text.contains(role), "{role}: {text}");
    }
    assert!(text.contains("with the password you gave"), "a chosen password is not printed: {text}");
    assert!(!text.contains("a long passphrase"), "{text}");

    let conn = rusqlite::Connection::open(dir.path().join("main.db")).unwrap();
    assert_eq!(count(&conn, "SELECT count(*) FROM users"), 11, "8 developers and the three organisation roles");
    assert_eq!(count(&conn, "SELECT count(DISTINCT org_role) FROM users"), 4);
    assert_eq!(count(&conn, "SELECT count(*) FROM teams WHERE parent_id IS NOT NULL"), 4, "a team tree");
    assert!(count(&conn, "SELECT count(*) FROM team_members WHERE team_role = 'lead'") >= 5);
    assert_eq!(count(&conn, "SELECT count(DISTINCT run_kind) FROM sessions"), 3, "interactive, CI and EVAL runs");
    assert!(count(&conn, "SELECT count(DISTINCT agent_type) FROM sessions") >= 4, "several agents");
    assert_eq!(count(&conn, "SELECT sum(unknown_model_events) FROM sessions"), 0, "every model is priced");
    assert!(count(&conn, "SELECT count(*) FROM transcript_index") > 0, "transcripts");
    // Their shell calls carry the events' call ids: scoring reads their command lines.
    assert!(
        count(&conn, "SELECT count(*) FROM scores WHERE label = 'commands read from the transcript'") > 0,
        "a test run told apart by its transcript"
    );
    assert_eq!(count(&conn, "SELECT count(*) FROM access_grants WHERE status = 'APPROVED'"), 1, "a grant");
    assert!(count(&conn, "SELECT count(*) FROM visibility_policies WHERE share_transcripts = 1") >= 1, "sharing");
    assert!(count(&conn, "SELECT sum(hook_hits) FROM agg_redactions_daily") > 0, "secrets the hook redacted");
    assert!(count(&conn, "SELECT sum(ingest_hits) FROM agg_redactions_daily") > 0, "secrets ingest caught");
    assert_eq!(count(&conn, "SELECT count(*) FROM visibility_policies WHERE team_drill_in = 0"), 1, "a private one");
    let results = dir.path().join("results.db");
    assert!(text.contains(&format!("SIGHTLINE_ANALYTICS_RESULTS_DB={}", results.display())), "{text}");
    let evals = rusqlite::Connection::open(&results).unwrap();
    assert!(count(&evals, "SELECT count(DISTINCT run_name) FROM run_results") >= 2, "evaluation runs");
    assert_eq!(
        count(&conn, "SELECT count(*) FROM deletion_requests WHERE completed_at_ms IS NOT NULL"),
        1,
        "a deletion"
    );
    assert!(count(&conn, "SELECT count(*) FROM agg_usage_hourly") > 0);
    assert_eq!(count(&conn, "SELECT count(*) FROM aggregate_dirty_buckets"), 0, "the aggregates caught up");
    assert!(
        count(&conn, "SELECT count(*) FROM sessions WHERE tool_error_count > 0 AND denial_count > 0") > 0,
        "errors and denials"
    );
    assert!(count(&conn, "SELECT count(*) FROM sessions WHERE compact_count > 0") > 0, "compactions");
    assert!(count(&conn, "SELECT count(*) FROM agg_tools_daily WHERE tool_server <> ''") > 0, "MCP servers");
    // Pull requests through the GitHub App's webhook, linked to sessions by the product.
    assert!(count(&conn, "SELECT count(*) FROM pull_requests") > 0, "pull requests");
    assert!(count(&conn, "SELECT count(*) FROM pull_requests WHERE user_id IS NOT NULL") > 0, "authors matched");
    assert!(count(&conn, "SELECT count(*) FROM session_pr_links WHERE evidence = 'branch'") > 0, "sessions linked");
    assert!(count(&conn, "SELECT count(*) FROM pr_rollups WHERE sessions > 0") > 0, "merged, with a rollup");
    assert_eq!(count(&conn, "SELECT count(*) FROM webhook_deliveries WHERE outcome <> 'applied'"), 0);
    // Every ended interactive session scored, no CI or EVAL run.
    assert!(count(&conn, "SELECT count(DISTINCT shape_label) FROM sessions") >= 3, "sessions of several shapes");
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM sessions WHERE run_kind = 'INTERACTIVE' AND ended_at_ms IS NOT NULL AND scored_version IS NULL"
        ),
        0
    );
    assert_eq!(
        count(&conn, "SELECT count(*) FROM sessions WHERE run_kind <> 'INTERACTIVE' AND shape_label IS NOT NULL"),
        0
    );

    // Vendors' bills reconciled, with one breach; two projections recorded and audited.
    assert!(count(&conn, "SELECT count(DISTINCT vendor) FROM cost_drift") == 2, "both vendors reconciled");
    assert_eq!(count(&conn, "SELECT count(*) FROM cost_drift WHERE status = 'breach'"), 2, "one per vendor");
    assert!(count(&conn, "SELECT count(*) FROM billing_lines WHERE model = ''") > 0, "web search besides tokens");
    assert_eq!(count(&conn, "SELECT count(*) FROM projections"), 2);
    assert_eq!(count(&conn, "SELECT count(*) FROM audit_log WHERE action = 'PROJECTION_RECORDED'"), 2);

    // A directory with people is refused, and nothing is added.
    let again = demo(dir.path());
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("this data directory already has people"), "{}", stderr(&again));
    assert_eq!(count(&conn, "SELECT count(*) FROM users"), 11);

    // The same seed, the same organisation.
    let other = tempfile::tempdir().unwrap();
    assert!(demo(other.path()).status.success());
    let other_conn = rusqlite::Connection::open(other.path().join("main.db")).unwrap();
    let shape = "SELECT count(*) || '/' || sum(event_count) || '/' || sum(cost_nusd) FROM sessions";
    let a: String = conn.query_row(shape, [], |r| r.get(0)).unwrap();
    let b: String = other_conn.query_row(shape, [], |r| r.get(0)).unwrap();
    assert_eq!(a, b);
}

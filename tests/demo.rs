//! `sightline demo` (issue 16), the real binary: it fills an empty data directory
//! through the real ingest path (people in every role, a team tree, sessions of the
//! agents with CI and EVAL runs, transcripts, a grant, a deletion carried out, pull
//! requests through the GitHub App's webhook, linked to sessions), leaves the
//! aggregates caught up, prints how to sign in, refuses a directory that has people, and
//! the same seed makes the same organisation.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::inprocess::InProcess;
use common::*;

const PASSWORD: &str = "a long passphrase of the demo";
const MIN_PEOPLE: usize = 5;

/// One moment for every demo of this file, so two demos of one seed are one organisation
/// even when a session of today starts between them.
fn until() -> &'static str {
    static UNTIL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    UNTIL.get_or_init(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let now = time::OffsetDateTime::from_unix_timestamp(now as i64).unwrap();
        now.format(&time::format_description::well_known::Rfc3339).unwrap()
    })
}

fn demo(dir: &std::path::Path) -> std::process::Output {
    sightline_with_stdin(
        &[
            "demo",
            "--data-dir",
            dir.to_str().unwrap(),
            "--developers",
            "8",
            "--days",
            "14",
            "--until",
            until(),
            "--password-stdin",
        ],
        &format!("{PASSWORD}\n"),
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
    for role in [
        "a developer",
        "a team lead",
        "an administrator",
        "an investigator",
        "a viewer of aggregates",
        "an eval engineer",
    ] {
        assert!(text.contains(role), "{role}: {text}");
    }
    assert!(text.contains("with the password you gave"), "a chosen password is not printed: {text}");
    assert!(!text.contains("a long passphrase"), "{text}");

    let conn = rusqlite::Connection::open(dir.path().join("main.db")).unwrap();
    assert_eq!(
        count(&conn, "SELECT count(*) FROM users"),
        14,
        "8 developers, the four organisation roles, the evaluation harness and a new hire added on /admin/people"
    );
    assert_eq!(
        count(&conn, "SELECT count(*) FROM users WHERE password_hash IS NULL AND email = 'new.hire@demo.example'"),
        1,
        "the new hire has not used their one-time link yet"
    );
    assert_eq!(count(&conn, "SELECT count(DISTINCT org_role) FROM users"), 5);
    // The harness's sessions name the demo results' cells, every one EVAL; a multi-phase
    // cell has one session per phase.
    let results = rusqlite::Connection::open(dir.path().join("results.db")).unwrap();
    let linked: Vec<(String, String)> = conn
        .prepare("SELECT DISTINCT eval_run, eval_cell_id FROM sessions WHERE eval_cell_id IS NOT NULL")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(linked.len() >= 100, "the demo's cells have their sessions: {}", linked.len());
    for (run, cell) in &linked {
        let found: i64 = results
            .query_row("SELECT count(*) FROM run_results WHERE run_name = ?1 AND cell_id = ?2", [run, cell], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(found, 1, "{run} {cell} is a cell of the results");
    }
    assert_eq!(count(&conn, "SELECT count(*) FROM sessions WHERE eval_cell_id IS NOT NULL AND run_kind <> 'EVAL'"), 0);
    assert!(count(&conn, "SELECT count(*) FROM sessions WHERE eval_phase IS NOT NULL") > 0, "multi-phase cells");
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
    // Native telemetry: one developer's agents export OTLP only, another's OTLP and the hook.
    assert!(count(&conn, "SELECT count(*) FROM otlp_sessions") > 0, "sessions that sent OTLP");
    let (mut from_otlp, mut twice) = (0, 0);
    for day in std::fs::read_dir(dir.path().join("events")).unwrap() {
        let path = day.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("db") {
            continue;
        }
        let events = rusqlite::Connection::open(&path).unwrap();
        from_otlp += count(&events, r#"SELECT count(*) FROM events WHERE metadata LIKE '{"source":"otlp"%'"#);
        twice += count(
            &events,
            "SELECT count(*) FROM (SELECT 1 FROM events WHERE type = 'tool_end' AND tool_use_id IS NOT NULL
             GROUP BY user_id, session_id, tool_use_id HAVING count(*) > 1)",
        );
    }
    assert!(from_otlp > 0, "events from the agents' own export");
    assert!(count(&conn, "SELECT count(*) FROM session_reported WHERE lines_added > 0") > 0, "Claude Code's metrics");
    assert_eq!(count(&conn, "SELECT count(*) FROM otlp_service_tokens"), 1, "a collector's token");
    assert_eq!(count(&conn, "SELECT count(*) FROM otlp_identities"), 1, "an identity mapped");
    assert_eq!(
        count(&conn, "SELECT records FROM otlp_unknown_identities WHERE value = 'contractor@partner.example'"),
        1,
        "an identity nobody mapped, refused and counted"
    );
    assert_eq!(twice, 0, "a tool call the hook and OTLP both reported is stored once");
    assert!(
        count(&conn, "SELECT count(*) FROM sessions WHERE cli_version LIKE 'claude-code %' AND started_at_ms IS NULL")
            > 0,
        "Claude Code sessions known only from its export (which has no start)"
    );
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
    assert_eq!(count(&conn, "SELECT count(*) FROM users"), 14);

    // A history that ends in the future, or at no time, is refused before anything is made.
    for (until, says) in [("2999-01-01T00:00:00Z", "is in the future"), ("yesterday", "is not an RFC 3339 time")] {
        let empty = tempfile::tempdir().unwrap();
        let refused = sightline_with_stdin(
            &["demo", "--data-dir", empty.path().to_str().unwrap(), "--until", until, "--password-stdin"],
            &format!("{PASSWORD}\n"),
        );
        assert!(!refused.status.success() && stderr(&refused).contains(says), "{until}: {}", stderr(&refused));
        assert!(!empty.path().join("main.db").exists(), "{until}: nothing is made");
    }

    // The same seed and moment, the same organisation.
    let other = tempfile::tempdir().unwrap();
    assert!(demo(other.path()).status.success());
    let other_conn = rusqlite::Connection::open(other.path().join("main.db")).unwrap();
    let shape = "SELECT count(*) || '/' || sum(event_count) || '/' || sum(cost_nusd) FROM sessions";
    let a: String = conn.query_row(shape, [], |r| r.get(0)).unwrap();
    let b: String = other_conn.query_row(shape, [], |r| r.get(0)).unwrap();
    assert_eq!(a, b);
}

/// Who each team group of a page is, read from main.db: the people active in the last 30
/// days (the pages' default period) in a team with the teams below it, in a team directly,
/// in no team, or at all.
struct Groups {
    active: BTreeSet<String>,
    subtree: BTreeMap<String, BTreeSet<String>>,
    direct: BTreeMap<String, BTreeSet<String>>,
    in_no_team: BTreeSet<String>,
}

impl Groups {
    fn read(conn: &rusqlite::Connection, from_ms: i64) -> Groups {
        let strings = |sql: &str, param: &dyn rusqlite::ToSql| -> BTreeSet<String> {
            let mut stmt = conn.prepare(sql).unwrap();
            stmt.query_map([param], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
        };
        let active = strings("SELECT DISTINCT user_id FROM agg_usage_hourly WHERE bucket_start_ms >= ?1", &from_ms);
        let slugs: Vec<(String, String)> = {
            let mut stmt = conn.prepare("SELECT id, slug FROM teams").unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
        };
        let (mut subtree, mut direct) = (BTreeMap::new(), BTreeMap::new());
        for (id, slug) in &slugs {
            let below = strings(
                "WITH RECURSIVE tree(id) AS (SELECT ?1 UNION SELECT t.id FROM teams t JOIN tree ON t.parent_id = tree.id)
                 SELECT DISTINCT m.user_id FROM team_members m JOIN tree ON m.team_id = tree.id",
                id,
            );
            subtree.insert(slug.clone(), below.intersection(&active).cloned().collect());
            let own = strings("SELECT user_id FROM team_members WHERE team_id = ?1", id);
            direct.insert(slug.clone(), own.intersection(&active).cloned().collect());
        }
        let members = strings("SELECT user_id FROM team_members WHERE ?1 = ?1", &1);
        let in_no_team = active.difference(&members).cloned().collect();
        Groups { active, subtree, direct, in_no_team }
    }

    /// The people of a team table's row, by its label.
    fn of(&self, label: &str) -> BTreeSet<String> {
        if label == "(in no team)" {
            return self.in_no_team.clone();
        }
        if let Some(slug) = label.strip_suffix(" (direct members)") {
            return self.direct[slug].clone();
        }
        self.subtree.get(label).cloned().unwrap_or_else(|| panic!("a row of no known group: {label:?}"))
    }
}

/// Every shown group minus every set of shown groups inside it that do not overlap leaves
/// none or at least the minimum.
fn check_subtractions(shown: &[(String, BTreeSet<String>)]) {
    // The same people shown twice (a team on two pages) are one group to subtract.
    let mut distinct: BTreeMap<&BTreeSet<String>, &String> = BTreeMap::new();
    for (name, set) in shown {
        distinct.entry(set).or_insert(name);
    }
    let shown: Vec<(String, BTreeSet<String>)> =
        distinct.into_iter().map(|(set, name)| (name.clone(), set.clone())).collect();
    for (name, whole) in &shown {
        let inside: Vec<&(String, BTreeSet<String>)> = shown
            .iter()
            .filter(|(_, part)| !part.is_empty() && part.len() < whole.len() && part.is_subset(whole))
            .collect();
        assert!(inside.len() <= 16, "{name}: {} groups inside, too many to try every subtraction", inside.len());
        for mask in 1u32..(1 << inside.len()) {
            let family: Vec<&String> =
                inside.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, (n, _))| n).collect();
            let mut union = BTreeSet::new();
            let mut disjoint = true;
            for (i, (_, part)) in inside.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    disjoint &= part.is_disjoint(&union);
                    union.extend(part.iter().cloned());
                }
            }
            let left = whole.len() - union.len();
            assert!(!disjoint || left == 0 || left >= MIN_PEOPLE, "{name} minus {family:?} leaves {left} people");
        }
    }
}

/// A demo organisation large enough for teams of several sizes (40 developers, a week).
#[test]
fn in_the_demo_organisation_no_role_can_subtract_its_way_to_a_small_team() {
    let dir = tempfile::tempdir().unwrap();
    let made = sightline_with_stdin(
        &["demo", "--data-dir", dir.path().to_str().unwrap(), "--developers", "40", "--days", "7", "--password-stdin"],
        &format!("{PASSWORD}\n"),
    );
    assert!(made.status.success(), "{}", stderr(&made));
    no_subtraction_of_shown_team_figures_isolates_a_small_group(dir.path());
}

/// The demo organisation's team figures as each role is shown them, on every team table
/// of the overview and report pages and their CSVs, and the totals of the teams they may
/// open: every subtraction of shown rows and totals is tried.
fn no_subtraction_of_shown_team_figures_isolates_a_small_group(dir: &std::path::Path) {
    let data = dir.to_str().unwrap();
    let token = sightline(&["token", "create", "--data-dir", data, "--user", "admin@demo.example", "--kind", "hook"]);
    let server = InProcess::start(dir, stdout(&token).trim());
    let conn = rusqlite::Connection::open(dir.join("main.db")).unwrap();
    let day = 86_400_000;
    let from_ms = (server.clock.now_ms() / day + 1) * day - 30 * day;
    let groups = Groups::read(&conn, from_ms);
    let lead: String = conn
        .query_row(
            "SELECT u.email FROM users u JOIN team_members m ON m.user_id = u.id WHERE m.team_role = 'lead' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let member: String = conn
        .query_row(
            "SELECT u.email FROM users u JOIN team_members m ON m.user_id = u.id WHERE m.team_role = 'member' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let slugs: Vec<String> = groups.subtree.keys().cloned().collect();
    let web = server.server.web.clone();
    let mut tried = 0;
    for email in ["admin@demo.example", "investigator@demo.example", "finance@demo.example", &lead, &member] {
        let (status, body) = password_grant(&server.server.ingest, email, PASSWORD);
        assert_eq!(status, 200, "{email}: {body}");
        let access = body["access_token"].as_str().unwrap().to_string();
        let get = |path: &str| -> (u16, String) {
            let mut response =
                agent().get(format!("{web}{path}")).header("Authorization", format!("Bearer {access}")).call().unwrap();
            (response.status().as_u16(), response.body_mut().read_to_string().unwrap_or_default())
        };
        let mut shown: Vec<(String, BTreeSet<String>)> = Vec::new();
        if groups.active.len() >= MIN_PEOPLE && get("/org").0 == 200 {
            shown.push(("the organisation".into(), groups.active.clone()));
        }
        let mut tables = vec!["/org?format=csv&table=teams".to_string()];
        for table in ["teams", "all-teams"] {
            tables.push(format!("/org/teams?format=csv&table={table}"));
        }
        for slug in &slugs {
            let (status, html) = get(&format!("/team/{slug}"));
            let marker = "<div class=\"label\">Active people</div><div class=\"value\">";
            if status == 200
                && let Some(at) = html.find(marker)
            {
                let shown_people: usize =
                    html[at + marker.len()..].split('<').next().unwrap().replace(',', "").parse().unwrap();
                let set = groups.subtree[slug].clone();
                assert_eq!(shown_people, set.len(), "{email}: /team/{slug}'s total");
                shown.push((format!("team {slug}"), set));
                tables.push(format!("/team/{slug}?format=csv&table=teams"));
            }
        }
        for table in tables {
            let (status, csv) = get(&table);
            if status != 200 {
                continue;
            }
            let mut reader = csv::Reader::from_reader(csv.as_bytes());
            let people_at = reader
                .headers()
                .unwrap()
                .iter()
                .position(|h| h.eq_ignore_ascii_case("people"))
                .expect("a people column");
            for record in reader.records() {
                let record = record.unwrap();
                let label = record[0].trim_start_matches('\'').to_string();
                let set = groups.of(&label);
                assert_eq!(record[people_at].parse::<usize>().unwrap(), set.len(), "{email} {table}: {label}");
                assert!(set.len() >= MIN_PEOPLE, "{email} {table}: {label} has {} people", set.len());
                shown.push((format!("{table}: {label}"), set));
            }
        }
        tried += shown.len();
        check_subtractions(&shown);
    }
    assert!(tried > 10, "the check saw the demo's team figures ({tried} shown)");
}

/// The smallest organisations the flags allow are made whole too: with one to six
/// developers most are team leads, and the demo used to index past its list of the rest.
#[test]
fn a_demo_of_a_few_developers_is_made_without_failing() {
    for developers in ["1", "6"] {
        let dir = tempfile::tempdir().unwrap();
        let made = sightline_with_stdin(
            &[
                "demo",
                "--data-dir",
                dir.path().to_str().unwrap(),
                "--developers",
                developers,
                "--days",
                "1",
                "--password-stdin",
            ],
            &format!("{PASSWORD}\n"),
        );
        assert!(made.status.success(), "{developers} developers: {}", stderr(&made));
        let conn = rusqlite::Connection::open(dir.path().join("main.db")).unwrap();
        let people = count(&conn, "SELECT count(*) FROM users");
        assert_eq!(
            people,
            developers.parse::<i64>().unwrap() + 6,
            "{developers} developers, the four roles, the evaluation harness, a new hire"
        );
    }
}

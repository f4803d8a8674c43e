//! Price tables an operator changes (spec §9.2, issue 15): a file in
//! `<data_dir>/price-tables/` replaces its agent's embedded table for the server (events
//! priced, the table served to hooks under a new ETag) and for `sightline prices`; an
//! unusable file is named, with its field, by `prices check`.

use crate::common;

use common::*;
use sightline::events::store::Store;

const EMBEDDED: &str = include_str!("../assets/price-tables/price-table.claude_code.v1.json");
/// Sonnet 4.5's prices in the embedded table, and the operator's.
const SONNET_EMBEDDED: &str = r#""prices": {"input": "3", "output": "15", "cache_read": "0.30""#;
const SONNET_OPERATOR: &str = r#""prices": {"input": "4", "output": "20", "cache_read": "0.30""#;

/// Writes the operator's claude_code table (Sonnet 4.5 at $4/$20, revision 2026-11-24);
/// returns its path and text.
fn write_operator_table(data_dir: &std::path::Path) -> (std::path::PathBuf, String) {
    let (head, sonnet_4_5) = EMBEDDED.split_once(r#""id": "claude-sonnet-4-5""#).unwrap();
    let table =
        format!("{head}{}{}", r#""id": "claude-sonnet-4-5""#, sonnet_4_5.replacen(SONNET_EMBEDDED, SONNET_OPERATOR, 1))
            .replace("\"2026-11-21\"", "\"2026-11-24\"");
    let file = data_dir.join("price-tables/price-table.claude_code.v1.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, &table).unwrap();
    (file, table)
}

fn session_cost(server: &TestServer, session: &str) -> i64 {
    server
        .main_db()
        .query_row("SELECT cost_nusd FROM sessions WHERE agent_session_id = ?1", [session], |r| r.get(0))
        .unwrap()
}

#[test]
fn an_operators_table_replaces_the_embedded_one_for_its_agent() {
    let mut server = TestServer::spawn();
    let (data_dir, token) = (server.data_dir.clone(), server.token.clone());
    let path = data_dir.to_str().unwrap().to_string();
    // One turn of the test event: 1,000 input, 500 output, 10,000 cache-read, 2,000 and
    // 4,000 cache-write tokens of claude-sonnet-4-5.
    assert_eq!(server.post_events(&token, &envelope(vec![event("turn_end", "before", now_ms())])).0, 200);
    assert_eq!(session_cost(&server, "before"), 45_000_000, "$0.045 at $3/$15");
    let url = format!("{}/v1/price-table?agent=claude_code", server.ingest);
    let embedded_etag = agent().get(&url).call().unwrap().headers().get("etag").unwrap().to_str().unwrap().to_string();
    server.terminate();

    let listed = sightline(&["prices", "list", "--data-dir", &path]);
    assert!(
        stdout(&listed).lines().skip(1).all(|line| line.split('\t').nth(1) == Some("embedded")),
        "{}",
        stdout(&listed)
    );
    let check = sightline(&["prices", "check", "--data-dir", &path]);
    assert_eq!(check.status.code(), Some(0));
    assert!(stdout(&check).starts_with("no operator tables in "), "{}", stdout(&check));

    let (file, table) = write_operator_table(&data_dir);

    let check = sightline(&["prices", "check", "--data-dir", &path]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    assert!(
        stdout(&check).contains(&format!("ok: {} replaces claude_code's table, revision 2026-11-24", file.display())),
        "{}",
        stdout(&check)
    );
    let listed = stdout(&sightline(&["prices", "list", "--data-dir", &path]));
    let sources: Vec<(String, String)> = listed
        .lines()
        .skip(1)
        .map(|line| line.split('\t').collect::<Vec<_>>())
        .map(|cells| (cells[0].to_string(), cells[1].to_string()))
        .collect();
    assert!(sources.contains(&("claude_code".into(), file.display().to_string())), "{listed}");
    assert!(sources.contains(&("codex".into(), "embedded".into())), "{listed}");
    let shown = stdout(&sightline(&["prices", "show", "--data-dir", &path, "claude_code"]));
    assert!(shown.lines().any(|line| line.starts_with("claude-sonnet-4-5\t4\t20\t0.3\t3.75\t6\t15\t")), "{shown}");
    let unknown = sightline(&["prices", "show", "--data-dir", &path, "vim"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("there is no agent \"vim\""), "{}", stderr(&unknown));

    // The server prices new events with it and serves it to hooks under a new ETag.
    server.start();
    assert_eq!(server.post_events(&token, &envelope(vec![event("turn_end", "after", now_ms())])).0, 200);
    assert_eq!(session_cost(&server, "after"), 48_500_000, "$0.0485 at $4/$20");
    assert_eq!(session_cost(&server, "before"), 45_000_000, "stored costs change only by reprice-events-apply");
    // (A new port after the restart.)
    let url = format!("{}/v1/price-table?agent=claude_code", server.ingest);
    let response = agent().get(&url).call().unwrap();
    let etag = response.headers().get("etag").unwrap().to_str().unwrap().to_string();
    assert_ne!(etag, embedded_etag);
    assert_eq!(response.into_body().read_to_string().unwrap(), table, "the operator's bytes, as written");
    server.terminate();

    // `reprice-events` reports what the table in force would change, and writes nothing.
    let report = sightline(&["jobs", "run", "--data-dir", &path, "reprice-events"]);
    assert!(report.status.success(), "{}", stderr(&report));
    let text = stdout(&report);
    assert!(text.contains("claude_code\tclaude-sonnet-4-5-20250929\t2\t1\t0.0935\t0.0970"), "{text}");
    assert!(text.contains("claude-sonnet-4-5-20250929: 1 of 2 events, $0.0935 -> $0.0970"), "{text}");
    let conn = server.main_db();
    assert_eq!(session_cost(&server, "before"), 45_000_000);
    // The apply rewrites the one row that differs and moves its session's total exactly.
    let applied = sightline(&["jobs", "run", "--data-dir", &path, "reprice-events-apply"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert!(stdout(&applied).contains(": 1 rows touched"), "{}", stdout(&applied));
    assert_eq!((session_cost(&server, "before"), session_cost(&server, "after")), (48_500_000, 48_500_000));
    let summary: String =
        conn.query_row("SELECT summary FROM job_runs WHERE job = 'reprice-events-apply'", [], |r| r.get(0)).unwrap();
    assert!(summary.contains("1 of 2 events, $0.0935 -> $0.0970"), "{summary}");
    // Safe to re-run: nothing differs any more.
    let again = sightline(&["jobs", "run", "--data-dir", &path, "reprice-events-apply"]);
    assert!(stdout(&again).contains(": 0 rows touched"), "{}", stdout(&again));
    assert!(stdout(&again).contains("no stored cost differs"), "{}", stdout(&again));
    assert_eq!(session_cost(&server, "before"), 48_500_000);
}

#[test]
fn prices_check_names_each_unusable_file_and_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("price-tables");
    std::fs::create_dir_all(&tables).unwrap();
    std::fs::write(tables.join("price-table.claude.v1.json"), EMBEDDED).unwrap();
    std::fs::write(tables.join("price-table.claude_code.v1.json"), EMBEDDED.replace("\"2026-11-21\"", "\"last week\""))
        .unwrap();
    std::fs::write(tables.join("README.txt"), "not a table").unwrap();
    let check = sightline(&["prices", "check", "--data-dir", dir.path().to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(1));
    let text = stdout(&check);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("price-table.claude.v1.json: field `(file name)`: names no agent"), "{text}");
    assert!(
        lines[1].contains("price-table.claude_code.v1.json: field `revision`: \"last week\" is not a date YYYY-MM-DD"),
        "{text}"
    );
    // What the server would refuse to start with, the list refuses too.
    let listed = sightline(&["prices", "list", "--data-dir", dir.path().to_str().unwrap()]);
    assert_eq!(listed.status.code(), Some(2));
    assert!(stderr(&listed).contains("names no agent"), "{}", stderr(&listed));
}

#[test]
fn an_apply_stopped_after_its_main_db_step_is_finished_by_the_next_and_moves_each_total_once() {
    use sightline::events::writer::MainChange;
    use sightline::sessions::reprice;
    let mut server = TestServer::spawn();
    let (data_dir, token) = (server.data_dir.clone(), server.token.clone());
    let (today, yesterday) = (now_ms(), now_ms() - 86_400_000);
    let turns = vec![
        event("turn_end", "y", yesterday),
        event("turn_end", "both", yesterday + 1),
        event("turn_end", "both", today),
        event("turn_end", "t", today + 1),
    ];
    assert_eq!(server.post_events(&token, &envelope(turns)).0, 200);
    server.terminate();
    write_operator_table(&data_dir);
    let book = sightline::pricing::PriceBook::load(&data_dir).unwrap();
    let conn = sightline::db::open(
        &data_dir.join("main.db"),
        sightline::db::Durability::PowerSafe,
        sightline::db::Checkpointing::Automatic,
    )
    .unwrap();
    let commit = commit_on(&conn);
    let cost = |session: &str| -> i64 {
        conn.query_row("SELECT cost_nusd FROM sessions WHERE agent_session_id = ?1", [session], |r| r.get(0)).unwrap()
    };
    let stored_costs = || -> Vec<i64> {
        let mut costs = Vec::new();
        for day in sightline::events::partitions::list_days(&data_dir).unwrap() {
            let partition = sightline::events::partitions::open_for_read(&data_dir, day).unwrap().unwrap();
            let mut stmt = partition.prepare("SELECT cost_nusd FROM events ORDER BY ts_ms").unwrap();
            costs.extend(stmt.query_map([], |r| r.get::<_, i64>(0)).unwrap().map(Result::unwrap));
        }
        costs
    };

    // The process dies right after the first day's main.db step commits.
    let calls = std::cell::Cell::new(0);
    let dying = |change: MainChange| {
        calls.set(calls.get() + 1);
        commit(change)?;
        if calls.get() == 1 {
            return Err(sightline::db::DbError::Io {
                context: "killed".into(),
                source: std::io::Error::other("kill -9"),
            });
        }
        Ok(())
    };
    // Each run of the job holds the store's rewrite lock, as `reprice-events-apply` does.
    let store = Store::at(&data_dir);
    let apply = |change_main: &dyn Fn(MainChange) -> Result<(), sightline::db::DbError>| {
        reprice::apply(
            &store.rewriting("test").unwrap(),
            &conn,
            &book,
            change_main,
            sightline::analytics::partials::force_rebuild,
            today,
        )
    };
    assert!(apply(&dying).is_err());
    assert_eq!((cost("y"), cost("both"), cost("t")), (48_500_000, 93_500_000, 45_000_000), "yesterday's deltas are in");
    assert_eq!(stored_costs(), [45_000_000; 4], "no partition rewritten yet");
    let pending: i64 = conn.query_row("SELECT count(*) FROM reprice_pending", [], |r| r.get(0)).unwrap();
    assert_eq!(pending, 2);

    // The next run applies what was pending first, then the rest; no total moves twice.
    let report = apply(&commit).unwrap();
    assert_eq!(report.rows_rewritten, 4, "two pending, then today's two");
    assert_eq!((cost("y"), cost("both"), cost("t")), (48_500_000, 97_000_000, 48_500_000));
    assert_eq!(stored_costs(), [48_500_000; 4]);
    let pending: i64 = conn.query_row("SELECT count(*) FROM reprice_pending", [], |r| r.get(0)).unwrap();
    assert_eq!(pending, 0);
    assert_eq!(reprice::report(&data_dir, &book).unwrap().changed(), 0);
    let again = apply(&commit).unwrap();
    assert_eq!((again.rows_rewritten, again.changed()), (0, 0), "a re-run changes nothing");
}

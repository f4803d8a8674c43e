//! The eval commands on any results.db a harness may write, not only ours: a property
//! test builds random databases (NULLs in every column, numbers stored as text or
//! blobs, columns declared with any type or missing, unknown extra columns, optional
//! tables absent, empty and one-cell runs, very long and non-UTF-8 text) and runs the
//! real `results`, `report` and `dashboard` on each, checking that nothing answers 5xx
//! or fails and that every count agrees with what was written. Two fixed fixtures
//! cover a harness that records no tokens, cost or API calls, and one that stores
//! every number as text; a database damaged part-way shows that a failing export or
//! report is never left looking complete.
//!
//! `PROPTEST_CASES=500 cargo test --test it evals_any_results_db::` runs the property
//! longer (CI runs the default below).

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::results::RunningDashboard;
use common::{sightline, stderr, stdout};
use proptest::prelude::*;
use rusqlite::types::{ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{Connection, ToSql};
use serde_json::Value;

/// Cases per `cargo test` run; `PROPTEST_CASES` overrides it.
const DEFAULT_CASES: u32 = 24;

/// The spec's `run_results` columns after `cell_id` and `run_name`.
fn spec_columns() -> &'static [&'static str] {
    &sightline::evals::db::COLUMNS[2..]
}

/// One stored value, of any SQLite type.
#[derive(Clone, Debug)]
enum Stored {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    /// Text whose bytes are not UTF-8 (SQLite stores what it is given).
    BadText(Vec<u8>),
    Blob(Vec<u8>),
}

impl ToSql for Stored {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Stored::Null => ToSqlOutput::Owned(SqlValue::Null),
            Stored::Int(n) => ToSqlOutput::Owned(SqlValue::Integer(*n)),
            Stored::Real(x) => ToSqlOutput::Owned(SqlValue::Real(*x)),
            Stored::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Stored::BadText(bytes) => ToSqlOutput::Borrowed(ValueRef::Text(bytes)),
            Stored::Blob(bytes) => ToSqlOutput::Borrowed(ValueRef::Blob(bytes)),
        })
    }
}

fn any_value() -> impl Strategy<Value = Stored> {
    prop_oneof![
        3 => Just(Stored::Null),
        2 => any::<i64>().prop_map(Stored::Int),
        2 => (0i64..100_000).prop_map(Stored::Int),
        2 => (-10.0f64..1e7).prop_map(Stored::Real),
        1 => prop_oneof![Just(f64::MAX), Just(-0.0), Just(1e-300)].prop_map(Stored::Real),
        2 => "[ ]?[0-9]{1,6}(\\.[0-9]{1,3})?[ ]?".prop_map(Stored::Text),
        2 => "[a-zA-Z/<>&' ]{0,16}".prop_map(Stored::Text),
        1 => (1usize..6).prop_map(|k| Stored::Text(format!("long {}", "é<x>&".repeat(k * 2000)))),
        1 => proptest::collection::vec(any::<u8>(), 0..24).prop_map(|b| Stored::BadText([&b"\xff\xfe"[..], &b].concat())),
        1 => proptest::collection::vec(any::<u8>(), 0..24).prop_map(Stored::Blob),
    ]
}

/// Values a real harness mostly writes in a column, mixed with anything at all.
fn column_value(column: &'static str) -> BoxedStrategy<Stored> {
    let usual: BoxedStrategy<Stored> = match column {
        "exit_class" => prop_oneof![Just("pass"), Just("fail"), Just("timeout"), Just("error")]
            .prop_map(|t| Stored::Text(t.into()))
            .boxed(),
        "success" => prop_oneof![Just(0.0), Just(1.0), Just(0.5), (0.0f64..=1.0)].prop_map(Stored::Real).boxed(),
        "harness" | "model" | "task_id" => prop_oneof![Just("alpha"), Just("beta"), Just("m<1>"), Just("t/2")]
            .prop_map(|t| Stored::Text(t.into()))
            .boxed(),
        "track" => prop_oneof![Just("swe"), Just("open_ended"), Just("multi_phase")]
            .prop_map(|t| Stored::Text(t.into()))
            .boxed(),
        "harness_metadata" => prop_oneof![
            Just(r#"{"phases": [{"name": "plan", "usage": {"input_tokens": 5}}], "review_model": null}"#),
            Just(r#"{"phases": "not a list"}"#),
            Just("[1, 2"),
        ]
        .prop_map(|t| Stored::Text(t.into()))
        .boxed(),
        _ => any_value().boxed(),
    };
    prop_oneof![3 => usual, 2 => any_value()].boxed()
}

#[derive(Clone, Debug)]
struct Schema {
    /// (column, declared type) for the spec columns present, then extra ones.
    columns: Vec<(&'static str, &'static str)>,
    extra_columns: usize,
    key: &'static str,
    run_state: bool,
    run_phases: bool,
    reconciliation: bool,
}

fn schema() -> impl Strategy<Value = Schema> {
    let declared = prop_oneof![
        Just(""),
        Just("TEXT"),
        Just("INTEGER"),
        Just("REAL"),
        Just("NUMERIC"),
        Just("BLOB"),
        Just("VARCHAR(40)")
    ];
    (
        proptest::collection::vec((any::<bool>(), any::<bool>(), declared), spec_columns().len()),
        0usize..3,
        prop_oneof![Just(""), Just(", PRIMARY KEY (run_name, cell_id)"), Just("WITHOUT ROWID")],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(picks, extra_columns, key, run_state, run_phases, reconciliation)| Schema {
            // Most columns are there; about one in four is missing.
            columns: spec_columns()
                .iter()
                .zip(picks)
                .filter(|(_, (a, b, _))| *a || *b)
                .map(|(column, (_, _, declared))| (*column, declared))
                .collect(),
            extra_columns,
            key,
            run_state,
            run_phases,
            reconciliation,
        })
}

#[derive(Clone, Debug)]
struct Cell {
    values: Vec<Stored>,
    state: Option<Stored>,
}

#[derive(Clone, Debug)]
struct Case {
    schema: Schema,
    /// run name → its result cells; runs with no cells exist only in live progress.
    runs: BTreeMap<String, Vec<Cell>>,
}

const RUN_NAMES: [&str; 6] = ["nightly", "run with spaces", "ünï/códe", "../../escape", "100%25 <b>", "r"];

fn case() -> impl Strategy<Value = Case> {
    schema().prop_flat_map(|schema| {
        let cell = (
            spec_columns().iter().map(|c| column_value(c)).collect::<Vec<_>>(),
            proptest::option::of(prop_oneof![
                Just(Stored::Text("failed".into())),
                Just(Stored::Text("running".into())),
                Just(Stored::Text("skipped".into())),
                Just(Stored::Text("odd".into())),
                Just(Stored::Null),
            ]),
        )
            .prop_map(|(values, state)| Cell { values, state });
        let runs = proptest::collection::btree_map(
            proptest::sample::select(&RUN_NAMES[..]).prop_map(str::to_string),
            proptest::collection::vec(cell, 0..9),
            0..4,
        );
        (Just(schema), runs).prop_map(|(schema, runs)| Case { schema, runs })
    })
}

/// Writes the case as a results.db in the way a foreign harness might have.
fn write(path: &Path, case: &Case) {
    let conn = Connection::open(path).unwrap();
    let schema = &case.schema;
    let mut ddl: Vec<String> = vec!["cell_id TEXT NOT NULL".into(), "run_name TEXT NOT NULL".into()];
    ddl.extend(schema.columns.iter().map(|(c, t)| format!("{c} {t}")));
    ddl.extend((0..schema.extra_columns).map(|i| format!("harness_extra_{i} TEXT DEFAULT 'x'")));
    let (key, without_rowid) = match schema.key {
        "WITHOUT ROWID" => (", PRIMARY KEY (run_name, cell_id)", " WITHOUT ROWID"),
        key => (key, ""),
    };
    conn.execute_batch(&format!("CREATE TABLE run_results ({}{key}){without_rowid};", ddl.join(", "))).unwrap();
    if schema.run_state {
        conn.execute_batch("CREATE TABLE run_state (run_name TEXT, cell_id TEXT, status, error, updated_at)").unwrap();
    }
    if schema.run_phases {
        conn.execute_batch(
            "CREATE TABLE run_phases (run_name, cell_id, phase_index, name, trace_id, model, model_role, exit_code,
             duration_ms, timed_out, usage, total_cost, num_api_calls, error)",
        )
        .unwrap();
    }
    if schema.reconciliation {
        conn.execute_batch(
            "CREATE TABLE reconciliation_results (run_name, cell_id, reconciled_at, reconciler, original_exit_class,
             original_success, reconciled_exit_class, reconciled_success, agrees, notes)",
        )
        .unwrap();
    }
    let names: Vec<&str> = schema.columns.iter().map(|(c, _)| *c).collect();
    let placeholders = vec!["?"; names.len() + 2].join(", ");
    let insert = format!("INSERT INTO run_results (cell_id, run_name, {}) VALUES ({placeholders})", names.join(", "));
    for (run, cells) in &case.runs {
        if cells.is_empty() && schema.run_state {
            conn.execute("INSERT INTO run_state VALUES (?1, 'planned', 'running', NULL, 5)", [run]).unwrap();
        }
        for (i, cell) in cells.iter().enumerate() {
            let cell_id = format!("h{i}__m/<{i}>__t%{i}__r0");
            let mut values: Vec<&dyn ToSql> = vec![&cell_id, run];
            for (column, _) in &schema.columns {
                let index = spec_columns().iter().position(|c| c == column).unwrap();
                values.push(&cell.values[index]);
            }
            conn.execute(&insert, values.as_slice()).unwrap();
            if let (Some(status), true) = (&cell.state, schema.run_state) {
                conn.execute(
                    "INSERT INTO run_state VALUES (?1, ?2, ?3, ?4, NULL)",
                    rusqlite::params![run, cell_id, status, cell.values[8]],
                )
                .unwrap();
            }
            if schema.run_phases && i % 2 == 0 {
                conn.execute(
                    "INSERT INTO run_phases VALUES (?1, ?2, ?3, ?4, NULL, ?5, NULL, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                    rusqlite::params![
                        run,
                        cell_id,
                        cell.values[4],
                        cell.values[1],
                        cell.values[0],
                        cell.values[4],
                        cell.values[15],
                        cell.values[6],
                        cell.values[21],
                        cell.values[14],
                        cell.values[17],
                        cell.values[8]
                    ],
                )
                .unwrap();
            }
            if schema.reconciliation && i % 3 == 0 {
                conn.execute(
                    "INSERT INTO reconciliation_results VALUES (?1, ?2, ?3, 'rerun', ?4, ?5, ?4, ?6, ?7, ?8)",
                    rusqlite::params![
                        run,
                        cell_id,
                        cell.values[24],
                        cell.values[5],
                        cell.values[6],
                        cell.values[6],
                        cell.values[4],
                        cell.values[8]
                    ],
                )
                .unwrap();
            }
        }
    }
}

fn enc(text: &str) -> String {
    sightline::model::percent_encode(text)
}

fn csv_records(text: &str) -> usize {
    csv::Reader::from_reader(text.as_bytes()).records().inspect(|r| assert!(r.is_ok(), "{r:?}")).count()
}

/// Every command and route on one database, with the counts each must agree on.
fn check_everything(db: &Path, expected: &BTreeMap<String, usize>) {
    let db_arg = db.to_str().unwrap();
    let runs = sightline(&["results", "--db", db_arg]);
    assert!(runs.status.success(), "results: {}", stderr(&runs));
    assert_eq!(stdout(&runs).lines().count(), 1 + expected.len(), "{}", stdout(&runs));

    let dashboard = RunningDashboard::start(db, None);
    dashboard.ok("/");
    let listed = dashboard.json("/api/runs");
    // The parts of every run add up, whatever the database holds (docs/results-db.md, "Counts").
    for run in listed["runs"].as_array().unwrap() {
        let n = |key: &str| run[key].as_i64().unwrap_or_else(|| panic!("{key}: {run}"));
        assert_eq!(n("completed_cells"), n("passed") + n("failed") + n("other_results"), "{run}");
        assert_eq!(n("total_cells"), n("completed_cells") + n("no_result_cells"), "{run}");
        assert!(n("total_cells") >= n("planned_cells") && n("needs_attention") <= n("total_cells"), "{run}");
        let errors = dashboard.json(&format!("/api/run/{}/errors", enc(run["run_name"].as_str().unwrap())));
        assert_eq!(errors["failed_cells"].as_array().unwrap().len() as i64, n("needs_attention"), "{run}");
    }
    let listed: BTreeMap<String, i64> = listed["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["run_name"].as_str().unwrap().to_string(), r["completed_cells"].as_i64().unwrap()))
        .collect();
    assert_eq!(listed, expected.iter().map(|(r, n)| (r.clone(), *n as i64)).collect());

    let out_dir = tempfile::tempdir().unwrap();
    for (run, &cells) in expected {
        let table = sightline(&["results", run, "--db", db_arg]);
        assert!(table.status.success(), "results {run}: {}", stderr(&table));
        assert_eq!(stdout(&table).lines().count(), 1 + cells, "{}", stdout(&table));
        let json: Value =
            serde_json::from_str(&stdout(&sightline(&["results", run, "--db", db_arg, "--format", "json"]))).unwrap();
        assert_eq!(json.as_array().unwrap().len(), cells);
        let csv = sightline(&["results", run, "--db", db_arg, "--format", "csv"]);
        assert_eq!(csv_records(&stdout(&csv)), cells);

        let report = sightline(&["report", run, "--db", db_arg, "--output", out_dir.path().to_str().unwrap()]);
        assert!(report.status.success(), "report {run}: {}", stderr(&report));
        let printed = stdout(&report);
        let written: Vec<&str> = printed.lines().map(|l| l.trim_start_matches("wrote ")).collect();
        let report_json: Value = serde_json::from_str(&std::fs::read_to_string(written[1]).unwrap()).unwrap();
        assert_eq!(report_json["summary"]["completed_cells"], cells);
        assert_eq!(report_json["results"].as_array().unwrap().len(), cells);
        assert_eq!(csv_records(&std::fs::read_to_string(written[2]).unwrap()), cells);

        let path = format!("/api/run/{}", enc(run));
        let page = dashboard.json(&format!("{path}?per_page=500"));
        assert_eq!(page["total"], cells);
        assert_eq!(page["results"].as_array().unwrap().len(), cells);
        let boards = dashboard.json(&format!("{path}/leaderboard"));
        let board_cells: i64 = boards["leaderboards"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|rows| rows.as_array().unwrap())
            .map(|row| row["cells"].as_i64().unwrap())
            .sum();
        assert_eq!(board_cells, cells as i64);
        let summary = &dashboard.json("/api/runs")["runs"];
        let summary = summary.as_array().unwrap().iter().find(|r| r["run_name"] == run.as_str()).unwrap();
        assert_eq!(summary["avg_success"].is_null(), cells == 0, "{summary}");
        assert!(summary["passed"].as_i64().unwrap() + summary["failed"].as_i64().unwrap() <= cells as i64);
        dashboard.json(&format!("{path}/status"));
        dashboard.json(&format!("{path}/errors"));
        let run_page = format!("/run/{}", enc(run));
        dashboard.ok(&run_page);
        for sort in ["success", "tokens", "total_cost", "latency_ms", "repeat", "num_api_calls", "timestamp", "model"] {
            let sorted = dashboard.json(&format!("{path}?sort={sort}&order=desc&per_page=500"));
            assert_eq!(sorted["total"], cells, "sorted by {sort}");
            dashboard.ok(&format!("{run_page}?sort={sort}&min_success=0"));
        }
        assert_eq!(csv_records(&dashboard.ok(&format!("{run_page}/export/csv"))), cells);
        let exported: Value = serde_json::from_str(&dashboard.ok(&format!("{run_page}/export/json"))).unwrap();
        assert_eq!(exported.as_array().unwrap().len(), cells);
        for record in exported.as_array().unwrap().iter().take(3) {
            let cell = enc(record["cell_id"].as_str().unwrap());
            dashboard.ok(&format!("{run_page}/cell/{cell}"));
            dashboard.json(&format!("{path}/cell/{cell}"));
        }
        dashboard.ok(&format!("/compare?a={0}&b={0}", enc(run)));
        // A run against itself: statistics over its tasks, or, when its cells name no task,
        // a refusal that says so (never "+0.0 pts" over nothing).
        let (status, body) = dashboard.get(&format!("/api/compare?a={0}&b={0}", enc(run)));
        let answer: Value = serde_json::from_str(&body).unwrap();
        match status {
            200 => assert!(answer["shared_tasks"].as_u64().unwrap() >= 1, "{body}"),
            422 => assert!(answer["error"]["message"].as_str().unwrap().contains("share no task"), "{body}"),
            other => panic!("compare {run}: {other} {body}"),
        }
    }
}

fn expected_counts(case: &Case) -> BTreeMap<String, usize> {
    case.runs
        .iter()
        .filter(|(_, cells)| !cells.is_empty() || case.schema.run_state)
        .map(|(r, c)| (r.clone(), c.len()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_CASES),
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_command_and_route_reads_any_results_db(case in case()) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.db");
        write(&db, &case);
        check_everything(&db, &expected_counts(&case));
    }
}

/// The cells of the two fixtures: (harness, model, task, repeat, exit, success,
/// input, output, cost, latency ms).
type Row = (&'static str, &'static str, &'static str, i64, &'static str, Option<f64>, i64, i64, f64, Option<i64>);

const ROWS: [Row; 6] = [
    ("alpha", "m1", "t1", 0, "pass", Some(1.0), 1200, 300, 0.25, Some(61_000)),
    ("alpha", "m1", "t1", 1, "fail", Some(0.0), 900, 200, 0.125, None),
    ("alpha", "m1", "t2", 0, "pass", Some(1.0), 20, 10, 2.5, Some(9_000)),
    ("beta", "m1", "t1", 0, "timeout", None, 11, 4, 0.5, None),
    ("beta", "m1", "t2", 0, "fail", Some(0.25), 100_000, 5, 10.0, Some(120_000)),
    ("beta", "m1", "t2", 1, "pass", Some(1.0), 9, 99, 0.75, Some(500)),
];

/// A harness that records no tokens, cost or API calls, and no latency for cells
/// that timed out: the shape of the first report against the eval service.
#[test]
fn a_harness_without_tokens_cost_or_api_calls_gets_dashes_not_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let conn = common::results::create(&db);
    // Our own DDL says NOT NULL; this harness's does not.
    conn.execute_batch(
        "ALTER TABLE run_results RENAME TO ours; CREATE TABLE run_results AS SELECT * FROM ours WHERE 0; DROP TABLE ours;",
    )
    .unwrap();
    for (i, (harness, model, task, repeat, exit, success, _, _, _, latency)) in ROWS.iter().enumerate() {
        conn.execute(
            "INSERT INTO run_results (cell_id, run_name, harness, model, task_id, track, repeat, exit_class, success,
               latency_ms, timestamp) VALUES (?1, 'nightly', ?2, ?3, ?4, 'swe', ?5, ?6, ?7, ?8, ?9)",
            rusqlite::params![
                format!("{harness}__{model}__{task}__r{repeat}"),
                harness,
                model,
                task,
                repeat,
                exit,
                success,
                latency.filter(|_| i % 3 != 0),
                "2026-11-20T10:00:00+00:00"
            ],
        )
        .unwrap();
    }
    drop(conn);
    let mut expected = BTreeMap::new();
    expected.insert("nightly".to_string(), ROWS.len());
    check_everything(&db, &expected);

    let dashboard = RunningDashboard::start(&db, None);
    let boards = dashboard.json("/api/run/nightly/leaderboard");
    let beta =
        &boards["leaderboards"]["m1"].as_array().unwrap().iter().find(|r| r["harness"] == "beta").unwrap().clone();
    assert!(beta["avg_tokens"].is_null() && beta["avg_cost"].is_null() && beta["avg_api_calls"].is_null(), "{beta}");
    assert_eq!(beta["measured_cells"]["avg_tokens"], 0);
    assert_eq!(beta["unscored_cells"], 1);
    // NULL success counts as not succeeded: (0 + 0.25 + 1) / 3.
    assert_eq!(beta["success_pct"], "41.7");
    assert_eq!(beta["measured_cells"]["avg_time_s"], 2, "latency kept for two of beta's three cells: {beta}");
    let page = dashboard.ok("/run/nightly");
    assert!(page.contains("—"), "unknown figures are dashes");
    assert!(page.contains("(over 1 of 3)"), "a partial mean says over how many cells");
    assert!(page.contains("1 unscored, counted as not succeeded"));
    let runs = dashboard.json("/api/runs");
    assert!(runs["runs"][0]["total_cost"].is_null());
    let csv = dashboard.ok("/run/nightly/export/csv");
    let first = csv::Reader::from_reader(csv.as_bytes()).records().next().unwrap().unwrap();
    assert_eq!((&first[11], &first[16], &first[19]), ("", "", ""), "tokens, cost and API calls are empty fields");
    let table = stdout(&sightline(&["results", "nightly", "--db", db.to_str().unwrap()]));
    assert!(table.lines().nth(1).unwrap().split('\t').any(|f| f == "—"), "{table}");
}

/// Writes `ROWS` typed as the spec has them, or every value as text in TEXT columns.
fn fixture_db(path: &Path, as_text: bool) {
    let conn = Connection::open(path).unwrap();
    let kind = |typed: &str| if as_text { "TEXT" } else { typed }.to_string();
    conn.execute_batch(&format!(
        "CREATE TABLE run_results (cell_id TEXT, run_name TEXT, harness TEXT, model TEXT, task_id TEXT, track TEXT,
           repeat {i}, exit_class TEXT, success {r}, input_tokens {i}, output_tokens {i}, total_cost {r},
           latency_ms {i}, num_api_calls {i}, timestamp TEXT)",
        i = kind("INTEGER"),
        r = kind("REAL")
    ))
    .unwrap();
    for (harness, model, task, repeat, exit, success, input, output, cost, latency) in ROWS {
        let number = |x: Option<String>| -> Stored {
            match (x, as_text) {
                (None, _) => Stored::Null,
                (Some(t), true) => Stored::Text(format!(" {t}")),
                (Some(t), false) if t.contains('.') => Stored::Real(t.parse().unwrap()),
                (Some(t), false) => Stored::Int(t.parse().unwrap()),
            }
        };
        let real = |x: f64| format!("{x:.3}");
        conn.execute(
            "INSERT INTO run_results VALUES (?1, 'nightly', ?2, ?3, ?4, 'swe', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            rusqlite::params![
                format!("{harness}__{model}__{task}__r{repeat}"),
                harness,
                model,
                task,
                number(Some(repeat.to_string())),
                exit,
                number(success.map(real)),
                number(Some(input.to_string())),
                number(Some(output.to_string())),
                number(Some(real(cost))),
                number(latency.map(|l| l.to_string())),
                number(Some("3".into())),
                "2026-11-20T10:00:00+00:00",
            ],
        )
        .unwrap();
    }
}

#[test]
fn numbers_stored_as_text_give_the_same_figures_and_order_as_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (typed, text) = (dir.path().join("typed.db"), dir.path().join("text.db"));
    fixture_db(&typed, false);
    fixture_db(&text, true);
    let as_text: i64 = Connection::open(&text)
        .unwrap()
        .query_row("SELECT count(*) FROM run_results WHERE typeof(input_tokens) = 'text'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(as_text, ROWS.len() as i64, "the fixture really stores numbers as text");
    let mut expected = BTreeMap::new();
    expected.insert("nightly".to_string(), ROWS.len());
    check_everything(&text, &expected);

    let (a, b) = (RunningDashboard::start(&typed, None), RunningDashboard::start(&text, None));
    for path in ["/api/runs", "/api/run/nightly/leaderboard", "/api/run/nightly?sort=tokens&order=desc"] {
        let (mut x, mut y) = (a.json(path), b.json(path));
        if let (Some(xs), Some(ys)) = (x.get_mut("runs"), y.get_mut("runs")) {
            xs[0]["last_activity"] = Value::Null;
            ys[0]["last_activity"] = Value::Null;
        }
        assert_eq!(x, y, "{path}");
    }
    let order: Vec<String> = b.json("/api/run/nightly?sort=tokens&order=desc")["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["input_tokens"].to_string())
        .collect();
    assert_eq!(order[0], "100000", "numeric order, not text order: {order:?}");
    let boards = b.json("/api/run/nightly/leaderboard");
    let alpha = boards["leaderboards"]["m1"].as_array().unwrap().iter().find(|r| r["harness"] == "alpha").unwrap();
    assert_eq!((alpha["avg_tokens"].as_str(), alpha["avg_cost"].as_str()), (Some("877"), Some("0.9583")), "{alpha}");
}

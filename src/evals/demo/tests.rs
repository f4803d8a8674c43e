//! Tests of the demo generator: contents, shapes, determinism and refusal to overwrite.

use std::collections::BTreeSet;

use rusqlite::types::Value;
use serde_json::Value as Json;

use super::*;

fn write(seed: u64, scale: Scale) -> (tempfile::TempDir, Connection, DemoSummary) {
    let dir = tempfile::tempdir().unwrap();
    let summary = write_demo(&dir.path().join("results.db"), &DemoOptions { seed, scale }).unwrap();
    let conn = Connection::open(dir.path().join("results.db")).unwrap();
    (dir, conn, summary)
}

fn one<T: rusqlite::types::FromSql>(conn: &Connection, sql: &str) -> T {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Asserts that every SQL boolean expression holds.
fn holds(conn: &Connection, checks: &[&str]) {
    checks.iter().for_each(|sql| assert!(one::<bool>(conn, &format!("SELECT {sql}")), "{sql}"));
}

#[test]
fn demo_writes_three_runs_in_wal_and_the_live_run_has_every_status_with_errors() {
    let (_dir, conn, summary) = write(7, Scale::Demo);
    let names: Vec<&str> = summary.runs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, [RECONCILED, "ablation-reviewer", "nightly-2026-11-21"]);
    for (name, cells) in &summary.runs {
        assert!((300..700).contains(cells), "{name}: {cells}");
        let sql = format!("SELECT COUNT(*) FROM run_results WHERE run_name = '{name}'");
        assert_eq!(one::<i64>(&conn, &sql) as usize, *cells);
    }
    assert_eq!(one::<String>(&conn, "PRAGMA journal_mode"), "wal");
    holds(
        &conn,
        &[
            "(SELECT COUNT(DISTINCT status) FROM run_state WHERE run_name = 'nightly-2026-11-21') = 4",
            "NOT EXISTS (SELECT 1 FROM run_state WHERE status = 'running' AND run_name <> 'nightly-2026-11-21')",
            "NOT EXISTS (SELECT 1 FROM run_state WHERE status IN ('failed', 'skipped') AND COALESCE(error, '') = '')",
            "(SELECT MAX(LENGTH(error)) FROM run_state WHERE status = 'failed') > 300",
            "(SELECT MAX(LENGTH(error)) FROM run_state WHERE status = 'skipped') > 300",
            // Only completed and failed cells have results, and all of them have.
            "NOT EXISTS (SELECT 1 FROM run_results r LEFT JOIN run_state s USING (run_name, cell_id) \
            WHERE s.status IS NULL OR s.status NOT IN ('completed', 'failed'))",
            "NOT EXISTS (SELECT 1 FROM run_state s LEFT JOIN run_results r USING (run_name, cell_id) \
            WHERE s.status IN ('completed', 'failed') AND r.cell_id IS NULL)",
        ],
    );
}

#[test]
fn cells_are_well_formed_varied_hostile_and_carry_fake_secrets_and_control_characters() {
    let (_dir, conn, _) = write(7, Scale::Demo);
    holds(
        &conn,
        &[
            "NOT EXISTS (SELECT 1 FROM run_results WHERE cell_id <> harness || '__' || model || '__' || task_id || '__r' || repeat \
            OR INSTR(harness, '__') OR INSTR(model, '__') OR INSTR(task_id, '__') OR success NOT BETWEEN 0 AND 1)",
            "(SELECT COUNT(DISTINCT track) FROM run_results) = 3 AND (SELECT MAX(repeat) FROM run_results) = 2",
            "(SELECT COUNT(DISTINCT harness) FROM run_results) = 3 AND (SELECT COUNT(DISTINCT model) FROM run_results) = 5",
            "(SELECT COUNT(DISTINCT exit_class) FROM run_results) = 5",
            "(SELECT COUNT(*) FROM run_results WHERE LENGTH(error_message) > 60) > 10",
            "(SELECT COUNT(*) FROM run_results WHERE error_message LIKE 'Traceback%' \
            AND LENGTH(error_message) BETWEEN 300 AND 2100 AND INSTR(error_message, char(10))) > 5",
            "EXISTS (SELECT 1 FROM run_results WHERE cell_id LIKE '%\"%&<script>alert(1)</script>%' \
            AND error_message LIKE '%\"Zoë''s café & <script>alert(1)</script>\"%')",
            "EXISTS (SELECT 1 FROM run_results WHERE LENGTH(harness_stderr) > 51200 AND LENGTH(harness_stdout) > 61440)",
            "EXISTS (SELECT 1 FROM run_results WHERE INSTR(harness_stderr, 'AWS_SECRET_ACCESS_KEY=FAKE') \
            AND INSTR(harness_stderr, 'ghp_FAKE') AND INSTR(harness_stderr, '@example.com'))",
            "EXISTS (SELECT 1 FROM run_results WHERE INSTR(harness_stdout, char(27)) AND INSTR(harness_stderr, char(8)))",
            "EXISTS (SELECT 1 FROM run_results WHERE diff LIKE 'diff --git a/%@@ -%@@ -%' AND diff LIKE '%.rs%')",
            "EXISTS (SELECT 1 FROM run_results WHERE test_output LIKE '%test session starts%FAILED%')",
            "EXISTS (SELECT 1 FROM run_results WHERE test_output LIKE 'running %test result: ok.%')",
            // swe is mostly all-or-nothing; open_ended is graded.
            "(SELECT SUM(success NOT IN (0.0, 1.0)) * 10 < COUNT(*) FROM run_results WHERE track = 'swe')",
            "(SELECT COUNT(DISTINCT success) > 8 FROM run_results WHERE track = 'open_ended')",
        ],
    );
}

#[test]
fn multi_phase_cells_have_section_2_2_phases_with_and_without_run_phases_rows() {
    let (_dir, conn, summary) = write(7, Scale::Demo);
    let keys = "name trace_id model model_role exit_code duration_ms timed_out usage total_cost num_api_calls";
    let usage = "input_tokens output_tokens cache_read_tokens cache_write_tokens reasoning_tokens";
    let set = |v: &Json| v.as_object().unwrap().keys().cloned().collect::<BTreeSet<_>>();
    let words = |s: &str| s.split(' ').map(String::from).collect::<BTreeSet<_>>();
    let sql = "SELECT harness_metadata, (SELECT COUNT(*) FROM run_phases p WHERE p.run_name = r.run_name \
        AND p.cell_id = r.cell_id) FROM run_results r WHERE track = 'multi_phase'";
    let mut stmt = conn.prepare(sql).unwrap();
    let (mut with, mut without) = (0, 0);
    for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))).unwrap() {
        let (meta, rows) = row.unwrap();
        let meta: Json = serde_json::from_str(&meta).unwrap();
        assert_eq!(set(&meta), words("phases review_model"));
        let phases = meta["phases"].as_array().unwrap();
        assert!(phases.len() >= 2 && phases.iter().all(|p| set(p) == words(keys) && set(&p["usage"]) == words(usage)));
        assert!(rows == 0 || rows as usize == phases.len(), "{rows} rows for {} phases", phases.len());
        (with, without) = if rows > 0 { (with + 1, without) } else { (with, without + 1) };
    }
    assert!(with > 200 && without > 200, "{with} {without}");
    assert_eq!(one::<i64>(&conn, "SELECT COUNT(*) FROM run_phases") as usize, summary.phases);
    holds(
        &conn,
        &[
            "NOT EXISTS (SELECT 1 FROM run_phases WHERE (exit_code <> 0 OR timed_out = 1) = (error IS NULL))",
            "EXISTS (SELECT 1 FROM run_phases WHERE timed_out = 1) AND EXISTS (SELECT 1 FROM run_phases WHERE exit_code = 1)",
            "EXISTS (SELECT 1 FROM run_phases WHERE model_role = 'reviewer' AND error IS NOT NULL)",
            "EXISTS (SELECT 1 FROM run_results WHERE track = 'multi_phase' AND harness_metadata LIKE '%\"review_model\":null}')",
            "(SELECT COUNT(*) FROM run_results WHERE track <> 'multi_phase' \
            AND json_extract(harness_metadata, '$.harness_version') IS NULL) = 0",
        ],
    );
}

#[test]
fn leaderboards_span_pass_partial_and_fail_and_reconciliations_cover_a_tenth_of_one_run() {
    let (_dir, conn, summary) = write(7, Scale::Demo);
    assert_eq!(one::<i64>(&conn, "SELECT COUNT(*) FROM reconciliation_results") as usize, summary.reconciliations);
    holds(
        &conn,
        &[
            "(SELECT COUNT(DISTINCT CASE WHEN rate >= 0.8 THEN 'pass' WHEN rate >= 0.5 THEN 'partial' ELSE 'fail' END) \
            FROM (SELECT AVG(success) AS rate FROM run_results WHERE run_name = 'nightly-2026-11-20' GROUP BY model, harness)) = 3",
            // The best harness differs between models.
            "(SELECT COUNT(DISTINCT harness) FROM (SELECT model, harness, MAX(rate) FROM (SELECT model, harness, AVG(success) AS rate \
            FROM run_results WHERE run_name = 'nightly-2026-11-20' GROUP BY 1, 2) GROUP BY model)) > 1",
            "(SELECT group_concat(DISTINCT run_name) FROM reconciliation_results) = 'nightly-2026-11-20'",
            "(SELECT COUNT(DISTINCT cell_id) BETWEEN 25 AND 90 FROM reconciliation_results)",
            "(SELECT COUNT(DISTINCT agrees) FROM reconciliation_results) = 2",
            "NOT EXISTS (SELECT 1 FROM reconciliation_results c LEFT JOIN run_results r USING (run_name, cell_id) \
            WHERE r.cell_id IS NULL OR c.original_exit_class <> r.exit_class)",
        ],
    );
}

fn dump(conn: &Connection) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for table in ["run_results", "run_state", "run_phases", "reconciliation_results"] {
        let mut stmt = conn.prepare(&format!("SELECT * FROM {table} ORDER BY run_name, cell_id, 3, 4")).unwrap();
        let n = stmt.column_count();
        let all = stmt.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect::<Result<Vec<_>, _>>());
        rows.extend(all.unwrap().map(Result::unwrap));
    }
    rows
}

#[test]
fn the_same_seed_gives_identical_contents_and_another_seed_does_not() {
    let ((_a, first, s1), (_b, second, s2)) = (write(42, Scale::Demo), write(42, Scale::Demo));
    assert_eq!(s1, s2);
    let sql = "SELECT COUNT(*) || SUM(success) || SUM(total_cost) || SUM(LENGTH(harness_stderr)) || MAX(timestamp) \
        FROM run_results";
    assert_eq!(one::<String>(&first, sql), one::<String>(&second, sql));
    assert!(dump(&first) == dump(&second));
    let (_c, other, _) = write(43, Scale::Demo);
    assert_ne!(one::<String>(&first, sql), one::<String>(&other, sql));
}

#[test]
fn refuses_to_overwrite_an_existing_file_or_a_leftover_wal() {
    let dir = tempfile::tempdir().unwrap();
    let (path, fresh) = (dir.path().join("results.db"), dir.path().join("fresh.db"));
    std::fs::write(&path, "keep me").unwrap();
    let options = DemoOptions { seed: 1, scale: Scale::Demo };
    assert!(matches!(write_demo(&path, &options), Err(DemoError::Exists(p)) if p == path));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep me");
    std::fs::write(dir.path().join("fresh.db-wal"), "stale").unwrap();
    assert!(matches!(write_demo(&fresh, &options), Err(DemoError::Exists(p)) if p.ends_with("fresh.db-wal")));
    assert!(!fresh.exists());
}

#[test]
fn cells_scale_writes_one_bench_run_of_about_n_mostly_completed_cells() {
    let (_dir, conn, summary) = write(3, Scale::Cells(5000));
    let [(name, cells)] = summary.runs.as_slice() else { panic!("{summary:?}") };
    assert!(name == "bench-5000" && (4750..=5250).contains(cells), "{summary:?}");
    assert_eq!(one::<i64>(&conn, "SELECT COUNT(*) FROM run_results") as usize, *cells);
    assert_eq!(one::<i64>(&conn, "SELECT COUNT(*) FROM run_state") as usize, *cells);
    assert!(summary.phases > 0);
    holds(
        &conn,
        &[
            "(SELECT COUNT(*) FROM run_state WHERE status = 'failed') BETWEEN 1 AND 250",
            "(SELECT COUNT(DISTINCT track) FROM run_results) = 3 AND (SELECT MAX(repeat) FROM run_results) = 2",
            "(SELECT MAX(LENGTH(harness_stdout) + LENGTH(harness_stderr)) FROM run_results) < 10000",
        ],
    );
}

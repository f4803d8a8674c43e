//! Builds small `results.db` files for tests from `assets/results-schema.sql`,
//! including hostile strings (markup, quotes, `../`, NUL, very long text).
#![allow(dead_code)]

use std::path::Path;

use rusqlite::{Connection, params};

pub const SCHEMA: &str = include_str!("../../assets/results-schema.sql");
pub const HOSTILE_RUN: &str = "<script>alert('run')</script> & ../../escape";
pub const HOSTILE_ERROR_MARK: &str = "<img src=x onerror=alert(2)>";

pub struct CellSpec<'a> {
    pub harness: &'a str,
    pub model: &'a str,
    pub task: &'a str,
    pub repeat: i64,
    pub track: &'a str,
    pub success: f64,
    pub error: Option<&'a str>,
    pub cost: f64,
}

/// Maps the numeric character references askama writes (`&#60;`) to the named ones, so
/// tests can look for escaped text in one spelling.
pub fn named_entities(html: &str) -> String {
    html.replace("&#60;", "&lt;")
        .replace("&#62;", "&gt;")
        .replace("&#38;", "&amp;")
        .replace("&#34;", "&quot;")
        .replace("&#39;", "&#x27;")
}

pub fn create(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch("PRAGMA journal_mode = WAL;").unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    conn
}

pub fn insert(conn: &Connection, run: &str, cell: &CellSpec<'_>) {
    let cell_id = format!("{}__{}__{}__r{}", cell.harness, cell.model, cell.task, cell.repeat);
    let exit = if cell.success >= 1.0 { "pass" } else { "fail" };
    conn.execute(
        "INSERT INTO run_results (cell_id, run_name, harness, model, task_id, track, repeat, exit_class, success,
           error_class, error_message, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
           reasoning_tokens, total_cost, latency_ms, num_api_calls, num_tool_calls, diff, test_output,
           harness_metadata, harness_stdout, harness_stderr, timestamp)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 1000, 200, 300, 40, 5, ?12, 61000, 12, 30, ?13, 'ok', ?14, ?15, ?16,
                 '2026-11-20T10:00:00.000000+00:00')",
        params![
            cell_id,
            run,
            cell.harness,
            cell.model,
            cell.task,
            cell.track,
            cell.repeat,
            exit,
            cell.success,
            cell.error.map(|_| "AssertionError"),
            cell.error,
            cell.cost,
            "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = '<old>'\n+x = \"<script>alert(3)</script>\"\n",
            r#"{"harness_version": "1.0"}"#,
            "stdout line\n",
            format!("warning: \u{1b}[31mred\u{1b}[0m AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY {HOSTILE_ERROR_MARK}\n"),
        ],
    )
    .unwrap();
}

/// A database with one ordinary run and one run whose name and errors are hostile.
pub fn hostile(path: &Path) {
    let conn = create(path);
    let long_error = format!("{HOSTILE_ERROR_MARK} \"quoted\" & 'single' \u{0}NUL {}", "x".repeat(5000));
    for (i, (harness, model)) in [("alpha", "m-one"), ("beta", "m-one"), ("alpha", "m-two")].iter().enumerate() {
        for task in 0..6 {
            for repeat in 0..2i64 {
                let success = if (task + repeat as usize + i).is_multiple_of(3) { 0.0 } else { 1.0 };
                let error = (success < 1.0).then_some(if task == 0 { long_error.as_str() } else { "short failure" });
                let task_id = format!("swe/task-{task}");
                insert(
                    &conn,
                    "plain-run",
                    &CellSpec {
                        harness,
                        model,
                        task: &task_id,
                        repeat,
                        track: "swe",
                        success,
                        error,
                        cost: 0.05 * (i + 1) as f64,
                    },
                );
            }
        }
    }
    insert(
        &conn,
        HOSTILE_RUN,
        &CellSpec {
            harness: "h<b>",
            model: "m\"q",
            task: "t&<script>",
            repeat: 0,
            track: "open_ended",
            success: 0.5,
            error: Some(&long_error),
            cost: 1.0,
        },
    );
    conn.execute(
        "INSERT INTO run_state (run_name, cell_id, status, error, updated_at) VALUES
           ('plain-run', 'alpha__m-one__swe/task-9__r0', 'running', NULL, '2026-11-20T10:00:00+00:00'),
           ('plain-run', 'alpha__m-one__swe/task-10__r0', 'skipped', 'budget exhausted <b>', '2026-11-20T10:00:00+00:00')",
        [],
    )
    .unwrap();
}

/// A real `sightline dashboard` over `db` on a free loopback port (with `token`, or
/// none), stopped when dropped.
pub struct RunningDashboard {
    child: std::process::Child,
    /// `http://127.0.0.1:<port>`, as the dashboard printed it.
    pub base: String,
}

impl RunningDashboard {
    pub fn start(db: &Path, token: Option<&str>) -> RunningDashboard {
        use std::io::{BufRead, BufReader};
        let mut command = std::process::Command::new(super::BIN);
        command
            .args(["dashboard", "--db", db.to_str().unwrap(), "--port", "0"])
            .env_remove("SIGHTLINE_DASHBOARD_TOKEN")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        if let Some(token) = token {
            command.env("SIGHTLINE_DASHBOARD_TOKEN", token);
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let base = line.split_whitespace().nth(1).expect("dashboard prints its URL").trim_end_matches('/').to_string();
        RunningDashboard { child, base }
    }
}

impl RunningDashboard {
    /// Status and body of a GET.
    pub fn get(&self, path: &str) -> (u16, String) {
        match super::agent().get(format!("{}{path}", self.base)).call() {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let body = response.body_mut().with_config().limit(1 << 30).read_to_string().unwrap();
                (status, body)
            }
            Err(err) => panic!("GET {path}: {err}"),
        }
    }

    /// A GET that must answer 200; returns the body.
    pub fn ok(&self, path: &str) -> String {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    pub fn json(&self, path: &str) -> serde_json::Value {
        serde_json::from_str(&self.ok(path)).unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }
}

impl Drop for RunningDashboard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The run [`mixed_runs`] writes with every kind of cell, and its counts worked out by
/// hand from the rows below (docs/results-db.md, "Counts").
pub const MIXED_RUN: &str = "mixed";

/// Counts of a run as every surface must show them.
#[derive(Debug, PartialEq, Eq)]
pub struct RunCounts {
    pub total: i64,
    pub completed: i64,
    pub passed: i64,
    pub failed: i64,
    pub other: i64,
    pub no_result: i64,
    pub needs_attention: i64,
    /// Live progress: (marked completed, running, marked failed, skipped).
    pub live: (i64, i64, i64, i64),
}

/// Two runs in one database. `mixed` has results t0–t9 (t0–t4 pass, t5–t7 fail, t8
/// timeout, t9 error) and live progress for t0–t3 and t6 (completed), t5 and
/// t13 (failed), t10 (running), t11 and t12 (skipped); `quiet` has two passes and one
/// skipped cell, so a count cannot borrow from the other run.
pub fn mixed_runs(path: &Path) -> [(&'static str, RunCounts); 2] {
    let conn = create(path);
    let result = |run: &str, task: usize, success: f64| {
        let task = format!("t{task}");
        let spec = CellSpec {
            harness: "h",
            model: "m",
            task: &task,
            repeat: 0,
            track: "swe",
            success,
            error: None,
            cost: 0.5,
        };
        insert(&conn, run, &spec);
    };
    let state = |run: &str, task: usize, status: &str| {
        conn.execute(
            "INSERT INTO run_state (run_name, cell_id, status, error, updated_at)
             VALUES (?1, ?2, ?3, CASE WHEN ?3 IN ('failed', 'skipped') THEN 'went wrong' END, '2026-11-20T10:00:01+00:00')",
            params![run, format!("h__m__t{task}__r0"), status],
        )
        .unwrap();
    };
    for task in 0..10 {
        result(MIXED_RUN, task, if task < 5 { 1.0 } else { 0.0 });
    }
    conn.execute("UPDATE run_results SET exit_class = 'timeout' WHERE cell_id = 'h__m__t8__r0'", []).unwrap();
    conn.execute("UPDATE run_results SET exit_class = 'error' WHERE cell_id = 'h__m__t9__r0'", []).unwrap();
    for (task, status) in [
        (0, "completed"),
        (1, "completed"),
        (2, "completed"),
        (3, "completed"),
        (6, "completed"),
        (5, "failed"),
        (13, "failed"),
        (10, "running"),
        (11, "skipped"),
        (12, "skipped"),
    ] {
        state(MIXED_RUN, task, status);
    }
    result("quiet", 0, 1.0);
    result("quiet", 1, 1.0);
    state("quiet", 2, "skipped");
    [
        (
            MIXED_RUN,
            RunCounts {
                total: 14,
                completed: 10,
                passed: 5,
                failed: 3,
                other: 2,
                no_result: 4,
                // t5–t9 by their results, t11–t13 by live progress.
                needs_attention: 8,
                live: (5, 1, 2, 2),
            },
        ),
        (
            "quiet",
            RunCounts {
                total: 3,
                completed: 2,
                passed: 2,
                failed: 0,
                other: 0,
                no_result: 1,
                needs_attention: 1,
                live: (0, 0, 0, 1),
            },
        ),
    ]
}

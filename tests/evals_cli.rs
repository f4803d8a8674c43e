//! `results`, `report` and `evals demo` through the real binary.

use crate::common;

use common::results::{self, HOSTILE_ERROR_MARK, HOSTILE_RUN};
use common::{sightline, sightline_on_terminal, stderr, stdout};

fn hostile_db() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    results::hostile(&path);
    let path = path.to_str().unwrap().to_string();
    (dir, path)
}

#[test]
fn results_lists_runs_and_shows_a_run_within_80_columns() {
    let (_dir, db) = hostile_db();
    let runs = sightline(&["results", "--db", &db]);
    assert!(runs.status.success(), "{}", stderr(&runs));
    let text = stdout(&runs);
    for needle in ["Run", "Cells", "Completed", "Failed", "Avg success", "Total cost", "plain-run"] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    let headers =
        ["Harness", "Model", "Task", "Exit", "Success", "Tokens", "Cost", "Time(s)", "Error Class", "Error Message"];
    // Wide enough for one header line: every column by its whole name, in order.
    let wide = sightline_on_terminal(&["results", "plain-run", "--db", &db], 400);
    let header_line = wide.lines().find(|line| line.contains("Harness")).unwrap_or_default();
    let mut from = 0;
    for header in headers {
        let at =
            header_line[from..].find(header).unwrap_or_else(|| panic!("{header} after column {from}: {header_line}"));
        from += at + header.len();
    }
    // At 80 columns a header may wrap, but each of its words is a whole cell word (never a
    // prefix of another column's name).
    let table = sightline_on_terminal(&["results", "plain-run", "--db", &db], 80);
    let words: std::collections::HashSet<&str> =
        table.split(|c: char| c.is_whitespace() || "│|┆╎".contains(c)).filter(|w| !w.is_empty()).collect();
    for header in headers {
        for word in header.split(' ') {
            assert!(words.contains(word), "{word} (of {header}) is a whole word of the table:\n{table}");
        }
    }
    for line in table.lines() {
        assert!(line.chars().count() <= 80, "line wider than 80 columns: {line}");
    }
    assert!(!table.contains('\u{0}') && !table.contains('\u{1b}'));
}

#[test]
fn results_cuts_error_messages_at_60_characters_with_an_ellipsis() {
    let (_dir, db) = hostile_db();
    let csv = stdout(&sightline(&["results", "plain-run", "--db", &db, "--format", "csv"]));
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let long: Vec<String> = reader.records().map(|r| r.unwrap()[9].to_string()).filter(|m| m.len() > 60).collect();
    assert!(!long.is_empty(), "CSV keeps full messages");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&sightline(&["results", "plain-run", "--db", &db, "--format", "json"]))).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 36);
    let table = sightline_on_terminal(&["results", "plain-run", "--db", &db], 400);
    let header = table.lines().next().unwrap();
    let start = header.chars().count() - "Error Message".len();
    assert!(header.ends_with("Error Message"), "{header}");
    let cut: Vec<&str> = table.lines().filter(|l| l.contains('…')).collect();
    assert!(!cut.is_empty(), "{table}");
    for line in cut {
        let cell: String = line.chars().skip(start).collect();
        assert_eq!(cell.chars().count(), 61, "60 characters and the ellipsis: {cell:?}");
    }
}

#[test]
fn piped_results_are_one_whole_line_per_cell() {
    let (_dir, db) = hostile_db();
    let piped = stdout(&sightline(&["results", "plain-run", "--db", &db]));
    let lines: Vec<&str> = piped.lines().collect();
    assert_eq!(lines[0].split('\t').collect::<Vec<_>>()[..3], ["Harness", "Model", "Task"], "{piped}");
    assert_eq!(lines.len(), 1 + 36, "a header and one line per cell:\n{piped}");
    for line in &lines {
        assert_eq!(line.split('\t').count(), 10, "ten fields: {line:?}");
        assert!(!line.contains('\u{1b}') && !line.contains('\u{0}'), "{line:?}");
    }
    // The long messages are whole, so grep finds their ends.
    let csv = stdout(&sightline(&["results", "plain-run", "--db", &db, "--format", "csv"]));
    let longest = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .map(|r| r.unwrap()[9].to_string())
        .max_by_key(|m| m.len())
        .unwrap();
    assert!(longest.len() > 5000);
    let last_word = longest.split_whitespace().last().unwrap();
    assert!(lines.iter().any(|l| l.contains(last_word)), "the 5000-character word is whole in a line");
    let runs = stdout(&sightline(&["results", "--db", &db]));
    assert!(runs.lines().next().unwrap().starts_with("Run\tCells\t"), "{runs}");
    assert!(!runs.contains('│') && !runs.contains('─'), "no box drawing in pipes:\n{runs}");
}

#[test]
fn unknown_runs_and_missing_databases_are_clear_errors() {
    let (_dir, db) = hostile_db();
    let out = sightline(&["results", "nope", "--db", &db]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown run \"nope\""), "{}", stderr(&out));
    let missing = sightline(&["results", "--db", "/nonexistent/results.db"]);
    assert!(stderr(&missing).contains("evals demo"), "{}", stderr(&missing));
    let report = sightline(&["report", "nope", "--db", &db, "--output", "/tmp"]);
    assert_eq!(report.status.code(), Some(2));
}

#[test]
fn report_writes_three_files_inside_the_output_directory_with_escaped_text() {
    let (dir, db) = hostile_db();
    let out_dir = dir.path().join("reports");
    let out = sightline(&["report", HOSTILE_RUN, "--db", &db, "--output", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut names: Vec<String> =
        std::fs::read_dir(&out_dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    let stem = sightline::evals::text::safe_file_stem(HOSTILE_RUN);
    assert!(!stem.contains("..") && !stem.contains('/'), "{stem}");
    for suffix in ["_report.csv", "_report.html", "_report.json"] {
        assert!(names.iter().any(|n| n == &format!("{stem}{suffix}")), "{suffix} in {names:?}");
    }
    assert!(!dir.path().join("escape_report.html").exists());
    let html = std::fs::read_to_string(out_dir.join(format!("{stem}_report.html"))).unwrap();
    assert!(!html.contains("<script>alert") && !html.contains(HOSTILE_ERROR_MARK), "raw markup in HTML report");
    assert!(results::named_entities(&html).contains("&lt;script&gt;alert"));

    let plain = sightline(&["report", "plain-run", "--db", &db, "--output", out_dir.to_str().unwrap()]);
    assert!(plain.status.success());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("plain-run_report.json")).unwrap()).unwrap();
    for key in ["run_name", "timestamp", "total_cells", "leaderboards", "results"] {
        assert!(json.get(key).is_some(), "{key}");
    }
    // 36 cells with a result, and two only in live progress (one running, one skipped).
    assert_eq!((json["total_cells"].as_i64(), json["summary"]["completed_cells"].as_i64()), (Some(38), Some(36)));
    let row = &json["leaderboards"]["m-one"][0];
    for key in ["harness", "success_pct", "success_class", "avg_tokens", "avg_cost", "avg_time_s", "avg_api_calls"] {
        assert!(row[key].is_string(), "{key} must be a string: {row}");
    }
    assert!(row["tasks"].is_number() && row["std_error_pct"].is_number() && row["ci95_pct"].is_array());
    let csv = std::fs::read_to_string(out_dir.join("plain-run_report.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    // The 28 columns of run_results, then the agent sessions linked to the cell (none
    // without a platform: the column is there, empty, so its shape never depends on it).
    assert_eq!(reader.headers().unwrap().len(), 29);
    assert_eq!(&reader.headers().unwrap()[0], "cell_id");
    assert_eq!(&reader.headers().unwrap()[27], "retry_count");
    assert_eq!(&reader.headers().unwrap()[28], "session_ids");
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 36);
    assert!(records.iter().all(|record| record[28].is_empty()));
    let results = json["results"].as_array().unwrap();
    assert!(results.iter().all(|result| result["session_ids"] == serde_json::json!([])), "{json}");
}

#[test]
fn demo_writes_a_database_that_every_command_reads_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let db = db.to_str().unwrap();
    let out = sightline(&["evals", "demo", "--out", db]);
    assert!(out.status.success(), "{}", stderr(&out));
    let again = sightline(&["evals", "demo", "--out", db]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("already exists"));
    let runs = stdout(&sightline(&["results", "--db", db, "--format", "json"]));
    let runs: serde_json::Value = serde_json::from_str(&runs).unwrap();
    let names: Vec<&str> = runs["runs"].as_array().unwrap().iter().map(|r| r["run_name"].as_str().unwrap()).collect();
    assert!(names.len() >= 3, "{names:?}");
    for name in names {
        let report = sightline(&["report", name, "--db", db, "--output", dir.path().join("r").to_str().unwrap()]);
        assert!(report.status.success(), "{name}: {}", stderr(&report));
    }
}

/// One rounding rule on every surface: a success rate of exactly 1/16 (6.25 %) is 6.3 % on
/// the console, in the HTML report, its JSON and the dashboard's run page and API alike
/// (Rust's own `{:.1}` would write 6.2).
#[test]
fn a_half_way_figure_rounds_the_same_way_on_every_surface() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let conn = common::results::create(&db);
    for task in 0..16 {
        let name = format!("task-{task}");
        let cell = common::results::CellSpec {
            harness: "alpha",
            model: "m-one",
            task: &name,
            repeat: 0,
            track: "swe",
            success: if task == 0 { 1.0 } else { 0.0 },
            error: None,
            cost: 0.01,
        };
        common::results::insert(&conn, "sixteenth", &cell);
    }
    drop(conn);
    let db = db.to_str().unwrap().to_string();
    let console = stdout(&sightline(&["results", "--db", &db]));
    assert!(console.contains("6.3%") && !console.contains("6.2%"), "{console}");
    let out = dir.path().join("report");
    let made = sightline(&["report", "sixteenth", "--db", &db, "--output", out.to_str().unwrap()]);
    assert!(made.status.success(), "{}", stderr(&made));
    let html = std::fs::read_to_string(out.join("sixteenth_report.html")).unwrap();
    assert!(html.contains("6.3%") && !html.contains("6.2%"), "the HTML report");
    let json = std::fs::read_to_string(out.join("sixteenth_report.json")).unwrap();
    assert!(json.contains("\"6.3\"") && !json.contains("\"6.2\""), "the JSON report: {json}");
    let dashboard = common::results::RunningDashboard::start(std::path::Path::new(&db), None);
    let page = dashboard.ok("/run/sixteenth");
    let percents: Vec<String> = page
        .match_indices('%')
        .map(|(at, _)| page[..at + 1].chars().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect())
        .collect();
    assert!(page.contains("6.3%") && !page.contains("6.2%"), "the run page: {percents:?}");
    let leaderboard = dashboard.json("/api/run/sixteenth/leaderboard");
    assert!(leaderboard.to_string().contains("\"6.3\""), "the API: {leaderboard}");
}

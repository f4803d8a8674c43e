//! Every count of a run is the same number, under the same label, on every surface:
//! `sightline results` (table, JSON, CSV), the HTML, JSON and CSV reports, and the
//! dashboard's pages and API (docs/results-db.md, "Counts"). The organisation's
//! benchmarks page reads the same fixture in `team_org_pages`.

use crate::common;

use std::collections::HashMap;

use common::results::{RunCounts, RunningDashboard, mixed_runs};
use common::{sightline, stderr, stdout};
use serde_json::Value;

/// The figures an HTML page marks with `data-figure="<name>"`, in page order.
fn figures(html: &str) -> Vec<(String, i64)> {
    let marker = regex::Regex::new(r#"data-figure="([a-z_]+)">(\d+)<"#).unwrap();
    marker.captures_iter(html).map(|c| (c[1].to_string(), c[2].parse().unwrap())).collect()
}

fn figure(html: &str, name: &str) -> Option<i64> {
    figures(html).into_iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

/// The counts a JSON run summary carries.
fn from_summary(summary: &Value, live: (i64, i64, i64, i64)) -> RunCounts {
    let n = |key: &str| summary[key].as_i64().unwrap_or_else(|| panic!("{key} in {summary}"));
    RunCounts {
        total: n("total_cells"),
        completed: n("completed_cells"),
        passed: n("passed"),
        failed: n("failed"),
        other: n("other_results"),
        no_result: n("no_result_cells"),
        needs_attention: n("needs_attention"),
        live,
    }
}

#[test]
fn every_count_of_a_run_is_the_same_number_on_every_surface() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    let expected = mixed_runs(&path);
    let db = path.to_str().unwrap().to_string();

    // The console: a tab-separated table when stdout is not a terminal.
    let table = stdout(&sightline(&["results", "--db", &db]));
    let mut lines = table.lines();
    assert_eq!(
        lines.next().unwrap().split('\t').collect::<Vec<_>>(),
        ["Run", "Cells", "Completed", "Passed", "Failed", "Avg success", "Total cost"]
    );
    let rows: HashMap<&str, Vec<&str>> = lines.map(|l| l.split('\t').collect::<Vec<_>>()).map(|r| (r[0], r)).collect();
    let json: Value = serde_json::from_str(&stdout(&sightline(&["results", "--db", &db, "--format", "json"]))).unwrap();
    let csv = stdout(&sightline(&["results", "--db", &db, "--format", "csv"]));
    assert!(csv.starts_with("run_name,cells,completed,passed,failed,avg_success,total_cost\n"), "{csv}");
    let csv_rows: HashMap<&str, Vec<&str>> =
        csv.lines().skip(1).map(|l| l.split(',').collect::<Vec<_>>()).map(|r| (r[0], r)).collect();

    let dashboard = RunningDashboard::start(&path, None);
    let api_runs = dashboard.json("/api/runs");
    let overview = dashboard.ok("/");

    for (run, want) in &expected {
        let live = want.live;
        // Live progress, as the harness reports it.
        let status = dashboard.json(&format!("/api/run/{run}/status"));
        let state = &status["state"];
        let n = |key: &str| state[key].as_i64().unwrap();
        assert_eq!((n("completed"), n("running"), n("failed"), n("skipped")), live, "{run}: {status}");

        let printed = &rows[run];
        let numbers = |cells: &[&str]| -> Vec<i64> { cells.iter().map(|c| c.parse().unwrap()).collect() };
        assert_eq!(numbers(&printed[1..5]), [want.total, want.completed, want.passed, want.failed], "{run}: console");
        assert_eq!(numbers(&csv_rows[run][1..5]), [want.total, want.completed, want.passed, want.failed], "{run}: csv");
        let listed = json["runs"].as_array().unwrap().iter().find(|r| r["run_name"] == *run).unwrap();
        assert_eq!(&from_summary(listed, live), want, "{run}: results --format json");
        let served = api_runs["runs"].as_array().unwrap().iter().find(|r| r["run_name"] == *run).unwrap();
        assert_eq!(&from_summary(served, live), want, "{run}: /api/runs");

        // The failed and skipped list has exactly `needs_attention` cells, each once.
        let errors = dashboard.json(&format!("/api/run/{run}/errors"));
        let listed_ids: std::collections::HashSet<&str> =
            errors["failed_cells"].as_array().unwrap().iter().map(|c| c["cell_id"].as_str().unwrap()).collect();
        assert_eq!(listed_ids.len() as i64, want.needs_attention, "{run}: {errors}");
        assert_eq!(errors["failed_cells"].as_array().unwrap().len() as i64, want.needs_attention);

        // The results API and the exports hold the completed cells.
        let page = dashboard.json(&format!("/api/run/{run}?per_page=500"));
        assert_eq!(page["total"].as_i64(), Some(want.completed), "{run}: {page}");
        let exported = dashboard.ok(&format!("/run/{run}/export/csv"));
        let exported_rows = csv::Reader::from_reader(exported.as_bytes()).records().count() as i64;
        assert_eq!(exported_rows, want.completed, "{run}: CSV export");

        // The overview's row and the run page.
        let row = overview.split("<tr>").find(|r| r.contains(&format!("href=\"/run/{run}\""))).unwrap();
        let row_figures: Vec<i64> = figures(row).into_iter().map(|(_, v)| v).collect();
        assert_eq!(row_figures, [want.total, want.completed, want.passed, want.failed], "{run}: overview row");
        let run_page = dashboard.ok(&format!("/run/{run}"));
        for (name, value) in [
            ("total_cells", want.total),
            ("completed_cells", want.completed),
            ("passed", want.passed),
            ("failed", want.failed),
            ("needs_attention", want.needs_attention),
        ] {
            assert_eq!(figure(&run_page, name), Some(value), "{run}: run page {name}");
        }
        assert_eq!(figure(&run_page, "other_results"), (want.other > 0).then_some(want.other), "{run}: run page");
        assert!(run_page.contains(&format!("data-count=\"completed\">{}<", live.0)), "{run}: live strip");

        // The reports.
        let out = dir.path().join(format!("report-{run}"));
        let made = sightline(&["report", run, "--db", &db, "--output", out.to_str().unwrap()]);
        assert!(made.status.success(), "{}", stderr(&made));
        let html = std::fs::read_to_string(out.join(format!("{run}_report.html"))).unwrap();
        for (name, value) in [
            ("total_cells", want.total),
            ("completed_cells", want.completed),
            ("passed", want.passed),
            ("failed", want.failed),
        ] {
            assert_eq!(figure(&html, name), Some(value), "{run}: HTML report {name}");
        }
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(format!("{run}_report.json"))).unwrap()).unwrap();
        let mut summary = report["summary"].clone();
        summary["total_cells"] = report["total_cells"].clone();
        assert_eq!(&from_summary(&summary, live), want, "{run}: JSON report");
        assert_eq!(report["results"].as_array().unwrap().len() as i64, want.completed);
        let report_csv = std::fs::read_to_string(out.join(format!("{run}_report.csv"))).unwrap();
        let records = csv::Reader::from_reader(report_csv.as_bytes()).records().count() as i64;
        assert_eq!(records, want.completed, "{run}: CSV report");
    }
}

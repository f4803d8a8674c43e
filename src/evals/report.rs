//! `sightline report <run> --output <dir>`: the three static files of spec §4.2,
//! `<run>_report.html`, `<run>_report.json` and `<run>_report.csv`.
//!
//! Invariants: the run name is sanitised into a file stem and every final path is
//! proven to lie inside the (canonicalised) output directory before anything is
//! written; each file is written to a temporary name and renamed, so a failed run
//! leaves no half-written report; all user text in the HTML is escaped by askama.

use std::path::{Path, PathBuf};

use askama::Template;
use rusqlite::Connection;
use serde_json::json;

use super::db::{self, EvalsError, Filters, ResultRecord, RunSummary, Sort};
use super::leaderboard::{self, Leaderboards};
use super::text::{one_line, safe_file_stem, strip_control};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub html: PathBuf,
    pub json: PathBuf,
    pub csv: PathBuf,
}

/// A row of the HTML detail table, formatted once.
pub struct DetailRow {
    pub harness: String,
    pub model: String,
    pub task_id: String,
    pub exit_class: String,
    pub success: String,
    pub tokens: i64,
    pub cost: String,
    pub time_s: String,
    pub error_class: String,
    pub error_message: String,
}

#[derive(Template)]
#[template(path = "report.html")]
struct ReportPage<'a> {
    summary: &'a RunSummary,
    generated_at: &'a str,
    boards: &'a Leaderboards,
    rows: Vec<DetailRow>,
}

/// Resolves `<dir>/<stem><suffix>` and proves it stays inside `dir`.
pub fn contained_path(dir: &Path, stem: &str, suffix: &str) -> Result<PathBuf, EvalsError> {
    let io = |context: String| move |source| EvalsError::Io { context, source };
    std::fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
    let root = dir.canonicalize().map_err(io(format!("cannot resolve {}", dir.display())))?;
    let path = root.join(format!("{stem}{suffix}"));
    let parent_ok = path.parent().is_some_and(|parent| parent == root);
    if !parent_ok || !path.starts_with(&root) {
        return Err(EvalsError::bad("run_name", format!("{stem:?} would leave the output directory")));
    }
    Ok(path)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EvalsError> {
    let temp = path.with_extension("partial");
    std::fs::write(&temp, bytes)
        .map_err(|source| EvalsError::Io { context: format!("cannot write {}", temp.display()), source })?;
    std::fs::rename(&temp, path)
        .map_err(|source| EvalsError::Io { context: format!("cannot write {}", path.display()), source })
}

pub fn now_iso() -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]+00:00");
    time::OffsetDateTime::now_utc().format(&format).unwrap_or_default()
}

/// Writes the three report files of `run` into `dir`.
pub fn write(conn: &Connection, run: &str, dir: &Path) -> Result<Written, EvalsError> {
    db::require_run(conn, run)?;
    let summary = db::run_summary(conn, run)?;
    let boards = leaderboard::compute(conn, run)?;
    // Light rows for the HTML and JSON reports; the CSV streams the full rows below.
    let rows = db::all_rows(conn, run, &Filters::default(), Sort::default(), false)?;
    let stem = safe_file_stem(run);
    let written = Written {
        html: contained_path(dir, &stem, "_report.html")?,
        json: contained_path(dir, &stem, "_report.json")?,
        csv: contained_path(dir, &stem, "_report.csv")?,
    };
    let generated_at = now_iso();
    let html = html(&summary, &boards, &rows, &generated_at)?;
    let json = json_report(&summary, &boards, &rows, &generated_at);
    write_atomically(&written.html, html.as_bytes())?;
    write_atomically(&written.json, json.as_bytes())?;
    write_csv(conn, run, &written.csv)?;
    Ok(written)
}

pub fn detail_rows(rows: &[ResultRecord]) -> Vec<DetailRow> {
    rows.iter()
        .map(|r| DetailRow {
            harness: r.harness.clone(),
            model: r.model.clone(),
            task_id: r.task_id.clone(),
            exit_class: r.exit_class.clone(),
            success: format!("{:.2}", r.success),
            tokens: r.total_tokens(),
            cost: format!("{:.4}", r.total_cost),
            time_s: r.latency_ms.map(|ms| format!("{:.1}", ms as f64 / 1000.0)).unwrap_or_default(),
            error_class: r.error_class.clone().unwrap_or_default(),
            error_message: one_line(&strip_control(r.error_message.as_deref().unwrap_or(""))),
        })
        .collect()
}

fn html(
    summary: &RunSummary,
    boards: &Leaderboards,
    rows: &[ResultRecord],
    generated_at: &str,
) -> Result<String, EvalsError> {
    ReportPage { summary, generated_at, boards, rows: detail_rows(rows) }
        .render()
        .map_err(|e| EvalsError::Io { context: "rendering the HTML report".into(), source: std::io::Error::other(e) })
}

fn json_report(summary: &RunSummary, boards: &Leaderboards, rows: &[ResultRecord], generated_at: &str) -> String {
    let results: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut value = serde_json::to_value(r).unwrap_or_default();
            // The four bulky text fields stay in the CSV; the JSON report lists outcomes.
            if let Some(object) = value.as_object_mut() {
                for key in ["diff", "test_output", "harness_stdout", "harness_stderr"] {
                    object.remove(key);
                }
            }
            value
        })
        .collect();
    let report = json!({
        "run_name": summary.run_name,
        "timestamp": generated_at,
        "total_cells": summary.total_cells,
        "summary": {"passed": summary.passed, "failed": summary.failed, "total_cost": summary.total_cost, "avg_success": summary.avg_success},
        "leaderboards": leaderboard::to_json(boards),
        "results": results,
    });
    serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
}

/// Streams every row, with all 28 columns, into `path` (via a temporary file).
fn write_csv(conn: &Connection, run: &str, path: &Path) -> Result<(), EvalsError> {
    let temp = path.with_extension("partial");
    let io = |e: csv::Error| EvalsError::Io {
        context: format!("writing {}", temp.display()),
        source: std::io::Error::other(e),
    };
    let file = std::fs::File::create(&temp)
        .map_err(|source| EvalsError::Io { context: format!("cannot write {}", temp.display()), source })?;
    let mut writer = csv::Writer::from_writer(std::io::BufWriter::with_capacity(1 << 20, file));
    writer.write_record(db::COLUMNS).map_err(io)?;
    db::for_each_row(conn, run, &Filters::default(), Sort::default(), true, |row| {
        writer.write_record(csv_fields(&row)).map_err(io)
    })?;
    writer.flush().map_err(|source| EvalsError::Io { context: format!("writing {}", temp.display()), source })?;
    drop(writer);
    std::fs::rename(&temp, path)
        .map_err(|source| EvalsError::Io { context: format!("cannot write {}", path.display()), source })
}

/// One record's fields in the spec's column order (§2.1).
pub fn csv_fields(r: &ResultRecord) -> Vec<String> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    let num = |v: Option<i64>| v.map(|n| n.to_string()).unwrap_or_default();
    let bulk = r.bulk.clone().unwrap_or(db::BulkText {
        diff: None,
        test_output: None,
        harness_stdout: None,
        harness_stderr: None,
    });
    vec![
        r.cell_id.clone(),
        r.run_name.clone(),
        r.harness.clone(),
        r.model.clone(),
        r.task_id.clone(),
        r.track.clone(),
        r.repeat.to_string(),
        r.exit_class.clone(),
        r.success.to_string(),
        opt(&r.error_class),
        opt(&r.error_message),
        r.input_tokens.to_string(),
        r.output_tokens.to_string(),
        r.cache_read_tokens.to_string(),
        r.cache_write_tokens.to_string(),
        r.reasoning_tokens.to_string(),
        r.total_cost.to_string(),
        num(r.latency_ms),
        num(r.time_to_first_attempt_ms),
        r.num_api_calls.to_string(),
        r.num_tool_calls.to_string(),
        opt(&bulk.diff),
        opt(&bulk.test_output),
        r.harness_metadata.as_ref().map(|m| m.to_string()).unwrap_or_default(),
        opt(&bulk.harness_stdout),
        opt(&bulk.harness_stderr),
        r.timestamp.clone(),
        r.retry_count.to_string(),
    ]
}

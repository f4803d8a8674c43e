//! `sightline report <run> --output <dir>`: the three static files of docs/results-db.md,
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
use super::shown;
use super::text::{one_line, safe_file_stem, strip_control};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub html: PathBuf,
    pub json: PathBuf,
    pub csv: PathBuf,
}

/// A row of the HTML detail table, formatted once ("—" for what is unknown).
pub struct DetailRow {
    pub harness: String,
    pub model: String,
    pub task_id: String,
    pub exit_class: String,
    pub passed: bool,
    pub success: String,
    pub tokens: String,
    pub cost: String,
    pub time_s: String,
    pub error_class: String,
    pub error_message: String,
    /// The agent sessions linked to the cell, as links into the platform.
    pub sessions: Vec<String>,
}

/// The agent sessions harnesses linked to a run's cells (read from the platform by the
/// caller, `evals::platform`): session ids by cell id, and the platform's address for
/// the HTML report's links. Empty when no platform was asked.
#[derive(Debug, Default, Clone)]
pub struct SessionLinks {
    pub by_cell: std::collections::HashMap<String, Vec<String>>,
    pub platform_url: Option<String>,
}

impl SessionLinks {
    pub fn of(&self, cell_id: &str) -> &[String] {
        self.by_cell.get(cell_id).map(Vec::as_slice).unwrap_or_default()
    }
}

#[derive(Template)]
#[template(path = "report.html")]
struct ReportPage<'a> {
    summary: &'a RunSummary,
    generated_at: &'a str,
    boards: &'a Leaderboards,
    rows: Vec<DetailRow>,
    /// Whether the cells' sessions are linked (a platform address was given).
    linked: bool,
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

/// `<path>.partial`: the name a file is written under before it is renamed into place
/// (appended, not replacing the extension, so the JSON and CSV never share one).
fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// Moves each finished `.partial` file to its final name, or on failure removes them
/// all, so no final name ever shows a report of a run that failed to be written.
fn publish(outcome: Result<(), EvalsError>, paths: [&Path; 3]) -> Result<(), EvalsError> {
    if let Err(err) = outcome {
        for path in paths {
            let _ = std::fs::remove_file(partial_path(path));
        }
        return Err(err);
    }
    for (i, path) in paths.iter().enumerate() {
        if let Err(source) = std::fs::rename(partial_path(path), path) {
            // Not atomic across the three: the ones already renamed stay new; the rest
            // are removed so no .partial is left behind.
            for rest in &paths[i..] {
                let _ = std::fs::remove_file(partial_path(rest));
            }
            return Err(EvalsError::Io { context: format!("cannot write {}", path.display()), source });
        }
    }
    Ok(())
}

pub fn now_iso() -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]+00:00");
    time::OffsetDateTime::now_utc().format(&format).unwrap_or_default()
}

/// Writes the three report files of `run` into `dir`. The HTML report is built from
/// the narrow table columns; the JSON and CSV reports are written together in one
/// streaming pass over the full rows, so memory stays flat however large the run.
/// All three are written under `.partial` names and renamed only once all three are
/// complete; a failure part way removes them and leaves earlier reports untouched.
pub fn write(conn: &Connection, run: &str, dir: &Path) -> Result<Written, EvalsError> {
    write_linked(conn, run, dir, &SessionLinks::default())
}

/// [`write`], with each cell's agent sessions: `session_ids` in the JSON, a `session_ids`
/// column in the CSV (space-separated), links in the HTML when the platform's address is
/// known.
pub fn write_linked(conn: &Connection, run: &str, dir: &Path, links: &SessionLinks) -> Result<Written, EvalsError> {
    db::require_run(conn, run)?;
    let summary = db::run_summary(conn, run)?;
    let boards = leaderboard::compute(conn, run)?;
    let stem = safe_file_stem(run);
    let written = Written {
        html: contained_path(dir, &stem, "_report.html")?,
        json: contained_path(dir, &stem, "_report.json")?,
        csv: contained_path(dir, &stem, "_report.csv")?,
    };
    let generated_at = now_iso();
    let html = html(&summary, &boards, &db::table_rows(conn, run)?, &generated_at, links)?;
    let html_partial = partial_path(&written.html);
    let outcome = std::fs::write(&html_partial, html.as_bytes())
        .map_err(|source| EvalsError::Io { context: format!("cannot write {}", html_partial.display()), source })
        .and_then(|()| {
            drop(html);
            write_json_and_csv(conn, &summary, &boards, &generated_at, &written, links)
        });
    publish(outcome, [&written.html, &written.json, &written.csv])?;
    Ok(written)
}

pub fn detail_rows(rows: &[db::TableRow], links: &SessionLinks) -> Vec<DetailRow> {
    rows.iter()
        .map(|r| DetailRow {
            harness: shown::text(&r.harness).to_string(),
            model: shown::text(&r.model).to_string(),
            task_id: shown::text(&r.task_id).to_string(),
            exit_class: shown::text(&r.exit_class).to_string(),
            passed: r.exit_class.as_deref() == Some("pass"),
            success: shown::fixed(&r.success, 2),
            tokens: shown::whole(&r.tokens),
            cost: shown::usd(&r.total_cost, 4),
            time_s: shown::seconds(&r.latency_ms),
            error_class: r.error_class.clone().unwrap_or_default(),
            error_message: one_line(&strip_control(r.error_message.as_deref().unwrap_or(""))),
            sessions: match &links.platform_url {
                Some(url) => links.of(&r.cell_id).iter().map(|id| format!("{url}/sessions/{id}")).collect(),
                None => Vec::new(),
            },
        })
        .collect()
}

fn html(
    summary: &RunSummary,
    boards: &Leaderboards,
    rows: &[db::TableRow],
    generated_at: &str,
    links: &SessionLinks,
) -> Result<String, EvalsError> {
    ReportPage { summary, generated_at, boards, rows: detail_rows(rows, links), linked: links.platform_url.is_some() }
        .render()
        .map_err(|e| EvalsError::Io { context: "rendering the HTML report".into(), source: std::io::Error::other(e) })
}

struct Partial {
    temp: PathBuf,
    writer: std::io::BufWriter<std::fs::File>,
}

impl Partial {
    fn create(path: &Path) -> Result<Partial, EvalsError> {
        let temp = partial_path(path);
        let file = std::fs::File::create(&temp)
            .map_err(|source| EvalsError::Io { context: format!("cannot write {}", temp.display()), source })?;
        Ok(Partial { writer: std::io::BufWriter::with_capacity(1 << 20, file), temp })
    }

    /// Flushes the file; [`publish`] renames it. No fsync: a report is regenerable,
    /// and the rename alone guarantees that the final name never shows a half-written
    /// file. Syncing 2 GB of CSV would double the time to write it.
    fn finish(self) -> Result<(), EvalsError> {
        let temp = self.temp.clone();
        let io = |source| EvalsError::Io { context: format!("cannot write {}", temp.display()), source };
        drop(self.writer.into_inner().map_err(|e| io(e.into_error()))?);
        Ok(())
    }
}

/// The JSON report (`run_name`, `timestamp`, `total_cells`, `summary`, `leaderboards`,
/// `results` without the four bulky text fields) and the CSV report (all 28 columns)
/// from one pass over the run.
fn write_json_and_csv(
    conn: &Connection,
    summary: &RunSummary,
    boards: &Leaderboards,
    generated_at: &str,
    written: &Written,
    links: &SessionLinks,
) -> Result<(), EvalsError> {
    use std::io::Write;
    let mut json = Partial::create(&written.json)?;
    let csv_file = Partial::create(&written.csv)?;
    let json_io =
        |e: std::io::Error| EvalsError::Io { context: format!("writing {}", written.json.display()), source: e };
    let csv_io = |e: csv::Error| EvalsError::Io {
        context: format!("writing {}", written.csv.display()),
        source: std::io::Error::other(e),
    };
    let head = json!({
        "run_name": summary.run_name,
        "timestamp": generated_at,
        "total_cells": summary.total_cells,
        "summary": {
            "completed_cells": summary.completed_cells, "passed": summary.passed, "failed": summary.failed,
            "other_results": summary.other_results, "no_result_cells": summary.no_result_cells,
            "needs_attention": summary.needs_attention, "total_cost": summary.total_cost,
            "costed_cells": summary.costed_cells, "avg_success": summary.avg_success,
            "unscored_cells": summary.unscored_cells,
        },
        "leaderboards": leaderboard::to_json(boards),
    });
    // The head object without its closing brace, then the results array streamed in.
    let head = serde_json::to_string_pretty(&head).unwrap_or_default();
    let head = head.trim_end().strip_suffix('}').unwrap_or(&head).trim_end();
    write!(json.writer, "{head},\n  \"results\": [").map_err(json_io)?;
    let Partial { temp: csv_temp, writer: csv_writer } = csv_file;
    let mut csv = csv::Writer::from_writer(csv_writer);
    let header: Vec<&str> = db::COLUMNS.iter().copied().chain(["session_ids"]).collect();
    csv.write_record(crate::model::csv_cells::record(header)).map_err(csv_io)?;
    let mut first = true;
    let mut object = Vec::new();
    db::for_each_row(conn, &summary.run_name, &Filters::default(), Sort::default(), true, |mut row| {
        let sessions = links.of(&row.cell_id);
        let mut fields = csv_fields(&row);
        fields.push(sessions.join(" "));
        csv.write_record(crate::model::csv_cells::record(fields)).map_err(csv_io)?;
        row.bulk = None;
        json.writer.write_all(if first { b"\n    " } else { b",\n    " }).map_err(json_io)?;
        first = false;
        // The record's object with `session_ids` as its last member.
        object.clear();
        serde_json::to_writer(&mut object, &row).map_err(|e| json_io(std::io::Error::other(e)))?;
        object.pop();
        json.writer.write_all(&object).map_err(json_io)?;
        json.writer.write_all(b",\"session_ids\":").map_err(json_io)?;
        serde_json::to_writer(&mut json.writer, sessions).map_err(|e| json_io(std::io::Error::other(e)))?;
        json.writer.write_all(b"}").map_err(json_io)
    })?;
    json.writer.write_all(b"\n  ]\n}\n").map_err(json_io)?;
    json.finish()?;
    let csv_writer =
        csv.into_inner().map_err(|e| EvalsError::Io { context: "writing CSV".into(), source: e.into_error() })?;
    Partial { temp: csv_temp, writer: csv_writer }.finish()
}

/// One record's fields in `run_results`' column order (docs/results-db.md); unknown values are empty.
pub fn csv_fields(r: &ResultRecord) -> Vec<String> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    let num = |v: Option<i64>| v.map(|n| n.to_string()).unwrap_or_default();
    let real = |v: Option<f64>| v.map(|n| n.to_string()).unwrap_or_default();
    // Logs run to megabytes: each is copied once, into its field.
    let bulk = |field: fn(&db::BulkText) -> &Option<String>| {
        r.bulk.as_ref().and_then(|b| field(b).clone()).unwrap_or_default()
    };
    vec![
        r.cell_id.clone(),
        r.run_name.clone(),
        opt(&r.harness),
        opt(&r.model),
        opt(&r.task_id),
        opt(&r.track),
        num(r.repeat),
        opt(&r.exit_class),
        real(r.success),
        opt(&r.error_class),
        opt(&r.error_message),
        num(r.input_tokens),
        num(r.output_tokens),
        num(r.cache_read_tokens),
        num(r.cache_write_tokens),
        num(r.reasoning_tokens),
        real(r.total_cost),
        num(r.latency_ms),
        num(r.time_to_first_attempt_ms),
        num(r.num_api_calls),
        num(r.num_tool_calls),
        bulk(|b| &b.diff),
        bulk(|b| &b.test_output),
        r.harness_metadata.as_ref().map(|m| m.to_string()).unwrap_or_default(),
        bulk(|b| &b.harness_stdout),
        bulk(|b| &b.harness_stderr),
        opt(&r.timestamp),
        num(r.retry_count),
    ]
}

//! `sightline results`: the console table of one run (docs/results-db.md) or the list of runs,
//! aligned for an 80-column terminal, or JSON / CSV for scripts. When stdout is not a
//! terminal the table becomes one tab-separated line per cell with no width limit (as
//! `gh` and `kubectl` print for pipes), so `grep` and `cut` see whole cells.
//!
//! Invariants: error messages are cut to 60 characters plus an ellipsis in the
//! terminal table (never in piped lines, JSON or CSV); control characters never reach
//! the terminal; an unknown value is "—" in the table and piped lines, `null` in JSON,
//! an empty field in CSV.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use super::db::{self, EvalsError, RunSummary, TableRow};
use super::shown;
use super::text::{ellipsize, one_line, strip_control};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// Where the table goes: a terminal of some width, or a pipe or file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Terminal { width: u16 },
    Lines,
}

pub const ERROR_CHARS: usize = 60;
const HEADERS: [&str; 10] =
    ["Harness", "Model", "Task", "Exit", "Success", "Tokens", "Cost", "Time(s)", "Error Class", "Error Message"];

fn table(width: u16) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic).set_width(width);
    table
}

fn right(text: String) -> Cell {
    Cell::new(text).set_alignment(CellAlignment::Right)
}

fn safe(text: &str) -> String {
    one_line(&strip_control(text))
}

/// The run's cells as the console shows them.
pub fn render_run(rows: &[TableRow], format: Format, layout: Layout) -> Result<String, EvalsError> {
    match format {
        Format::Table => Ok(match layout {
            Layout::Terminal { width } => aligned_table(rows, usize::from(width)),
            Layout::Lines => lines(&HEADERS.map(str::to_string), rows.iter().map(|r| line_cells(r).to_vec())),
        }),
        Format::Json => {
            let values: Vec<serde_json::Value> = rows
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "harness": r.harness, "model": r.model, "task_id": r.task_id, "exit_class": r.exit_class,
                        "success": r.success, "tokens": r.tokens, "total_cost": r.total_cost,
                        "latency_ms": r.latency_ms, "error_class": r.error_class, "error_message": r.error_message,
                    })
                })
                .collect();
            Ok(serde_json::to_string_pretty(&values).map_err(|e| EvalsError::bad("format", e.to_string()))? + "\n")
        }
        Format::Csv => {
            let mut writer = csv::Writer::from_writer(Vec::new());
            let io = |e: csv::Error| EvalsError::Io { context: "csv".into(), source: std::io::Error::other(e) };
            writer.write_record(crate::model::csv_cells::record(HEADERS)).map_err(io)?;
            let text = |v: &Option<String>| v.clone().unwrap_or_default();
            let number = |v: Option<String>| v.unwrap_or_default();
            for r in rows {
                writer
                    .write_record(crate::model::csv_cells::record([
                        text(&r.harness),
                        text(&r.model),
                        text(&r.task_id),
                        text(&r.exit_class),
                        number(r.success.map(|v| v.to_string())),
                        number(r.tokens.map(|v| v.to_string())),
                        number(r.total_cost.map(|v| v.to_string())),
                        number(r.latency_ms.map(|ms| (ms as f64 / 1000.0).to_string())),
                        text(&r.error_class),
                        text(&r.error_message),
                    ]))
                    .map_err(io)?;
            }
            let bytes =
                writer.into_inner().map_err(|e| EvalsError::Io { context: "csv".into(), source: e.into_error() })?;
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        }
    }
}

/// Which columns are numbers (right-aligned, never narrowed).
const NUMERIC: [bool; 10] = [false, false, false, false, true, true, true, true, false, false];
/// The narrowest each text column may get; each fits its header's longest word.
const MIN_WIDTH: [usize; 10] = [7, 7, 8, 4, 0, 0, 0, 0, 5, 10];
/// Text columns in the order they give up width: the message first.
const SHRINK_ORDER: [usize; 6] = [9, 2, 1, 8, 0, 3];

/// A cell's fields as shown, the error message whole.
fn line_cells(r: &TableRow) -> [String; 10] {
    [
        safe(shown::text(&r.harness)),
        safe(shown::text(&r.model)),
        safe(shown::text(&r.task_id)),
        safe(shown::text(&r.exit_class)),
        shown::fixed(&r.success, 2),
        shown::whole(&r.tokens),
        shown::usd(&r.total_cost, 4),
        shown::seconds(&r.latency_ms),
        r.error_class.as_deref().map(safe).unwrap_or_default(),
        r.error_message.as_deref().map(safe).unwrap_or_default(),
    ]
}

/// A cell's fields as the terminal table shows them: the message cut (docs/results-db.md).
fn table_cells(r: &TableRow) -> [String; 10] {
    let mut cells = line_cells(r);
    cells[9] = ellipsize(&cells[9], ERROR_CHARS);
    cells
}

/// Tab-separated lines, header first: `safe` has already made every field one line
/// without tabs, so each record is exactly one line.
pub(crate) fn lines(header: &[String], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut out = header.join("\t");
    out.push('\n');
    for row in rows {
        out.push_str(&row.join("\t"));
        out.push('\n');
    }
    out
}

/// Column widths and the gap between columns: each column's widest content; if the
/// row is wider than `width`, the gap drops to one space and text columns give up
/// width in [`SHRINK_ORDER`] down to [`MIN_WIDTH`] (their cells then wrap). Numbers
/// keep their full width.
fn fit_widths(rows: &[[String; 10]], width: usize) -> ([usize; 10], &'static str) {
    let mut widths = HEADERS.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let total = |widths: &[usize; 10], gap: &str| widths.iter().sum::<usize>() + gap.len() * (HEADERS.len() - 1);
    if total(&widths, "  ") <= width {
        return (widths, "  ");
    }
    for &column in &SHRINK_ORDER {
        let excess = total(&widths, " ").saturating_sub(width);
        if excess == 0 {
            break;
        }
        let floor = MIN_WIDTH[column].min(widths[column]);
        widths[column] -= excess.min(widths[column] - floor);
    }
    (widths, " ")
}

/// Word-wraps `text` into lines of at most `width` characters, splitting long words.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = line.chars().count();
            let room = if used == 0 { width } else { width.saturating_sub(used + 1) };
            if word.len() <= room {
                if used > 0 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            let rest = word.split_off(width.max(1));
            lines.push(word.into_iter().collect());
            word = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

fn push_row(out: &mut String, cells: &[String; 10], widths: &[usize; 10], gap: &str) {
    let wrapped: Vec<Vec<String>> = cells.iter().zip(widths).map(|(c, w)| wrap(c, *w)).collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
    for i in 0..height {
        let mut line = String::new();
        for (column, lines) in wrapped.iter().enumerate() {
            if column > 0 {
                line.push_str(gap);
            }
            let text = lines.get(i).map(String::as_str).unwrap_or("");
            let pad = widths[column].saturating_sub(text.chars().count());
            if NUMERIC[column] {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(text);
            } else {
                line.push_str(text);
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// An aligned table that fits `width` columns, rendered in one pass over the rows.
fn aligned_table(rows: &[TableRow], width: usize) -> String {
    let cells: Vec<[String; 10]> = rows.iter().map(table_cells).collect();
    let (widths, gap) = fit_widths(&cells, width);
    let mut out = String::with_capacity(cells.len() * width.min(200));
    push_row(&mut out, &HEADERS.map(str::to_string), &widths, gap);
    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    out.push_str(&rule.join(gap));
    out.push('\n');
    for row in &cells {
        push_row(&mut out, row, &widths, gap);
    }
    out
}

const RUN_HEADERS: [&str; 7] = ["Run", "Cells", "Completed", "Passed", "Failed", "Avg success", "Total cost"];

/// A run's row; the counts are [`crate::evals::counts`]'s, labelled as on every surface.
fn run_cells(r: &RunSummary) -> [String; 7] {
    [
        safe(&r.run_name),
        r.total_cells.to_string(),
        r.completed_cells.to_string(),
        r.passed.to_string(),
        r.failed.to_string(),
        shown::percent(&r.avg_success),
        shown::usd(&r.total_cost, 2),
    ]
}

/// The runs list: cells, completed, passed, failed, average success, total cost.
pub fn render_runs(runs: &[RunSummary], format: Format, layout: Layout) -> Result<String, EvalsError> {
    match format {
        Format::Table => {
            let Layout::Terminal { width } = layout else {
                return Ok(lines(&RUN_HEADERS.map(str::to_string), runs.iter().map(|r| run_cells(r).to_vec())));
            };
            let mut t = table(width);
            t.set_header(RUN_HEADERS);
            for r in runs {
                let [name, cells, completed, passed, failed, success, cost] = run_cells(r);
                t.add_row(vec![
                    Cell::new(name),
                    right(cells),
                    right(completed),
                    right(passed),
                    right(failed),
                    right(success),
                    right(cost),
                ]);
            }
            Ok(format!("{t}\n"))
        }
        Format::Json => Ok(serde_json::to_string_pretty(&serde_json::json!({ "runs": runs }))
            .map_err(|e| EvalsError::bad("format", e.to_string()))?
            + "\n"),
        Format::Csv => {
            let mut out = String::from("run_name,cells,completed,passed,failed,avg_success,total_cost\n");
            let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
            for r in runs {
                writer
                    .serialize((
                        crate::model::csv_cells::cell(&r.run_name),
                        r.total_cells,
                        r.completed_cells,
                        r.passed,
                        r.failed,
                        r.avg_success,
                        r.total_cost,
                    ))
                    .map_err(|e| EvalsError::Io { context: "csv".into(), source: std::io::Error::other(e) })?;
            }
            let bytes =
                writer.into_inner().map_err(|e| EvalsError::Io { context: "csv".into(), source: e.into_error() })?;
            out.push_str(&String::from_utf8_lossy(&bytes));
            Ok(out)
        }
    }
}

/// `results [<run>]` as one function over an open database.
pub fn results(
    conn: &rusqlite::Connection,
    run: Option<&str>,
    format: Format,
    layout: Layout,
) -> Result<String, EvalsError> {
    match run {
        None => render_runs(&db::runs(conn)?, format, layout),
        Some(run) => {
            db::require_run(conn, run)?;
            render_run(&db::table_rows(conn, run)?, format, layout)
        }
    }
}

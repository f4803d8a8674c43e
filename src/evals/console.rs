//! `sightline results`: the console table of one run (spec §4.3) or the list of runs,
//! aligned for an 80-column terminal, or JSON / CSV for scripts.
//!
//! Invariants: error messages are cut to 60 characters plus an ellipsis in the table
//! (never in JSON or CSV); control characters never reach the terminal.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use super::db::{self, EvalsError, RunSummary, TableRow};
use super::text::{ellipsize, one_line, strip_control};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
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
pub fn render_run(rows: &[TableRow], format: Format, width: u16) -> Result<String, EvalsError> {
    match format {
        Format::Table => Ok(aligned_table(rows, usize::from(width))),
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
            writer.write_record(HEADERS).map_err(io)?;
            for r in rows {
                writer
                    .write_record([
                        r.harness.clone(),
                        r.model.clone(),
                        r.task_id.clone(),
                        r.exit_class.clone(),
                        r.success.to_string(),
                        r.tokens.to_string(),
                        r.total_cost.to_string(),
                        r.latency_ms.map(|ms| (ms as f64 / 1000.0).to_string()).unwrap_or_default(),
                        r.error_class.clone().unwrap_or_default(),
                        r.error_message.clone().unwrap_or_default(),
                    ])
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

fn table_cells(r: &TableRow) -> [String; 10] {
    [
        safe(&r.harness),
        safe(&r.model),
        safe(&r.task_id),
        safe(&r.exit_class),
        format!("{:.2}", r.success),
        r.tokens.to_string(),
        format!("${:.4}", r.total_cost),
        r.latency_ms.map(|ms| format!("{:.1}", ms as f64 / 1000.0)).unwrap_or_default(),
        safe(r.error_class.as_deref().unwrap_or("")),
        r.error_message.as_deref().map(|m| ellipsize(&safe(m), ERROR_CHARS)).unwrap_or_default(),
    ]
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

/// The runs list: cells, completed, failed, average success, total cost.
pub fn render_runs(runs: &[RunSummary], format: Format, width: u16) -> Result<String, EvalsError> {
    match format {
        Format::Table => {
            let mut t = table(width);
            t.set_header(["Run", "Cells", "Completed", "Failed", "Avg success", "Total cost"]);
            for r in runs {
                t.add_row(vec![
                    Cell::new(safe(&r.run_name)),
                    right(r.total_cells.max(r.planned_cells).to_string()),
                    right(r.total_cells.to_string()),
                    right(r.failed.to_string()),
                    right(format!("{:.1}%", r.avg_success * 100.0)),
                    right(format!("${:.2}", r.total_cost)),
                ]);
            }
            Ok(format!("{t}\n"))
        }
        Format::Json => Ok(serde_json::to_string_pretty(&serde_json::json!({ "runs": runs }))
            .map_err(|e| EvalsError::bad("format", e.to_string()))?
            + "\n"),
        Format::Csv => {
            let mut out = String::from("run_name,cells,completed,failed,avg_success,total_cost\n");
            let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
            for r in runs {
                writer
                    .serialize((
                        &r.run_name,
                        r.total_cells.max(r.planned_cells),
                        r.total_cells,
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
    width: u16,
) -> Result<String, EvalsError> {
    match run {
        None => render_runs(&db::runs(conn)?, format, width),
        Some(run) => {
            db::require_run(conn, run)?;
            render_run(&db::table_rows(conn, run)?, format, width)
        }
    }
}

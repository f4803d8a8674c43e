//! `sightline results`: the console table of one run (spec §4.3) or the list of runs,
//! aligned for an 80-column terminal, or JSON / CSV for scripts.
//!
//! Invariants: error messages are cut to 60 characters plus an ellipsis in the table
//! (never in JSON or CSV); control characters never reach the terminal.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use super::db::{self, EvalsError, Filters, ResultRecord, RunSummary, Sort};
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
pub fn render_run(rows: &[ResultRecord], format: Format, width: u16) -> Result<String, EvalsError> {
    match format {
        Format::Table => {
            let mut t = table(width);
            t.set_header(HEADERS);
            for r in rows {
                let error = r.error_message.as_deref().map(|m| ellipsize(&safe(m), ERROR_CHARS)).unwrap_or_default();
                t.add_row(vec![
                    Cell::new(safe(&r.harness)),
                    Cell::new(safe(&r.model)),
                    Cell::new(safe(&r.task_id)),
                    Cell::new(safe(&r.exit_class)),
                    right(format!("{:.2}", r.success)),
                    right(r.total_tokens().to_string()),
                    right(format!("${:.4}", r.total_cost)),
                    right(r.latency_ms.map(|ms| format!("{:.1}", ms as f64 / 1000.0)).unwrap_or_default()),
                    Cell::new(safe(r.error_class.as_deref().unwrap_or(""))),
                    Cell::new(error),
                ]);
            }
            Ok(format!("{t}\n"))
        }
        Format::Json => {
            Ok(serde_json::to_string_pretty(rows).map_err(|e| EvalsError::bad("format", e.to_string()))? + "\n")
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
                        r.total_tokens().to_string(),
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
            let rows = db::all_rows(conn, run, &Filters::default(), Sort::default(), false)?;
            render_run(&rows, format, width)
        }
    }
}

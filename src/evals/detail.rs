//! What the cell page adds to a result row: its phases (from the `run_phases` store,
//! or from `harness_metadata.phases` when the store has none for the cell) and any
//! reconciliation of its verdict.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use serde::Serialize;

use super::cells::{self, int, real, text};
use super::db::{EvalsError, table_exists};

/// One phase of a multi-phase cell (docs/results-db.md, plus its position and error).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Phase {
    pub phase_index: i64,
    pub name: String,
    pub trace_id: Option<String>,
    pub model: Option<String>,
    pub model_role: Option<String>,
    pub exit_code: Option<i64>,
    pub duration_ms: Option<i64>,
    pub timed_out: bool,
    pub usage: Option<serde_json::Value>,
    pub total_cost: Option<f64>,
    pub num_api_calls: Option<i64>,
    pub error: Option<String>,
}

impl Phase {
    /// The sum of the phase's token counts, `None` when it recorded none.
    pub fn total_tokens(&self) -> Option<i64> {
        let counts: Vec<i64> =
            self.usage.as_ref().and_then(|u| u.as_object())?.values().filter_map(|v| v.as_i64()).collect();
        (!counts.is_empty()).then(|| counts.iter().fold(0i64, |sum, n| sum.saturating_add(*n)))
    }
}

/// Phases of the given cells: from the phase table where it has rows for a cell,
/// otherwise from the cell's `harness_metadata.phases`.
pub fn phases_for(
    conn: &Connection,
    run: &str,
    cells: &[(&str, Option<&serde_json::Value>)],
) -> Result<std::collections::HashMap<String, Vec<Phase>>, EvalsError> {
    let mut out: std::collections::HashMap<String, Vec<Phase>> = std::collections::HashMap::new();
    if cells.is_empty() {
        return Ok(out);
    }
    if table_exists(conn, "run_phases")? {
        let placeholders = vec!["?"; cells.len()].join(", ");
        let mut stmt = conn.prepare(&format!(
            "SELECT cell_id, phase_index, name, trace_id, model, model_role, exit_code, duration_ms, timed_out,
                    usage, total_cost, num_api_calls, error
             FROM run_phases WHERE run_name = ? AND cell_id IN ({placeholders}) ORDER BY cell_id, phase_index"
        ))?;
        let mut values = vec![SqlValue::Text(run.to_string())];
        values.extend(cells.iter().map(|(id, _)| SqlValue::Text(id.to_string())));
        let rows = stmt.query_map(params_from_iter(values.iter()), |r| {
            let index = int(r, 1)?;
            Ok((
                cells::required_text(r, 0)?,
                Phase {
                    phase_index: index.unwrap_or(0),
                    name: text(r, 2)?.unwrap_or_else(|| format!("phase {}", index.unwrap_or(0) + 1)),
                    trace_id: text(r, 3)?,
                    model: text(r, 4)?,
                    model_role: text(r, 5)?,
                    exit_code: int(r, 6)?,
                    duration_ms: int(r, 7)?,
                    timed_out: int(r, 8)?.is_some_and(|n| n != 0),
                    usage: text(r, 9)?.and_then(|u| serde_json::from_str(&u).ok()),
                    total_cost: real(r, 10)?,
                    num_api_calls: int(r, 11)?,
                    error: text(r, 12)?,
                },
            ))
        })?;
        for row in rows {
            let (cell_id, phase) = row?;
            out.entry(cell_id).or_default().push(phase);
        }
    }
    for (cell_id, metadata) in cells {
        if out.contains_key(*cell_id) {
            continue;
        }
        let Some(list) = metadata.and_then(|m| m.get("phases")).and_then(|p| p.as_array()) else { continue };
        let phases: Vec<Phase> = list.iter().enumerate().map(|(i, p)| phase_from_json(i, p)).collect();
        if !phases.is_empty() {
            out.insert(cell_id.to_string(), phases);
        }
    }
    Ok(out)
}

fn phase_from_json(index: usize, value: &serde_json::Value) -> Phase {
    let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_string);
    let int = |key: &str| value.get(key).and_then(|v| v.as_i64());
    Phase {
        phase_index: index as i64,
        name: text("name").unwrap_or_else(|| format!("phase {}", index + 1)),
        trace_id: text("trace_id"),
        model: text("model"),
        model_role: text("model_role"),
        exit_code: int("exit_code"),
        duration_ms: int("duration_ms"),
        timed_out: value.get("timed_out").and_then(|v| v.as_bool()).unwrap_or(false),
        usage: value.get("usage").filter(|u| u.is_object()).cloned(),
        total_cost: value.get("total_cost").and_then(|v| v.as_f64()),
        num_api_calls: int("num_api_calls"),
        error: text("error"),
    }
}

/// An independent re-check of a cell's verdict.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Reconciliation {
    pub reconciled_at: String,
    pub reconciler: String,
    pub original_exit_class: Option<String>,
    pub original_success: Option<f64>,
    pub reconciled_exit_class: Option<String>,
    pub reconciled_success: Option<f64>,
    pub agrees: bool,
    pub notes: Option<String>,
}

pub fn reconciliations(conn: &Connection, run: &str, cell_id: &str) -> Result<Vec<Reconciliation>, EvalsError> {
    if !table_exists(conn, "reconciliation_results")? {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(
        "SELECT reconciled_at, reconciler, original_exit_class, original_success, reconciled_exit_class,
                reconciled_success, agrees, notes
         FROM reconciliation_results WHERE run_name = ?1 AND cell_id = ?2 ORDER BY reconciled_at",
    )?;
    let rows = stmt.query_map([run, cell_id], |r| {
        Ok(Reconciliation {
            reconciled_at: cells::required_text(r, 0)?,
            reconciler: cells::required_text(r, 1)?,
            original_exit_class: text(r, 2)?,
            original_success: real(r, 3)?,
            reconciled_exit_class: text(r, 4)?,
            reconciled_success: real(r, 5)?,
            agrees: int(r, 6)?.is_some_and(|n| n != 0),
            notes: text(r, 7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A cell with its phases and its verdict's reconciliations.
pub type CellDetail = (super::db::ResultRecord, Vec<Phase>, Vec<Reconciliation>);

/// One cell with its phases and reconciliation, as the cell page and the cell API show
/// it; `None` for a cell the run does not have (an unknown run is an error).
pub fn cell_detail(conn: &Connection, run: &str, cell_id: &str) -> Result<Option<CellDetail>, EvalsError> {
    super::db::require_run(conn, run)?;
    let Some(record) = super::db::cell(conn, run, cell_id)? else { return Ok(None) };
    let phases = phases_for(conn, run, &[(record.cell_id.as_str(), record.harness_metadata.as_ref())])?
        .remove(&record.cell_id)
        .unwrap_or_default();
    let reconciliation = reconciliations(conn, run, cell_id)?;
    Ok(Some((record, phases, reconciliation)))
}

//! Live progress and failures of a run: the `run_state` counts, and the failed or
//! skipped cells drawn from live progress and from non-pass results, deduplicated by
//! cell id (the live-progress entry wins).

use rusqlite::Connection;
use serde::Serialize;

use super::cells;
use super::db::{EvalsError, table_exists};

/// Live-progress counts of a run (zeros when the harness writes no live progress).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct StateCounts {
    pub completed: i64,
    pub running: i64,
    pub failed: i64,
    pub skipped: i64,
}

pub fn state_counts(conn: &Connection, run: &str) -> Result<StateCounts, EvalsError> {
    let mut counts = StateCounts::default();
    if !table_exists(conn, "run_state")? {
        return Ok(counts);
    }
    let mut stmt = conn.prepare_cached("SELECT status, count(*) FROM run_state WHERE run_name = ?1 GROUP BY status")?;
    let mut rows = stmt.query([run])?;
    while let Some(row) = rows.next()? {
        let n = cells::tally(row, 1)?;
        match cells::text(row, 0)?.as_deref().unwrap_or_default() {
            "completed" => counts.completed = n,
            "running" => counts.running = n,
            "failed" => counts.failed = n,
            "skipped" => counts.skipped = n,
            _ => {}
        }
    }
    Ok(counts)
}

/// A failed or skipped cell (docs/results-db.md).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct FailedCell {
    pub cell_id: String,
    pub status: String,
    pub error: String,
}

fn failed_cell(r: &rusqlite::Row<'_>) -> rusqlite::Result<FailedCell> {
    Ok(FailedCell {
        cell_id: cells::required_text(r, 0)?,
        status: cells::text(r, 1)?.unwrap_or_else(|| super::shown::UNKNOWN.to_string()),
        error: cells::required_text(r, 2)?,
    })
}

/// Live-progress failures and skips, then non-pass results not already listed
/// (deduplicated by cell id; the live-progress entry wins), at most `limit` of them.
fn collect_failed(conn: &Connection, run: &str, limit: Option<usize>) -> Result<Vec<FailedCell>, EvalsError> {
    // SQLite reads LIMIT -1 as "no limit".
    let sql_limit = |n: Option<usize>| n.map_or(-1, |n| n as i64);
    let mut out: Vec<FailedCell> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    if table_exists(conn, "run_state")? {
        // `+cell_id` keeps the planner on the status index; the few rows are sorted after.
        let mut stmt = conn.prepare_cached(
            "SELECT cell_id, status, coalesce(error, '') FROM run_state
             WHERE run_name = ?1 AND status IN ('failed', 'skipped') ORDER BY +cell_id LIMIT ?2",
        )?;
        for cell in stmt.query_map(rusqlite::params![run, sql_limit(limit)], failed_cell)? {
            let cell = cell?;
            seen.insert(cell.cell_id.clone());
            out.push(cell);
        }
    }
    // Enough rows to fill the limit even if every listed cell also has a result.
    let wanted = limit.map(|n| n + out.len());
    let mut stmt = conn.prepare_cached(
        "SELECT cell_id, exit_class, coalesce(error_message, error_class, '') FROM cells
         WHERE run_name = ?1 AND (exit_class IS NULL OR exit_class < 'pass' OR exit_class > 'pass')
         ORDER BY cell_id LIMIT ?2",
    )?;
    for cell in stmt.query_map(rusqlite::params![run, sql_limit(wanted)], failed_cell)? {
        let cell = cell?;
        if limit.is_some_and(|n| out.len() >= n) {
            break;
        }
        if seen.insert(cell.cell_id.clone()) {
            out.push(cell);
        }
    }
    Ok(out)
}

/// Every failed or skipped cell of a run (the errors endpoint, docs/results-db.md).
pub fn failed_cells(conn: &Connection, run: &str) -> Result<Vec<FailedCell>, EvalsError> {
    collect_failed(conn, run, None)
}

/// The first `limit` failed or skipped cells, as [`failed_cells`] orders and
/// deduplicates them, without reading every failure; how many there are in all is
/// the run summary's `needs_attention` ([`super::counts`]).
pub fn failed_preview(conn: &Connection, run: &str, limit: usize) -> Result<Vec<FailedCell>, EvalsError> {
    collect_failed(conn, run, Some(limit))
}

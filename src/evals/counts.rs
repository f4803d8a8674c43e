//! Every count of a run, defined once (`docs/results-db.md`, "Counts"): the run
//! summary that the console, the HTML and JSON reports, the dashboard's pages and API
//! and the benchmarks page all show. No surface counts cells on its own.
//!
//! Invariants: a run's cells are the union of its result rows and its live-progress
//! rows (by cell id), so the parts add up to the whole: `completed_cells` (with a
//! result) split into `passed`, `failed` and `other_results`, plus `no_result_cells`
//! (running, planned, skipped) make `total_cells`. `needs_attention` is the size of the failed
//! and skipped cells list ([`super::progress::failed_cells`]), computed by the same
//! rule. Every figure is one SQL aggregation over the indexes.

use rusqlite::{Connection, params_from_iter};
use serde::Serialize;

use super::cells;
use super::db::{EvalsError, table_exists};

/// One run's counts and totals. Figures a harness did not record are `None` ("—" on
/// screen, `null` in JSON).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunSummary {
    pub run_name: String,
    /// Every cell of the run: those with a result and those only in live progress.
    pub total_cells: i64,
    /// Cells with a result row (the rows of the results table and of the reports).
    pub completed_cells: i64,
    /// Completed cells whose exit class is `pass`.
    pub passed: i64,
    /// Completed cells whose exit class is `fail`.
    pub failed: i64,
    /// Completed cells with another exit class (`timeout`, `error`, …) or none.
    pub other_results: i64,
    /// Cells without a result: running, planned, skipped, or failed before writing one.
    pub no_result_cells: i64,
    /// Cells in the failed and skipped list: a non-pass result, or marked failed or
    /// skipped in live progress (each cell once).
    pub needs_attention: i64,
    /// The sum of the costs the cells have; `None` when no cell has one.
    pub total_cost: Option<f64>,
    /// Completed cells with a cost (when fewer, `total_cost` is a lower bound).
    pub costed_cells: i64,
    /// Mean success over every completed cell, a cell without a score counting as not
    /// succeeded; `None` for a run with no results yet.
    pub avg_success: Option<f64>,
    /// Completed cells without a usable success value.
    pub unscored_cells: i64,
    /// Cells the harness has announced in live progress (0 when it writes none).
    pub planned_cells: i64,
    /// Cells live progress marks `running`.
    pub running: i64,
    pub last_activity: Option<String>,
}

/// Every run, newest activity first. Runs known only from live progress (nothing
/// finished yet) are included with zero results.
pub fn runs(conn: &Connection) -> Result<Vec<RunSummary>, EvalsError> {
    summaries(conn, None)
}

/// The summary of one run, or `UnknownRun`.
pub fn run_summary(conn: &Connection, run: &str) -> Result<RunSummary, EvalsError> {
    summaries(conn, Some(run))?.into_iter().next().ok_or_else(|| EvalsError::UnknownRun(run.to_string()))
}

/// A result that is not a pass, in SQL (`exit_class` may be NULL).
const NOT_PASSED: &str = "(exit_class IS NULL OR exit_class <> 'pass')";

/// The summaries of every run, or of one (`only`), by aggregation over the indexes.
fn summaries(conn: &Connection, only: Option<&str>) -> Result<Vec<RunSummary>, EvalsError> {
    let filter = if only.is_some() { "WHERE run_name = ?1" } else { "" };
    let (state_cte, both_cte) = if table_exists(conn, "run_state")? {
        let joined_filter = if only.is_some() { "WHERE s.run_name = ?1" } else { "" };
        (
            format!(
                "SELECT run_name, count(*) AS planned, total(status = 'running') AS running,
                        total(status IN ('failed', 'skipped')) AS flagged, max(updated_at) AS last
                 FROM run_state {filter} GROUP BY run_name"
            ),
            // Cells in both tables: counted once in the union, and once in the list.
            format!(
                "SELECT s.run_name, count(*) AS cells,
                        total(s.status IN ('failed', 'skipped') AND (r.exit_class IS NULL OR r.exit_class <> 'pass')) AS flagged
                 FROM run_state s JOIN cells r ON r.run_name = s.run_name AND r.cell_id = s.cell_id
                 {joined_filter} GROUP BY s.run_name"
            ),
        )
    } else {
        (
            "SELECT NULL AS run_name, 0 AS planned, 0 AS running, 0 AS flagged, NULL AS last WHERE 0".to_string(),
            "SELECT NULL AS run_name, 0 AS cells, 0 AS flagged WHERE 0".to_string(),
        )
    };
    // total() never overflows (sum() of integers would raise an error); the last
    // activity is compared as text so a harness's numeric timestamps cannot fail it.
    let sql = format!(
        "WITH results AS (
            SELECT run_name, count(*) AS cells, total(exit_class = 'pass') AS passed,
                   total(exit_class = 'fail') AS failed, total({NOT_PASSED}) AS not_passed,
                   total(total_cost) AS cost, count(total_cost) AS costed,
                   avg(rate_success) AS avg_success, count(*) - count(success) AS unscored,
                   max(CAST(timestamp AS TEXT)) AS last
            FROM cells {filter} GROUP BY run_name),
         state AS ({state_cte}),
         both_tables AS ({both_cte}),
         names AS (SELECT run_name FROM results UNION SELECT run_name FROM state)
         SELECT n.run_name,
                coalesce(r.cells, 0) + coalesce(s.planned, 0) - coalesce(b.cells, 0),
                r.cells, r.passed, r.failed, r.not_passed,
                coalesce(r.not_passed, 0) + coalesce(s.flagged, 0) - coalesce(b.flagged, 0),
                r.cost, r.costed, r.avg_success, r.unscored, s.planned, s.running,
                max(coalesce(r.last, ''), coalesce(CAST(s.last AS TEXT), ''))
         FROM names n LEFT JOIN results r ON r.run_name IS n.run_name
              LEFT JOIN state s ON s.run_name IS n.run_name
              LEFT JOIN both_tables b ON b.run_name IS n.run_name
         WHERE n.run_name IS NOT NULL
         ORDER BY 14 DESC, n.run_name"
    );
    let mut stmt = conn.prepare(&sql)?;
    let params: Vec<&str> = only.into_iter().collect();
    let rows = stmt.query_map(params_from_iter(params.iter()), |row| {
        let last = cells::text(row, 13)?.unwrap_or_default();
        let total_cells = cells::tally(row, 1)?;
        let completed_cells = cells::tally(row, 2)?;
        let (passed, failed, not_passed) = (cells::tally(row, 3)?, cells::tally(row, 4)?, cells::tally(row, 5)?);
        let costed = cells::tally(row, 8)?;
        Ok(RunSummary {
            run_name: cells::required_text(row, 0)?,
            total_cells,
            completed_cells,
            passed,
            failed,
            other_results: not_passed - failed,
            no_result_cells: total_cells - completed_cells,
            needs_attention: cells::tally(row, 6)?,
            total_cost: if costed > 0 { cells::real(row, 7)? } else { None },
            costed_cells: costed,
            avg_success: cells::real(row, 9)?,
            unscored_cells: cells::tally(row, 10)?,
            planned_cells: cells::tally(row, 11)?,
            running: cells::tally(row, 12)?,
            last_activity: (!last.is_empty()).then_some(last),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

//! Opening `results.db` (schema: `assets/results-schema.sql`, documented in
//! `docs/results-db.md`) and its runs: the list, one run's summary, whether a run
//! exists. Opened read-only with `query_only`, so nothing here can write the harness's
//! database; a busy timeout rides out the harness's commits. The cells themselves are
//! read in [`super::records`] (re-exported here, with live progress and cell details,
//! so callers name one module).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, params_from_iter};
use serde::Serialize;

use super::cells;
pub use super::detail::{Phase, Reconciliation, phases_for, reconciliations};
pub use super::progress::{FailedCell, StateCounts, failed_cells, failed_preview, state_counts};
pub use super::records::{
    BulkText, COLUMNS, Filters, ResultRecord, Sort, TableRow, cell, count, distinct, for_each_row, page_rows,
    table_rows,
};

#[derive(Debug, thiserror::Error)]
pub enum EvalsError {
    #[error(
        "results database {0} not found (set --db or SIGHTLINE_RESULTS_DB; `sightline evals demo --out results.db` writes a sample)"
    )]
    Missing(PathBuf),
    #[error("{path} is not a results database: {reason}")]
    NotResults { path: PathBuf, reason: String },
    #[error("unknown run {0:?}")]
    UnknownRun(String),
    #[error("{parameter}: {message}")]
    BadParameter { parameter: &'static str, message: String },
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
}

impl EvalsError {
    pub fn bad(parameter: &'static str, message: impl Into<String>) -> Self {
        EvalsError::BadParameter { parameter, message: message.into() }
    }
}

/// Opens `results.db` for reading. Fails clearly if the file is missing or lacks
/// the `run_results` table.
pub fn open(path: &Path) -> Result<Connection, EvalsError> {
    if !path.exists() {
        return Err(EvalsError::Missing(path.to_path_buf()));
    }
    let not_results = |reason: String| EvalsError::NotResults { path: path.to_path_buf(), reason };
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|err| not_results(err.to_string()))?;
    prepare(&conn).map_err(|err| not_results(err.to_string()))?;
    match cells::missing_required(&conn).map_err(|err| not_results(err.to_string()))? {
        None => Err(not_results("it has no run_results table".into())),
        Some(missing) if !missing.is_empty() => {
            Err(not_results(format!("its run_results table has no {} column", missing.join(" or "))))
        }
        Some(_) => Ok(conn),
    }
}

/// Per-connection settings for reading a database someone else writes, and the
/// normalised `cells` view every query reads ([`cells`]).
pub fn prepare(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::from_secs(5))?;
    cells::install(conn)?;
    conn.execute_batch("PRAGMA query_only = ON;")?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

pub(super) fn table_exists(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1)", [name], |r| {
        r.get(0)
    })
}

/// One run as the overview shows it (spec §2.4, plus live-progress keys). Figures a
/// harness did not record are `None` ("—" on screen, `null` in JSON).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunSummary {
    pub run_name: String,
    pub total_cells: i64,
    pub passed: i64,
    pub failed: i64,
    /// The sum of the costs the cells have; `None` when no cell has one.
    pub total_cost: Option<f64>,
    /// Cells with a cost (when fewer than `total_cells`, `total_cost` is a lower bound).
    pub costed_cells: i64,
    /// Mean success over every result cell, a cell without a score counting as not
    /// succeeded (docs/results-db.md); `None` for a run with no results yet.
    pub avg_success: Option<f64>,
    /// Result cells without a usable success value.
    pub unscored_cells: i64,
    /// Cells the harness has announced in live progress (0 when it writes none).
    pub planned_cells: i64,
    /// Live-progress cells still running.
    pub running: i64,
    pub last_activity: Option<String>,
}

/// Every run, newest activity first. Runs known only from live progress (nothing
/// finished yet) are included with zero results.
pub fn runs(conn: &Connection) -> Result<Vec<RunSummary>, EvalsError> {
    summaries(conn, None)
}

/// The summaries of every run, or of one (`only`), by aggregation over the indexes.
fn summaries(conn: &Connection, only: Option<&str>) -> Result<Vec<RunSummary>, EvalsError> {
    let with_state = table_exists(conn, "run_state")?;
    let filter = if only.is_some() { "WHERE run_name = ?1" } else { "" };
    let state_cte = if with_state {
        format!(
            "SELECT run_name, count(*) AS planned, total(status = 'running') AS running, max(updated_at) AS last
             FROM run_state {filter} GROUP BY run_name"
        )
    } else {
        "SELECT NULL AS run_name, 0 AS planned, 0 AS running, NULL AS last WHERE 0".to_string()
    };
    // total() never overflows (sum() of integers would raise an error); the last
    // activity is compared as text so a harness's numeric timestamps cannot fail it.
    let sql = format!(
        "WITH results AS (
            SELECT run_name, count(*) AS cells, total(exit_class = 'pass') AS passed,
                   total(exit_class = 'fail') AS failed, total(total_cost) AS cost, count(total_cost) AS costed,
                   avg(rate_success) AS avg_success, count(*) - count(success) AS unscored,
                   max(CAST(timestamp AS TEXT)) AS last
            FROM cells {filter} GROUP BY run_name),
         state AS ({state_cte}),
         names AS (SELECT run_name FROM results UNION SELECT run_name FROM state)
         SELECT n.run_name, r.cells, r.passed, r.failed, r.cost, r.costed, r.avg_success, r.unscored,
                s.planned, s.running, max(coalesce(r.last, ''), coalesce(CAST(s.last AS TEXT), ''))
         FROM names n LEFT JOIN results r ON r.run_name IS n.run_name LEFT JOIN state s ON s.run_name IS n.run_name
         WHERE n.run_name IS NOT NULL
         ORDER BY 11 DESC, n.run_name"
    );
    let mut stmt = conn.prepare(&sql)?;
    let params: Vec<&str> = only.into_iter().collect();
    let rows = stmt.query_map(params_from_iter(params.iter()), |row| {
        let last = cells::text(row, 10)?.unwrap_or_default();
        let costed = cells::tally(row, 5)?;
        Ok(RunSummary {
            run_name: cells::required_text(row, 0)?,
            total_cells: cells::tally(row, 1)?,
            passed: cells::tally(row, 2)?,
            failed: cells::tally(row, 3)?,
            total_cost: if costed > 0 { cells::real(row, 4)? } else { None },
            costed_cells: costed,
            avg_success: cells::real(row, 6)?,
            unscored_cells: cells::tally(row, 7)?,
            planned_cells: cells::tally(row, 8)?,
            running: cells::tally(row, 9)?,
            last_activity: (!last.is_empty()).then_some(last),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The summary of one run, or `UnknownRun`.
pub fn run_summary(conn: &Connection, run: &str) -> Result<RunSummary, EvalsError> {
    summaries(conn, Some(run))?.into_iter().next().ok_or_else(|| EvalsError::UnknownRun(run.to_string()))
}

/// Fails with `UnknownRun` unless the run has results or live progress.
pub fn require_run(conn: &Connection, run: &str) -> Result<(), EvalsError> {
    let in_results: bool =
        conn.query_row("SELECT EXISTS (SELECT 1 FROM cells WHERE run_name = ?1)", [run], |r| r.get(0))?;
    let in_state = !in_results
        && table_exists(conn, "run_state")?
        && conn.query_row("SELECT EXISTS (SELECT 1 FROM run_state WHERE run_name = ?1)", [run], |r| r.get(0))?;
    if in_results || in_state { Ok(()) } else { Err(EvalsError::UnknownRun(run.to_string())) }
}

//! Opening `results.db` (schema: `assets/results-schema.sql`, documented in
//! `docs/results-db.md`) and whether a run exists. Every count of a run is
//! [`super::counts`]. Opened read-only with `query_only`, so nothing here can write the harness's
//! database; a busy timeout rides out the harness's commits. The cells themselves are
//! read in [`super::records`] (re-exported here, with live progress and cell details,
//! so callers name one module).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::cells;
pub use super::counts::{RunSummary, run_summary, runs};
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

/// Fails with `UnknownRun` unless the run has results or live progress.
pub fn require_run(conn: &Connection, run: &str) -> Result<(), EvalsError> {
    let in_results: bool =
        conn.query_row("SELECT EXISTS (SELECT 1 FROM cells WHERE run_name = ?1)", [run], |r| r.get(0))?;
    let in_state = !in_results
        && table_exists(conn, "run_state")?
        && conn.query_row("SELECT EXISTS (SELECT 1 FROM run_state WHERE run_name = ?1)", [run], |r| r.get(0))?;
    if in_results || in_state { Ok(()) } else { Err(EvalsError::UnknownRun(run.to_string())) }
}

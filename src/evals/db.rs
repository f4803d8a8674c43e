//! Queries over `results.db` (schema: `assets/results-schema.sql`, documented in
//! `docs/results-db.md`). Opened read-only with `query_only`, so nothing here can
//! write the harness's database; a busy timeout rides out the harness's commits.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params_from_iter};
use serde::Serialize;

use super::cells;
pub use super::detail::{Phase, Reconciliation, phases_for, reconciliations};
pub use super::progress::{FailedCell, StateCounts, failed_cells, failed_preview, state_counts};

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
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|err| EvalsError::NotResults { path: path.to_path_buf(), reason: err.to_string() })?;
    prepare(&conn).map_err(|err| EvalsError::NotResults { path: path.to_path_buf(), reason: err.to_string() })?;
    let has_results: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'run_results')",
            [],
            |r| r.get(0),
        )
        .map_err(|err| EvalsError::NotResults { path: path.to_path_buf(), reason: err.to_string() })?;
    if !has_results {
        return Err(EvalsError::NotResults { path: path.to_path_buf(), reason: "it has no run_results table".into() });
    }
    let missing: Vec<&str> = cells::REQUIRED
        .into_iter()
        .filter(|column| {
            !conn
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM pragma_table_info('run_results', 'main') WHERE lower(name) = ?1)",
                    [column],
                    |r| r.get::<_, bool>(0),
                )
                .unwrap_or(false)
        })
        .collect();
    if !missing.is_empty() {
        return Err(EvalsError::NotResults {
            path: path.to_path_buf(),
            reason: format!("its run_results table has no {} column", missing.join(" or ")),
        });
    }
    Ok(conn)
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

/// A result record (spec §2.1). The four bulky text fields are present only when a
/// single cell is read; lists leave them out (`bulk` is `None`). Every field a harness
/// may leave out is an `Option` (`null` in JSON, empty in CSV, "—" on screen).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ResultRecord {
    pub cell_id: String,
    pub run_name: String,
    pub harness: Option<String>,
    pub model: Option<String>,
    pub task_id: Option<String>,
    pub track: Option<String>,
    pub repeat: Option<i64>,
    pub exit_class: Option<String>,
    pub success: Option<f64>,
    pub error_class: Option<String>,
    pub error_message: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cache_read_tokens: Option<i64>,
    pub cache_write_tokens: Option<i64>,
    pub reasoning_tokens: Option<i64>,
    pub total_cost: Option<f64>,
    pub latency_ms: Option<i64>,
    pub time_to_first_attempt_ms: Option<i64>,
    pub num_api_calls: Option<i64>,
    pub num_tool_calls: Option<i64>,
    #[serde(flatten)]
    pub bulk: Option<BulkText>,
    pub harness_metadata: Option<serde_json::Value>,
    pub timestamp: Option<String>,
    pub retry_count: Option<i64>,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct BulkText {
    pub diff: Option<String>,
    pub test_output: Option<String>,
    pub harness_stdout: Option<String>,
    pub harness_stderr: Option<String>,
}

impl ResultRecord {
    /// The sum of the token kinds the cell has (`None` when it has none), as the
    /// `cells` view computes `tokens`.
    pub fn total_tokens(&self) -> Option<i64> {
        let kinds = [
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.reasoning_tokens,
        ];
        kinds.iter().any(Option::is_some).then(|| kinds.iter().flatten().fold(0i64, |sum, n| sum.saturating_add(*n)))
    }

    pub fn passed(&self) -> bool {
        self.exit_class.as_deref() == Some("pass")
    }
}

/// The spec's column order of `run_results` (§2.1), for CSV.
pub const COLUMNS: [&str; 28] = [
    "cell_id",
    "run_name",
    "harness",
    "model",
    "task_id",
    "track",
    "repeat",
    "exit_class",
    "success",
    "error_class",
    "error_message",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "total_cost",
    "latency_ms",
    "time_to_first_attempt_ms",
    "num_api_calls",
    "num_tool_calls",
    "diff",
    "test_output",
    "harness_metadata",
    "harness_stdout",
    "harness_stderr",
    "timestamp",
    "retry_count",
];

const LIGHT_COLUMNS: &str = "cell_id, run_name, harness, model, task_id, track, repeat, exit_class, success,
    error_class, error_message, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
    reasoning_tokens, total_cost, latency_ms, time_to_first_attempt_ms, num_api_calls, num_tool_calls,
    harness_metadata, timestamp, retry_count";
const BULK_COLUMNS: &str = "diff, test_output, harness_stdout, harness_stderr";

fn read_record(row: &Row<'_>, with_bulk: bool) -> rusqlite::Result<ResultRecord> {
    use cells::{int, real, text};
    let metadata = text(row, 21)?;
    Ok(ResultRecord {
        cell_id: cells::required_text(row, 0)?,
        run_name: cells::required_text(row, 1)?,
        harness: text(row, 2)?,
        model: text(row, 3)?,
        task_id: text(row, 4)?,
        track: text(row, 5)?,
        repeat: int(row, 6)?,
        exit_class: text(row, 7)?,
        success: real(row, 8)?,
        error_class: text(row, 9)?,
        error_message: text(row, 10)?,
        input_tokens: int(row, 11)?,
        output_tokens: int(row, 12)?,
        cache_read_tokens: int(row, 13)?,
        cache_write_tokens: int(row, 14)?,
        reasoning_tokens: int(row, 15)?,
        total_cost: real(row, 16)?,
        latency_ms: int(row, 17)?,
        time_to_first_attempt_ms: int(row, 18)?,
        num_api_calls: int(row, 19)?,
        num_tool_calls: int(row, 20)?,
        harness_metadata: metadata.map(|text| serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))),
        timestamp: text(row, 22)?,
        retry_count: int(row, 23)?,
        bulk: if with_bulk {
            Some(BulkText {
                diff: text(row, 24)?,
                test_output: text(row, 25)?,
                harness_stdout: text(row, 26)?,
                harness_stderr: text(row, 27)?,
            })
        } else {
            None
        },
    })
}

/// Filters of the results table; columns are fixed here, values are bound.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filters {
    pub model: Option<String>,
    pub harness: Option<String>,
    pub track: Option<String>,
    pub min_success: Option<f64>,
}

/// Sortable columns: the allowlist, with the `cells` sort key of each. Anything else
/// is refused before SQL is built.
pub const SORT_COLUMNS: &[(&str, &str)] = &[
    ("cell_id", "cell_id"),
    ("harness", "harness"),
    ("model", "model"),
    ("task_id", "task_id"),
    ("track", "track"),
    ("repeat", "sort_repeat"),
    ("exit_class", "exit_class"),
    ("success", "sort_success"),
    ("tokens", "sort_tokens"),
    ("total_cost", "sort_total_cost"),
    ("latency_ms", "sort_latency_ms"),
    ("num_api_calls", "sort_num_api_calls"),
    ("error_class", "error_class"),
    ("timestamp", "timestamp"),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sort {
    expression: &'static str,
    pub column: &'static str,
    pub descending: bool,
}

impl Default for Sort {
    fn default() -> Self {
        Sort { expression: "cell_id", column: "cell_id", descending: false }
    }
}

impl Sort {
    pub fn parse(column: Option<&str>, order: Option<&str>) -> Result<Sort, EvalsError> {
        let column = column.filter(|c| !c.is_empty()).unwrap_or("cell_id");
        let (name, expression) = SORT_COLUMNS.iter().find(|(name, _)| *name == column).ok_or_else(|| {
            let names: Vec<&str> = SORT_COLUMNS.iter().map(|(n, _)| *n).collect();
            EvalsError::bad("sort", format!("unknown column {column:?}; expected one of {}", names.join(", ")))
        })?;
        let descending = match order.filter(|o| !o.is_empty()) {
            None | Some("asc") => false,
            Some("desc") => true,
            Some(other) => return Err(EvalsError::bad("order", format!("{other:?} is not asc or desc"))),
        };
        Ok(Sort { expression, column: name, descending })
    }

    fn sql(&self) -> String {
        let direction = if self.descending { "DESC" } else { "ASC" };
        // cell_id breaks ties so paging is stable.
        format!("ORDER BY {} {direction}, cell_id {direction}", self.expression)
    }
}

pub(super) fn where_clause(run: &str, filters: &Filters) -> (String, Vec<SqlValue>) {
    let mut sql = String::from("WHERE run_name = ?");
    let mut values = vec![SqlValue::Text(run.to_string())];
    for (column, value) in [("model", &filters.model), ("harness", &filters.harness), ("track", &filters.track)] {
        if let Some(value) = value.as_ref().filter(|v| !v.is_empty()) {
            sql.push_str(&format!(" AND {column} = ?"));
            values.push(SqlValue::Text(value.clone()));
        }
    }
    if let Some(min) = filters.min_success {
        // The NULL rule of rates applies to the filter too: an unscored cell scores 0.
        sql.push_str(" AND rate_success >= ?");
        values.push(SqlValue::Real(min));
    }
    (sql, values)
}

/// The number of a run's cells matching the filters (a covering-index count).
pub fn count(conn: &Connection, run: &str, filters: &Filters) -> Result<i64, EvalsError> {
    let (filter_sql, values) = where_clause(run, filters);
    Ok(conn
        .prepare_cached(&format!("SELECT count(*) FROM cells {filter_sql}"))?
        .query_row(params_from_iter(values.iter()), |r| r.get(0))?)
}

/// One page of a run's cells, without the total.
pub fn page_rows(
    conn: &Connection,
    run: &str,
    filters: &Filters,
    sort: Sort,
    page: u32,
    per_page: u32,
) -> Result<Vec<ResultRecord>, EvalsError> {
    let (filter_sql, filter_values) = where_clause(run, filters);
    let mut values = filter_values.clone();
    values.extend(filter_values);
    values.push(SqlValue::Integer(i64::from(per_page)));
    values.push(SqlValue::Integer(i64::from(page.saturating_sub(1)) * i64::from(per_page)));
    values.push(SqlValue::Integer(i64::from(per_page)));
    // Two steps: the page's cell ids from an index (OFFSET then skips index entries,
    // not rows with their logs), then just those rows by primary key. The outer query
    // filters and limits again, for a harness's table without a primary key whose cell
    // ids repeat within a run.
    let order = sort.sql();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {LIGHT_COLUMNS} FROM cells {filter_sql}
           AND cell_id IN (SELECT cell_id FROM cells {filter_sql} {order} LIMIT ? OFFSET ?) {order} LIMIT ?"
    ))?;
    let rows = stmt.query_map(params_from_iter(values.iter()), |row| read_record(row, false))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Visits every cell matching the filters, in order, one row at a time, so exports
/// of runs with gigabytes of logs never hold more than one row in memory.
pub fn for_each_row(
    conn: &Connection,
    run: &str,
    filters: &Filters,
    sort: Sort,
    with_bulk: bool,
    mut visit: impl FnMut(ResultRecord) -> Result<(), EvalsError>,
) -> Result<(), EvalsError> {
    let (filter_sql, values) = where_clause(run, filters);
    let columns = if with_bulk { format!("{LIGHT_COLUMNS}, {BULK_COLUMNS}") } else { LIGHT_COLUMNS.to_string() };
    let mut stmt = conn.prepare(&format!("SELECT {columns} FROM cells {filter_sql} {}", sort.sql()))?;
    let mut rows = stmt.query(params_from_iter(values.iter()))?;
    while let Some(row) = rows.next()? {
        visit(read_record(row, with_bulk)?)?;
    }
    Ok(())
}

/// The columns people read in tables (console, HTML report). All of them precede the
/// bulky text columns in the row, so reading them never walks a row's overflow pages.
#[derive(Clone, Debug, PartialEq)]
pub struct TableRow {
    pub harness: Option<String>,
    pub model: Option<String>,
    pub task_id: Option<String>,
    pub exit_class: Option<String>,
    pub success: Option<f64>,
    pub tokens: Option<i64>,
    pub total_cost: Option<f64>,
    pub latency_ms: Option<i64>,
    pub error_class: Option<String>,
    pub error_message: Option<String>,
}

/// Every cell of a run as table rows, in cell-id order.
pub fn table_rows(conn: &Connection, run: &str) -> Result<Vec<TableRow>, EvalsError> {
    use cells::{int, real, text};
    let mut stmt = conn.prepare(
        "SELECT harness, model, task_id, exit_class, success, tokens, total_cost, latency_ms, error_class, error_message
         FROM cells WHERE run_name = ?1 ORDER BY cell_id",
    )?;
    let rows = stmt.query_map([run], |r| {
        Ok(TableRow {
            harness: text(r, 0)?,
            model: text(r, 1)?,
            task_id: text(r, 2)?,
            exit_class: text(r, 3)?,
            success: real(r, 4)?,
            tokens: int(r, 5)?,
            total_cost: real(r, 6)?,
            latency_ms: int(r, 7)?,
            error_class: text(r, 8)?,
            error_message: text(r, 9)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One cell with all its columns.
pub fn cell(conn: &Connection, run: &str, cell_id: &str) -> Result<Option<ResultRecord>, EvalsError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {LIGHT_COLUMNS}, {BULK_COLUMNS} FROM cells WHERE run_name = ?1 AND cell_id = ?2"
        ))?
        .query_row([run, cell_id], |row| read_record(row, true))
        .optional()?)
}

/// Distinct known values of an allowlisted column in a run, for filter dropdowns
/// (NULL cannot be chosen: a filter compares with `=`).
pub fn distinct(conn: &Connection, run: &str, column: &'static str) -> Result<Vec<String>, EvalsError> {
    debug_assert!(matches!(column, "model" | "harness" | "track"));
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT DISTINCT {column} FROM cells WHERE run_name = ?1 AND {column} IS NOT NULL ORDER BY 1"
    ))?;
    let rows = stmt.query_map([run], |r| cells::required_text(r, 0))?;
    // 5 and '5' are distinct to SQLite but the same choice to a person.
    let values: std::collections::BTreeSet<String> = rows.collect::<Result<_, _>>()?;
    Ok(values.into_iter().collect())
}

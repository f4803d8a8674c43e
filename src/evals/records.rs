//! A run's cells: the result record of docs/results-db.md, the filters and sorts of the results
//! table (columns from allowlists, values always bound), pages, full streams for exports
//! and reports, the narrow table rows of the console and the HTML report, one cell, and
//! the choices of the filter dropdowns. Everything reads the normalised `cells` view.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Row, params_from_iter};
use serde::Serialize;

use super::cells;
use super::db::EvalsError;

/// A result record (docs/results-db.md). The four bulky text fields are present only when a
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

/// The column order of `run_results` (docs/results-db.md), for CSV.
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
const SORT_COLUMNS: &[(&str, &str)] = &[
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
    pub cell_id: String,
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
        "SELECT harness, model, task_id, exit_class, success, tokens, total_cost, latency_ms, error_class, error_message,
                cell_id
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
            cell_id: cells::required_text(r, 10)?,
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

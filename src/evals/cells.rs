//! The one normalised reading of `run_results`: every query of the eval service reads
//! the per-connection TEMP VIEW `cells`, never the harness's table, and every value it
//! returns is read with the lenient getters here. This is where a results.db written by
//! any harness becomes one shape.
//!
//! Invariants:
//! - Every column except `cell_id` and `run_name` may be NULL, of another SQLite type
//!   (a number stored as text, an integer where a real is expected, a BLOB), or missing
//!   from the table altogether (it reads as NULL). Unknown stays unknown: numbers that do
//!   not parse are NULL, never 0.
//! - Text is read from any type (numbers as their decimal form, invalid UTF-8 replaced),
//!   so no value can fail a read.
//! - The NULL rule for success lives here and only here: `rate_success` counts a cell
//!   without a usable success as not succeeded (0), so every success rate is taken over
//!   all of a group's cells; `success` itself stays NULL for display. A success outside
//!   0..=1 (the spec's range) is not a usable score: a harness writing percentages or
//!   garbage shows unscored cells instead of rates of 4,000%.
//! - `tokens` is the sum of the token kinds the cell has, NULL when it has none.
//! - Sort keys (`sort_*`) are the raw columns when the declared type gives them numeric
//!   affinity (SQLite then stores any well-formed number as a number, and the covering
//!   indexes of `assets/results-schema.sql` serve the sort), else the normalised value.

use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, Row};

/// Numeric columns of the spec's `run_results` and whether each is a count (integer).
const NUMERIC: [(&str, bool); 13] = [
    ("repeat", true),
    ("success", false),
    ("input_tokens", true),
    ("output_tokens", true),
    ("cache_read_tokens", true),
    ("cache_write_tokens", true),
    ("reasoning_tokens", true),
    ("total_cost", false),
    ("latency_ms", true),
    ("time_to_first_attempt_ms", true),
    ("num_api_calls", true),
    ("num_tool_calls", true),
    ("retry_count", true),
];

const TOKEN_KINDS: [&str; 5] =
    ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"];

/// The columns `run_results` must have for a file to be read at all. Every other
/// column of the spec (`records::COLUMNS`) is numeric ([`NUMERIC`]) or text, read as
/// stored (lenient reads make any type text).
const REQUIRED: [&str; 2] = ["cell_id", "run_name"];

/// The required columns a database's `run_results` lacks; `None` when it has no
/// `run_results` table at all.
pub fn missing_required(conn: &Connection) -> rusqlite::Result<Option<Vec<&'static str>>> {
    let declared = declared_types(conn)?;
    if declared.is_empty() {
        return Ok(None);
    }
    Ok(Some(REQUIRED.into_iter().filter(|name| !declared.iter().any(|column| column.name == *name)).collect()))
}

/// A number from any SQLite value: integers and finite reals as they are, text that
/// parses as a finite number (surrounding spaces allowed), and nothing else.
fn number(value: ValueRef<'_>) -> Option<f64> {
    match value {
        ValueRef::Integer(n) => Some(n as f64),
        ValueRef::Real(x) => x.is_finite().then_some(x),
        ValueRef::Text(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
        ValueRef::Null | ValueRef::Blob(_) => None,
    }
}

/// A count from any SQLite value: integers as they are, other numbers rounded when
/// they fit an `i64`.
fn count(value: ValueRef<'_>) -> Option<i64> {
    let exact = match value {
        ValueRef::Integer(n) => Some(n),
        ValueRef::Text(bytes) => std::str::from_utf8(bytes).ok().and_then(|t| t.trim().parse().ok()),
        _ => None,
    };
    exact.or_else(|| {
        let x = number(value)?.round();
        // i64::MAX is not exactly representable; stay strictly inside the range.
        (-9.2e18..=9.2e18).contains(&x).then_some(x as i64)
    })
}

/// A success score: a number in 0..=1, else nothing.
fn score(value: ValueRef<'_>) -> Option<f64> {
    number(value).filter(|x| (0.0..=1.0).contains(x))
}

/// Registers `sl_real`, `sl_int` and `sl_score` and creates the TEMP VIEW `cells` over this
/// database's `run_results`. Runs before `query_only` is set (a TEMP object is a
/// write to the connection's own temporary schema, never to the harness's file).
pub fn install(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC | FunctionFlags::SQLITE_INNOCUOUS;
    conn.create_scalar_function("sl_real", 1, flags, |ctx| Ok(number(ctx.get_raw(0))))?;
    conn.create_scalar_function("sl_int", 1, flags, |ctx| Ok(count(ctx.get_raw(0))))?;
    conn.create_scalar_function("sl_score", 1, flags, |ctx| Ok(score(ctx.get_raw(0))))?;
    let declared = declared_types(conn)?;
    if declared.is_empty() {
        // No run_results table: `db::open` refuses the file with a clear message.
        return Ok(());
    }
    conn.execute_batch(&format!("DROP VIEW IF EXISTS temp.cells; CREATE TEMP VIEW cells AS {};", view_sql(&declared)))
}

/// A column of `run_results` as declared: its name and type (lower-cased) and whether
/// it is NOT NULL.
struct Declared {
    name: String,
    kind: String,
    not_null: bool,
}

fn declared_types(conn: &Connection) -> rusqlite::Result<Vec<Declared>> {
    let mut stmt = conn.prepare("SELECT name, type, \"notnull\" FROM pragma_table_info('run_results', 'main')")?;
    let rows = stmt.query_map([], |r| {
        Ok(Declared {
            name: text(r, 0)?.unwrap_or_default().to_lowercase(),
            kind: text(r, 1)?.unwrap_or_default().to_lowercase(),
            not_null: int(r, 2)?.is_some_and(|n| n != 0),
        })
    })?;
    rows.collect()
}

/// SQLite's affinity rule (datatype3 §3.1): INTEGER, REAL and NUMERIC affinity turn
/// well-formed numeric text into numbers when it is stored.
fn numeric_affinity(declared: &str) -> bool {
    let textual = ["char", "clob", "text", "blob"].iter().any(|t| declared.contains(t));
    !declared.is_empty() && !textual
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn view_sql(declared: &[Declared]) -> String {
    let find = |name: &str| declared.iter().find(|column| column.name == name);
    let mut columns: Vec<String> = Vec::new();
    let numeric = |name: &str| NUMERIC.iter().any(|(column, _)| *column == name);
    for name in super::records::COLUMNS.into_iter().filter(|name| !numeric(name)) {
        columns.push(if find(name).is_some() { quoted(name) } else { format!("NULL AS {name}") });
    }
    let normalised = |name: &str, integer: bool| match find(name) {
        Some(_) if name == "success" => format!("sl_score({})", quoted(name)),
        Some(_) => format!("{}({})", if integer { "sl_int" } else { "sl_real" }, quoted(name)),
        None => "NULL".to_string(),
    };
    let sort_key = |name: &str, integer: bool| match find(name) {
        Some(column) if numeric_affinity(&column.kind) => quoted(name),
        _ => normalised(name, integer),
    };
    for (name, integer) in NUMERIC {
        columns.push(format!("{} AS {name}", normalised(name, integer)));
        columns.push(format!("{} AS sort_{name}", sort_key(name, integer)));
    }
    let kinds: Vec<String> = TOKEN_KINDS.iter().map(|k| normalised(k, true)).collect();
    let tokens = format!(
        "CASE WHEN coalesce({}) IS NULL THEN NULL ELSE {} END",
        kinds.join(", "),
        kinds.iter().map(|k| format!("coalesce({k}, 0)")).collect::<Vec<_>>().join(" + ")
    );
    columns.push(format!("{tokens} AS tokens"));
    // The raw sum matches the expression index run_results_by_tokens when every kind
    // has numeric affinity and cannot be NULL (one NULL kind would make the raw sum NULL
    // where the shown sum is of the known kinds); otherwise sort by the normalised sum.
    let all_numeric =
        TOKEN_KINDS.iter().all(|k| find(k).is_some_and(|column| numeric_affinity(&column.kind) && column.not_null));
    columns.push(if all_numeric {
        format!("({}) AS sort_tokens", TOKEN_KINDS.join(" + "))
    } else {
        format!("{tokens} AS sort_tokens")
    });
    // The NULL rule for success rates (docs/results-db.md): no usable score, no success.
    columns.push(format!("coalesce({}, 0.0) AS rate_success", normalised("success", false)));
    format!("SELECT {} FROM main.run_results", columns.join(",\n  "))
}

/// Text from any value: NULL is `None`, numbers their decimal form, bytes lossily.
pub fn text(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<String>> {
    Ok(match row.get_ref(index)? {
        ValueRef::Null => None,
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(x) => Some(x.to_string()),
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
    })
}

/// A name (model, harness, task): text, where an empty one is no name at all, so that
/// NULL and '' are one "unknown" group rather than two that look alike.
pub fn name(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<String>> {
    Ok(text(row, index)?.filter(|name| !name.is_empty()))
}

/// Text that must be there (`cell_id`, `run_name`): NULL reads as empty.
pub fn required_text(row: &Row<'_>, index: usize) -> rusqlite::Result<String> {
    Ok(text(row, index)?.unwrap_or_default())
}

/// A finite number from any value, or `None`.
pub fn real(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<f64>> {
    Ok(number(row.get_ref(index)?))
}

/// A whole number from any value, or `None`.
pub fn int(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<i64>> {
    Ok(count(row.get_ref(index)?))
}

/// A count that SQL always produces (`count(*)`, `total(...)`): 0 when absent.
pub fn tally(row: &Row<'_>, index: usize) -> rusqlite::Result<i64> {
    Ok(int(row, index)?.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn_with(ddl: &str, rows: &str) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(ddl).unwrap();
        conn.execute_batch(rows).unwrap();
        install(&conn).unwrap();
        conn
    }

    #[test]
    fn numbers_are_read_from_any_type_and_junk_is_unknown() {
        let conn = conn_with(
            "CREATE TABLE run_results (cell_id, run_name, success TEXT, total_cost, input_tokens BLOB)",
            "INSERT INTO run_results VALUES ('a', 'r', ' 0.5 ', '1.25', x'00'), ('b', 'r', 'n/a', 2, '7'),
                                            ('c', 'r', NULL, 'inf', 3.6)",
        );
        type Got = (Option<f64>, Option<f64>, Option<i64>, f64);
        let got: Vec<Got> = conn
            .prepare("SELECT success, total_cost, input_tokens, rate_success FROM cells ORDER BY cell_id")
            .unwrap()
            .query_map([], |r| Ok((real(r, 0)?, real(r, 1)?, int(r, 2)?, real(r, 3)?.unwrap())))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            got,
            vec![(Some(0.5), Some(1.25), None, 0.5), (None, Some(2.0), Some(7), 0.0), (None, None, Some(4), 0.0)]
        );
    }

    #[test]
    fn missing_columns_read_as_null_and_tokens_sum_what_is_known() {
        let conn = conn_with(
            "CREATE TABLE run_results (cell_id TEXT, run_name TEXT, input_tokens INTEGER, output_tokens INTEGER)",
            "INSERT INTO run_results VALUES ('a', 'r', 10, NULL), ('b', 'r', NULL, NULL)",
        );
        let got: Vec<(Option<i64>, Option<String>, Option<i64>)> = conn
            .prepare("SELECT tokens, model, latency_ms FROM cells ORDER BY sort_tokens, cell_id")
            .unwrap()
            .query_map([], |r| Ok((int(r, 0)?, text(r, 1)?, int(r, 2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(got, vec![(None, None, None), (Some(10), None, None)]);
    }

    #[test]
    fn text_reads_any_type_and_invalid_utf8() {
        let conn = conn_with(
            "CREATE TABLE run_results (cell_id, run_name, model)",
            "INSERT INTO run_results VALUES ('a', 'r', 42), ('b', 'r', CAST(x'66ff6f' AS TEXT)), ('c', 'r', 1.5)",
        );
        let got: Vec<Option<String>> = conn
            .prepare("SELECT model FROM cells ORDER BY cell_id")
            .unwrap()
            .query_map([], |r| text(r, 0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(got, vec![Some("42".into()), Some("f\u{fffd}o".into()), Some("1.5".into())]);
    }

    #[test]
    fn counts_round_reals_and_refuse_what_does_not_fit() {
        assert_eq!(count(ValueRef::Real(3.5)), Some(4));
        assert_eq!(count(ValueRef::Text(b"12")), Some(12));
        assert_eq!(count(ValueRef::Text(b"12.0")), Some(12));
        assert_eq!(count(ValueRef::Real(1e300)), None);
        assert_eq!(count(ValueRef::Text(b"9223372036854775807")), Some(i64::MAX));
        assert_eq!(number(ValueRef::Text(b"NaN")), None);
        assert_eq!(score(ValueRef::Real(1e308)), None);
        assert_eq!(score(ValueRef::Integer(100)), None);
        assert_eq!(score(ValueRef::Text(b"0.25")), Some(0.25));
    }
}

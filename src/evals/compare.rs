//! Comparing two selections of cells — two runs, or two harnesses or models within
//! one run — on the tasks both attempted: per-task outcomes, wins and losses, an exact
//! McNemar test, a paired bootstrap interval, and the regressions.
//!
//! Invariants: A is the baseline and B the candidate everywhere (a "win" is B more
//! successful than A); only shared task ids count; a task's score is the mean success
//! of its cells in the selection (repeats averaged).

use std::collections::HashMap;

use rusqlite::{Connection, params_from_iter};
use serde::Serialize;

use super::cells;
use super::db::{self, EvalsError};
use super::stats::{self, PairedComparison, TaskScore};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Side {
    pub run: String,
    pub model: Option<String>,
    pub harness: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Selection {
    pub a: Side,
    pub b: Side,
}

impl Selection {
    /// From `a`, `b` (run names, required) and optional `a_model`, `a_harness`,
    /// `b_model`, `b_harness`.
    pub fn from_query(raw: &HashMap<String, String>) -> Result<Selection, EvalsError> {
        let get = |key: &str| raw.get(key).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let side = |run_key: &'static str, prefix: &str| -> Result<Side, EvalsError> {
            Ok(Side {
                run: get(run_key).ok_or_else(|| EvalsError::bad(run_key, "a run name is required"))?,
                model: get(&format!("{prefix}_model")),
                harness: get(&format!("{prefix}_harness")),
            })
        };
        Ok(Selection { a: side("a", "a")?, b: side("b", "b")? })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskOutcome {
    pub task_id: String,
    pub a: f64,
    pub b: f64,
    /// `win` (B better), `loss` (B worse) or `tie`.
    pub outcome: &'static str,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub a: Side,
    pub b: Side,
    /// Wins, losses, ties, mean difference (B − A), McNemar p, bootstrap interval,
    /// regressions and improvements, as the statistics module computed them.
    #[serde(flatten)]
    pub paired: PairedComparison,
    pub tasks: Vec<TaskOutcome>,
}

fn task_scores(conn: &Connection, side: &Side) -> Result<Vec<TaskScore>, EvalsError> {
    db::require_run(conn, &side.run)?;
    let filters = db::Filters { model: side.model.clone(), harness: side.harness.clone(), ..db::Filters::default() };
    let (filter_sql, mut values) = super::records::where_clause(&side.run, &filters);
    values.insert(0, rusqlite::types::Value::Real(1.0 - stats::SUCCESS_TOLERANCE));
    // Cells without a task id cannot be paired with the other run's tasks.
    let sql = format!(
        "SELECT task_id, avg(rate_success), count(*), total(rate_success >= ?) FROM cells {filter_sql}
         AND task_id IS NOT NULL GROUP BY task_id ORDER BY task_id"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(values.iter()), |r| {
        Ok(TaskScore {
            task_id: cells::required_text(r, 0)?,
            mean: cells::real(r, 1)?.unwrap_or(0.0),
            repeats: cells::tally(r, 2)?.max(0) as usize,
            successes: cells::tally(r, 3)?.max(0) as usize,
        })
    })?;
    // 5 and '5' group apart in SQL (all numbers sort before all text) but are one task.
    let mut by_task = std::collections::BTreeMap::new();
    for score in rows {
        stats::add_task(&mut by_task, score?);
    }
    Ok(by_task.into_values().collect())
}

/// A harness or model the side names must be one its run has: a name that matches
/// nothing is a 400 that lists the run's names, never an empty comparison.
fn check_names(
    conn: &Connection,
    side: &Side,
    model_key: &'static str,
    harness_key: &'static str,
) -> Result<(), EvalsError> {
    db::require_run(conn, &side.run)?;
    for (wanted, column, key) in [(&side.model, "model", model_key), (&side.harness, "harness", harness_key)] {
        let Some(wanted) = wanted else { continue };
        let known = super::records::distinct(conn, &side.run, column)?;
        if !known.iter().any(|name| name == wanted) {
            return Err(EvalsError::bad(
                key,
                format!("run {:?} has no {column} {wanted:?}; its {column} names are: {}", side.run, known.join(", ")),
            ));
        }
    }
    Ok(())
}

pub fn compare(conn: &Connection, selection: &Selection) -> Result<Comparison, EvalsError> {
    check_names(conn, &selection.a, "a_model", "a_harness")?;
    check_names(conn, &selection.b, "b_model", "b_harness")?;
    let a = task_scores(conn, &selection.a)?;
    let b = task_scores(conn, &selection.b)?;
    let paired = stats::compare(&a, &b);
    if paired.shared_tasks == 0 {
        return Err(EvalsError::bad(
            "b",
            format!(
                "A and B share no task, so there is nothing to compare (A attempted {} tasks, B {}); choose runs, harnesses or models that attempted the same tasks",
                a.len(),
                b.len()
            ),
        ));
    }
    let b_by_task: HashMap<&str, f64> = b.iter().map(|t| (t.task_id.as_str(), t.mean)).collect();
    let tasks = a
        .iter()
        .filter_map(|ta| {
            let tb = *b_by_task.get(ta.task_id.as_str())?;
            let outcome = if (tb - ta.mean).abs() <= stats::TIE_TOLERANCE {
                "tie"
            } else if tb > ta.mean {
                "win"
            } else {
                "loss"
            };
            Some(TaskOutcome { task_id: ta.task_id.clone(), a: ta.mean, b: tb, outcome })
        })
        .collect();
    Ok(Comparison { a: selection.a.clone(), b: selection.b.clone(), paired, tasks })
}

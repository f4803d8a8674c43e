//! Leaderboards (docs/results-db.md): per model, one row per harness, computed by SQL
//! aggregation; plus the error bars eval users ask for — tasks, standard error and a
//! 95% interval over task means (repeats averaged within a task first), and pass@k.
//!
//! Invariants: rows are sorted by success rate descending (harness name breaks ties);
//! the success class uses the spec's thresholds on the rate in percent (>= 80 pass,
//! >= 50 partial, else fail); the spec's keys serialise as strings in JSON.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::Serialize;
use serde_json::{Value, json};

use super::db::EvalsError;
use super::stats::{self, Estimate, TaskScore};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SuccessClass {
    Pass,
    Partial,
    Fail,
}

impl SuccessClass {
    pub fn of_rate(rate: f64) -> SuccessClass {
        let pct = rate * 100.0;
        if pct >= 80.0 - 1e-9 {
            SuccessClass::Pass
        } else if pct >= 50.0 - 1e-9 {
            SuccessClass::Partial
        } else {
            SuccessClass::Fail
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SuccessClass::Pass => "pass",
            SuccessClass::Partial => "partial",
            SuccessClass::Fail => "fail",
        }
    }
}

/// A mean over the cells that have the value, and how many those were.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mean {
    /// `None` when no cell of the row has the value.
    pub value: Option<f64>,
    /// Cells that had the value.
    pub cells: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `None` for cells that name no harness.
    pub harness: Option<String>,
    pub cells: i64,
    /// Mean success over all `cells`, an unscored cell counting as 0 (docs/results-db.md).
    pub success_rate: f64,
    pub success_class: SuccessClass,
    /// Cells without a usable success value (counted as not succeeded).
    pub unscored_cells: i64,
    pub avg_tokens: Mean,
    pub avg_cost: Mean,
    pub avg_time_s: Mean,
    pub avg_api_calls: Mean,
    pub estimate: Estimate,
    /// (k, mean pass@k, tasks with at least k repeats), for k = 1 and for the largest
    /// repeat count any task of the group reaches, when that is above 1 (averaged over
    /// the tasks that have that many repeats; the count says how many).
    pub pass_at_k: Vec<(usize, f64, usize)>,
}

impl Row {
    /// The harness as shown on screen.
    pub fn harness_shown(&self) -> &str {
        self.harness.as_deref().unwrap_or(super::shown::UNKNOWN)
    }
}

/// The key of a leaderboard's model: `None` for cells that name no model. In JSON
/// (whose keys are strings) that model is the empty string.
pub type ModelKey = Option<String>;

/// model → rows, models in name order (cells without a model first).
pub type Leaderboards = BTreeMap<ModelKey, Vec<Row>>;

pub fn compute(conn: &Connection, run: &str) -> Result<Leaderboards, EvalsError> {
    Ok(compute_with_matrix(conn, run)?.0)
}

/// The leaderboards and the model × task matrix (mean success per model and task over
/// all harnesses, weighted by cells), from one pass over the run's task groups.
pub fn compute_with_matrix(
    conn: &Connection,
    run: &str,
) -> Result<(Leaderboards, Vec<crate::charts::MatrixCell>), EvalsError> {
    use super::cells::{name, real, tally};
    let mut boards: Leaderboards = BTreeMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT model, harness, count(*), avg(rate_success), count(*) - count(success),
                avg(tokens), count(tokens), avg(total_cost), count(total_cost),
                avg(latency_ms) / 1000.0, count(latency_ms), avg(num_api_calls), count(num_api_calls)
         FROM cells WHERE run_name = ?1 GROUP BY model, harness",
    )?;
    let mut rows = stmt.query([run])?;
    while let Some(r) = rows.next()? {
        let rate = real(r, 3)?.unwrap_or(0.0);
        let mean = |value: usize| -> rusqlite::Result<Mean> {
            Ok(Mean { value: real(r, value)?, cells: tally(r, value + 1)? })
        };
        let row = Row {
            harness: name(r, 1)?,
            cells: tally(r, 2)?,
            success_rate: rate,
            success_class: SuccessClass::of_rate(rate),
            unscored_cells: tally(r, 4)?,
            avg_tokens: mean(5)?,
            avg_cost: mean(7)?,
            avg_time_s: mean(9)?,
            avg_api_calls: mean(11)?,
            estimate: stats::task_level_estimate(&[]),
            pass_at_k: Vec::new(),
        };
        let rows = boards.entry(name(r, 0)?).or_default();
        // 5 and '5' (or NULL and '') group apart in SQL but are one harness to a person.
        match rows.iter_mut().find(|existing| existing.harness == row.harness) {
            Some(existing) => merge(existing, &row),
            None => rows.push(row),
        }
    }
    let groups = task_groups(conn, run)?;
    let mut matrix: BTreeMap<(String, String), (f64, usize)> = BTreeMap::new();
    for (model, _, tasks) in &groups {
        let model = model.clone().unwrap_or_else(|| super::shown::UNKNOWN.to_string());
        for task in tasks {
            let cell = matrix.entry((model.clone(), task.task_id.clone())).or_insert((0.0, 0));
            cell.0 += task.mean * task.repeats as f64;
            cell.1 += task.repeats;
        }
    }
    for (model, harness, tasks) in groups {
        let Some(row) = boards.get_mut(&model).and_then(|rows| rows.iter_mut().find(|r| r.harness == harness)) else {
            continue;
        };
        row.estimate = stats::task_level_estimate(&tasks);
        if let Some((value, used)) = stats::mean_pass_at_k(&tasks, 1) {
            row.pass_at_k.push((1, value, used));
        }
        let most = tasks.iter().map(|t| t.repeats).max().unwrap_or(0);
        if most > 1
            && let Some((value, used)) = stats::mean_pass_at_k(&tasks, most)
        {
            row.pass_at_k.push((most, value, used));
        }
    }
    for rows in boards.values_mut() {
        rows.sort_by(|a, b| b.success_rate.total_cmp(&a.success_rate).then_with(|| a.harness.cmp(&b.harness)));
    }
    let matrix = matrix
        .into_iter()
        .map(|((row, column), (sum, cells))| crate::charts::MatrixCell {
            row,
            column,
            success: (cells > 0).then(|| sum / cells as f64),
            cells,
        })
        .collect();
    Ok((boards, matrix))
}

/// Folds `other` into `into`: cell-weighted means of two groups of one harness.
fn merge(into: &mut Row, other: &Row) {
    let cells = into.cells + other.cells;
    into.success_rate =
        (into.success_rate * into.cells as f64 + other.success_rate * other.cells as f64) / cells as f64;
    into.success_class = SuccessClass::of_rate(into.success_rate);
    into.cells = cells;
    into.unscored_cells += other.unscored_cells;
    for (mine, theirs) in [
        (&mut into.avg_tokens, other.avg_tokens),
        (&mut into.avg_cost, other.avg_cost),
        (&mut into.avg_time_s, other.avg_time_s),
        (&mut into.avg_api_calls, other.avg_api_calls),
    ] {
        let sum = mine.value.unwrap_or(0.0) * mine.cells as f64 + theirs.value.unwrap_or(0.0) * theirs.cells as f64;
        mine.cells += theirs.cells;
        mine.value = (mine.cells > 0).then(|| sum / mine.cells as f64);
    }
}

/// A task's cells without a task id are one task, shown as "—".
fn task_key(task: Option<String>) -> String {
    task.unwrap_or_else(|| super::shown::UNKNOWN.to_string())
}

/// One (model, harness) group's task scores.
type TaskGroup = (ModelKey, Option<String>, Vec<TaskScore>);

/// Per (model, harness): the task scores, repeats averaged within each task.
fn task_groups(conn: &Connection, run: &str) -> Result<Vec<TaskGroup>, EvalsError> {
    use super::cells::{name, real, tally};
    let mut stmt = conn.prepare_cached(
        "SELECT model, harness, task_id, avg(rate_success), count(*), total(rate_success >= 1.0 - 1e-9)
         FROM cells WHERE run_name = ?1 GROUP BY model, harness, task_id ORDER BY model, harness, task_id",
    )?;
    // 5 and '5', or NULL and a task named "—", group apart in SQL but are one task.
    let mut groups: BTreeMap<(ModelKey, Option<String>), BTreeMap<String, TaskScore>> = BTreeMap::new();
    let mut rows = stmt.query([run])?;
    while let Some(r) = rows.next()? {
        let score = TaskScore {
            task_id: task_key(name(r, 2)?),
            mean: real(r, 3)?.unwrap_or(0.0),
            repeats: tally(r, 4)?.max(0) as usize,
            successes: tally(r, 5)?.max(0) as usize,
        };
        stats::add_task(groups.entry((name(r, 0)?, name(r, 1)?)).or_default(), score);
    }
    Ok(groups.into_iter().map(|((model, harness), tasks)| (model, harness, tasks.into_values().collect())).collect())
}

/// The JSON shape of docs/evals-dashboard.md ( string values; `null` for a figure no cell has)
/// with the numeric keys added since. `measured_cells` says over how many cells each
/// mean was taken; unknown models are keyed by the empty string.
pub fn to_json(boards: &Leaderboards) -> Value {
    let mut out = serde_json::Map::new();
    for (model, rows) in boards {
        let rows: Vec<Value> = rows
            .iter()
            .map(|row| {
                let pass_at_k: serde_json::Map<String, Value> =
                    row.pass_at_k.iter().map(|(k, value, _)| (k.to_string(), json!(round(*value, 4)))).collect();
                let pass_at_k_tasks: serde_json::Map<String, Value> =
                    row.pass_at_k.iter().map(|(k, _, tasks)| (k.to_string(), json!(tasks))).collect();
                let figure = |mean: Mean, places: usize| mean.value.map(|v| format!("{v:.places$}"));
                json!({
                    "harness": row.harness,
                    "model": model,
                    "success_pct": super::shown::decimal(row.success_rate * 100.0, 1),
                    "success_class": row.success_class.as_str(),
                    "avg_tokens": figure(row.avg_tokens, 0),
                    "avg_cost": figure(row.avg_cost, 4),
                    "avg_time_s": figure(row.avg_time_s, 1),
                    "avg_api_calls": figure(row.avg_api_calls, 1),
                    "cells": row.cells,
                    "unscored_cells": row.unscored_cells,
                    "measured_cells": {
                        "avg_tokens": row.avg_tokens.cells,
                        "avg_cost": row.avg_cost.cells,
                        "avg_time_s": row.avg_time_s.cells,
                        "avg_api_calls": row.avg_api_calls.cells,
                    },
                    "tasks": row.estimate.tasks,
                    "task_success_pct": round(row.estimate.mean * 100.0, 2),
                    "std_error_pct": round(row.estimate.std_error * 100.0, 2),
                    "ci95_pct": [round(row.estimate.ci95_low * 100.0, 2), round(row.estimate.ci95_high * 100.0, 2)],
                    "pass_at_k": pass_at_k,
                    "pass_at_k_tasks": pass_at_k_tasks,
                })
            })
            .collect();
        out.insert(model.clone().unwrap_or_default(), Value::Array(rows));
    }
    Value::Object(out)
}

/// The one rounding rule (`shown::decimal`), for numbers the JSON reports carry.
fn round(value: f64, places: i32) -> f64 {
    super::shown::rounded(value, places.max(0) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The leaderboard's classes (spec: pass from 80 %, partial from 50 %), at and around
    /// each threshold, a rate computed in floating point included.
    #[test]
    fn success_classes_start_at_80_and_50_percent() {
        let classes: Vec<SuccessClass> = [1.0, 0.8, 0.7999, 0.5, 0.4999, 0.0].map(SuccessClass::of_rate).to_vec();
        use SuccessClass::*;
        assert_eq!(classes, [Pass, Pass, Partial, Partial, Fail, Fail]);
        assert_eq!(SuccessClass::of_rate(0.1 + 0.7), Pass, "0.1 + 0.7 is 0.7999…9 in binary: still 80 %");
        assert_eq!(SuccessClass::of_rate(4.0 / 5.0), Pass);
        assert_eq!(SuccessClass::of_rate(1.0 / 2.0), Partial);
    }
}

//! Leaderboards (spec §2.9): per model, one row per harness, computed by SQL
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

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub harness: String,
    pub cells: i64,
    pub success_rate: f64,
    pub success_class: SuccessClass,
    pub avg_tokens: f64,
    pub avg_cost: f64,
    pub avg_time_s: f64,
    pub avg_api_calls: f64,
    pub estimate: Estimate,
    /// (k, mean pass@k, tasks with at least k repeats), for k = 1 and for the largest
    /// repeat count any task of the group reaches, when that is above 1 (averaged over
    /// the tasks that have that many repeats; the count says how many).
    pub pass_at_k: Vec<(usize, f64, usize)>,
}

/// model → rows, models in name order.
pub type Leaderboards = BTreeMap<String, Vec<Row>>;

pub fn compute(conn: &Connection, run: &str) -> Result<Leaderboards, EvalsError> {
    Ok(compute_with_matrix(conn, run)?.0)
}

/// The leaderboards and the model × task matrix (mean success per model and task over
/// all harnesses, weighted by cells), from one pass over the run's task groups.
pub fn compute_with_matrix(
    conn: &Connection,
    run: &str,
) -> Result<(Leaderboards, Vec<super::charts::MatrixCell>), EvalsError> {
    let mut boards: Leaderboards = BTreeMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT model, harness, count(*), avg(success),
                avg(input_tokens + output_tokens + cache_read_tokens + cache_write_tokens + reasoning_tokens),
                avg(total_cost), coalesce(avg(latency_ms), 0) / 1000.0, avg(num_api_calls)
         FROM run_results WHERE run_name = ?1 GROUP BY model, harness",
    )?;
    let mut rows = stmt.query([run])?;
    while let Some(r) = rows.next()? {
        let rate: f64 = r.get(3)?;
        boards.entry(r.get(0)?).or_default().push(Row {
            harness: r.get(1)?,
            cells: r.get(2)?,
            success_rate: rate,
            success_class: SuccessClass::of_rate(rate),
            avg_tokens: r.get(4)?,
            avg_cost: r.get(5)?,
            avg_time_s: r.get(6)?,
            avg_api_calls: r.get(7)?,
            estimate: stats::task_level_estimate(&[]),
            pass_at_k: Vec::new(),
        });
    }
    let groups = task_groups(conn, run)?;
    let mut matrix: BTreeMap<(String, String), (f64, usize)> = BTreeMap::new();
    for (model, _, tasks) in &groups {
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
        .map(|((row, column), (sum, cells))| super::charts::MatrixCell {
            row,
            column,
            success: (cells > 0).then(|| sum / cells as f64),
            cells,
        })
        .collect();
    Ok((boards, matrix))
}

/// Per (model, harness): the task scores, repeats averaged within each task.
fn task_groups(conn: &Connection, run: &str) -> Result<Vec<(String, String, Vec<TaskScore>)>, EvalsError> {
    let mut stmt = conn.prepare_cached(
        "SELECT model, harness, task_id, avg(success), count(*), sum(success >= 1.0 - 1e-9)
         FROM run_results WHERE run_name = ?1 GROUP BY model, harness, task_id ORDER BY model, harness, task_id",
    )?;
    let mut out: Vec<(String, String, Vec<TaskScore>)> = Vec::new();
    let mut rows = stmt.query([run])?;
    while let Some(r) = rows.next()? {
        let (model, harness): (String, String) = (r.get(0)?, r.get(1)?);
        let score = TaskScore {
            task_id: r.get(2)?,
            mean: r.get(3)?,
            repeats: r.get::<_, i64>(4)? as usize,
            successes: r.get::<_, i64>(5)? as usize,
        };
        match out.last_mut() {
            Some((m, h, tasks)) if *m == model && *h == harness => tasks.push(score),
            _ => out.push((model, harness, vec![score])),
        }
    }
    Ok(out)
}

/// The JSON shape of the spec (§2.5, string values) with the new numeric keys.
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
                json!({
                    "harness": row.harness,
                    "success_pct": format!("{:.1}", row.success_rate * 100.0),
                    "success_class": row.success_class.as_str(),
                    "avg_tokens": format!("{:.0}", row.avg_tokens),
                    "avg_cost": format!("{:.4}", row.avg_cost),
                    "avg_time_s": format!("{:.1}", row.avg_time_s),
                    "avg_api_calls": format!("{:.1}", row.avg_api_calls),
                    "cells": row.cells,
                    "tasks": row.estimate.tasks,
                    "task_success_pct": round(row.estimate.mean * 100.0, 2),
                    "std_error_pct": round(row.estimate.std_error * 100.0, 2),
                    "ci95_pct": [round(row.estimate.ci95_low * 100.0, 2), round(row.estimate.ci95_high * 100.0, 2)],
                    "pass_at_k": pass_at_k,
                    "pass_at_k_tasks": pass_at_k_tasks,
                })
            })
            .collect();
        out.insert(model.clone(), Value::Array(rows));
    }
    Value::Object(out)
}

fn round(value: f64, places: i32) -> f64 {
    let factor = 10f64.powi(places);
    (value * factor).round() / factor
}

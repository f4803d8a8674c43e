//! Run-level aggregates of the dashboard (summary, leaderboards, matrix, failure
//! preview, filter values) are whole-run scans — about a second and a half at
//! 200,000 cells — so they are computed once and reused until the database changes.
//!
//! Invariants: a change is detected with `PRAGMA data_version` on one dedicated
//! connection (it moves whenever another connection — the harness — commits); while a
//! harness keeps writing, an entry is rebuilt at most every [`MIN_AGE`], so run pages
//! may lag live writes by that much (live-progress counts are never cached); the map
//! is bounded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::charts;
use crate::evals::db::{EvalsError, FailedCell, RunSummary};
use crate::evals::leaderboard::Leaderboards;

/// How long an entry is reused even though the database changed.
pub const MIN_AGE: Duration = Duration::from_secs(5);
const MAX_ENTRIES: usize = 256;

/// Everything the run page shows that needs a scan of the whole run.
pub struct RunAggregates {
    pub summary: RunSummary,
    pub boards: Leaderboards,
    /// The cost-vs-success chart and the model × task matrix as SVG, built once per
    /// cache entry: they depend only on these aggregates, and the matrix runs to MBs.
    pub cost_chart: String,
    pub matrix: String,
    pub failed_preview: Vec<FailedCell>,
    pub models: Vec<String>,
    pub harnesses: Vec<String>,
    pub tracks: Vec<String>,
}

#[derive(Clone)]
pub enum Cached {
    Total(i64),
    Run(Arc<RunAggregates>),
}

struct Entry {
    version: i64,
    at: Instant,
    value: Cached,
}

pub struct Cache {
    version_conn: Mutex<Connection>,
    entries: Mutex<HashMap<String, Entry>>,
}

impl Cache {
    pub fn new(version_conn: Connection) -> Cache {
        Cache { version_conn: Mutex::new(version_conn), entries: Mutex::new(HashMap::new()) }
    }

    fn version(&self) -> Result<i64, EvalsError> {
        let conn = self.version_conn.lock().unwrap_or_else(|p| p.into_inner());
        Ok(conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }

    /// The cached value for `key`, or `compute`'s result, stored.
    pub fn get_or_compute(
        &self,
        key: &str,
        compute: impl FnOnce() -> Result<Cached, EvalsError>,
    ) -> Result<Cached, EvalsError> {
        let version = self.version()?;
        {
            let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(entry) = entries.get(key)
                && (entry.version == version || entry.at.elapsed() < MIN_AGE)
            {
                return Ok(entry.value.clone());
            }
        }
        let value = compute()?;
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(key.to_string(), Entry { version, at: Instant::now(), value: value.clone() });
        Ok(value)
    }
}

/// Cost against success of every (model, harness) row that has a cost, with the
/// Pareto frontier (a row whose cells recorded no cost has no place on the x axis).
fn cost_chart(boards: &Leaderboards) -> String {
    use crate::evals::shown;
    let points: Vec<charts::CostPoint> = boards
        .iter()
        .flat_map(|(model, rows)| {
            rows.iter().filter_map(move |row| {
                Some(charts::CostPoint {
                    label: row.harness_shown().to_string(),
                    series: shown::text(model).to_string(),
                    cost: row.avg_cost.value?,
                    success: row.success_rate,
                })
            })
        })
        .collect();
    let pairs: Vec<(f64, f64)> = points.iter().map(|p| (p.cost, p.success)).collect();
    charts::cost_vs_success(&points, &crate::evals::stats::pareto_frontier(&pairs), 720, 420)
}

/// Failures listed on the run page; the errors API has them all.
pub const FAILED_PREVIEW: usize = 200;

/// The run page's aggregates of `run`, from the cache or computed now.
pub fn run_aggregates(cache: &Cache, conn: &Connection, run: &str) -> Result<Arc<RunAggregates>, EvalsError> {
    let cached = cache.get_or_compute(&format!("run\0{run}"), || {
        let (boards, matrix) = crate::evals::leaderboard::compute_with_matrix(conn, run)?;
        let failed_preview = crate::evals::db::failed_preview(conn, run, FAILED_PREVIEW)?;
        Ok(Cached::Run(Arc::new(RunAggregates {
            summary: crate::evals::db::run_summary(conn, run)?,
            cost_chart: cost_chart(&boards),
            matrix: charts::model_task_matrix(&matrix),
            boards,
            failed_preview,
            models: crate::evals::db::distinct(conn, run, "model")?,
            harnesses: crate::evals::db::distinct(conn, run, "harness")?,
            tracks: crate::evals::db::distinct(conn, run, "track")?,
        })))
    })?;
    match cached {
        Cached::Run(aggregates) => Ok(aggregates),
        Cached::Total(_) => Err(EvalsError::bad("run", "cache entry of the wrong kind")),
    }
}

/// The number of cells of `run` matching `filters`, from the cache or counted now.
pub fn total(
    cache: &Cache,
    conn: &Connection,
    run: &str,
    filters: &crate::evals::db::Filters,
) -> Result<i64, EvalsError> {
    let key = format!("total\0{run}\0{filters:?}");
    match cache.get_or_compute(&key, || Ok(Cached::Total(crate::evals::db::count(conn, run, filters)?)))? {
        Cached::Total(n) => Ok(n),
        Cached::Run(_) => Err(EvalsError::bad("run", "cache entry of the wrong kind")),
    }
}

//! The record of jobs' service-level breaches (`job_alerts`, owned here): what
//! `jobs::slo` decides was breached, and what the job-breach alert rule reads. It sits
//! with the service levels, below both `jobs` and `alerts`, so each reaches it without
//! reaching the other.
//!
//! Invariants: a breach is stored once per run (a missed slot counts as a run named
//! `missed-<slot>`); rows are only added.

use rusqlite::{Connection, OptionalExtension, params};

use crate::db::DbError;

/// One stored breach, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BreachRow {
    pub job: String,
    pub run_id: String,
    pub at_ms: i64,
    pub severity: String,
    pub reason: String,
}

pub fn record(conn: &Connection, breach: &BreachRow) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO job_alerts (id, job, run_id, at_ms, severity, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            uuid::Uuid::now_v7().to_string(),
            breach.job,
            breach.run_id,
            breach.at_ms,
            breach.severity,
            breach.reason
        ],
    )?;
    Ok(())
}

/// Whether a breach of `job`'s run `run_id` is stored.
pub fn exists(conn: &Connection, job: &str, run_id: &str) -> Result<bool, DbError> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM job_alerts WHERE job = ?1 AND run_id = ?2)",
        params![job, run_id],
        |r| r.get(0),
    )?)
}

/// The latest breach of `job`'s run `run_id`, if it has one.
pub fn of_run(conn: &Connection, job: &str, run_id: &str) -> Result<Option<BreachRow>, DbError> {
    Ok(conn
        .query_row(
            // By the run's own index: a job's alerts grow with its history (`/metrics` asks
            // this of every job's latest run at each scrape).
            "SELECT job, run_id, at_ms, severity, reason FROM job_alerts INDEXED BY job_alerts_by_run
             WHERE job = ?1 AND run_id = ?2 ORDER BY at_ms DESC LIMIT 1",
            params![job, run_id],
            read_row,
        )
        .optional()?)
}

/// Every breach stored at or after `since_ms`, newest first.
pub fn since(conn: &Connection, since_ms: i64) -> Result<Vec<BreachRow>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT job, run_id, at_ms, severity, reason FROM job_alerts WHERE at_ms >= ?1 ORDER BY at_ms DESC",
    )?;
    Ok(stmt.query_map([since_ms], read_row)?.collect::<Result<_, _>>()?)
}

fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<BreachRow> {
    Ok(BreachRow {
        job: row.get(0)?,
        run_id: row.get(1)?,
        at_ms: row.get(2)?,
        severity: row.get(3)?,
        reason: row.get(4)?,
    })
}

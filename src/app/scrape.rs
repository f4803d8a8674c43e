//! What `/metrics` reads from main.db at each scrape: the jobs' standing, the
//! aggregates' refresh lag, the transcript index's backlog and the last day's webhook
//! deliveries. A scrape comes every few seconds, so each figure is an indexed lookup or a
//! read of a small table, never a scan of a table that grows with use (`job_runs`,
//! `job_alerts`, the events): the test below counts SQLite's steps on a database with
//! 100,000 job runs.

use rusqlite::Connection;

use crate::db::DbError;
use crate::github::deliveries::{self, Tally};
use crate::jobs::status::{self, Figures};

/// One scrape's figures from main.db.
#[derive(Debug)]
pub struct Scrape {
    pub jobs: Vec<Figures>,
    pub aggregate_lag_ms: i64,
    pub transcripts_pending: i64,
    pub transcript_lag_ms: i64,
    pub deliveries: Tally,
}

pub fn read(conn: &Connection, now_ms: i64) -> Result<Scrape, DbError> {
    let (transcripts_pending, oldest_stored_ms) = crate::transcripts::store::index_backlog(conn)?;
    Ok(Scrape {
        jobs: status::figures(conn)?,
        aggregate_lag_ms: crate::analytics::refresh::lag_ms(conn, now_ms)?,
        transcripts_pending,
        transcript_lag_ms: oldest_stored_ms.map_or(0, |stored| (now_ms - stored).max(0)),
        deliveries: deliveries::tally(conn, now_ms - 86_400_000)?,
    })
}

#[cfg(test)]
mod tests;

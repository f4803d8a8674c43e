//! The incremental refresh of the aggregates: take the oldest dirty hours, recompute
//! them (and, for the daily aggregates, their whole days) from their day partitions
//! (one file per day), and in one main.db transaction
//! replace their rows and clear their marks, each only if it was not renewed meanwhile.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, params};

use crate::db::DbError;
use crate::events::partitions::{self, Day};
use crate::events::writer::MainChange;

const HOUR_MS: i64 = 3_600_000;

/// Dirty hours taken per refresh step: one transaction stays short under ingest.
pub const BATCH_HOURS: usize = 168;

/// What a refresh did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RefreshReport {
    pub hours: usize,
    pub rows: usize,
}

/// The oldest dirty hours with the time each was marked.
pub fn dirty_hours(reads: &Connection, limit: usize) -> Result<Vec<(i64, i64)>, DbError> {
    let mut stmt = reads.prepare_cached(
        "SELECT bucket_start_ms, marked_at_ms FROM aggregate_dirty_buckets ORDER BY bucket_start_ms LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit as i64], |row| Ok((row.get(0)?, row.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// How long the oldest pending mark has waited (0 when nothing is dirty): the refresh lag.
pub fn lag_ms(reads: &Connection, now_ms: i64) -> Result<i64, DbError> {
    let oldest: Option<i64> =
        reads.query_row("SELECT min(marked_at_ms) FROM aggregate_dirty_buckets", [], |row| row.get(0))?;
    Ok(oldest.map_or(0, |marked| (now_ms - marked).max(0)))
}

/// Refreshes until no hour is dirty (or `max_steps` steps of [`BATCH_HOURS`] are done).
pub fn refresh(
    data_dir: &Path,
    reads: &Connection,
    change_main: &dyn Fn(MainChange) -> Result<(), DbError>,
    max_steps: usize,
) -> Result<RefreshReport, DbError> {
    let mut report = RefreshReport::default();
    for _ in 0..max_steps {
        let dirty = dirty_hours(reads, BATCH_HOURS)?;
        if dirty.is_empty() {
            break;
        }
        let hours: Vec<i64> = dirty.iter().map(|(hour, _)| *hour).collect();
        let mut by_day: BTreeMap<Day, Vec<i64>> = BTreeMap::new();
        for hour in &hours {
            by_day.entry(Day::of_ms(*hour)).or_default().push(*hour);
        }
        let mut rows = Vec::new();
        // A dirty hour makes its whole day dirty for the daily aggregates.
        let mut days = Vec::new();
        for (day, day_hours) in by_day {
            let Some(conn) = partitions::open_for_read(data_dir, day)? else {
                days.push((day.start_ms(), Vec::new(), Vec::new()));
                continue;
            };
            let (from, to) = (day_hours[0], day_hours[day_hours.len() - 1] + HOUR_MS);
            rows.extend(
                partitions::hourly_usage(&conn, from, to)?
                    .into_iter()
                    .filter(|row| day_hours.binary_search(&row.bucket_start_ms).is_ok()),
            );
            days.push((day.start_ms(), partitions::daily_tools(&conn)?, partitions::daily_sessions(&conn)?));
        }
        report.hours += hours.len();
        report.rows += rows.len() + days.iter().map(|(_, tools, people)| tools.len() + people.len()).sum::<usize>();
        change_main(Box::new(move |tx| {
            super::usage::replace_hours(tx, &hours, &rows)?;
            for (day_start_ms, tools, people) in &days {
                super::tools::replace_day(tx, *day_start_ms, tools)?;
                super::sessions_daily::replace_day(tx, *day_start_ms, people)?;
            }
            let mut clear = tx.prepare_cached(
                "DELETE FROM aggregate_dirty_buckets WHERE bucket_start_ms = ?1 AND marked_at_ms = ?2",
            )?;
            for (hour, marked) in &dirty {
                clear.execute(params![hour, marked])?;
            }
            Ok(())
        }))?;
    }
    Ok(report)
}

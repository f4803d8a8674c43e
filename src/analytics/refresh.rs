//! The incremental refresh of the aggregates: take the oldest dirty hours, and for each
//! of their days read from its partition only the commits after the last one folded
//! (`partials`), adding them to the aggregates; a day never folded, or forced to rebuild
//! (a deletion, new prices), is read whole and replaced. In one main.db transaction the
//! rows change, the day's watermark moves to the commit read, and the marks clear, each
//! only if it was not renewed meanwhile. So a refresh costs what arrived since the last
//! one, not the day (a day's partition at the reference load holds millions of events,
//! and a whole-day read every 15 s kept a reader on it at all times: issue 33's soak).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rusqlite::{Connection, params};

use super::additions::{DayFigures, SessionHistory};
use super::partials;
use crate::db::DbError;
use crate::events::partitions::{self, Day};
use crate::events::writer::MainChange;

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
        let dirty_count = dirty.len();
        let mut by_day: BTreeMap<Day, Vec<(i64, i64)>> = BTreeMap::new();
        for mark in &dirty {
            by_day.entry(Day::of_ms(mark.0)).or_default().push(*mark);
        }
        let mut days = Vec::with_capacity(by_day.len());
        for (day, marks) in by_day {
            let seen = partials::watermark(reads, day.start_ms())?;
            let work = read_day(data_dir, reads, day, &seen)?;
            report.hours += marks.len();
            report.rows += work.rows();
            days.push((day.start_ms(), seen, work, marks));
        }
        let applied = Arc::new(AtomicBool::new(false));
        let applied_any = applied.clone();
        // Replacing and pruning rows that name sessions must not leave their old copies
        // readable in the file, where a later deletion of the person could not reach
        // them: replacements zero the old cells (FAST: no extra I/O on the writer
        // thread); the prune, once a day's worth, zeroes the pages it frees too.
        change_main(Box::new(move |tx| {
            crate::db::with_secure_delete(tx, crate::db::SecureDelete::Fast, || {
                for (day_start_ms, seen, work, marks) in &days {
                    // A day another refresh or a forced rebuild changed meanwhile keeps its
                    // marks: the next step reads it again.
                    if !partials::claim(tx, *day_start_ms, seen, work.folded_seq)? {
                        continue;
                    }
                    work.apply(tx, *day_start_ms)?;
                    super::sessions_daily::replace_day(tx, *day_start_ms, &partials::person_days(tx, *day_start_ms)?)?;
                    let mut clear = tx.prepare_cached(
                        "DELETE FROM aggregate_dirty_buckets WHERE bucket_start_ms = ?1 AND marked_at_ms = ?2",
                    )?;
                    for (hour, marked) in marks {
                        clear.execute(params![hour, marked])?;
                    }
                    applied_any.store(true, Ordering::Relaxed);
                }
                partials::prune(tx)
            })
        }))?;
        // Marks renewed during this step, and days that raced with another writer of
        // their state, wait for the next refresh: under steady ingest there is always
        // something new, and one step per call keeps the refresh from spinning.
        if !applied.load(Ordering::Relaxed) || dirty_count < BATCH_HOURS {
            break;
        }
    }
    Ok(report)
}

/// What a refresh read of one day, to apply in `main.db`.
struct DayWork {
    /// The partition's last commit in the snapshot read: the day's new watermark.
    folded_seq: i64,
    figures: DayFigures,
    /// The figures are the whole day's (never folded, forced, or the file is gone) and
    /// replace its rows; otherwise they are its new commits' and add to them.
    whole: bool,
}

impl DayWork {
    fn rows(&self) -> usize {
        self.figures.usage.len() + self.figures.tools.len() + self.figures.people.len()
    }

    fn apply(&self, tx: &Connection, day_start_ms: i64) -> Result<(), DbError> {
        let DayFigures { usage, tools, people, sessions } = &self.figures;
        if self.whole {
            super::usage::replace_day(tx, day_start_ms, usage)?;
            super::tools::replace_day(tx, day_start_ms, tools)?;
            partials::replace_person_days(tx, day_start_ms, people)?;
            partials::replace_session_days(tx, day_start_ms, sessions)
        } else {
            super::usage::add_rows(tx, usage)?;
            super::tools::add_rows(tx, day_start_ms, tools)?;
            partials::add_person_days(tx, day_start_ms, people)?;
            partials::put_session_days(tx, day_start_ms, sessions)
        }
    }
}

/// Reads one day from its partition, in one snapshot: the commits after the folded one,
/// or the whole day when it has to be rebuilt.
fn read_day(data_dir: &Path, reads: &Connection, day: Day, seen: &partials::Watermark) -> Result<DayWork, DbError> {
    let Some(conn) = partitions::open_for_read(data_dir, day)? else {
        return Ok(DayWork { folded_seq: 0, figures: DayFigures::default(), whole: true });
    };
    partitions::snapshot(&conn, |conn, last_seq| match seen.folded_seq {
        // A folded sequence past the file's last means the file was made anew.
        Some(folded_seq) if folded_seq <= last_seq => {
            let rows = partitions::interactive_after_seq(conn, folded_seq)?;
            let mut history = Sessions { reads, partition: conn, day_start_ms: day.start_ms() };
            Ok(DayWork { folded_seq: last_seq, figures: super::additions::add_up(&rows, &mut history)?, whole: false })
        }
        _ => {
            let (from, to) = (day.start_ms(), day.next().start_ms());
            let sessions = partitions::session_days(conn)?;
            let figures = DayFigures {
                usage: partitions::hourly_usage(conn, from, to)?,
                tools: partitions::daily_tools(conn)?,
                people: partitions::daily_sessions(conn, &sessions)?,
                sessions,
            };
            Ok(DayWork { folded_seq: last_seq, figures, whole: true })
        }
    })
}

/// A session's folded state from `main.db`, its times from the partition's snapshot.
struct Sessions<'a> {
    reads: &'a Connection,
    partition: &'a Connection,
    day_start_ms: i64,
}

impl SessionHistory for Sessions<'_> {
    fn folded(&mut self, user_id: &str, agent_type: &str, session_id: &str) -> Result<Option<(i64, i64)>, DbError> {
        partials::session_day(self.reads, self.day_start_ms, user_id, agent_type, session_id)
    }

    fn times(&mut self, user_id: &str, agent_type: &str, session_id: &str) -> Result<Vec<i64>, DbError> {
        partitions::session_times(self.partition, user_id, agent_type, session_id)
    }
}

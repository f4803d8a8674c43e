//! What the next `sweep-retention` would remove, without removing anything: for each
//! retention in force (the organisation's, and each distinct team override), its cutoff,
//! the raw events and partition files past it, and the transcripts that would go.
//!
//! Invariants: reads only (partition files opened read-only, main.db through the
//! caller's reader); it opens only the files older than the latest cutoff, and in each
//! counts only the people whose cutoff falls after the file's day, by index ranges, so a
//! page view never scans raw events. What it counted in a day wholly past a person's
//! cutoff is kept in `days::Counted` while the day's files are unchanged (`days::Stamp`), so
//! a later view opens only the days written since and the days a cutoff falls in.

use std::collections::{BTreeMap, BTreeSet};

use super::retention::Cutoffs;
use std::path::Path;

use rusqlite::Connection;

use crate::db::DbError;
use crate::events::days;
use crate::transcripts::store;

const DAY_MS: i64 = 86_400_000;

/// One retention in force and what the next sweep would remove under it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreviewLine {
    pub days: i64,
    /// The teams that set it; empty for the organisation's.
    pub teams: Vec<String>,
    pub people: i64,
    pub cutoff_ms: i64,
    pub events: i64,
    /// Partition files (one per UTC day) holding some of those events.
    pub partitions: i64,
    pub transcripts: i64,
}

/// The preview at `now_ms` under the organisation's `retention_days` and the teams'.
pub fn preview(
    reads: &Connection,
    data_dir: &Path,
    retention_days: i64,
    now_ms: i64,
    counted: &mut days::Counted,
) -> Result<Vec<PreviewLine>, DbError> {
    let cutoffs = Cutoffs::at(reads, retention_days, now_ms)?;
    let mut lines: BTreeMap<i64, PreviewLine> = BTreeMap::new();
    let line = |days: i64| -> PreviewLine {
        PreviewLine { days, cutoff_ms: now_ms - days * DAY_MS, ..PreviewLine::default() }
    };
    lines.insert(retention_days, line(retention_days));
    for (team, _) in crate::access::teams::list(reads)? {
        if let Some(days) = team.retention_days {
            lines.entry(days).or_insert_with(|| line(days)).teams.push(team.slug);
        }
    }
    let everyone = crate::auth::users::ids(reads)?;
    for user in &everyone {
        lines.entry(cutoffs.days_of(user)).or_insert_with(|| line(cutoffs.days_of(user))).people += 1;
    }
    let latest = cutoffs.latest();

    for day in days::list_days(data_dir)? {
        if day.start_ms() >= latest {
            break;
        }
        // Only people whose cutoff falls after the day began can have rows past it here;
        // each is one range of the (user, …, time) index, so a day already swept costs
        // a lookup per such person, not a scan.
        let due: Vec<&String> = everyone.iter().filter(|user| cutoffs.of(user) > day.start_ms()).collect();
        if due.is_empty() {
            continue;
        }
        let Some(stamp) = days::stamp(data_dir, day) else { continue };
        let mut reader = None;
        let mut touched: BTreeSet<i64> = BTreeSet::new();
        for user in due {
            let cutoff = cutoffs.of(user);
            // A day wholly past the cutoff counts all the person's rows, whatever the
            // moment: kept while the files are unchanged. A day the cutoff falls in is
            // counted afresh.
            let is_whole = cutoff >= day.next().start_ms();
            let past = match counted.kept(day, stamp, user) {
                Some(rows) if is_whole => rows,
                _ => {
                    if reader.is_none() {
                        reader = days::read(data_dir, day)?;
                    }
                    let Some(open) = &reader else { break };
                    let rows = open.events_of_before(user, cutoff)?;
                    if is_whole {
                        counted.keep(day, stamp, user, rows);
                    }
                    rows
                }
            } as i64;
            if past > 0 {
                let retention_days = cutoffs.days_of(user);
                if let Some(line) = lines.get_mut(&retention_days) {
                    line.events += past;
                }
                touched.insert(retention_days);
            }
        }
        for days in &touched {
            if let Some(line) = lines.get_mut(days) {
                line.partitions += 1;
            }
        }
    }
    for (_, user_id, last_event_ms) in store::stored_before(reads, latest)? {
        if last_event_ms < cutoffs.of(&user_id)
            && let Some(line) = lines.get_mut(&cutoffs.days_of(&user_id))
        {
            line.transcripts += 1;
        }
    }
    Ok(lines.into_values().collect())
}

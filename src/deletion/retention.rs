//! Raw-event retention (the `sweep-retention` job): events older than their owner's
//! retention (the organisation's `jobs.retention_days`, or a team's `retention_days` for
//! its members) are removed, and so are the transcripts and index documents of sessions
//! whose every event is past it.
//!
//! Invariants: a partition file is dropped whole only when no row in it is still kept;
//! otherwise only the rows past retention are deleted (with `secure_delete`), and a
//! compacted file loses them from its zstd dictionary too (it is compacted again). The
//! session rows, their models, and what ingest derived from them (hourly and daily
//! figures) outlive the raw events: they are the history pages read. A run can stop
//! anywhere and the next finishes the work: each step is complete on its own.

use std::collections::{BTreeSet, HashMap};

use rusqlite::Connection;
use serde::Serialize;

use super::runner::{DeletionError, DeletionTarget};
use crate::db::DbError;
use crate::events::days::{self, Owner};
use crate::events::store::Rewrite;
use crate::transcripts::store;

const DAY_MS: i64 = 86_400_000;

/// What one sweep did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RetentionReport {
    pub partitions_dropped: u64,
    /// Partitions that kept some rows and lost others.
    pub partitions_trimmed: u64,
    /// Events removed, in dropped files and trimmed ones.
    pub events_deleted: u64,
    pub transcripts_removed: u64,
}

impl RetentionReport {
    /// The rows touched, for `job_runs`.
    pub fn rows(&self) -> i64 {
        (self.events_deleted + self.transcripts_removed) as i64
    }
}

/// When each person's raw events stop being kept: the organisation's retention, or the
/// one their teams set (`access::teams::retention_overrides`). The sweep and its preview
/// (`retention_preview`) both decide by it.
pub(super) struct Cutoffs {
    now_ms: i64,
    default_days: i64,
    /// Days per person whose teams set their own.
    pub(super) by_user: HashMap<String, i64>,
}

impl Cutoffs {
    pub(super) fn at(reads: &Connection, retention_days: i64, now_ms: i64) -> Result<Cutoffs, DbError> {
        let by_user = crate::access::teams::retention_overrides(reads)?;
        Ok(Cutoffs { now_ms, default_days: retention_days, by_user })
    }

    /// How many days `user`'s raw events are kept.
    pub(super) fn days_of(&self, user: &str) -> i64 {
        self.by_user.get(user).copied().unwrap_or(self.default_days)
    }

    pub(super) fn of(&self, user: &str) -> i64 {
        self.now_ms - self.days_of(user) * DAY_MS
    }

    /// No row at or after this time is past anyone's retention.
    pub(super) fn latest(&self) -> i64 {
        let shortest = self.by_user.values().copied().fold(self.default_days, i64::min);
        self.now_ms - shortest * DAY_MS
    }
}

/// Sweeps every partition and the transcripts of sessions past retention. `reads` is a
/// main.db connection that sees what `target` commits.
pub fn sweep(
    reads: &Connection,
    rewrite: &Rewrite<'_>,
    target: &dyn DeletionTarget,
    retention_days: i64,
) -> Result<RetentionReport, DeletionError> {
    let data_dir = rewrite.data_dir();
    let now_ms = target.now_ms();
    let cutoffs = Cutoffs::at(reads, retention_days, now_ms)?;
    let mut report = RetentionReport::default();
    let mut trimmed_compacted = BTreeSet::new();
    for day in days::list_days(data_dir)? {
        if day.start_ms() >= cutoffs.latest() {
            // Days are listed oldest first: no later file has anything past retention.
            break;
        }
        let Some(editor) = rewrite.edit(day)? else { continue };
        let owners = editor.owners()?;
        let rows: u64 = owners.iter().map(|owner| owner.rows).sum();
        if owners.iter().all(|owner| owner.newest_ms < cutoffs.of(&owner.user_id)) {
            drop(editor);
            if target.drop_partition(rewrite, day)? {
                report.partitions_dropped += 1;
                report.events_deleted += rows;
            }
            continue;
        }
        let deleted = trim(&editor, &owners, &cutoffs)?;
        if deleted > 0 {
            report.partitions_trimmed += 1;
            report.events_deleted += deleted;
            if editor.is_compacted()? {
                trimmed_compacted.insert(day);
            }
        }
    }
    // The zstd dictionary of a compacted file was trained on the rows just deleted too.
    for day in trimmed_compacted {
        rewrite.recompact(day, now_ms)?;
    }
    for (session_id, user_id, last_event_ms) in store::stored_before(reads, cutoffs.latest())? {
        if last_event_ms >= cutoffs.of(&user_id) {
            continue;
        }
        target
            .forget_transcript(&session_id)
            .map_err(|message| DeletionError::Transcript { session_id: session_id.clone(), message })?;
        // What the judge said about the transcript goes with it.
        crate::scoring::judge::forget_rationales(data_dir, &session_id)?;
        target.change_main(Box::new(move |tx| {
            store::forget_stored(tx, &session_id)?;
            crate::scoring::judge::forget_rationale_refs(tx, &session_id)
        }))?;
        report.transcripts_removed += 1;
    }
    Ok(report)
}

/// Deletes the rows past their owner's retention, in one transaction; how many went.
fn trim(editor: &days::DayEditor, owners: &[Owner], cutoffs: &Cutoffs) -> Result<u64, DbError> {
    editor.delete(|day| {
        let mut deleted = 0;
        for owner in owners.iter().filter(|owner| owner.oldest_ms < cutoffs.of(&owner.user_id)) {
            deleted += day.events_of_before(&owner.user_id, cutoffs.of(&owner.user_id))?;
        }
        Ok(deleted)
    })
}

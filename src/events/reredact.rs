//! Re-redaction of stored events when the redaction rules change: every partition's
//! metadata (plain or compacted), git remote and git branch go through the current rules
//! again, so a secret the old rules missed does not stay on disk.
//!
//! Invariants:
//! - Resumable: a partition is walked in key order in batches; each batch commits in
//!   the partition and then moves the partition's resume point (`metadata_redaction` in
//!   main.db). The two files do not commit together, but redaction is idempotent, so a
//!   batch done twice after a crash changes nothing more.
//! - A partition is marked done (`rules_version` = the current rules) only after its last
//!   batch; partitions already at the current version are skipped.
//! - Rewritten values do not linger: the partition is opened with `secure_delete`, and a
//!   partition in which a row changed (or whose pass had begun before) is rebuilt at the
//!   end (VACUUM, WAL truncated), since
//!   `secure_delete` alone left a few old cells behind in a measured run (page splits). A
//!   compacted partition is compacted again with a new dictionary: the old one was trained
//!   on the old rows and holds samples of them, secrets included.
//! - Safe beside a running server (SQLite locks, short transactions); new events are
//!   redacted by ingest under the current rules anyway.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::compact;
use super::metadata::decompress;
use super::partitions::{self, Day, dictionary};
use crate::db::DbError;
use crate::redact::{self, RULES_VERSION};

/// Rows read and written per transaction.
const BATCH: usize = 1000;

/// What a pass did (cumulative while it runs, for progress).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReredactReport {
    /// Partitions brought to the current rules.
    pub partitions: u64,
    pub rows_read: u64,
    /// Rows in which at least one value changed.
    pub rows_changed: u64,
}

/// Partitions whose events were stored under older rules (for a progress total).
pub fn partitions_behind(data_dir: &Path, main: &Connection) -> Result<u64, DbError> {
    let mut behind = 0;
    for day in partitions::list_days(data_dir)? {
        if ledger(main, day)?.map_or(1, |(version, _)| version) < RULES_VERSION {
            behind += 1;
        }
    }
    Ok(behind)
}

/// Brings every partition to the current rules, resuming where an earlier pass stopped.
pub(super) fn reredact_all(
    data_dir: &Path,
    main: &Connection,
    now_ms: i64,
    mut progress: impl FnMut(&ReredactReport),
) -> Result<ReredactReport, DbError> {
    let mut report = ReredactReport::default();
    for day in partitions::list_days(data_dir)? {
        let (version, after, started_before) = match ledger(main, day)? {
            Some((version, after)) => (version, after, true),
            None => (1, None, false),
        };
        if version >= RULES_VERSION {
            continue;
        }
        if !started_before {
            // The row says a pass began here: one that stops before the rebuild is
            // rebuilt by the next, even if nothing is left for it to change.
            set_resume_point(main, day, version, None)?;
        }
        if let Some(conn) = partitions::open_for_delete(data_dir, day)? {
            let changed_before = report.rows_changed;
            reredact_partition(&conn, main, day, version, after, &mut report, &mut progress)?;
            if report.rows_changed > changed_before || started_before {
                if compact::is_compacted(&conn)? {
                    drop(conn);
                    compact::recompact_with_new_dictionary(data_dir, day, now_ms)?;
                } else {
                    compact::rebuild(&conn)?;
                }
            }
        }
        main.execute(
            "INSERT INTO metadata_redaction (day, rules_version, after_event_id) VALUES (?1, ?2, NULL)
             ON CONFLICT (day) DO UPDATE SET rules_version = excluded.rules_version, after_event_id = NULL",
            params![day.to_string(), RULES_VERSION],
        )?;
        report.partitions += 1;
        progress(&report);
    }
    Ok(report)
}

/// The key of the last row a stopped pass finished (`None`: from the start).
type ResumePoint = Option<Vec<u8>>;

/// A partition's ledger row: the rules version its events were stored under and where a
/// stopped pass resumes; `None` when no pass has begun (stored under version 1).
fn ledger(main: &Connection, day: Day) -> Result<Option<(u32, ResumePoint)>, DbError> {
    let found = main
        .query_row(
            "SELECT rules_version, after_event_id FROM metadata_redaction WHERE day = ?1",
            [day.to_string()],
            |row| Ok((row.get::<_, u32>(0)?, row.get::<_, Option<Vec<u8>>>(1)?)),
        )
        .optional()?;
    Ok(found)
}

fn set_resume_point(main: &Connection, day: Day, version: u32, after: Option<&[u8]>) -> Result<(), DbError> {
    main.execute(
        "INSERT INTO metadata_redaction (day, rules_version, after_event_id) VALUES (?1, ?2, ?3)
         ON CONFLICT (day) DO UPDATE SET after_event_id = excluded.after_event_id",
        params![day.to_string(), version, after],
    )?;
    Ok(())
}

/// One stored row's redactable values.
struct Stored {
    event_id: Vec<u8>,
    metadata: Option<String>,
    metadata_zst: Option<Vec<u8>>,
    git_remote: Option<String>,
    git_branch: Option<String>,
}

fn reredact_partition(
    conn: &Connection,
    main: &Connection,
    day: Day,
    version: u32,
    mut after: Option<Vec<u8>>,
    report: &mut ReredactReport,
    progress: &mut impl FnMut(&ReredactReport),
) -> Result<(), DbError> {
    let dictionary = dictionary(conn)?;
    loop {
        let batch = next_batch(conn, after.as_deref())?;
        let Some(last) = batch.last() else { return Ok(()) };
        after = Some(last.event_id.clone());
        let tx = conn.unchecked_transaction()?;
        for row in &batch {
            report.rows_read += 1;
            if rewrite(&tx, row, dictionary.as_deref())? {
                report.rows_changed += 1;
            }
        }
        tx.commit()?;
        set_resume_point(main, day, version, after.as_deref())?;
        progress(report);
    }
}

fn next_batch(conn: &Connection, after: Option<&[u8]>) -> Result<Vec<Stored>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT event_id, metadata, metadata_zst, git_remote, git_branch FROM events
         WHERE event_id > ?1 ORDER BY event_id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after.unwrap_or(&[]), BATCH as i64], |row| {
        Ok(Stored {
            event_id: row.get(0)?,
            metadata: row.get(1)?,
            metadata_zst: row.get(2)?,
            git_remote: row.get(3)?,
            git_branch: row.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// Redacts one row's values again; writes the row only when something changed. Changed
/// compressed metadata is stored plain: a partition with a changed row is compacted again
/// at the end of its pass (readers take plain metadata first meanwhile).
fn rewrite(tx: &Connection, row: &Stored, dictionary: Option<&[u8]>) -> Result<bool, DbError> {
    let metadata = match (&row.metadata, &row.metadata_zst) {
        (Some(text), _) => redacted_metadata(text),
        (None, Some(blob)) => redacted_metadata(&decompress(blob, dictionary)?),
        (None, None) => None,
    };
    let git_remote = row.git_remote.as_deref().and_then(redacted_text);
    let git_branch = row.git_branch.as_deref().and_then(redacted_text);
    if metadata.is_none() && git_remote.is_none() && git_branch.is_none() {
        return Ok(false);
    }
    tx.execute(
        "UPDATE events SET metadata = coalesce(?2, metadata),
                metadata_zst = CASE WHEN ?2 IS NULL THEN metadata_zst END,
                git_remote = coalesce(?3, git_remote), git_branch = coalesce(?4, git_branch)
         WHERE event_id = ?1",
        params![row.event_id, metadata, git_remote, git_branch],
    )?;
    Ok(true)
}

/// The metadata JSON redacted again, or `None` when the rules change nothing (or the
/// text is not JSON, which ingest never stores; it is then redacted as text).
fn redacted_metadata(text: &str) -> Option<String> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(mut value) => (redact::redact_json(&mut value) > 0).then(|| value.to_string()),
        Err(_) => redacted_text(text),
    }
}

fn redacted_text(text: &str) -> Option<String> {
    match redact::redact_text(text) {
        std::borrow::Cow::Owned(redacted) => Some(redacted),
        std::borrow::Cow::Borrowed(_) => None,
    }
}

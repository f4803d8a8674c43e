//! The event store as the modules above it see it: one day at a time, through typed
//! operations. A day is opened for reading ([`read`] → [`DayReader`]: priced rows for
//! repricing, interactive steps for scoring, per-model costs for reconciliation, who
//! owns rows for retention) or, under the store's rewrite lock, for changing
//! (`events::store::Rewrite::edit` → [`DayEditor`]: deletions in one transaction, new
//! costs); the store's files for a backup are named through `Store::files`.
//!
//! Invariant: no module outside `events/` and `analytics/` holds a partition's
//! connection or writes SQL against it; they use these functions (the layering test
//! holds it). So a second back end (a column store) implements this file's operations,
//! not its callers' loops. What the wrappers add is only what every caller of a change
//! needs: one immediate transaction per day's deletion, and a truncated WAL after it,
//! so deleted rows' pages do not linger there.

use std::ops::Deref;
use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior, params};

use super::partitions::{self, DailyModelCost, PricedRow, StepRow};
use crate::db::DbError;

pub use super::partitions::{Day, list_days};

/// One day's partition opened read-only.
pub struct DayReader {
    conn: Connection,
}

/// Opens a day to read, or `None` if the day has no events file.
pub fn read(data_dir: &Path, day: Day) -> Result<Option<DayReader>, DbError> {
    Ok(partitions::open_for_read(data_dir, day)?.map(|conn| DayReader { conn }))
}

/// Whether a day has an events file.
pub fn exists(data_dir: &Path, day: Day) -> bool {
    partitions::partition_path(data_dir, day).exists()
}

/// How a day's files stood when they were looked at: the size and last change of the
/// partition and of its write-ahead log. Every commit writes the log and every
/// checkpoint, deletion and rewrite the file, so an equal stamp means the day's rows are
/// as they were: what a reader counted in it may be kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    file: (u64, std::time::SystemTime),
    log: Option<(u64, std::time::SystemTime)>,
}

/// Counts of each person's rows in days, each day's kept while its files keep the stamp
/// they had when it was counted (the retention preview's, kept by the server in
/// `AppState`). A day's counts are a vector by person number: 8 bytes a person and day,
/// 6.4 MB at 2,000 people and 400 days.
#[derive(Debug, Default)]
pub struct Counted {
    people: std::collections::HashMap<String, usize>,
    days: std::collections::HashMap<Day, (Stamp, Vec<u64>)>,
}

const NOT_COUNTED: u64 = u64::MAX;

impl Counted {
    /// The count kept for `user` in `day`, if the day's files still have `stamp`.
    pub fn kept(&self, day: Day, stamp: Stamp, user: &str) -> Option<u64> {
        let (kept_stamp, counts) = self.days.get(&day)?;
        let number = *self.people.get(user)?;
        counts.get(number).copied().filter(|rows| *kept_stamp == stamp && *rows != NOT_COUNTED)
    }

    /// Keeps `rows` as `user`'s count in `day`, whose files have `stamp` (what was kept of
    /// the day under another stamp is dropped).
    pub fn keep(&mut self, day: Day, stamp: Stamp, user: &str, rows: u64) {
        let next = self.people.len();
        let number = *self.people.entry(user.to_string()).or_insert(next);
        let (kept_stamp, counts) = self.days.entry(day).or_insert_with(|| (stamp, Vec::new()));
        if *kept_stamp != stamp {
            (*kept_stamp, *counts) = (stamp, Vec::new());
        }
        if counts.len() <= number {
            counts.resize(number + 1, NOT_COUNTED);
        }
        counts[number] = rows;
    }
}

/// The stamp of a day's files, or `None` if it has no file.
pub fn stamp(data_dir: &Path, day: Day) -> Option<Stamp> {
    let of = |path: &Path| std::fs::metadata(path).ok().and_then(|meta| Some((meta.len(), meta.modified().ok()?)));
    let path = partitions::partition_path(data_dir, day);
    let mut log = path.clone().into_os_string();
    log.push("-wal");
    Some(Stamp { file: of(&path)?, log: of(Path::new(&log)) })
}

/// The event store's files, relative to the data directory, oldest day first (through
/// `events::store::Store::files`).
pub(super) fn files(data_dir: &Path) -> Result<Vec<String>, DbError> {
    let relative = |day| {
        let path = partitions::partition_path(data_dir, day);
        path.strip_prefix(data_dir).unwrap_or(&path).to_string_lossy().into_owned()
    };
    Ok(list_days(data_dir)?.into_iter().map(relative).collect())
}

/// The people with events in a day: how many rows each, and the oldest and newest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub user_id: String,
    pub oldest_ms: i64,
    pub newest_ms: i64,
    pub rows: u64,
}

impl DayReader {
    /// Every row with token usage or a cost (repricing).
    pub fn priced_rows(&self, each: impl FnMut(PricedRow)) -> Result<(), DbError> {
        partitions::for_each_priced_row(&self.conn, each)
    }

    /// Every `INTERACTIVE` event in session order (scoring).
    pub fn interactive_steps(&self, each: impl FnMut(StepRow)) -> Result<(), DbError> {
        partitions::for_each_interactive_step(&self.conn, each)
    }

    /// The day's events grouped by agent and model (cost reconciliation).
    pub fn model_costs(&self) -> Result<Vec<DailyModelCost>, DbError> {
        partitions::daily_model_costs(&self.conn)
    }

    /// Who has rows in the day (retention).
    pub fn owners(&self) -> Result<Vec<Owner>, DbError> {
        let mut stmt =
            self.conn.prepare("SELECT user_id, min(ts_ms), max(ts_ms), count(*) FROM events GROUP BY user_id")?;
        let owners = stmt.query_map([], |row| {
            Ok(Owner {
                user_id: row.get(0)?,
                oldest_ms: row.get(1)?,
                newest_ms: row.get(2)?,
                rows: row.get::<_, i64>(3)? as u64,
            })
        })?;
        Ok(owners.collect::<Result<_, _>>()?)
    }

    /// How many of a person's events in the day are older than `before_ms` (one range of
    /// the person's index, so a day already swept costs a look-up).
    pub fn events_of_before(&self, user_id: &str, before_ms: i64) -> Result<u64, DbError> {
        let mut count = self.conn.prepare_cached("SELECT count(*) FROM events WHERE user_id = ?1 AND ts_ms < ?2")?;
        Ok(count.query_row(params![user_id, before_ms], |row| row.get::<_, i64>(0))? as u64)
    }

    /// Whether the day has been compacted (its rows then share a zstd dictionary).
    pub fn is_compacted(&self) -> Result<bool, DbError> {
        super::compact::is_compacted(&self.conn)
    }
}

/// One day's partition opened to delete rows from or to rewrite costs (deletion,
/// retention, repricing). It reads like a [`DayReader`]. SQLite overwrites what it
/// deletes (`secure_delete`), so deleted events do not linger in free pages.
pub struct DayEditor {
    reader: DayReader,
}

/// Opens a day to change, or `None` if the day has no file or a crash left it without
/// its schema.
pub(super) fn edit(data_dir: &Path, day: Day) -> Result<Option<DayEditor>, DbError> {
    Ok(partitions::open_for_delete(data_dir, day)?.map(|conn| DayEditor { reader: DayReader { conn } }))
}

impl Deref for DayEditor {
    type Target = DayReader;
    fn deref(&self) -> &DayReader {
        &self.reader
    }
}

/// The deletions of one day inside its transaction.
pub struct DayDeletion<'a> {
    tx: &'a Connection,
}

impl DayDeletion<'_> {
    /// Every event of a person, whatever session it names.
    pub fn events_of(&self, user_id: &str) -> Result<u64, DbError> {
        partitions::delete_user_events(self.tx, user_id)
    }

    /// A person's events older than `before_ms` (retention).
    pub fn events_of_before(&self, user_id: &str, before_ms: i64) -> Result<u64, DbError> {
        partitions::delete_user_events_before(self.tx, user_id, before_ms)
    }

    /// One session's events.
    pub fn session(&self, user_id: &str, agent_type: &str, session_id: &str) -> Result<u64, DbError> {
        partitions::delete_session_events(self.tx, user_id, agent_type, session_id)
    }
}

impl DayEditor {
    /// Runs `delete` in one transaction and returns the rows it removed. When any went,
    /// the file's WAL is truncated if nothing reads it, so the deleted rows' pages leave
    /// the WAL too (busy is not an error: the server's checkpointer gets there).
    pub fn delete(&self, delete: impl FnOnce(&DayDeletion<'_>) -> Result<u64, DbError>) -> Result<u64, DbError> {
        let tx = Transaction::new_unchecked(&self.reader.conn, TransactionBehavior::Immediate)?;
        let deleted = delete(&DayDeletion { tx: &tx })?;
        tx.commit()?;
        if deleted > 0 {
            self.reader.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        }
        Ok(deleted)
    }

    /// Sets the stored cost of the given events (by id), in one transaction; returns
    /// the rows changed. Setting a cost twice is harmless.
    pub fn set_costs(&self, costs: &[(Vec<u8>, i64)]) -> Result<u64, DbError> {
        partitions::set_costs(&self.reader.conn, costs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::wire::{EventLimits, parse_event};

    /// Writes `(person, session, time)` rows into the day's partition as the writer does.
    fn write(data_dir: &Path, day: Day, rows: &[(&str, &str, i64)]) {
        let (mut conn, _) = partitions::open_for_write(data_dir, day).unwrap();
        let tx = conn.transaction().unwrap();
        for (user, session, ts_ms) in rows {
            let json = serde_json::json!({
                "event_id": uuid::Uuid::now_v7().to_string(), "type": "prompt_submit",
                "ts": crate::model::rfc3339_ms(*ts_ms), "agent_type": "claude_code", "session_id": session,
            });
            let raw = serde_json::value::to_raw_value(&json).unwrap();
            let parsed = parse_event(&raw, &EventLimits::default(), *ts_ms).unwrap();
            partitions::insert_event(&tx, &parsed.event, user, *ts_ms, 1).unwrap();
        }
        tx.commit().unwrap();
    }

    #[test]
    fn a_day_reads_its_owners_and_deletes_in_one_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let day = Day::parse("2026-03-02").unwrap();
        let start = day.start_ms();
        write(dir.path(), day, &[("ann", "s1", start + 10), ("ann", "s2", start + 20), ("bob", "s3", start + 30)]);
        assert!(exists(dir.path(), day));
        assert!(!exists(dir.path(), day.next()));
        assert!(read(dir.path(), day.next()).unwrap().is_none());
        assert_eq!(files(dir.path()).unwrap(), vec!["events/2026-03-02.db".to_string()]);

        let reader = read(dir.path(), day).unwrap().unwrap();
        assert_eq!(
            reader.owners().unwrap(),
            vec![
                Owner { user_id: "ann".into(), oldest_ms: start + 10, newest_ms: start + 20, rows: 2 },
                Owner { user_id: "bob".into(), oldest_ms: start + 30, newest_ms: start + 30, rows: 1 },
            ]
        );
        assert_eq!(reader.events_of_before("ann", start + 20).unwrap(), 1);
        drop(reader);

        let editor = edit(dir.path(), day).unwrap().unwrap();
        let gone = editor
            .delete(|day| Ok(day.events_of_before("ann", start + 20)? + day.session("bob", "claude_code", "s3")?))
            .unwrap();
        assert_eq!(gone, 2);
        // A failing deletion leaves the day as it was.
        let failed = editor.delete(|day| {
            day.events_of("ann")?;
            Err(DbError::Io { context: "stop".into(), source: std::io::Error::other("stop") })
        });
        assert!(failed.is_err());
        assert_eq!(editor.owners().unwrap().iter().map(|o| o.rows).sum::<u64>(), 1);
    }
}

//! [`Store`], the one owner of the event store's mutations, held by both hosts (the
//! server's `AppState` and each command). Appends go through the writer thread
//! (`events::writer`, the only code that adds rows); everything that rewrites or removes
//! what is stored (deletions, retention, repricing, re-redaction, compaction, dropping a
//! day) needs a [`Rewrite`], which only [`Store::rewriting`] hands out.
//!
//! Invariants:
//! - One rewrite at a time per data directory, whatever process asks: a [`Rewrite`] holds
//!   an exclusive `flock` on `events/rewrite.lock`. The lock belongs to the open file, so
//!   two stores in one process exclude each other as two processes do (a server and
//!   `sightline jobs run` beside it), and the kernel releases it when its holder dies.
//! - No day is rewritten by two at once: the functions that open a partition for
//!   rewriting are private to `events/` and reached only through a [`Rewrite`]; the
//!   layering test holds that no module above opens one for writing.
//! - The lock file names its holder (process, what, since when), so a waiting command
//!   says what it waits for.
//!
//! This is the seam a second back end (a column store) implements: `append` with its
//! acknowledgement after the durable write, rewrites a day at a time, typed reads
//! (`events::days`, `events::reads`).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::compact::{self, CompactionReport};
use super::days::{self, Day, DayEditor};
use super::partitions;
use super::reredact::{self, ReredactReport};
use crate::db::DbError;

/// The event store of one data directory.
#[derive(Clone, Debug)]
pub struct Store {
    data_dir: PathBuf,
}

impl Store {
    pub fn at(data_dir: &Path) -> Store {
        Store { data_dir: data_dir.to_path_buf() }
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The store's files, relative to the data directory, oldest day first: what a
    /// backup copies (each one a SQLite database, copied with SQLite's online backup, so
    /// a rewrite going on meanwhile is seen whole or not at all).
    pub fn files(&self) -> Result<Vec<String>, DbError> {
        days::files(&self.data_dir)
    }

    /// The file whose lock keeps rewriters apart.
    fn lock_path(&self) -> PathBuf {
        self.data_dir.join("events").join("rewrite.lock")
    }

    /// An I/O failure on the lock file, named.
    fn lock_error(&self, source: std::io::Error) -> DbError {
        DbError::Io { context: format!("the event store's rewrite lock {}", self.lock_path().display()), source }
    }

    /// Waits until no one else rewrites the store, then holds it for `what` (a job's
    /// name, a command) until the [`Rewrite`] is dropped. Blocks: call it on a blocking
    /// thread. A wait is logged once, naming the holder.
    pub fn rewriting(&self, what: &str) -> Result<Rewrite<'_>, DbError> {
        let path = self.lock_path();
        let io = |source| self.lock_error(source);
        std::fs::create_dir_all(path.parent().unwrap_or(&self.data_dir)).map_err(io)?;
        let mut file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = holder_of(&mut file);
                tracing::info!(%what, holder = %holder, "waiting for another rewrite of the event store to end");
                file.lock().map_err(io)?;
            }
            Err(std::fs::TryLockError::Error(err)) => return Err(io(err)),
        }
        let line = format!(
            "pid {} ({what}) since {}\n",
            std::process::id(),
            crate::model::rfc3339_ms(crate::clock::system_now_ms())
        );
        file.set_len(0).and_then(|()| file.rewind()).and_then(|()| file.write_all(line.as_bytes())).map_err(io)?;
        Ok(Rewrite { store: self, _lock: file })
    }

    /// Who holds the rewrite lock now, or `None` if no one does.
    pub fn rewriter(&self) -> Result<Option<String>, DbError> {
        let Ok(mut file) = File::open(self.lock_path()) else { return Ok(None) };
        match file.try_lock_shared() {
            Ok(()) => Ok(None),
            Err(std::fs::TryLockError::WouldBlock) => Ok(Some(holder_of(&mut file))),
            Err(std::fs::TryLockError::Error(source)) => Err(self.lock_error(source)),
        }
    }
}

fn holder_of(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.rewind().and_then(|()| file.read_to_string(&mut text));
    match text.trim() {
        "" => "another process".to_string(),
        holder => holder.to_string(),
    }
}

/// The right to rewrite the store, held until dropped (the lock file's lock).
pub struct Rewrite<'a> {
    store: &'a Store,
    _lock: File,
}

impl Rewrite<'_> {
    pub fn data_dir(&self) -> &Path {
        &self.store.data_dir
    }

    /// Opens a day to delete rows from or to set costs in, or `None` if the day has no
    /// file or a crash left it without its schema.
    pub fn edit(&self, day: Day) -> Result<Option<DayEditor>, DbError> {
        days::edit(self.data_dir(), day)
    }

    /// Compacts one day.
    pub fn compact(&self, day: Day, now_ms: i64) -> Result<CompactionReport, DbError> {
        compact::compact_partition(self.data_dir(), day, now_ms)
    }

    /// Compacts every day older than `older_than_days` not compacted yet, oldest first.
    pub fn compact_due(&self, older_than_days: i64, now_ms: i64) -> Result<Vec<CompactionReport>, DbError> {
        compact::compact_due(self.data_dir(), older_than_days, now_ms)
    }

    /// Compacts a compacted day again with a new dictionary, after rows in it were
    /// deleted or rewritten (the old dictionary holds samples of them).
    pub fn recompact(&self, day: Day, now_ms: i64) -> Result<CompactionReport, DbError> {
        compact::recompact_with_new_dictionary(self.data_dir(), day, now_ms)
    }

    /// Brings every day to the current redaction rules (`events::reredact`), keeping its
    /// resume point in `main`.
    pub fn reredact_all(
        &self,
        main: &Connection,
        now_ms: i64,
        progress: impl FnMut(&ReredactReport),
    ) -> Result<ReredactReport, DbError> {
        reredact::reredact_all(self.data_dir(), main, now_ms, progress)
    }

    /// Removes a day's file and its ledger entry in `main`; whether there was one. In the
    /// server the writer thread does it (`writer::WriterHandle::drop_partition_blocking`,
    /// which asks for this guard too), so it closes its own connection to the day first.
    pub fn drop_day(&self, main: &Connection, day: Day) -> Result<bool, DbError> {
        partitions::remove(self.data_dir(), main, day)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn two_stores_of_one_directory_never_rewrite_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let first = Store::at(dir.path());
        let held = first.rewriting("first").unwrap();
        assert!(first.rewriter().unwrap().unwrap().contains("(first)"));

        let (entered, entry) = mpsc::channel();
        let path = dir.path().to_path_buf();
        let second = std::thread::spawn(move || {
            let store = Store::at(&path);
            let _rewrite = store.rewriting("second").unwrap();
            entered.send(()).unwrap();
        });
        assert_eq!(
            entry.recv_timeout(Duration::from_millis(300)),
            Err(mpsc::RecvTimeoutError::Timeout),
            "a second store entered while the first held the lock"
        );
        drop(held);
        entry.recv_timeout(Duration::from_secs(10)).expect("the second store enters once the first lets go");
        second.join().unwrap();
        assert_eq!(first.rewriter().unwrap(), None, "the lock is free once both are done");
    }

    #[test]
    fn stores_of_two_directories_do_not_wait_for_each_other() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (one, two) = (Store::at(one.path()), Store::at(two.path()));
        let _first = one.rewriting("one").unwrap();
        let second = two.rewriting("two").unwrap();
        assert!(second.data_dir().ends_with(two.data_dir().file_name().unwrap()));
    }
}

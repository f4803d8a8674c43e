//! Keeping the writer's WALs bounded: near the hard cap the writer truncates a WAL
//! itself (the background checkpointer does the routine work), and on shutdown it
//! folds and truncates every WAL it holds.
//!
//! Invariant: the writer never waits long on a reader. A truncate must wait for the
//! readers still on old WAL frames; page reads end within milliseconds, and readers that
//! start meanwhile read the checkpointed file, so a short wait is enough. A long reader
//! (a backup copying the day, a scoring scan) is not waited for: the try gives up after
//! [`CAP_WAIT`], having copied what it could, and the next is at least [`CAP_RETRY`]
//! later, so the WAL may run past the cap while that reader lasts. Waiting for it, up to
//! the busy timeout, held every request queued behind the writer for seconds (issue 33's
//! soak: stalls of 5 to 10 s every few minutes).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a truncate waits for readers on old frames.
const CAP_WAIT: Duration = Duration::from_millis(100);
/// How long after a try that readers defeated the next may come.
const CAP_RETRY: Duration = Duration::from_secs(1);

use super::WriterState;
use crate::events::partitions::{self, Day};

impl WriterState {
    pub(super) fn wal_path(&self, day: Option<Day>) -> PathBuf {
        let db = match day {
            Some(day) => partitions::partition_path(&self.config.data_dir, day),
            None => self.config.data_dir.join("main.db"),
        };
        wal_path_of(&db)
    }

    /// Near the hard cap, checkpoint and truncate the WAL from the writer itself: it
    /// blocks this group's answer, and guarantees the file shrinks. The check runs
    /// after a commit, so it fires at 7/8 of the cap: the next group (at most
    /// `max_group_events`, a few MiB of WAL) cannot carry the file past the cap.
    pub(super) fn cap_wal(&mut self, day: Option<Day>) {
        let size = std::fs::metadata(self.wal_path(day)).map(|m| m.len()).unwrap_or(0);
        if day.is_none() {
            self.metrics.wal_bytes_main.set(size as i64);
        } else {
            self.metrics.wal_bytes_events.set(size as i64);
        }
        if size <= self.config.wal_hard_cap_bytes - self.config.wal_hard_cap_bytes / 8
            || Instant::now() < self.next_cap_try
        {
            return;
        }
        let conn = match day {
            None => &self.main,
            Some(day) => match self.partitions.get(&day) {
                Some(partition) => &partition.conn,
                None => return,
            },
        };
        let started = Instant::now();
        let _ = conn.busy_timeout(CAP_WAIT);
        let outcome = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get::<_, i64>(0));
        let _ = conn.busy_timeout(crate::db::BUSY_TIMEOUT);
        let took_ms = started.elapsed().as_millis() as u64;
        match outcome {
            Ok(0) => {
                self.metrics.blocking_checkpoints.inc();
                tracing::info!(wal_bytes = size, took_ms, "WAL near its hard cap: truncated");
            }
            Ok(_) => {
                self.next_cap_try = Instant::now() + CAP_RETRY;
                tracing::info!(
                    wal_bytes = size,
                    took_ms,
                    "WAL past its cap: a long reader holds it; trying again later"
                );
            }
            Err(err) => {
                self.next_cap_try = Instant::now() + CAP_RETRY;
                tracing::warn!(error = %err, "blocking checkpoint failed");
            }
        }
    }

    pub(super) fn checkpoint_all(&mut self) {
        let _ = self.main.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        for partition in self.partitions.values() {
            let _ = partition.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
    }
}

pub fn wal_path_of(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::events::writer::{EventWriter, WriterConfig};

    /// Changes of main.db alone (no events) keep its WAL under the hard cap: the writer
    /// caps it after each, as after an ingest commit. Found in the 2,000-developer demo,
    /// whose flood of webhooks grew main.db's WAL by about a gigabyte a minute.
    #[test]
    fn changes_without_events_keep_main_dbs_wal_under_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let main_db = dir.path().join("main.db");
        let mut conn =
            crate::db::open(&main_db, crate::db::Durability::PowerSafe, crate::db::Checkpointing::Background).unwrap();
        crate::db::migrations::migrate(&mut conn, &main_db).unwrap();
        drop(conn);
        let cap: u64 = 512 * 1024;
        let config = WriterConfig {
            data_dir: dir.path().to_path_buf(),
            max_group_events: 1000,
            wal_hard_cap_bytes: cap,
            queue_capacity: 8,
            clock: crate::clock::Clock::system(),
        };
        let writer = EventWriter::start(config, Vec::new(), Arc::new(crate::metrics::Metrics::new())).unwrap();
        let mut largest = 0;
        for _ in 0..200 {
            writer
                .change_main_blocking(Box::new(|tx| {
                    tx.execute_batch(
                        "CREATE TABLE IF NOT EXISTS filler (bytes BLOB); INSERT INTO filler VALUES (randomblob(20000));",
                    )?;
                    Ok(())
                }))
                .unwrap();
            largest = largest.max(std::fs::metadata(wal_path_of(&main_db)).map(|m| m.len()).unwrap_or(0));
        }
        // 200 changes of 20 kB: 4 MB of WAL without the cap.
        assert!(largest < cap + 64 * 1024, "main.db's WAL reached {largest} bytes (cap {cap})");
    }
}

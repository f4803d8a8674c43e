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

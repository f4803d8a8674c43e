//! Keeping the writer's WALs bounded: near the hard cap the writer truncates a WAL
//! itself (the background checkpointer does the routine work), and on shutdown it
//! folds and truncates every WAL it holds.

use std::path::{Path, PathBuf};
use std::time::Instant;

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
        if size <= self.config.wal_hard_cap_bytes - self.config.wal_hard_cap_bytes / 8 {
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
        match conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get::<_, i64>(0)) {
            Ok(busy) => {
                self.metrics.blocking_checkpoints.inc();
                tracing::info!(
                    wal_bytes = size,
                    busy,
                    took_ms = started.elapsed().as_millis() as u64,
                    "WAL near its hard cap: truncated"
                );
            }
            Err(err) => tracing::warn!(error = %err, "blocking checkpoint failed"),
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

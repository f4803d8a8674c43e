//! The background checkpointer: copies WAL frames into the database files from its
//! own connections, so no ingest commit pays for a checkpoint.
//!
//! Invariants: it only runs PASSIVE checkpoints (never blocks the writer or
//! readers); a WAL is checkpointed when it passes the soft cap or when the interval
//! has passed since its last checkpoint. Under constant writes a passive checkpoint
//! cannot always let the WAL restart from its beginning, so the writer enforces the
//! hard cap itself (`writer::wal`, `WriterState::cap_wal`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::partitions;
use super::writer::wal_path_of;
use crate::db::{Checkpointing, Durability};
use crate::metrics::Metrics;

#[derive(Clone, Debug)]
pub struct CheckpointConfig {
    pub data_dir: PathBuf,
    pub soft_cap_bytes: u64,
    pub interval: Duration,
    pub tick: Duration,
}

/// Runs until `stop` is signalled or dropped.
pub fn run(config: CheckpointConfig, metrics: Arc<Metrics>, stop: Receiver<()>) {
    let mut connections: HashMap<PathBuf, (Connection, Instant)> = HashMap::new();
    loop {
        match stop.recv_timeout(config.tick) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {}
        }
        let mut files = vec![config.data_dir.join("main.db")];
        if let Ok(days) = partitions::list_days(&config.data_dir) {
            // Only recent partitions are written; older ones have empty WALs.
            files.extend(days.iter().rev().take(3).map(|day| partitions::partition_path(&config.data_dir, *day)));
        }
        for db in files {
            let wal_bytes = std::fs::metadata(wal_path_of(&db)).map(|m| m.len()).unwrap_or(0);
            if wal_bytes == 0 {
                continue;
            }
            let due = connections.get(&db).is_none_or(|(_, last)| last.elapsed() >= config.interval);
            if wal_bytes < config.soft_cap_bytes && !due {
                continue;
            }
            if !connections.contains_key(&db) {
                match crate::db::open(&db, Durability::PowerSafe, Checkpointing::Background) {
                    Ok(conn) => {
                        connections.insert(db.clone(), (conn, Instant::now()));
                    }
                    Err(err) => {
                        tracing::warn!(file = %db.display(), error = %err, "checkpointer cannot open");
                        continue;
                    }
                }
            }
            if let Some((conn, last)) = connections.get_mut(&db) {
                match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get::<_, i64>(0)) {
                    Ok(_) => {
                        metrics.background_checkpoints.inc();
                    }
                    Err(err) => tracing::warn!(file = %db.display(), error = %err, "passive checkpoint failed"),
                }
                *last = Instant::now();
            }
        }
        // Close connections to files that are no longer written.
        connections.retain(|_, (_, last)| last.elapsed() < config.interval * 30);
    }
}

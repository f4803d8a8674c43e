//! The deletion runner inside `sightline serve`: the job scheduler's `run-deletions`
//! (every 6 hours) works through the open requests on a blocking thread, writing
//! `main.db` through the event writer and forgetting transcripts through the indexer
//! thread; and `sweep-retention` (daily) with the same handles.
//!
//! Invariants: the server's two single writers stay single: `main.db` changes go to
//! the writer thread and index changes to the indexer thread, never to a connection or
//! index writer of the runner's own. Partition rows are deleted from the runner's own
//! connection, as `sightline run-deletions` does beside a running server.

use std::sync::Arc;

use tokio::runtime::Handle;

use super::retention::{self, RetentionReport};
use super::runner::{self, DeletionReport, DeletionTarget};
use crate::db::{self, DbError};
use crate::events::partitions::Day;
use crate::events::writer::{EventWriter, MainChange};
use crate::state::AppState;
use crate::transcripts::index::worker::Indexer;

/// The server's writer and indexer. Its methods block: call them from a blocking
/// thread, never from the async runtime.
pub struct ServerTarget {
    pub writer: EventWriter,
    pub indexer: Indexer,
    pub runtime: Handle,
    pub clock: crate::clock::Clock,
}

impl DeletionTarget for ServerTarget {
    fn change_main(&self, change: MainChange) -> Result<(), DbError> {
        self.writer.change_main_blocking(change).map_err(|err| DbError::Io {
            context: "the deletion runner's main.db change".into(),
            source: std::io::Error::other(err.to_string()),
        })
    }

    fn forget_transcript(&self, session_id: &str) -> Result<(), String> {
        self.runtime.block_on(self.indexer.forget(session_id))
    }

    fn drop_partition(&self, day: Day) -> Result<bool, DbError> {
        self.writer.drop_partition_blocking(day).map_err(|err| DbError::Io {
            context: format!("cannot remove the partition of {day}"),
            source: std::io::Error::other(err.to_string()),
        })
    }

    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }
}

impl ServerTarget {
    /// The server's handles, for a run on a blocking thread of the current runtime.
    fn of(state: &AppState) -> ServerTarget {
        ServerTarget {
            writer: state.writer.clone(),
            indexer: state.indexer.clone(),
            runtime: Handle::current(),
            clock: state.clock.clone(),
        }
    }
}

/// Runs the open deletion requests once on a blocking thread.
pub async fn run_once(state: &Arc<AppState>) -> Result<DeletionReport, DbError> {
    let target = ServerTarget::of(state);
    let (readers, data_dir) = (state.readers.clone(), state.config.data_dir.clone());
    db::blocking(move || {
        let reads = readers.get()?;
        if super::open_requests(&reads)?.is_empty() {
            return Ok(DeletionReport::default());
        }
        runner::run(&reads, &data_dir, &target)
    })
    .await
}

/// Sweeps raw events past retention (`sweep-retention`) once on a blocking thread.
pub async fn sweep_retention(state: &Arc<AppState>) -> Result<RetentionReport, String> {
    let target = ServerTarget::of(state);
    let (readers, data_dir, days) =
        (state.readers.clone(), state.config.data_dir.clone(), state.config.jobs.retention_days);
    let swept = tokio::task::spawn_blocking(move || {
        let reads = readers.get().map_err(|err| err.to_string())?;
        retention::sweep(&reads, &data_dir, &target, days).map_err(|err| err.to_string())
    });
    swept.await.map_err(|err| format!("the retention sweep stopped: {err}"))?
}

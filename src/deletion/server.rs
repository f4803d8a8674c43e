//! The deletion target inside `sightline serve`: `run-deletions` (every 6 hours) and
//! `sweep-retention` (daily) run on a blocking thread (`jobs::in_server`), writing
//! `main.db` through the event writer and forgetting transcripts through the indexer
//! thread.
//!
//! Invariants: the server's two single writers stay single: `main.db` changes go to
//! the writer thread and index changes to the indexer thread, never to a connection or
//! index writer of the runner's own. Partition rows are deleted from the runner's own
//! connection, as `sightline run-deletions` does beside a running server.

use tokio::runtime::Handle;

use super::runner::DeletionTarget;
use crate::db::DbError;
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

    fn drop_partition(&self, rewrite: &crate::events::store::Rewrite<'_>, day: Day) -> Result<bool, DbError> {
        self.writer.drop_partition_blocking(rewrite, day).map_err(|err| DbError::Io {
            context: format!("cannot remove the partition of {day}"),
            source: std::io::Error::other(err.to_string()),
        })
    }

    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }
}

impl ServerTarget {
    /// The server's handles, for a run on a blocking thread of `runtime`.
    pub fn of(state: &AppState, runtime: Handle) -> ServerTarget {
        ServerTarget {
            writer: state.writer.clone(),
            indexer: state.indexer.clone(),
            runtime,
            clock: state.clock.clone(),
        }
    }
}

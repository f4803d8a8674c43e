//! What `main.db` derives from each partition commit: the [`CommitFold`] the writer
//! applies in the same transaction as the commit's ledger entry, the events it is handed
//! ([`Stored`]), and [`FoldChain`], several folds in turn.

use std::sync::Arc;

use rusqlite::Connection;

use crate::db::DbError;
use crate::model::wire::{ClientInfo, Event};

/// One newly stored event, as the writer hands it to the [`CommitFold`].
pub struct Stored<'a> {
    pub user_id: &'a str,
    pub event: &'a Event,
    /// Whether the price table knew the event's model when it was ingested; `None`
    /// when a crash left the commit unfolded, and the fold prices it again.
    pub known_model: Option<bool>,
    /// The client that sent it (`None` on crash recovery).
    pub client: Option<&'a ClientInfo>,
    /// The secrets ingest counted in its metadata (`None` on crash recovery).
    pub redactions: Option<&'a crate::redact::Hits>,
}

/// What `main.db` derives from each partition commit, applied in the same main.db
/// transaction as the commit's ledger entry. Handed in at start-up (the sessions
/// fold), so the event store knows nothing of sessions or prices.
pub trait CommitFold: Send + Sync + 'static {
    /// Folds newly stored events (never a duplicate: the writer decides that); returns
    /// how many had a model the price table did not know.
    fn fold(&self, main: &Connection, stored: &[Stored<'_>], now_ms: i64) -> Result<u64, DbError>;
}

/// Several folds applied in turn to each commit, in the same transaction (the sessions
/// fold, then what builds on sessions); answers the sum of their counts.
pub struct FoldChain(pub Vec<Arc<dyn CommitFold>>);

impl CommitFold for FoldChain {
    fn fold(&self, main: &Connection, stored: &[Stored<'_>], now_ms: i64) -> Result<u64, DbError> {
        let mut total = 0;
        for fold in &self.0 {
            total += fold.fold(main, stored, now_ms)?;
        }
        Ok(total)
    }
}

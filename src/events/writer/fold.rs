//! What `main.db` derives from each partition commit: the [`CommitFold`]s the writer
//! applies in turn in the same transaction as the commit's ledger entry, and the events
//! they are handed ([`Stored`]).

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

/// A report the writer did not store (its twin from the other source, or its first
/// sending, is stored) that carries context its stored twin may lack.
#[derive(Debug, Clone, Copy)]
pub struct Joined<'a> {
    pub user_id: &'a str,
    pub event: &'a Event,
}

/// What `main.db` derives from each partition commit, applied in the same main.db
/// transaction as the commit's ledger entry. Handed in at start-up (the sessions fold,
/// then what builds on sessions), so the event store knows nothing of sessions or prices.
pub trait CommitFold: Send + Sync + 'static {
    /// The fold's step name in the writer's timings (`fold_<name>`).
    fn step(&self) -> &'static str;

    /// Folds newly stored events (never a duplicate: the writer decides that); returns
    /// how many had a model the price table did not know. `joined` are reports not
    /// stored because the other source's report of the same thing was (or a replay of
    /// one stored): a fold may take from them only what the stored one lacked (a
    /// session's git context), never a counted figure.
    fn fold(
        &self,
        main: &Connection,
        stored: &[Stored<'_>],
        joined: &[Joined<'_>],
        now_ms: i64,
    ) -> Result<u64, DbError>;
}

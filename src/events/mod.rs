//! The event store: its owner (`store`: the rewrite lock that every rewrite of a
//! partition holds, across processes), day partitions of raw events (`partitions`), the
//! one writer thread that commits them and hands each commit to a fold (`writer`), the WAL
//! checkpointer (`checkpoint`), compaction of old partitions (`compact`, with the
//! metadata codec in `metadata`), reads by session (`reads`), and re-redaction of stored
//! events when the redaction rules change (`reredact`), and the day-at-a-time
//! operations the modules above read and change the store with (`days`).
//!
//! Invariant: this is the one seam of the event store. Nothing above it but the
//! aggregates' refresh (`analytics/`) opens a partition: the others go through `days`
//! and `reads` (the layering test holds it), so a ClickHouse back end would replace
//! this module and not its callers. It depends only on storage plumbing (`db`) and
//! the shared vocabulary (`model`, `redact`): what main.db derives from events is handed in
//! as a [`writer::CommitFold`].

pub mod checkpoint;
pub mod compact;
pub mod days;
pub mod metadata;
pub mod partitions;
pub mod reads;
pub mod reredact;
pub mod store;
pub mod writer;

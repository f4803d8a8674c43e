//! Sessions: the central fact table, owned here. The fold ([`fold`]) builds each row
//! from the events the writer stores; the audited read ([`read`]) decides who may read
//! one and hands out the proof every session, event and transcript read takes; the
//! views ([`views`]) are what a reader sees, and [`listing`] the owner's own list; [`abandon`] closes sessions gone quiet;
//! [`reprice`] moves stored costs, and the sessions' totals, to the price tables in force;
//! [`sharing`] is the owner's per-session transcript switch; [`git`] keeps what each session
//! reported of its git work, for linking it to pull requests; [`measures`] are what the
//! alert rules watch of them; [`eval_links`] finds the evaluation runs harnesses linked to
//! their cells.
//!
//! Invariant: all SQL on `sessions` lives in this module. The handlers that serve
//! sessions (`ingest::me`, `web::sessions`) stay with their listeners, because a
//! module with handlers depends on `AppState`, which holds the transcript index, and
//! transcripts depend on this module: the table's owner must sit below the state.

pub mod abandon;
pub mod adapters;
pub mod capabilities;
pub mod drift;
pub mod eval_links;
pub mod fold;
pub mod git;
pub mod listing;
pub mod measures;
pub mod read;
pub mod reported;
pub mod reprice;
pub mod scored;
pub mod sharing;
pub mod unpriced;
pub mod views;

//! What each job does, as one function over a [`JobContext`](super::context::JobContext),
//! grouped by the feature it serves. The registry (`super::registry::JOBS`) names each
//! function once beside the job's schedule and service level; the server and the
//! command line both call it.
//!
//! Invariant: work here only calls the features' own functions (their SQL stays in the
//! modules that own the tables) and reaches `main.db` and the index through the context.

pub mod alerts;
pub mod backup;
pub mod deletions;
pub mod integrations;
pub mod pricing;
pub mod scoring;
pub mod sweeps;
pub mod transcripts;

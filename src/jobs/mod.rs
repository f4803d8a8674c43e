//! Jobs: the registry of the 19 dispatchable jobs of the spec (`registry`), and when
//! each runs (`schedule`).
//!
//! Invariant: a job is known by its spec name, everywhere (CLI, HTTP, `job_runs`).

pub mod registry;
pub mod schedule;

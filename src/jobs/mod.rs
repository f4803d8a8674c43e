//! Jobs: the registry of the 19 dispatchable jobs of the spec (`registry`), when each
//! runs (`schedule`), and the record of every run (`runs`, the `job_runs` table).
//!
//! Invariant: a job is known by its spec name, everywhere (CLI, HTTP, `job_runs`).

pub mod registry;
pub mod runs;
pub mod schedule;

//! Jobs: the registry of the 20 dispatchable jobs of the spec (`registry`), when each
//! runs (`schedule`, and an operator's `config` of the tier-1 jobs), the record of every run (`runs`, the `job_runs` table), and the
//! scheduler that runs them in the server (`scheduler`, with what each does there in
//! `in_server`), and the check of every ended run
//! against the job's service level (`slo`, the `job_alerts` table), and what every job
//! stands at, read once for the CLI, the API and `/metrics` (`status`).
//!
//! Invariant: a job is known by its spec name, everywhere (CLI, HTTP, `job_runs`).

pub mod config;
pub mod context;
pub mod in_server;
pub mod registry;
pub mod runs;
pub mod schedule;
pub mod scheduler;
pub mod slo;
pub mod status;
pub mod work;

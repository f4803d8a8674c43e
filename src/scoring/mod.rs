//! Scoring: every computed signal about a session (and later pull requests, skills and
//! tool servers) is a versioned score naming its scorer (`registry`). This module holds
//! the six deterministic trajectory scorers with the session's shape and friction
//! (`trajectory`, with the command lines its transcript adds: `commands`), the `scores`
//! table (`store`), the `compute-trajectory-scores` run over the event partitions
//! (`run`), and what each score usually is, for the organisation and for each person
//! (`bands`), so a session's score reads in context.
//!
//! Invariants: a score row names its scorer and version; a new version is written beside
//! the old one (pages read the current version); only `INTERACTIVE` sessions are scored,
//! so no developer-behaviour score is about a CI or EVAL run.

pub mod bands;
pub mod commands;
pub mod feedback;
pub mod judge;
pub mod outcomes;
pub mod registry;
pub mod run;
pub mod store;
pub mod trajectory;

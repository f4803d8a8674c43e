//! The eval-results service: reads a `results.db` written by an eval harness and
//! presents it as static reports (`report`), a console table (`results`) and an
//! interactive dashboard with a JSON API (`dashboard`); with a platform address, the agent
//! sessions harnesses linked to their cells, read from the platform (`platform`).
//!
//! Invariants: `results.db` belongs to the harness — it is opened read-only and never
//! locked against a writing harness (WAL readers); every summary and count is computed
//! by SQL aggregation; every filter or sort column comes from an allowlist and every
//! value is a bound parameter; all user text is escaped wherever it is rendered.

pub mod behaviour;
pub mod cells;
pub mod compare;
pub mod console;
pub mod counts;
pub mod dashboard;
pub mod db;
pub mod demo;
pub mod detail;
pub mod leaderboard;
pub mod platform;
pub mod progress;
pub mod records;
pub mod report;
pub mod shown;
pub mod stats;
pub mod text;

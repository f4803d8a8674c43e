//! Alerts (spec §4.5 `evaluate-alerts`, docs/alerts.md): six rules over the aggregates and a seventh over the jobs' service-level breaches,
//! each measured now ([`rules`]) and compared with its threshold, and the alert events
//! the comparisons open, keep and resolve ([`machine`], the `alert_events` table, owned
//! here with `alert_rules`).
//!
//! Invariants: a rule has at most one unresolved event (a unique index says so); an
//! evaluation changes events only through [`machine::next`], so every transition is one
//! the state machine in docs/alerts.md allows; rules read aggregates (interactive runs
//! only) and the unknown-models table, never raw events.

pub mod channels;
pub mod machine;
pub mod rules;
pub mod store;

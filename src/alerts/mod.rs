//! Alerts (docs/alerts.md `evaluate-alerts`, docs/alerts.md): six rules over the aggregates, a seventh over the jobs' service-level breaches and an eighth over the service-level objectives' error budgets,
//! each measured now ([`rules`]) and compared with its threshold, and the alert events
//! the comparisons open, keep and resolve ([`machine`], the `alert_events` table, owned
//! here with `alert_rules`).
//!
//! [`budgets`] are teams' and people's monthly budgets; [`channel_configs`] switch the
//! environment's channels on and off and keep their last test-send.
//!
//! Invariants: a rule has at most one unresolved event per subject (a unique index says so); an
//! evaluation changes events only through [`machine::next`], so every transition is one
//! the state machine in docs/alerts.md allows; rules read aggregates (interactive runs
//! only) and the unknown-models table, never raw events.

pub mod budgets;
pub mod channel_configs;
pub mod channels;
pub mod machine;
pub mod rules;
pub mod store;

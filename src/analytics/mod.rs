//! Analytics: the continuous aggregates pages read instead of raw events. Ingest (and
//! deletion, and repricing) mark the hours whose events changed in
//! `aggregate_dirty_buckets`; [`refresh`] adds to each marked day what was committed to
//! its partition since the last refresh ([`additions`], from the watermark kept in
//! [`partials`]), or rebuilds the day whole when its events changed otherwise (a
//! deletion, new prices), so an aggregate always equals a `GROUP BY` over the events it
//! covers. Pages read them through [`query`], which has no other source, so no
//! developer figure can include a CI or EVAL run.
//!
//! Invariants: only `INTERACTIVE` events reach an aggregate (CI and EVAL runs are
//! filtered where the events are read); an hour's rows and the clearing of its mark
//! commit together, and a mark renewed while the hour was being recomputed survives, so
//! the next refresh sees what arrived meanwhile. The redactions aggregate is the one kept
//! as events are stored rather than refreshed from them (`redactions`: ingest's count of
//! what the hook had redacted is not in the stored event).

pub mod additions;
pub mod insights;
pub mod month;
pub mod partials;
pub mod query;
pub mod redactions;
pub mod refresh;
#[cfg(test)]
mod refresh_tests;
pub mod sessions_daily;
pub mod tools;
pub mod usage;

//! The server's counts since the last flush: every request by listener and matched
//! route (good unless a 5xx, timed), every event-write batch (good when written within
//! 5 minutes of receipt), and every aggregate-lag sample (good under 2 hours).
//!
//! Invariant: recording never blocks on storage; [`Recorder::take`] hands the counts
//! over and starts afresh, so nothing is counted twice.

use std::collections::HashMap;
use std::sync::Mutex;

use super::Tally;

/// Written within this long of receipt, an event counts as not lost (docs/slo.md).
pub const EVENT_WRITE_LIMIT_MS: i64 = 5 * 60_000;
/// Aggregates behind by less than this are on time (docs/slo.md).
pub const AGGREGATE_LAG_LIMIT_MS: i64 = 2 * 3_600_000;

/// The key of an indicator's tally: `(indicator, key)`.
pub type Key = (&'static str, String);

#[derive(Default)]
pub struct Recorder {
    tallies: Mutex<HashMap<Key, Tally>>,
}

impl Recorder {
    fn tally(&self, indicator: &'static str, key: String, record: impl FnOnce(&mut Tally)) {
        let mut tallies = self.tallies.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        record(tallies.entry((indicator, key)).or_default());
    }

    /// One request on `listener`'s `route` (its matched pattern).
    pub fn request(&self, listener: &'static str, route: &str, status: u16, seconds: f64) {
        let ms = (seconds * 1000.0).round() as i64;
        self.tally("route", format!("{listener} {route}"), |tally| tally.add(status < 500, Some(ms)));
    }

    /// A batch of `events` valid events that took `ms` from receipt to commit, or failed
    /// to be written (`written` false).
    pub fn event_write(&self, events: usize, written: bool, ms: i64) {
        if events > 0 {
            let good = written && ms <= EVENT_WRITE_LIMIT_MS;
            self.tally("event_write", String::new(), |tally| tally.add_n(good, events as i64));
        }
    }

    /// One sample of how far the aggregates are behind.
    pub fn aggregate_lag(&self, lag_ms: i64) {
        self.tally("aggregate_lag", String::new(), |tally| tally.add(lag_ms < AGGREGATE_LAG_LIMIT_MS, None));
    }

    /// The counts so far; the recorder starts again from nothing.
    pub fn take(&self) -> HashMap<Key, Tally> {
        let mut tallies = self.tallies.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        std::mem::take(&mut *tallies)
    }
}

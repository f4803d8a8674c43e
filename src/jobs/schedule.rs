//! When a job runs: a cron pattern (five fields, UTC, parsed by `croner`), a fixed
//! interval, or only when triggered.
//!
//! Invariant: a pattern is validated when it is set (`Schedule::cron`), so a stored
//! schedule always parses; times are milliseconds since the epoch, as the `Clock` gives.

use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, Utc};
use croner::Cron;

#[derive(Clone, Debug)]
pub enum Schedule {
    /// A cron pattern in UTC, e.g. `0 2 * * *` (02:00 every day).
    Cron { pattern: String, cron: Box<Cron> },
    /// Every so often, counted from the start of the epoch (so `every 10 min` fires at
    /// :00, :10, … and not relative to when the server started).
    Every(Duration),
    /// Never on its own: an operator or another job triggers it.
    Triggered,
}

impl Schedule {
    /// Parses a five-field cron pattern in UTC; the error names what is wrong.
    pub fn cron(pattern: &str) -> Result<Schedule, String> {
        let cron = Cron::from_str(pattern).map_err(|err| format!("{pattern:?} is not a cron pattern: {err}"))?;
        Ok(Schedule::Cron { pattern: pattern.to_string(), cron: Box::new(cron) })
    }

    /// The first time strictly after `after_ms` this schedule fires, or `None` for a
    /// triggered job.
    pub fn next_after(&self, after_ms: i64) -> Option<i64> {
        match self {
            Schedule::Cron { cron, .. } => {
                // Whole seconds: croner carries a fraction of `after` into its answer,
                // and a slot is a whole minute.
                let after = DateTime::<Utc>::from_timestamp(after_ms.div_euclid(1000), 0)?;
                cron.find_next_occurrence(&after, false).ok().map(|next| next.timestamp() * 1000)
            }
            Schedule::Every(period) => {
                let period = period.as_millis().max(1) as i64;
                Some((after_ms.div_euclid(period) + 1) * period)
            }
            Schedule::Triggered => None,
        }
    }

    /// Whether a scheduled run is due at `now_ms`: a scheduled time has passed since the
    /// job last started (or, for a job that never ran, since the scheduler started, so a
    /// new install does not run every job at once). However many times passed while the
    /// server was down, the job is due once: the run moves `last_started` past them all.
    ///
    /// A last start later than now means the clock stepped back (an NTP step, a restored
    /// snapshot): a job on an interval runs at its period from now rather than waiting
    /// for the clock to catch up with the old start; a job at a time of day keeps waiting
    /// for its next time, so it never runs twice for one slot.
    pub fn is_due(&self, last_started_ms: Option<i64>, scheduler_started_ms: i64, now_ms: i64) -> bool {
        let mut since = last_started_ms.unwrap_or(scheduler_started_ms);
        if let Schedule::Every(period) = self
            && since > now_ms
        {
            since = now_ms - period.as_millis() as i64;
        }
        self.next_after(since).is_some_and(|slot| slot <= now_ms)
    }

    /// How `jobs list` and the API show it.
    pub fn describe(&self) -> String {
        match self {
            Schedule::Cron { pattern, .. } => format!("cron {pattern} (UTC)"),
            Schedule::Every(period) => match period.as_secs() {
                secs if secs % 3600 == 0 => format!("every {} h", secs / 3600),
                secs if secs % 60 == 0 => format!("every {} min", secs / 60),
                secs => format!("every {secs} s"),
            },
            Schedule::Triggered => "when triggered".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOV_24_0100: i64 = 1_795_482_000_000; // 2026-11-24T01:00:00Z

    #[test]
    fn cron_patterns_fire_in_utc_strictly_after_the_given_time() {
        let nightly = Schedule::cron("0 2 * * *").unwrap();
        assert_eq!(nightly.next_after(NOV_24_0100), Some(NOV_24_0100 + 3_600_000));
        assert_eq!(nightly.next_after(NOV_24_0100 + 3_600_000), Some(NOV_24_0100 + 3_600_000 + 86_400_000));
        // A fraction of a second never leaks into the slot.
        assert_eq!(nightly.next_after(NOV_24_0100 + 224), Some(NOV_24_0100 + 3_600_000));
        let half_past = Schedule::cron("30 3 * * *").unwrap();
        assert_eq!(half_past.next_after(NOV_24_0100), Some(NOV_24_0100 + 2 * 3_600_000 + 30 * 60_000));
    }

    /// The clock stepped back an hour after a run: an interval job runs at its period from
    /// now; a nightly job does not run twice for the night it already ran.
    #[test]
    fn after_the_clock_steps_back_an_interval_job_carries_on_and_a_nightly_one_waits() {
        let ran_at = NOV_24_0100 + 3_600_000; // 02:00, then the clock reads 01:00 again
        let every_ten = Schedule::Every(Duration::from_secs(600));
        assert!(every_ten.is_due(Some(ran_at), 0, NOV_24_0100), "not an hour's wait");
        let nightly = Schedule::cron("0 2 * * *").unwrap();
        assert!(!nightly.is_due(Some(ran_at), 0, NOV_24_0100));
        assert!(!nightly.is_due(Some(ran_at), 0, NOV_24_0100 + 3_600_000), "02:00 again is the same night");
    }

    #[test]
    fn a_job_is_due_once_after_downtime_and_not_at_a_first_start() {
        let nightly = Schedule::cron("0 2 * * *").unwrap();
        let day = 86_400_000;
        // Never ran; the scheduler started at 01:00: not due until 02:00.
        assert!(!nightly.is_due(None, NOV_24_0100, NOV_24_0100 + 1));
        assert!(nightly.is_due(None, NOV_24_0100, NOV_24_0100 + 3_600_000));
        // Ran at 02:00; the server was down for three days: due once on return...
        let ran = NOV_24_0100 + 3_600_000;
        let back = ran + 3 * day + 5_000;
        assert!(nightly.is_due(Some(ran), back, back));
        // ...and after that run, not again until the next 02:00.
        assert!(!nightly.is_due(Some(back), back, back + 60_000));
        assert!(nightly.is_due(Some(back), back, ran + 4 * day));
        assert!(!Schedule::Triggered.is_due(None, 0, i64::MAX));
    }

    #[test]
    fn bad_patterns_are_refused_with_the_pattern_named() {
        for bad in ["", "every day", "61 * * * *", "* * * *"] {
            let err = Schedule::cron(bad).unwrap_err();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn intervals_fire_on_multiples_of_their_period() {
        let every_ten = Schedule::Every(Duration::from_secs(600));
        assert_eq!(every_ten.next_after(NOV_24_0100), Some(NOV_24_0100 + 600_000));
        assert_eq!(every_ten.next_after(NOV_24_0100 + 1), Some(NOV_24_0100 + 600_000));
        assert_eq!(Schedule::Triggered.next_after(NOV_24_0100), None);
        assert_eq!(every_ten.describe(), "every 10 min");
    }
}

//! Service-level indicators and objectives (docs/slo.md, docs/slo.md). The server counts
//! each request, event write and aggregate-lag sample as it happens ([`recorder`]),
//! adds them to one row per UTC day, indicator and key every minute, beside the
//! GitHub-delivery and job indicators the flush derives from their own tables
//! ([`store`], `sli_daily`, owned here, kept 12 months; the flush is `app::slis`). [`objectives`] are the targets of docs/slo.md, each measured over a
//! rolling 30-day window with its error budget, burn and the budget policy. Jobs'
//! breaches of their own service levels are recorded in [`breaches`].
//!
//! Invariants: a day's row only grows from the recorder (merged, never replaced), so a
//! restart loses at most the last minute's counts; derived rows are recomputed whole,
//! so recomputing is idempotent; latency is kept as counts per bound of [`BOUNDS_MS`],
//! so "share under X ms" is exact for every bound an objective uses.

pub mod breaches;
pub mod objectives;
pub mod recorder;
pub mod store;

/// Upper bounds of the latency buckets in milliseconds; one more bucket holds the rest.
pub const BOUNDS_MS: [i64; 12] = [5, 10, 25, 50, 100, 200, 500, 1000, 2000, 5000, 30_000, 300_000];

/// Counts of one indicator and key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub total: i64,
    pub good: i64,
    /// Per bound of [`BOUNDS_MS`], then one for everything above; empty when untimed.
    pub buckets: Vec<i64>,
}

impl Tally {
    /// Adds one observation; `ms` is its latency when the indicator is timed.
    pub fn add(&mut self, good: bool, ms: Option<i64>) {
        self.add_n(good, 1);
        if let Some(ms) = ms {
            let at = BOUNDS_MS.iter().position(|bound| ms <= *bound).unwrap_or(BOUNDS_MS.len());
            self.buckets_mut()[at] += 1;
        }
    }

    /// Adds `n` untimed observations, all good or all bad.
    pub fn add_n(&mut self, good: bool, n: i64) {
        self.total += n;
        self.good += if good { n } else { 0 };
    }

    pub fn merge(&mut self, other: &Tally) {
        self.total += other.total;
        self.good += other.good;
        if !other.buckets.is_empty() {
            for (mine, theirs) in self.buckets_mut().iter_mut().zip(&other.buckets) {
                *mine += theirs;
            }
        }
    }

    /// The buckets, made on first use.
    fn buckets_mut(&mut self) -> &mut Vec<i64> {
        if self.buckets.is_empty() {
            self.buckets = vec![0; BOUNDS_MS.len() + 1];
        }
        &mut self.buckets
    }

    /// How many timed observations took at most `bound_ms` (a bound of [`BOUNDS_MS`]).
    pub fn under(&self, bound_ms: i64) -> i64 {
        BOUNDS_MS.iter().zip(&self.buckets).take_while(|(bound, _)| **bound <= bound_ms).map(|(_, n)| n).sum()
    }

    /// How many observations were timed.
    pub fn timed(&self) -> i64 {
        self.buckets.iter().sum()
    }

    /// The smallest bound under which at least `quantile` of the timed observations fall
    /// (`None` when nothing was timed, or past the last bound).
    pub fn quantile_bound(&self, quantile: f64) -> Option<i64> {
        let timed = self.timed();
        if timed == 0 {
            return None;
        }
        let needed = (quantile * timed as f64).ceil() as i64;
        let mut seen = 0;
        for (bound, n) in BOUNDS_MS.iter().zip(&self.buckets) {
            seen += n;
            if seen >= needed {
                return Some(*bound);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_count_under_each_bound_and_merge() {
        let mut tally = Tally::default();
        for ms in [1, 5, 6, 49, 50, 51, 199, 900, 400_000] {
            tally.add(ms < 400_000, Some(ms));
        }
        assert_eq!((tally.total, tally.good), (9, 8));
        assert_eq!(tally.under(5), 2);
        assert_eq!(tally.under(50), 5);
        assert_eq!(tally.under(200), 7);
        assert_eq!(tally.under(1000), 8);
        assert_eq!(tally.quantile_bound(0.5), Some(50));
        assert_eq!(tally.quantile_bound(1.0), None, "the slowest is past the last bound");
        let mut merged = Tally::default();
        merged.merge(&tally);
        merged.merge(&tally);
        assert_eq!((merged.total, merged.under(50)), (18, 10));
        let mut untimed = Tally::default();
        untimed.add(true, None);
        assert!(untimed.buckets.is_empty());
        assert_eq!(untimed.quantile_bound(0.5), None);
    }
}

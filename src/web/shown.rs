//! How figures read on the pages: dollars to the cent and counts with thousands
//! separators, one way everywhere.
//!
//! Invariant: money is rounded from the integer nano-dollars we store (half away from
//! zero), never through a float, so $0.045 shows as $0.05 on every page alike (the
//! functions live in `model`, so the GitHub bot comment writes money the same way).

pub use crate::model::{count, usd};

/// The same, as template filters: `{{ row.cost_nusd|usd }}`.
pub mod filters {
    #[askama::filter_fn]
    pub fn usd(nusd: &i64, _: &dyn askama::Values) -> askama::Result<String> {
        Ok(super::usd(*nusd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_round_half_away_from_zero_from_integers() {
        assert_eq!(usd(45_000_000), "$0.05", "a float would give $0.04");
        assert_eq!(usd(44_999_999), "$0.04");
        assert_eq!(usd(0), "$0.00");
        assert_eq!(usd(-45_000_000), "-$0.05");
        assert_eq!(usd(-4_000_000), "$0.00", "no negative zero");
        assert_eq!(usd(1_234_567_000_000), "$1,234.57");
        assert_eq!(usd(i64::MIN), "-$9,223,372,036.85");
    }

    #[test]
    fn counts_have_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(-1_234_567), "-1,234,567");
    }
}

//! How figures read on the pages: dollars to the cent and counts with thousands
//! separators, one way everywhere.
//!
//! Invariant: money is rounded from the integer nano-dollars we store (half away from
//! zero), never through a float, so $0.045 shows as $0.05 on every page alike (the
//! functions live in `model`, so the GitHub bot comment writes money the same way).

pub use crate::model::{count, usd};

/// Every token a model read or wrote, of every kind.
pub fn tokens(f: &crate::analytics::query::Figures) -> i64 {
    f.usage.input_tokens
        + f.usage.output_tokens
        + f.usage.cache_read_tokens
        + f.usage.cache_write_5m_tokens
        + f.usage.cache_write_1h_tokens
        + f.usage.reasoning_tokens
}

pub fn hours(ms: i64) -> String {
    format!("{:.1} h", ms as f64 / 3_600_000.0)
}

pub fn share(part: i64, whole: i64) -> String {
    if whole > 0 { format!("{:.0}%", part as f64 * 100.0 / whole as f64) } else { "—".into() }
}

/// "+12% against the previous 30 days", "new", or "no change".
pub fn trend(now: i64, before: i64, days: i64) -> String {
    match (now, before) {
        (0, 0) => "nothing in either period".into(),
        (_, 0) => format!("new: nothing the previous {days} days"),
        _ => {
            let change = (now - before) as f64 * 100.0 / before as f64;
            if change.abs() < 0.5 {
                format!("no change on the previous {days} days")
            } else {
                format!("{change:+.0}% on the previous {days} days")
            }
        }
    }
}

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
    fn figures_read_as_people_write_them() {
        assert_eq!(trend(150, 100, 30), "+50% on the previous 30 days");
        assert_eq!(trend(50, 100, 7), "-50% on the previous 7 days");
        assert_eq!(trend(100, 0, 7), "new: nothing the previous 7 days");
        assert_eq!(trend(0, 0, 7), "nothing in either period");
        assert_eq!(trend(1001, 1000, 90), "no change on the previous 90 days");
        assert_eq!(share(1, 3), "33%");
        assert_eq!(hours(5_400_000), "1.5 h");
    }

    #[test]
    fn counts_have_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(-1_234_567), "-1,234,567");
    }
}

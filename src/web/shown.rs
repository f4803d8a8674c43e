//! How figures read on the pages: dollars to the cent and counts with thousands
//! separators, one way everywhere.
//!
//! Invariant: money is rounded from the integer nano-dollars we store (half away from
//! zero), never through a float, so $0.045 shows as $0.05 on every page alike.

const NUSD_PER_CENT: i64 = 10_000_000;

/// Nano-dollars as dollars to the cent: `$1,234.57`, `-$0.05`.
pub fn usd(nusd: i64) -> String {
    let cents = (i128::from(nusd.unsigned_abs()) + i128::from(NUSD_PER_CENT / 2)) / i128::from(NUSD_PER_CENT);
    let sign = if nusd < 0 && cents > 0 { "-" } else { "" };
    format!("{sign}${}.{:02}", count((cents / 100) as i64), cents % 100)
}

/// A count with thousands separators.
pub fn count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
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
    fn counts_have_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000), "1,000");
        assert_eq!(count(-1_234_567), "-1,234,567");
    }
}

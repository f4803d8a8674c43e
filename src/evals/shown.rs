//! How eval figures look to people: one formatting of each kind of value, with every
//! unknown value shown as "—" (HTML pages, the HTML report and the console alike).
//! JSON keeps `null` and CSV an empty field; they do not come through here.
//!
//! Invariant: one rounding rule on every surface, [`decimal`]: a value exactly half-way
//! rounds half away from zero (6.25 % is "6.3 %"), not to even as Rust's `{:.1}` does.

use super::leaderboard::Mean;

/// What an unknown value looks like on screen.
pub const UNKNOWN: &str = "—";

pub use crate::model::decimal::{Figure, decimal, rounded, signed};

/// `value` with `places` decimals, or "—".
pub fn fixed(value: &Option<f64>, places: usize) -> String {
    value.map_or_else(|| UNKNOWN.to_string(), |v| decimal(v, places))
}

/// A dollar amount with `places` decimals, or "—".
pub fn usd(value: &Option<f64>, places: usize) -> String {
    value.map_or_else(|| UNKNOWN.to_string(), |v| format!("${}", decimal(v, places)))
}

/// A rate in 0..=1 as a percentage with one decimal, or "—".
pub fn percent(rate: &Option<f64>) -> String {
    rate.map_or_else(|| UNKNOWN.to_string(), |r| format!("{}%", decimal(r * 100.0, 1)))
}

/// A whole number, or "—".
pub fn whole(value: &Option<i64>) -> String {
    value.map_or_else(|| UNKNOWN.to_string(), |n| n.to_string())
}

/// Milliseconds as seconds with one decimal, or "—".
pub fn seconds(ms: &Option<i64>) -> String {
    ms.map_or_else(|| UNKNOWN.to_string(), |ms| decimal(ms as f64 / 1000.0, 1))
}

/// A harness's timestamp (RFC 3339 with any fraction and offset, or a naive UTC date
/// and time) as every instant reads on a page, `2026-11-26 08:01:26 UTC`; as stored
/// when it reads as neither, "—" when there is none.
pub fn instant(value: &Option<String>) -> String {
    let Some(text) = value.as_deref().map(str::trim).filter(|text| !text.is_empty()) else {
        return UNKNOWN.to_string();
    };
    let parsed = crate::model::parse_rfc3339_ms(text).or_else(|| {
        ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"]
            .iter()
            .find_map(|format| chrono::NaiveDateTime::parse_from_str(text, format).ok())
            .map(|at| at.and_utc().timestamp_millis())
    });
    parsed.map_or_else(|| text.to_string(), crate::model::instants::exact_utc)
}

/// Text as stored, or "—" when there is none (or it is empty).
pub fn text(value: &Option<String>) -> &str {
    value.as_deref().filter(|text| !text.is_empty()).unwrap_or(UNKNOWN)
}

/// A mean as shown in a leaderboard row of `row_cells` cells: the figure, and when it
/// was taken over fewer cells than the row has, over how many.
pub fn mean(mean: &Mean, row_cells: &i64, format: fn(&Option<f64>) -> String) -> String {
    let row_cells = *row_cells;
    let figure = format(&mean.value);
    if mean.cells == row_cells || mean.value.is_none() {
        figure
    } else {
        format!("{figure} (over {} of {row_cells})", mean.cells)
    }
}

/// The leaderboard's four means, formatted as its tables show them.
pub fn tokens(value: &Option<f64>) -> String {
    fixed(value, 0)
}
pub fn cost(value: &Option<f64>) -> String {
    usd(value, 4)
}
pub fn tenths(value: &Option<f64>) -> String {
    fixed(value, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_harness_instant_reads_as_every_instant_does() {
        let at = |text: &str| instant(&Some(text.to_string()));
        assert_eq!(at("2026-11-26T08:01:26.185123+00:00"), "2026-11-26 08:01:26 UTC");
        assert_eq!(at("2026-11-26T10:01:26+02:00"), "2026-11-26 08:01:26 UTC");
        assert_eq!(at("2026-11-26 08:01:26.5"), "2026-11-26 08:01:26 UTC");
        assert_eq!(at("yesterday"), "yesterday");
        assert_eq!(instant(&None), UNKNOWN);
    }

    #[test]
    fn half_way_rounds_away_from_zero_on_every_surface() {
        assert_eq!(format!("{:.1}", 6.25), "6.2", "Rust's own formatting rounds half to even");
        assert_eq!(decimal(6.25, 1), "6.3");
        assert_eq!(decimal(-6.25, 1), "-6.3");
        assert_eq!(decimal(0.125, 2), "0.13");
        assert_eq!(decimal(2.5, 0), "3");
        assert_eq!(decimal(-0.04, 1), "0.0", "never -0.0");
        assert_eq!(percent(&Some(1.0 / 16.0)), "6.3%");
        assert_eq!(rounded(6.25, 1), 6.3);
        assert_eq!((signed(0.25, 1), signed(-0.25, 1), signed(0.0, 1)), ("+0.3".into(), "-0.3".into(), "+0.0".into()));
    }

    #[test]
    fn unknown_values_are_a_dash_and_partial_means_say_over_how_many_cells() {
        assert_eq!(fixed(&None, 2), "—");
        assert_eq!(usd(&Some(1.5), 2), "$1.50");
        assert_eq!(seconds(&Some(1250)), "1.3", "half-way: away from zero");
        assert_eq!(mean(&Mean { value: Some(3.0), cells: 2 }, &5, tenths), "3.0 (over 2 of 5)");
        assert_eq!(mean(&Mean { value: Some(3.0), cells: 5 }, &5, tenths), "3.0");
        assert_eq!(mean(&Mean { value: None, cells: 0 }, &5, tenths), "—");
    }
}

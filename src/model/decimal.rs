//! The one rounding rule of every figure a person reads, on every surface (pages, the
//! eval console, HTML, JSON and CSV reports, chart labels): a value exactly half-way
//! rounds half away from zero (6.25 is "6.3"), where Rust's own `{:.1}` rounds to even.

/// A number as templates hold it: the value, or a reference (to a reference…) to it.
pub trait Figure {
    fn figure(&self) -> f64;
}

impl Figure for f64 {
    fn figure(&self) -> f64 {
        *self
    }
}

impl<T: Figure + ?Sized> Figure for &T {
    fn figure(&self) -> f64 {
        (**self).figure()
    }
}

/// `value` with `places` decimals, half-way rounded away from zero (never "-0.0").
pub fn decimal(value: impl Figure, places: usize) -> String {
    let value = value.figure();
    let factor = 10f64.powi(places as i32);
    let rounded = (value * factor).round() / factor;
    let text = format!("{rounded:.places$}");
    if text.starts_with('-') && text.bytes().all(|b| matches!(b, b'-' | b'0' | b'.')) {
        text[1..].to_string()
    } else {
        text
    }
}

/// [`decimal`] with its sign always shown ("+1.5", "-0.3", "+0.0").
pub fn signed(value: impl Figure, places: usize) -> String {
    let text = decimal(value, places);
    if text.starts_with('-') { text } else { format!("+{text}") }
}

/// [`decimal`] of a number as the JSON reports carry it.
pub fn rounded(value: f64, places: usize) -> f64 {
    decimal(value, places).parse().unwrap_or(value)
}

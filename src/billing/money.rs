//! Amounts as the vendors write them, to nano-dollars exactly: Anthropic gives cents as
//! a decimal string (`"123.45"` is $1.2345), OpenAI dollars as a JSON number (`0.06`).
//! Parsed from the decimal text, never through a float, so a hand-worked fixture and
//! the stored figure agree to the nano-dollar.

pub use crate::model::NUSD_PER_USD;

/// Nano-dollars in one cent.
pub const NUSD_PER_CENT: i64 = NUSD_PER_USD / 100;

/// No single line of a bill is above this ($100 million): larger is a broken answer, and
/// sums of many lines stay far inside an `i64`.
pub const MAX_LINE_NUSD: i64 = 100_000_000 * NUSD_PER_USD;

/// `text` (a decimal such as `"-12.5"`, `"0.06"` or `"1e-7"`) times `unit_nusd`,
/// rounded half away from zero to a whole nano-dollar; `None` for anything that is not
/// a finite decimal or is beyond [`MAX_LINE_NUSD`] either way.
pub fn decimal_to_nusd(text: &str, unit_nusd: i64) -> Option<i64> {
    let text = text.trim();
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exponent) = match body.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit())
        || whole.len() + fraction.len() > 30
    {
        return None;
    }
    // digits × 10^(exponent - fraction.len()) × unit
    let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
    let mut scale = exponent - fraction.len() as i32;
    let mut value = digits.checked_mul(i128::from(unit_nusd))?;
    while scale > 0 {
        value = value.checked_mul(10)?;
        scale -= 1;
    }
    if scale < 0 {
        // Beyond 10^38 the value rounds to nothing.
        let Some(divisor) = 10i128.checked_pow(scale.unsigned_abs()) else { return Some(0) };
        value = (value + divisor / 2) / divisor;
    }
    let value = i64::try_from(value).ok().filter(|v| *v <= MAX_LINE_NUSD)?;
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cents_and_dollars_convert_exactly() {
        assert_eq!(decimal_to_nusd("123.45", NUSD_PER_CENT), Some(1_234_500_000), "$1.2345");
        assert_eq!(decimal_to_nusd("0.00000001", NUSD_PER_CENT), Some(0), "rounds below a nano-dollar");
        assert_eq!(decimal_to_nusd("0.00000005", NUSD_PER_CENT), Some(1), "half rounds up");
        assert_eq!(decimal_to_nusd("0.06", NUSD_PER_USD), Some(60_000_000));
        assert_eq!(decimal_to_nusd("1e-7", NUSD_PER_USD), Some(100));
        assert_eq!(decimal_to_nusd("2.5E2", NUSD_PER_USD), Some(250 * NUSD_PER_USD));
        assert_eq!(decimal_to_nusd("-1.5", NUSD_PER_USD), Some(-1_500_000_000), "a credit");
        assert_eq!(decimal_to_nusd("7", NUSD_PER_CENT), Some(70_000_000));
        assert_eq!(decimal_to_nusd("1e-35", NUSD_PER_USD), Some(0), "vanishingly small is nothing");
        assert_eq!(decimal_to_nusd("100000000", NUSD_PER_USD), Some(MAX_LINE_NUSD));
        assert_eq!(decimal_to_nusd("-100000000.01", NUSD_PER_USD), None, "beyond $100 million a line");
        for bad in ["", ".", "1.2.3", "12a", "NaN", "inf", "1e400", "1e9", "99999999999999999999999999999"] {
            assert_eq!(decimal_to_nusd(bad, NUSD_PER_USD), None, "{bad}");
        }
    }
}

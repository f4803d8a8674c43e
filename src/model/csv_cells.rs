//! Cells of every CSV the product writes (pages, exports, eval reports), made safe to
//! open in a spreadsheet. Text a developer controls (a git remote, a branch, a session
//! id, a model name) reaches other people's downloads, and a spreadsheet runs a cell
//! that begins with `=`, `+`, `-` or `@` (or a tab or carriage return before one) as a
//! formula: `=HYPERLINK(...)` in a branch name becomes a link in the reader's sheet.
//!
//! Invariant: a cell that begins with one of those characters is written with a leading
//! apostrophe (OWASP's "CSV injection" advice; spreadsheets show the text as typed and
//! hide the apostrophe), unless the whole cell is a plain number (`-3.5`, `+2`, `1e-3`),
//! which stays a number. Every CSV record goes through [`record`].

use std::borrow::Cow;

/// Whether `text` is a plain decimal number, optionally signed, with an optional
/// exponent: what a spreadsheet reads as a number, never as a formula.
fn is_plain_number(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let digits_and_one_point = |part: &str| {
        part.bytes().filter(|b| *b == b'.').count() <= 1
            && part.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && part.bytes().any(|b| b.is_ascii_digit())
    };
    let exponent_ok = exponent.is_none_or(|exponent| {
        let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        !exponent.is_empty() && exponent.bytes().all(|b| b.is_ascii_digit())
    });
    digits_and_one_point(mantissa) && exponent_ok
}

/// One cell, neutralised when a spreadsheet would run it as a formula.
pub fn cell(text: &str) -> Cow<'_, str> {
    let starts_a_formula = text.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if starts_a_formula && !is_plain_number(text) { Cow::Owned(format!("'{text}")) } else { Cow::Borrowed(text) }
}

/// A record's cells, each through [`cell`]: what every CSV writer of the product writes.
pub fn record<I>(fields: I) -> Vec<String>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    fields.into_iter().map(|field| cell(field.as_ref()).into_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formulas_are_neutralised_and_numbers_are_not() {
        for formula in
            ["=HYPERLINK(\"http://x\",\"y\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "-", "+"]
        {
            assert_eq!(cell(formula), format!("'{formula}"), "{formula:?}");
        }
        for number in ["-3.5", "+2", "1e-3", "-0.25E+2", "12", "-.5"] {
            assert_eq!(cell(number), number, "{number:?}");
        }
        for text in ["main", "fix-tests", "claude-sonnet-4-5", "", "a=b"] {
            assert_eq!(cell(text), text);
        }
        assert_eq!(record(["=1", "ok"]), ["'=1", "ok"]);
    }

    proptest! {
        /// Whatever the text, the written cell never begins a formula unless it is a
        /// number, and removing the added apostrophe gives the text back.
        #[test]
        fn no_cell_begins_a_formula(text in "[=+\\-@\t\r]?[ -~]{0,12}") {
            let written = cell(&text);
            let first = written.chars().next();
            let runs = matches!(first, Some('=' | '+' | '-' | '@' | '\t' | '\r'));
            prop_assert!(!runs || written.parse::<f64>().is_ok(), "{text:?} -> {written:?}");
            let back = if written != text { written.strip_prefix('\'').unwrap().to_string() } else { written.into_owned() };
            prop_assert_eq!(back, text);
        }
    }
}

//! Parsing and checking of one price-table file: model entries, long-context
//! tiers, decimal prices converted exactly to integer pico-dollars per token.
//! Every error names the field that is wrong.

use serde_json::{Map, Value};

use super::*;

/// Parses one model entry; returns it with its (not yet compiled) `match` pattern.
pub(super) fn parse_model(raw: &Value, index: usize) -> Result<(ModelPrice, String), ModelError> {
    let position = format!("models[{index}]");
    let Some(map) = raw.as_object() else {
        return Err((position, "(entry)".into(), "must be a JSON object".into()));
    };
    // Name the model by its id as soon as there is a usable one.
    let label = match map.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => position,
    };
    let err = |field: &str, problem: String| (label.clone(), field.to_owned(), problem);
    check_fields(map, &["id", "vendor", "match", "notes", "prices", "long_context"], &["notes", "long_context"])
        .map_err(|(field, problem)| err(&field, problem))?;

    let text = |field: &str| map[field].as_str().ok_or_else(|| err(field, "must be a string".into()));
    let id = text("id")?;
    if !is_model_id(id) {
        return Err(err(
            "id",
            format!("{id:?} must be lowercase letters, digits, '.', '-' or '_', starting with a letter or digit"),
        ));
    }
    let vendor = text("vendor")?;
    if vendor.is_empty() || !vendor.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        return Err(err("vendor", format!("{vendor:?} must be lowercase letters, digits or '-'")));
    }
    if map.contains_key("notes") {
        text("notes")?;
    }
    let pattern = text("match")?;
    let prices = parse_prices(&map["prices"], "prices").map_err(|(field, problem)| err(&field, problem))?;
    let long_context = match map.get("long_context") {
        None => None,
        Some(tier) => Some(parse_long_context(tier).map_err(|(field, problem)| err(&field, problem))?),
    };
    Ok((ModelPrice { id: id.to_owned(), vendor: vendor.to_owned(), prices, long_context }, pattern.to_owned()))
}

pub(super) fn parse_long_context(raw: &Value) -> Result<LongContext, (String, String)> {
    let map = raw.as_object().ok_or_else(|| ("long_context".to_owned(), "must be a JSON object".to_owned()))?;
    check_fields(map, &["above_prompt_tokens", "prices"], &[])
        .map_err(|(field, problem)| (format!("long_context.{field}"), problem))?;
    let above_prompt_tokens = match map["above_prompt_tokens"].as_i64() {
        Some(n) if n > 0 => n,
        _ => {
            return Err((
                "long_context.above_prompt_tokens".into(),
                format!("{} must be a positive integer", map["above_prompt_tokens"]),
            ));
        }
    };
    let prices = parse_prices(&map["prices"], "long_context.prices")?;
    Ok(LongContext { above_prompt_tokens, prices })
}

/// Parses the six prices of `raw`; errors carry the field path under `path`.
pub(super) fn parse_prices(raw: &Value, path: &str) -> Result<Prices, (String, String)> {
    let map = raw.as_object().ok_or_else(|| (path.to_owned(), "must be a JSON object of the six prices".to_owned()))?;
    check_fields(map, &KINDS, &[]).map_err(|(kind, problem)| (format!("{path}.{kind}"), problem))?;
    let mut prices = Prices::default();
    for kind in KINDS {
        let field = format!("{path}.{kind}");
        let text = map[kind].as_str().ok_or_else(|| {
            (field.clone(), format!("{} must be a string of dollars per million tokens, e.g. \"3.75\"", map[kind]))
        })?;
        prices.set(kind, parse_usd_per_mtok(text).map_err(|problem| (field, problem))?);
    }
    Ok(prices)
}

/// Converts a decimal string of $/MTok exactly to pico-dollars per token.
pub(super) fn parse_usd_per_mtok(text: &str) -> Result<i64, String> {
    if text.starts_with('-') {
        return Err(format!("{text:?} is negative"));
    }
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits_only(whole) || !digits_only(fraction) || (text.contains('.') && fraction.is_empty())
    {
        return Err(format!("{text:?} is not a decimal number of dollars per million tokens, e.g. \"3.75\""));
    }
    let fraction = fraction.trim_end_matches('0');
    if fraction.len() > MAX_DECIMALS {
        return Err(format!(
            "{text:?} has more than {MAX_DECIMALS} decimal places, which pico-dollars per token cannot represent exactly"
        ));
    }
    let too_large = || format!("{text:?} is above the limit of {MAX_USD_PER_MTOK} dollars per million tokens");
    let whole = whole.trim_start_matches('0');
    if whole.len() > 7 {
        return Err(too_large());
    }
    // At most 7 digits before the point and 6 after: both fit an i64 with room to spare.
    let whole: i64 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| too_large())? };
    // The fraction as millionths: ".3" → 300000 pico-dollars per token ($0.3/MTok).
    let millionths = fraction
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(MAX_DECIMALS)
        .fold(0, |n, digit| n * 10 + i64::from(digit - b'0'));
    let pico = whole * PICO_PER_USD_PER_MTOK + millionths;
    if pico > MAX_USD_PER_MTOK * PICO_PER_USD_PER_MTOK {
        return Err(too_large());
    }
    Ok(pico)
}

/// Checks that `map` has exactly the fields `allowed`, all present except `optional`.
/// On error returns (field, problem).
pub(super) fn check_fields(
    map: &Map<String, Value>,
    allowed: &[&str],
    optional: &[&str],
) -> Result<(), (String, String)> {
    if let Some(unknown) = map.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err((unknown.clone(), format!("unknown field; expected one of {}", allowed.join(", "))));
    }
    if let Some(missing) = allowed.iter().find(|field| !optional.contains(field) && !map.contains_key(**field)) {
        return Err(((*missing).to_owned(), "missing".into()));
    }
    Ok(())
}

pub(super) fn is_model_id(id: &str) -> bool {
    let mut bytes = id.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_lowercase() || b.is_ascii_digit())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'_'))
}

/// `YYYY-MM-DD` with a month 01–12 and a day 01–31.
pub(super) fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !digits(0..4) || !digits(5..7) || !digits(8..10) {
        return false;
    }
    let month = (b[5] - b'0') * 10 + (b[6] - b'0');
    let day = (b[8] - b'0') * 10 + (b[9] - b'0');
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

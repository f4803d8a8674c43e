//! Parsing and checking of one price-table file: the table's own fields, its model
//! entries and their compiled patterns (each id priced by its own entry), long-context
//! tiers, decimal prices converted exactly to integer pico-dollars per token. Every
//! error names the field that is wrong.

use std::collections::HashMap;
use std::sync::RwLock;

use regex::{RegexBuilder, RegexSetBuilder};
use serde_json::{Map, Value};

use super::*;

impl PriceTable {
    /// [`parse`](Self::parse), reusing a `RegexSet` already compiled from the same
    /// patterns (a clone shares the compiled program).
    /// `file` names the table in errors.
    pub(super) fn parse_sharing(
        agent: AgentType,
        json: &str,
        file: String,
        compiled: &mut Vec<(Vec<String>, RegexSet)>,
    ) -> Result<PriceTable, PricingError> {
        let root: Value =
            serde_json::from_str(json).map_err(|source| PricingError::Json { file: file.clone(), source })?;
        let table_err =
            |field: &str, problem: String| PricingError::Table { file: file.clone(), field: field.to_owned(), problem };
        let root = root.as_object().ok_or_else(|| table_err("(root)", "must be a JSON object".into()))?;
        check_fields(
            root,
            &["format", "agent", "revision", "currency", "unit", "sources", "notes", "models"],
            &["notes"],
        )
        .map_err(|(field, problem)| table_err(&field, problem))?;

        let text = |field: &str| -> Result<&str, PricingError> {
            root[field].as_str().ok_or_else(|| table_err(field, "must be a string".into()))
        };
        let expect = |field: &str, wanted: &str| -> Result<(), PricingError> {
            let got = text(field)?;
            if got == wanted { Ok(()) } else { Err(table_err(field, format!("is {got:?}, must be {wanted:?}"))) }
        };
        expect("format", FORMAT_V1)?;
        expect("agent", agent.as_str())?;
        expect("currency", "USD")?;
        expect("unit", "per_million_tokens")?;
        let revision = text("revision")?;
        if !is_date(revision) {
            return Err(table_err("revision", format!("{revision:?} is not a date YYYY-MM-DD")));
        }
        if root.contains_key("notes") {
            text("notes")?;
        }
        let sources =
            root["sources"].as_array().ok_or_else(|| table_err("sources", "must be an array of URLs".into()))?;
        if sources.is_empty() {
            return Err(table_err("sources", "must name at least one source".into()));
        }
        for (i, source) in sources.iter().enumerate() {
            match source.as_str() {
                Some(url) if url.starts_with("https://") && !url.contains(char::is_whitespace) => {}
                _ => {
                    return Err(table_err(&format!("sources[{i}]"), "must be an https:// URL".into()));
                }
            }
        }
        let raw_models = root["models"].as_array().ok_or_else(|| table_err("models", "must be an array".into()))?;
        if raw_models.is_empty() {
            return Err(table_err("models", "must list at least one model".into()));
        }

        let mut models = Vec::with_capacity(raw_models.len());
        let mut patterns = Vec::with_capacity(raw_models.len());
        for (i, raw) in raw_models.iter().enumerate() {
            let (model, pattern) = parse_model(raw, i).map_err(|(label, field, problem)| PricingError::Model {
                file: file.clone(),
                model: label,
                field,
                problem,
            })?;
            if let Some(first) = models.iter().position(|m: &ModelPrice| m.id == model.id) {
                return Err(PricingError::Model {
                    file: file.clone(),
                    model: model.id,
                    field: "id".into(),
                    problem: format!("duplicate id (also models[{first}])"),
                });
            }
            models.push(model);
            patterns.push(pattern);
        }

        let model_err = |i: usize, field: &str, problem: String| PricingError::Model {
            file: file.clone(),
            model: models[i].id.clone(),
            field: field.to_owned(),
            problem,
        };
        let set = match compiled.iter().find(|(known, _)| *known == patterns) {
            Some((_, set)) => set.clone(),
            None => match RegexSetBuilder::new(&patterns).case_insensitive(true).build() {
                Ok(set) => {
                    compiled.push((patterns.clone(), set.clone()));
                    set
                }
                Err(set_error) => {
                    // Name the pattern at fault; if each compiles alone, the set is too big.
                    for (i, pattern) in patterns.iter().enumerate() {
                        if let Err(e) = RegexBuilder::new(pattern).case_insensitive(true).build() {
                            return Err(model_err(i, "match", format!("invalid regex: {e}")));
                        }
                    }
                    return Err(table_err("models", format!("the patterns together do not compile: {set_error}")));
                }
            },
        };
        if let Some(i) = first_match(&set, "") {
            return Err(model_err(i, "match", "matches the empty string, so it would price every model name".into()));
        }
        // Each id is a real model name; it must be priced by its own entry, which
        // catches an entry shadowed by a more general one listed before it.
        for (i, model) in models.iter().enumerate() {
            match first_match(&set, &model.id) {
                Some(j) if j == i => {}
                Some(j) => {
                    let problem = format!(
                        "the id is matched first by model `{}` (models[{j}]); list the more specific model first",
                        models[j].id
                    );
                    return Err(model_err(i, "match", problem));
                }
                None => {
                    return Err(model_err(i, "match", "does not match the model's own id".into()));
                }
            }
        }

        let digest = ring::digest::digest(&ring::digest::SHA256, json.as_bytes());
        Ok(PriceTable {
            agent,
            revision: revision.to_owned(),
            models,
            patterns: set,
            memo: RwLock::new(HashMap::new()),
            json: json.to_owned(),
            etag: format!("\"{}\"", hex::encode(digest.as_ref())),
            source: None,
        })
    }
}

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

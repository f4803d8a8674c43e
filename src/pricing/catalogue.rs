//! A vendor price catalogue made into our tables: LiteLLM's maintained
//! `model_prices_and_context_window.json` (shipped in the `litellm` Python package as
//! `litellm/model_prices_and_context_window_backup.json`) read into a new revision of each
//! agent's table, for `sightline prices import --litellm` and `/admin/price-tables`.
//!
//! The catalogue prices a model per token, as a JSON number, under a key that names its
//! provider (`claude-opus-5-5` is Anthropic's API, `gemini/gemini-3.8-flash` Google AI
//! Studio's, `vertex_ai/…`, `azure/…`, `us.anthropic.…` the clouds' resales). A table's
//! vendor reads the prices of the provider that bills it directly ([`VENDORS`]); the
//! clouds' prefixed names are matched by each entry's pattern, which accepts provider
//! prefixes, dated snapshots and `-latest`, and is written into the table (the family
//! rules live in the table, not in code).
//!
//! What an import does to a table, whose other fields it keeps:
//! - a model the table has and the catalogue prices gets the catalogue's six prices (a
//!   missing cache or reasoning price is the input's or the output's, as LiteLLM itself
//!   reads one; a 1-hour cache write without its own price is the 5-minute one) and its
//!   long-context tier;
//! - a chat model of a vendor the table bills that no entry matches is added, with the
//!   vendor's pattern; a dated snapshot, an alias or a deprecated model is not;
//! - nothing is removed: a model the catalogue dropped keeps its price, so stored
//!   events can still be priced again.
//!
//! Invariants: a price is converted from the number's shortest decimal text, never by
//! float arithmetic, and rounded half up to the table's six decimals of $/MTok; the
//! result is validated as any operator table before it is shown or written.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::{Map, Value, json};

/// A vendor of our tables, the LiteLLM provider that bills it directly, the prefix of
/// that provider's keys, and the pattern an added model of it is matched by (`{id}` is
/// the escaped id): the same shapes as the embedded tables' own entries.
struct Vendor {
    vendor: &'static str,
    provider: &'static str,
    key_prefix: &'static str,
    /// How the vendor's coding models are named: an id starts with one of these (the
    /// catalogue also lists a vendor's music, robotics or open-weight models).
    families: &'static [&'static str],
    pattern: &'static str,
}

const VENDORS: [Vendor; 3] = [
    Vendor {
        vendor: "anthropic",
        provider: "anthropic",
        key_prefix: "",
        families: &["claude-"],
        pattern: r"(?:^|[/.:]){id}(?:$|[-@:_](?:\d{4,}|[a-z])|\[)",
    },
    Vendor {
        vendor: "openai",
        provider: "openai",
        key_prefix: "",
        families: &["gpt-", "codex-", "o1", "o3", "o4"],
        pattern: r"(?:^|[/.:]){id}(?:[-_@:](?:\d{4}-\d{2}-\d{2}|\d{8}|latest|minimal|low|medium|high|xhigh|fast))*$",
    },
    Vendor {
        vendor: "google",
        provider: "gemini",
        key_prefix: "gemini/",
        families: &["gemini-"],
        pattern: r"(?:^|[/.:]){id}(?:[-_@:](?:preview|exp|latest|\d+))*$",
    },
];

/// Where the catalogue is kept, named in each imported table's sources.
const SOURCE: &str = "https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json";
const IMPORT_NOTE: &str = "Prices imported from LiteLLM's catalogue";

/// Words in a model id that mark a model no coding agent prices by the token (speech,
/// images, embeddings, search or computer use have their own units).
const NOT_CHAT: [&str; 10] =
    ["realtime", "audio", "tts", "transcribe", "image", "embedding", "search", "computer-use", "moderation", "ft:"];

/// Why a catalogue cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error("the catalogue is not JSON: {0}")]
    NotJson(String),
    #[error("the catalogue is not a LiteLLM price file: {0}")]
    NotLiteLlm(String),
}

/// One model's prices in the catalogue, in $/MTok decimal text, in our six kinds.
#[derive(Debug, Clone, PartialEq)]
struct CataloguePrices {
    prices: [String; 6],
    long_context: Option<(i64, [String; 6])>,
}

/// A read catalogue: every directly billed chat model, by vendor and id.
pub struct Catalogue {
    models: BTreeMap<(&'static str, String), (CataloguePrices, bool)>,
    /// The catalogue file's SHA-256 (hex), named in each table's sources.
    pub sha256: String,
}

impl Catalogue {
    /// Reads LiteLLM's file. An entry that cannot be priced (no input or output price, a
    /// price that is not a non-negative number) is left out, never guessed.
    pub fn litellm(bytes: &[u8], today: &str) -> Result<Catalogue, CatalogueError> {
        let value: Value = serde_json::from_slice(bytes).map_err(|err| CatalogueError::NotJson(err.to_string()))?;
        let entries =
            value.as_object().ok_or_else(|| CatalogueError::NotLiteLlm("the top level is not an object".into()))?;
        if !entries.contains_key("sample_spec") {
            return Err(CatalogueError::NotLiteLlm("it has no sample_spec entry".into()));
        }
        let mut models = BTreeMap::new();
        for (key, entry) in entries {
            let Some(entry) = entry.as_object() else { continue };
            let Some(vendor) = VENDORS.iter().find(|vendor| {
                entry.get("litellm_provider").and_then(Value::as_str) == Some(vendor.provider)
                    && key.starts_with(vendor.key_prefix)
            }) else {
                continue;
            };
            let id = &key[vendor.key_prefix.len()..];
            let chat = matches!(entry.get("mode").and_then(Value::as_str), Some("chat" | "responses"));
            let usable_id = !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(&b))
                && !NOT_CHAT.iter().any(|word| id.contains(word));
            if !chat || !usable_id {
                continue;
            }
            let Some(prices) = prices_of(entry) else { continue };
            let deprecated = entry
                .get("deprecation_date")
                .and_then(Value::as_str)
                .is_some_and(|date| date.len() == 10 && date < today);
            let in_family = vendor.families.iter().any(|family| id.starts_with(family));
            let alias = entry.get("alias_of").is_some() || id.ends_with("-latest");
            let addable = in_family && !deprecated && !alias && !is_dated_snapshot(id);
            models.insert((vendor.vendor, id.to_string()), (prices, addable));
        }
        if models.is_empty() {
            return Err(CatalogueError::NotLiteLlm("it prices no Anthropic, OpenAI or Google chat model".into()));
        }
        Ok(Catalogue { models, sha256: crate::model::sha256_hex(bytes) })
    }

    /// Models read, for the summary line.
    pub fn len(&self) -> usize {
        self.models.len()
    }

    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// `table_json` (an agent's table in force) as the catalogue prices it, revision
    /// `today`; `None` when the catalogue changes nothing in it.
    pub fn apply(&self, table_json: &str, today: &str) -> Result<Option<String>, String> {
        let mut table: Value = serde_json::from_str(table_json).map_err(|err| err.to_string())?;
        let models = table.get_mut("models").and_then(Value::as_array_mut).ok_or("the table has no models")?;
        let mut changed = false;
        let mut patterns: Vec<Regex> = Vec::new();
        let mut vendors: Vec<String> = Vec::new();
        for model in models.iter_mut() {
            let (Some(id), Some(vendor)) = (
                model.get("id").and_then(Value::as_str).map(str::to_string),
                model.get("vendor").and_then(Value::as_str).map(str::to_string),
            ) else {
                continue;
            };
            if let Some(pattern) = model.get("match").and_then(Value::as_str)
                && let Ok(regex) = Regex::new(&format!("(?i){pattern}"))
            {
                patterns.push(regex);
            }
            if !vendors.contains(&vendor) {
                vendors.push(vendor.clone());
            }
            let Some(vendor) = VENDORS.iter().find(|known| known.vendor == vendor) else { continue };
            if let Some((prices, _)) = self.models.get(&(vendor.vendor, id)) {
                changed |= set_prices(model, prices);
            }
        }
        // Shorter ids first, so a family's base is added before its variants, which its
        // pattern may already price.
        let mut candidates: Vec<(&Vendor, &String, &CataloguePrices)> = self
            .models
            .iter()
            .filter(|(_, (_, addable))| *addable)
            .filter_map(|((vendor, id), (prices, _))| {
                let vendor = VENDORS.iter().find(|known| known.vendor == *vendor)?;
                vendors.iter().any(|billed| billed == vendor.vendor).then_some((vendor, id, prices))
            })
            .collect();
        candidates.sort_by_key(|(_, id, _)| (id.len(), (*id).clone()));
        for (vendor, id, prices) in candidates {
            if patterns.iter().any(|pattern| pattern.is_match(id)) {
                continue;
            }
            let pattern = vendor.pattern.replace("{id}", &regex::escape(id));
            let regex = Regex::new(&format!("(?i){pattern}")).map_err(|err| format!("{id}: {err}"))?;
            let mut entry = json!({"id": id, "vendor": vendor.vendor, "match": pattern, "prices": {}});
            set_prices(&mut entry, prices);
            entry["notes"] = json!("Added from LiteLLM's price catalogue.");
            models.push(entry);
            patterns.push(regex);
            changed = true;
        }
        if !changed {
            return Ok(None);
        }
        table["revision"] = json!(today);
        if let Some(sources) = table.get_mut("sources").and_then(Value::as_array_mut)
            && !sources.iter().any(|known| known.as_str() == Some(SOURCE))
        {
            sources.push(json!(SOURCE));
        }
        // The table's notes say which catalogue file priced it (the last import's only).
        let notes = table.get("notes").and_then(Value::as_str).unwrap_or_default();
        let kept = notes.split(IMPORT_NOTE).next().unwrap_or_default().trim_end();
        let note = format!("{IMPORT_NOTE} (model_prices_and_context_window.json, sha256 {}) on {today}.", self.sha256);
        table["notes"] = json!(if kept.is_empty() { note } else { format!("{kept} {note}") });
        serde_json::to_string_pretty(&table).map(|text| text + "\n").map(Some).map_err(|err| err.to_string())
    }
}

/// One agent's table as a catalogue would make it: the new table's JSON, validated, and
/// what differs from the table on disk.
pub struct Planned {
    pub agent: crate::model::AgentType,
    pub json: String,
    pub table: super::PriceTable,
    pub changes: Vec<super::ModelDiff>,
}

impl Catalogue {
    /// Every table of `on_disk` the catalogue changes, as it would change it (revision
    /// `today`); the CLI's `prices import` and `/admin/price-tables` show and store these.
    pub fn plan(&self, on_disk: &super::PriceBook, today: &str) -> Result<Vec<Planned>, String> {
        let mut planned = Vec::new();
        for table in on_disk.tables() {
            let agent = table.agent();
            let Some(json) = self.apply(table.json(), today).map_err(|why| format!("{}: {why}", agent.as_str()))?
            else {
                continue;
            };
            let new = super::PriceTable::parse(agent, &json)
                .map_err(|err| format!("{}'s table from the catalogue does not validate: {err}", agent.as_str()))?;
            let changes = super::diff_tables(&new, table);
            planned.push(Planned { agent, json, table: new, changes });
        }
        Ok(planned)
    }
}

/// Whether `id` names a dated snapshot of a model (`claude-opus-4-5-20251101`,
/// `gpt-5-2025-08-07`): its base's pattern prices it.
fn is_dated_snapshot(id: &str) -> bool {
    // Compiled once: a catalogue has thousands of entries.
    static DATED: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"[-@_](?:\d{8}|\d{4}-\d{2}-\d{2}|\d{2}-\d{4}|\d{2}-\d{2})$").expect("a valid pattern")
    });
    DATED.is_match(id)
}

/// Writes `prices` into a table entry; whether anything changed.
fn set_prices(model: &mut Value, prices: &CataloguePrices) -> bool {
    let before = (model.get("prices").cloned(), model.get("long_context").cloned());
    let kinds = super::KINDS;
    let six = |values: &[String; 6]| -> Map<String, Value> {
        kinds.iter().zip(values).map(|(kind, value)| (kind.to_string(), json!(value))).collect()
    };
    let same_prices = before
        .0
        .as_ref()
        .is_some_and(|old| kinds.iter().zip(&prices.prices).all(|(kind, value)| same_amount(old.get(*kind), value)));
    if !same_prices {
        model["prices"] = Value::Object(six(&prices.prices));
    }
    let mut changed = !same_prices;
    if let Some((above, tier)) = &prices.long_context {
        let same_tier = before.1.as_ref().is_some_and(|old| {
            old.get("above_prompt_tokens").and_then(Value::as_i64) == Some(*above)
                && kinds.iter().zip(tier).all(|(kind, value)| same_amount(old["prices"].get(*kind), value))
        });
        if !same_tier {
            model["long_context"] = json!({"above_prompt_tokens": above, "prices": six(tier)});
            changed = true;
        }
    }
    changed
}

/// Whether a table's price text and the catalogue's are one amount (`"0.30"` is `"0.3"`).
fn same_amount(old: Option<&Value>, new: &str) -> bool {
    let normal = |text: &str| {
        let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { text };
        text.to_string()
    };
    old.and_then(Value::as_str).is_some_and(|old| normal(old) == normal(new))
}

/// The six prices of a catalogue entry, and its long-context tier.
fn prices_of(entry: &Map<String, Value>) -> Option<CataloguePrices> {
    let field = |name: &str| entry.get(name).and_then(usd_per_mtok);
    let input = field("input_cost_per_token")?;
    let output = field("output_cost_per_token")?;
    let cache_read = field("cache_read_input_token_cost").unwrap_or_else(|| input.clone());
    let cache_write_5m = field("cache_creation_input_token_cost").unwrap_or_else(|| input.clone());
    let cache_write_1h = field("cache_creation_input_token_cost_above_1hr").unwrap_or_else(|| cache_write_5m.clone());
    let reasoning = field("output_cost_per_reasoning_token").unwrap_or_else(|| output.clone());
    let prices = [input, output, cache_read, cache_write_5m, cache_write_1h, reasoning];
    // The tier LiteLLM names by its threshold (`…_above_200k_tokens`, `…_above_272k_tokens`).
    let long_context =
        [("200k", 200_000), ("272k", 272_000), ("128k", 128_000)].into_iter().find_map(|(label, above)| {
            let tier = |name: &str| entry.get(&format!("{name}_above_{label}_tokens")).and_then(usd_per_mtok);
            let input = tier("input_cost_per_token")?;
            let output = tier("output_cost_per_token").unwrap_or_else(|| prices[1].clone());
            let cache_read = tier("cache_read_input_token_cost").unwrap_or_else(|| prices[2].clone());
            let cache_write_5m = tier("cache_creation_input_token_cost").unwrap_or_else(|| prices[3].clone());
            let cache_write_1h = tier("cache_creation_input_token_cost_above_1hr").unwrap_or_else(|| prices[4].clone());
            let reasoning = tier("output_cost_per_reasoning_token").unwrap_or_else(|| output.clone());
            Some((above, [input, output, cache_read, cache_write_5m, cache_write_1h, reasoning]))
        });
    Some(CataloguePrices { prices, long_context })
}

/// A per-token price in US dollars as $/MTok decimal text: the number's shortest decimal
/// form shifted six places, rounded half up to six decimals; `None` for anything but a
/// finite non-negative number.
fn usd_per_mtok(value: &Value) -> Option<String> {
    let number = value.as_f64().filter(|number| number.is_finite() && *number >= 0.0)?;
    // `{:e}` is the shortest text that reads back as the same number: `3e-6`, `2.99999e-6`.
    let text = format!("{number:e}");
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    // The decimal point sits after `whole.len() + exponent + 6` digits of `digits`.
    let point = whole.len() as i32 + exponent + 6;
    let (integer, decimals) = if point <= 0 {
        ("0".to_string(), format!("{}{digits}", "0".repeat((-point) as usize)))
    } else if point as usize >= digits.len() {
        (format!("{digits}{}", "0".repeat(point as usize - digits.len())), String::new())
    } else {
        (digits[..point as usize].to_string(), digits[point as usize..].to_string())
    };
    // Round half up at six decimals, in integer micro-units of $/MTok.
    let kept: String = decimals.chars().chain(std::iter::repeat('0')).take(6).collect();
    let mut micros: u128 = format!("{integer}{kept}").parse().ok()?;
    if decimals.as_bytes().get(6).is_some_and(|digit| *digit >= b'5') {
        micros += 1;
    }
    let (units, rest) = (micros / 1_000_000, micros % 1_000_000);
    if rest == 0 {
        return Some(units.to_string());
    }
    Some(format!("{units}.{rest:06}").trim_end_matches('0').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_token_prices_become_exact_dollars_per_million() {
        for (per_token, expected) in [
            (json!(3e-6), "3"),
            (json!(1.5e-5), "15"),
            (json!(3e-7), "0.3"),
            (json!(1.25e-7), "0.125"),
            (json!(3.75e-8), "0.0375"),
            (json!(2.9999900000000002e-6), "2.99999"),
            (json!(0), "0"),
            (json!(1.2345675e-12), "0.000001"),
            (json!(0.000075), "75"),
        ] {
            assert_eq!(usd_per_mtok(&per_token).as_deref(), Some(expected), "{per_token}");
        }
        for bad in [json!(-1e-6), json!("3e-6"), json!(null)] {
            assert_eq!(usd_per_mtok(&bad), None, "{bad}");
        }
    }

    #[test]
    fn dated_snapshots_are_priced_by_their_base() {
        for id in ["claude-opus-4-5-20251101", "gpt-5-2025-08-07", "gemini-2.5-flash-preview-09-2025"] {
            assert!(is_dated_snapshot(id), "{id}");
        }
        for id in ["claude-opus-5-5", "gpt-6.1-sol", "gemini-3.8-flash"] {
            assert!(!is_dated_snapshot(id), "{id}");
        }
    }
}

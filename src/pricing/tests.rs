//! Unit tests of the price tables and of cost arithmetic. Expected costs are worked out
//! by hand from the vendors' published prices: $1/MTok = 10^6 pico-dollars per token,
//! and 1,000 pico-dollars = 1 nano-dollar.

use std::collections::HashSet;
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::parse::{is_date, parse_usd_per_mtok};
use super::tests_invalid::{assert_mentions, model_json, table_json};
use super::*;

/// The embedded tables, parsed once for all tests.
pub(super) fn book() -> &'static PriceBook {
    static BOOK: OnceLock<PriceBook> = OnceLock::new();
    BOOK.get_or_init(|| PriceBook::embedded().expect("embedded price tables parse"))
}

pub(super) fn usage(
    input: i64,
    output: i64,
    cache_read: i64,
    cache_write_5m: i64,
    cache_write_1h: i64,
    reasoning: i64,
) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        cache_write_5m_tokens: cache_write_5m,
        cache_write_1h_tokens: cache_write_1h,
        reasoning_tokens: reasoning,
    }
}

pub(super) fn raw(agent: AgentType) -> Value {
    serde_json::from_str(embedded_json(agent)).expect("embedded JSON")
}

pub(super) fn entry<'t>(table: &'t PriceTable, id: &str) -> &'t ModelPrice {
    table.models.iter().find(|model| model.id == id).unwrap_or_else(|| panic!("{id} in {}", file_name(table.agent)))
}

// ---- the embedded tables ----

#[test]
fn each_of_the_eleven_embedded_tables_parses_and_names_its_own_agent() {
    let book = book();
    assert_eq!(AgentType::ALL.len(), 11);
    for (i, &agent) in AgentType::ALL.iter().enumerate() {
        assert_eq!(agent as usize, i, "AgentType::ALL is in declaration order");
        let table = book.table(agent);
        assert_eq!(table.agent(), agent);
        assert_eq!(raw(agent)["agent"], agent.as_str(), "{}", file_name(agent));
        assert_eq!(table.json(), embedded_json(agent));
        assert!(is_date(table.revision()));
        // The embedded file is the one on disk under its own name.
        let path = format!("{}/assets/price-tables/{}", env!("CARGO_MANIFEST_DIR"), file_name(agent));
        assert_eq!(std::fs::read_to_string(&path).expect(&path), table.json());
    }
}

#[test]
fn every_model_id_is_unique_within_its_file() {
    for &agent in AgentType::ALL {
        let raw = raw(agent);
        let ids: Vec<&str> = raw["models"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
        let unique: HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "{}", file_name(agent));
    }
}

#[test]
fn each_agent_lists_the_vendors_it_can_use() {
    let vendors = |agent: AgentType| -> HashSet<String> {
        raw(agent)["models"].as_array().unwrap().iter().map(|m| m["vendor"].as_str().unwrap().to_owned()).collect()
    };
    let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<HashSet<_>>();
    assert_eq!(vendors(AgentType::ClaudeCode), set(&["anthropic"]));
    assert_eq!(vendors(AgentType::Codex), set(&["openai"]));
    assert_eq!(vendors(AgentType::GeminiCli), set(&["google"]));
    for agent in [
        AgentType::CopilotCli,
        AgentType::Droid,
        AgentType::Opencode,
        AgentType::Cline,
        AgentType::Cursor,
        AgentType::Aider,
        AgentType::Windsurf,
    ] {
        assert_eq!(vendors(agent), set(&["anthropic", "openai", "google"]), "{}", file_name(agent));
    }
    assert_eq!(vendors(AgentType::QwenCode), set(&["alibaba", "anthropic", "openai", "google"]));
    let notes = raw(AgentType::CopilotCli)["notes"].as_str().unwrap().to_owned();
    assert!(notes.contains("premium requests") && notes.contains("not the invoice"), "{notes}");
}

#[test]
fn a_model_is_priced_the_same_by_every_agent_that_lists_it() {
    let book = book();
    let by_id = |agent: AgentType| -> Vec<(String, ModelPrice)> {
        book.table(agent).models.iter().map(|m| (m.id.clone(), m.clone())).collect()
    };
    let reference: Vec<(String, ModelPrice)> =
        [AgentType::ClaudeCode, AgentType::Codex, AgentType::GeminiCli].into_iter().flat_map(by_id).collect();
    for &agent in &AgentType::ALL[3..] {
        // Qwen Code lists Alibaba's own models first, then the three vendors' as the others.
        let listed: Vec<_> = by_id(agent).into_iter().filter(|(_, model)| model.vendor != "alibaba").collect();
        assert_eq!(listed, reference, "{} must list the three vendors' models in order", file_name(agent));
    }
}

#[test]
fn schema_declares_draft_2020_12_and_the_fields_the_parser_takes() {
    let path = format!("{}/assets/price-table.schema.json", env!("CARGO_MANIFEST_DIR"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect("schema is JSON");
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(schema["properties"]["format"]["const"], FORMAT_V1);
    let keys = |v: &Value| -> HashSet<String> { v.as_object().unwrap().keys().cloned().collect() };
    let top: HashSet<String> =
        ["format", "agent", "revision", "currency", "unit", "sources", "notes", "models"].map(String::from).into();
    assert_eq!(keys(&schema["properties"]), top);
    assert_eq!(keys(&schema["$defs"]["prices"]["properties"]), KINDS.map(String::from).into());
    let agents: HashSet<String> = schema["properties"]["agent"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(agents, AgentType::ALL.iter().map(|a| a.as_str().to_owned()).collect());
}

// ---- arithmetic ----

#[test]
fn price_strings_convert_exactly_to_pico_dollars_per_token() {
    for (text, pico) in [
        ("3", 3_000_000),
        ("0.30", 300_000),
        ("18.75", 18_750_000),
        ("0.005", 5_000),
        ("0.275", 275_000),
        ("0.3125", 312_500),
        ("0.000001", 1),
        ("0.0000010", 1),
        ("0", 0),
        ("00.5", 500_000),
        ("1000000", 1_000_000_000_000),
    ] {
        assert_eq!(parse_usd_per_mtok(text), Ok(pico), "{text}");
    }
    for (text, problem) in [
        ("0.0000001", "decimal places"),
        ("-1", "negative"),
        ("-0.5", "negative"),
        ("1000000.000001", "above the limit"),
        ("99999999999999999999", "above the limit"),
        ("", "not a decimal"),
        (".5", "not a decimal"),
        ("5.", "not a decimal"),
        ("1e3", "not a decimal"),
        (" 3", "not a decimal"),
        ("+3", "not a decimal"),
        ("3,5", "not a decimal"),
        ("١", "not a decimal"),
    ] {
        let err = parse_usd_per_mtok(text).expect_err(text);
        assert!(err.contains(problem), "{text}: {err}");
    }
}

#[test]
fn cost_rounds_half_up_to_the_nano_dollar_once_per_event() {
    // $0.0005/MTok = 500 pUSD per token = 0.5 nUSD per token.
    let table = PriceTable::parse(AgentType::Aider, &table_json(&[model_json("m1", "^m1$", "0.0005")])).unwrap();
    let cost = |input| table.price(Some("m1"), &usage(input, 0, 0, 0, 0, 0)).cost_nusd;
    assert_eq!(cost(1), 1); // 0.5 → 1
    assert_eq!(cost(2), 1); // 1.0
    assert_eq!(cost(3), 2); // 1.5 → 2
    // Rounding happens once on the sum, not per kind: 1 input (500) + 1 output (500) = 1 nUSD.
    assert_eq!(table.price(Some("m1"), &usage(1, 1, 0, 0, 0, 0)).cost_nusd, 1);
    // $0.0004/MTok = 0.4 nUSD per token → 0.
    let table = PriceTable::parse(AgentType::Aider, &table_json(&[model_json("m1", "^m1$", "0.0004")])).unwrap();
    assert_eq!(table.price(Some("m1"), &usage(1, 0, 0, 0, 0, 0)).cost_nusd, 0);
}

#[test]
fn huge_counts_saturate_and_negative_counts_count_as_zero() {
    let book = book();
    let huge = usage(i64::MAX, i64::MAX, i64::MAX, i64::MAX, i64::MAX, i64::MAX);
    let priced = book.price(AgentType::ClaudeCode, Some("claude-sonnet-4-5"), &huge);
    assert_eq!((priced.cost_nusd, priced.long_context), (i64::MAX, true));
    // -5,000 input is ignored: only 1,000 output × $15 = 15,000,000,000 pUSD = 15,000,000 nUSD.
    let priced = book.price(AgentType::ClaudeCode, Some("claude-sonnet-4-5"), &usage(-5_000, 1_000, 0, 0, 0, 0));
    assert_eq!(priced.cost_nusd, 15_000_000);
}

// ---- ETag ----

#[test]
fn etag_is_a_stable_sha256_of_the_exact_json_and_changes_with_it() {
    let text = table_json(&[model_json("m1", "^m1", "1")]);
    let first = PriceTable::parse(AgentType::Aider, &text).unwrap();
    let again = PriceTable::parse(AgentType::Aider, &text).unwrap();
    assert_eq!(first.etag(), again.etag());
    assert_eq!(first.json(), text);
    let etag = first.etag();
    assert!(etag.len() == 66 && etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    assert!(etag[1..65].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{etag}");
    // Any change to the bytes, even whitespace, changes the ETag.
    let spaced = PriceTable::parse(AgentType::Aider, &format!("{text}\n")).unwrap();
    assert_ne!(spaced.etag(), etag);
    let revised = PriceTable::parse(AgentType::Aider, &text.replace("2026-11-01", "2026-11-02")).unwrap();
    assert_ne!(revised.etag(), etag);
    // Known vector: SHA-256 of the empty string.
    let digest = ring::digest::digest(&ring::digest::SHA256, b"");
    assert_eq!(hex::encode(digest.as_ref()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    // The embedded tables: stable across loads, distinct from each other.
    let (a, b) = (book(), PriceBook::embedded().unwrap());
    let etags: HashSet<&str> = AgentType::ALL.iter().map(|&agent| a.table(agent).etag()).collect();
    assert_eq!(etags.len(), AgentType::ALL.len());
    for &agent in AgentType::ALL {
        assert_eq!(a.table(agent).etag(), b.table(agent).etag());
    }
}

#[test]
fn opus_4_cannot_shadow_opus_4_5_and_a_shadowing_pattern_is_rejected() {
    // The `claude-opus-4` pattern does not accept a minor version, so even reordered it
    // cannot shadow 4.5 or 4.1; the own-id check would report it if it could.
    let mut doc = raw(AgentType::ClaudeCode);
    let models = doc["models"].as_array_mut().unwrap();
    let opus_4 = models.iter().position(|m| m["id"] == "claude-opus-4").unwrap();
    let moved = models.remove(opus_4);
    models.insert(0, moved);
    let table = PriceTable::parse(AgentType::ClaudeCode, &doc.to_string()).expect("order-independent patterns");
    assert_eq!(table.price(Some("claude-opus-4-5"), &Usage::default()).model_id, Some("claude-opus-4-5"));
    // A pattern that does accept any suffix is caught by the own-id check.
    doc["models"][0]["match"] = json!("claude-opus-4");
    let message = PriceTable::parse(AgentType::ClaudeCode, &doc.to_string()).unwrap_err().to_string();
    assert_mentions(&message, &["field `match`", "matched first by model `claude-opus-4`"]);
}

#[test]
fn the_name_memo_is_bounded_and_gives_the_same_answers() {
    let table = PriceTable::parse(AgentType::ClaudeCode, embedded_json(AgentType::ClaudeCode)).unwrap();
    let u = usage(1_000, 0, 0, 0, 0, 0);
    let first = table.price(Some("claude-sonnet-4-5"), &u);
    for i in 0..(MEMO_CAPACITY + 100) {
        assert_eq!(table.price(Some(&format!("made-up-model-{i}")), &u), Priced::UNKNOWN);
    }
    assert_eq!(table.memo.read().unwrap().len(), MEMO_CAPACITY);
    // Remembered and not-remembered names are priced alike.
    assert_eq!(table.price(Some("claude-sonnet-4-5"), &u), first);
    assert_eq!(table.price(Some("claude-sonnet-4-5-20250929"), &u), first);
    assert_eq!(table.price(Some(" claude-sonnet-4-5 "), &u), first);
    assert!(!table.memo.read().unwrap().contains_key("claude-sonnet-4-5-20250929"));
}

#[test]
fn the_book_can_be_shared_across_threads() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<PriceBook>();
    shareable::<PricingError>();
    let book = book();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                for _ in 0..1_000 {
                    let priced = book.price(AgentType::Droid, Some("gpt-5"), &usage(1_000, 0, 0, 0, 0, 0));
                    assert_eq!(priced.cost_nusd, 1_250_000); // 1,000 × $1.25/MTok
                }
            });
        }
    });
}

//! Price tables that must be refused, each with an error naming the model and field.

use super::*;
use serde_json::{Value, json};

pub(super) fn model_json(id: &str, pattern: &str, price: &str) -> Value {
    json!({
        "id": id, "vendor": "test", "match": pattern,
        "prices": {"input": price, "output": price, "cache_read": price,
                   "cache_write_5m": price, "cache_write_1h": price, "reasoning": price}
    })
}

pub(super) fn table_json(models: &[Value]) -> String {
    json!({
        "format": FORMAT_V1, "agent": "aider", "revision": "2026-11-01", "currency": "USD",
        "unit": "per_million_tokens", "sources": ["https://example.com/pricing"], "models": models
    })
    .to_string()
}

/// Parses a valid one-model table after `edit`, and returns the error message.
fn rejected(edit: impl FnOnce(&mut Value)) -> String {
    let mut doc: Value = serde_json::from_str(&table_json(&[model_json("m1", "^m1", "1")])).unwrap();
    edit(&mut doc);
    PriceTable::parse(AgentType::Aider, &doc.to_string()).expect_err("table must be rejected").to_string()
}

pub(super) fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{message:?} should mention {part:?}");
    }
}

#[test]
fn the_minimal_test_table_is_valid() {
    let table = PriceTable::parse(AgentType::Aider, &table_json(&[model_json("m1", "^m1", "1")])).unwrap();
    assert_eq!(table.model_ids().collect::<Vec<_>>(), ["m1"]);
    assert_eq!(table.revision(), "2026-11-01");
}

#[test]
fn a_bad_regex_is_rejected_naming_model_and_field() {
    let message = rejected(|doc| doc["models"][0]["match"] = json!("^m1-("));
    assert_mentions(&message, &["price-table.aider.v1.json", "model `m1`", "field `match`", "invalid regex"]);
    let message = rejected(|doc| doc["models"][0]["match"] = json!(".*"));
    assert_mentions(&message, &["model `m1`", "field `match`", "empty string"]);
    let message = rejected(|doc| doc["models"][0]["match"] = json!("^other"));
    assert_mentions(&message, &["model `m1`", "field `match`", "own id"]);
}

#[test]
fn a_price_with_too_many_decimals_is_rejected_naming_model_and_field() {
    let message = rejected(|doc| doc["models"][0]["prices"]["cache_read"] = json!("0.0000001"));
    assert_mentions(&message, &["model `m1`", "field `prices.cache_read`", "more than 6 decimal places"]);
}

#[test]
fn a_negative_price_is_rejected_naming_model_and_field() {
    let message = rejected(|doc| doc["models"][0]["prices"]["output"] = json!("-15"));
    assert_mentions(&message, &["model `m1`", "field `prices.output`", "negative"]);
}

#[test]
fn a_missing_price_kind_is_rejected_naming_model_and_field() {
    let message = rejected(|doc| {
        doc["models"][0]["prices"].as_object_mut().unwrap().remove("reasoning");
    });
    assert_mentions(&message, &["model `m1`", "field `prices.reasoning`", "missing"]);
    let message = rejected(|doc| {
        doc["models"][0]["long_context"] = json!({"above_prompt_tokens": 200000, "prices": {"input": "1"}});
    });
    assert_mentions(&message, &["model `m1`", "field `long_context.prices.output`", "missing"]);
}

#[test]
fn an_unknown_field_is_rejected_naming_it() {
    let message = rejected(|doc| doc["models"][0]["colour"] = json!("blue"));
    assert_mentions(&message, &["model `m1`", "field `colour`", "unknown field"]);
    let message = rejected(|doc| doc["models"][0]["prices"]["cache_write"] = json!("1"));
    assert_mentions(&message, &["model `m1`", "field `prices.cache_write`", "unknown field"]);
    let message = rejected(|doc| doc["currencies"] = json!(["USD"]));
    assert_mentions(&message, &["price-table.aider.v1.json", "field `currencies`", "unknown field"]);
}

#[test]
fn other_malformed_tables_are_rejected_with_a_reason() {
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(Edit, &[&str])> = vec![
        (Box::new(|d| d["models"][0]["prices"]["input"] = json!(3)), &["field `prices.input`", "must be a string"]),
        (Box::new(|d| d["agent"] = json!("codex")), &["field `agent`", "\"aider\""]),
        (Box::new(|d| d["format"] = json!("sightline.price-table.v2")), &["field `format`"]),
        (Box::new(|d| d["currency"] = json!("EUR")), &["field `currency`"]),
        (Box::new(|d| d["unit"] = json!("per_token")), &["field `unit`"]),
        (Box::new(|d| d["revision"] = json!("2026-13-01")), &["field `revision`", "YYYY-MM-DD"]),
        (Box::new(|d| d["sources"] = json!([])), &["field `sources`"]),
        (Box::new(|d| d["sources"] = json!(["http://x"])), &["field `sources[0]`", "https://"]),
        (Box::new(|d| d["models"] = json!([])), &["field `models`"]),
        (
            Box::new(|d| {
                d.as_object_mut().unwrap().remove("revision");
            }),
            &["field `revision`", "missing"],
        ),
        (Box::new(|d| d["models"][0]["id"] = json!("M 1")), &["field `id`", "lowercase"]),
        (Box::new(|d| d["models"][0]["vendor"] = json!("")), &["model `m1`", "field `vendor`"]),
        (
            Box::new(|d| d["models"][0]["long_context"] = json!({"above_prompt_tokens": 0, "prices": {}})),
            &["model `m1`", "field `long_context.above_prompt_tokens`", "positive"],
        ),
        (
            Box::new(|d| d["models"] = json!([model_json("m1", "^m1", "1"), model_json("m1", "^m1", "2")])),
            &["model `m1`", "field `id`", "duplicate"],
        ),
        (
            // A general pattern before a specific one would shadow it.
            Box::new(|d| d["models"] = json!([model_json("m1", "^m1", "1"), model_json("m1-pro", "^m1-pro", "2")])),
            &["model `m1-pro`", "field `match`", "matched first by model `m1`"],
        ),
        (Box::new(|d| d["models"][0] = json!("m1")), &["model `models[0]`", "JSON object"]),
    ];
    for (edit, parts) in cases {
        assert_mentions(&rejected(edit), parts);
    }
    let err = PriceTable::parse(AgentType::Aider, "{not json").unwrap_err();
    assert!(matches!(err, PricingError::Json { .. }));
    assert_mentions(&err.to_string(), &["price-table.aider.v1.json", "not valid JSON"]);
}

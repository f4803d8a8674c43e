//! Generated input for the decoders' property tests (`fuzz_*`, docs/testing.md): JSON of
//! every type, and edits that replace any node of a real document (a vendor's fixture)
//! with such JSON, the way a broken client, an old version or an attacker would bend it:
//! a null where a string was, a number sent as a string, an object where a list was.
//!
//! Proptest runs 256 cases of each target by default (CI); `scripts/fuzz` sets
//! `PROPTEST_CASES` to run a million.

use proptest::prelude::*;
use serde_json::{Value, json};

/// Texts a decoder meets in the wild: numbers as strings, times, huge and negative
/// numbers, empty and control characters, long and non-ASCII text.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("12".to_string()),
        Just("-1".to_string()),
        Just("1e400".to_string()),
        Just("NaN".to_string()),
        Just("2026-11-27T10:00:00Z".to_string()),
        Just("2026-13-45T99:99:99Z".to_string()),
        Just("0000-00-00".to_string()),
        Just("\u{0}\u{1f}\u{7f}".to_string()),
        Just("ünïcödé ✓ 漢字 🦀".to_string()),
        Just("a".repeat(70_000)),
        "[ -~]{0,40}",
        any::<String>(),
    ]
}

/// Any JSON value, a few levels deep.
pub fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        prop_oneof![Just(u64::MAX), Just(i64::MAX as u64 + 1)].prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..6).prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// Edits of a document: which node (by its rank in a walk, modulo the count) becomes
/// what, or is removed (`None`).
pub fn edits() -> impl Strategy<Value = Vec<(usize, Option<Value>)>> {
    prop::collection::vec((any::<usize>(), prop::option::weighted(0.85, json())), 0..4)
}

/// `document` with `edits` applied.
pub fn edited(document: &Value, edits: &[(usize, Option<Value>)]) -> Value {
    let mut out = document.clone();
    for (rank, replacement) in edits {
        let count = count_nodes(&out);
        let target = rank % count.max(1);
        let mut seen = 0;
        replace(&mut out, target, replacement, &mut seen);
    }
    out
}

fn count_nodes(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        Value::Object(fields) => fields.values().map(count_nodes).sum(),
        _ => 0,
    }
}

/// Replaces (or, inside a container, removes) the node of rank `target`.
fn replace(value: &mut Value, target: usize, replacement: &Option<Value>, seen: &mut usize) -> bool {
    if *seen == target {
        *value = replacement.clone().unwrap_or(Value::Null);
        return true;
    }
    *seen += 1;
    match value {
        Value::Array(items) => {
            for i in 0..items.len() {
                if *seen == target && replacement.is_none() {
                    items.remove(i);
                    return true;
                }
                if replace(&mut items[i], target, replacement, seen) {
                    return true;
                }
            }
        }
        Value::Object(fields) => {
            let keys: Vec<String> = fields.keys().cloned().collect();
            for key in keys {
                if *seen == target && replacement.is_none() {
                    fields.remove(&key);
                    return true;
                }
                if replace(fields.get_mut(&key).expect("listed"), target, replacement, seen) {
                    return true;
                }
            }
        }
        _ => {}
    }
    false
}

/// Bytes of a document after it is cut or has bytes flipped, as a torn write or a bad
/// proxy leaves it.
pub fn damaged(bytes: &[u8], cut: Option<usize>, flips: &[(usize, u8)]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for (at, xor) in flips {
        if !out.is_empty() {
            let i = at % out.len();
            out[i] ^= xor;
        }
    }
    if let Some(cut) = cut {
        out.truncate(cut % (out.len() + 1));
    }
    out
}

/// How a document's bytes are damaged: a cut and up to three flips, each often absent.
pub fn damage() -> impl Strategy<Value = (Option<usize>, Vec<(usize, u8)>)> {
    (prop::option::weighted(0.2, any::<usize>()), prop::collection::vec((any::<usize>(), 1u8..), 0..3))
        .prop_map(|(cut, flips)| (cut, flips))
}

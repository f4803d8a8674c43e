//! Generated transcripts for every agent's parser (`fuzz_*`, see `model::arbitrary`):
//! each agent's transcript fixture (written from its published format) with a line, or
//! the whole document, bent by edits, then cut or flipped as a torn upload leaves it.
//! Parsing never panics and never fails (a line it cannot read is kept raw).

use proptest::prelude::*;
use serde_json::Value;

use super::parse;
use crate::model::arbitrary::{damage, damaged, edited, edits};

/// (agent, transcript, whether it is one JSON document rather than JSON lines).
const FIXTURES: &[(&str, &str, bool)] = &[
    ("claude_code", include_str!("../../../tests/fixtures/agents/claude_code/transcript.jsonl"), false),
    ("codex", include_str!("../../../tests/fixtures/agents/codex/transcript.jsonl"), false),
    ("gemini_cli", include_str!("../../../tests/fixtures/agents/gemini_cli/transcript.jsonl"), false),
    ("copilot_cli", include_str!("../../../tests/fixtures/agents/copilot_cli/transcript.jsonl"), false),
    ("droid", include_str!("../../../tests/fixtures/agents/droid/transcript.jsonl"), false),
    ("opencode", include_str!("../../../tests/fixtures/agents/opencode/export.json"), true),
    ("cline", include_str!("../../../tests/fixtures/agents/cline/ui_messages.json"), true),
];

/// The transcript with one line (or the document) edited.
fn bent(text: &str, whole: bool, line: usize, edits: &[(usize, Option<Value>)]) -> String {
    if whole {
        return match serde_json::from_str::<Value>(text) {
            Ok(document) => serde_json::to_string(&edited(&document, edits)).unwrap(),
            Err(_) => text.to_string(),
        };
    }
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return String::new();
    }
    let at = line % lines.len();
    if let Ok(value) = serde_json::from_str::<Value>(&lines[at]) {
        lines[at] = serde_json::to_string(&edited(&value, edits)).unwrap();
    }
    lines.join("\n")
}

proptest! {
    #[test]
    fn fuzz_transcripts(which in any::<usize>(), line in any::<usize>(), edits in edits(), (cut, flips) in damage()) {
        let (agent, text, whole) = FIXTURES[which % FIXTURES.len()];
        let text = bent(text, whole, line, &edits);
        let text = String::from_utf8_lossy(&damaged(text.as_bytes(), cut, &flips)).to_string();
        let messages = parse(agent, &text);
        prop_assert!(messages.len() <= text.len() + 1, "{agent}: no message out of nothing");
    }
}

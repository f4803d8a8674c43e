//! The agents' shared vocabulary: what each agent's records mean, read alike by the hook
//! on the developer's machine (`hook::adapters`, `hook::import`), by the OTLP mappers of
//! the agents' own exports (`otlp`) and by the transcript parser (`transcripts::parse`):
//! each agent's tool names as the canonical actions, the usage a transcript or record line
//! carries, a tool call's reported outcome.
//!
//! Invariants: pure functions of a record's text or JSON, no I/O and no storage, so every
//! reader of a record (a hook, an export, an uploaded transcript) counts it the same way;
//! it depends on the wire contract's types (`model`) only.

pub mod claude_code;
pub mod cline;
pub mod codex;
pub mod copilot_cli;
pub mod gemini_cli;
pub mod opencode;
pub mod usage;

use serde_json::Value;

/// A string field of a payload.
pub fn text<'p>(payload: &'p Value, key: &str) -> Option<&'p str> {
    payload.get(key).and_then(Value::as_str)
}

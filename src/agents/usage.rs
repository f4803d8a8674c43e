//! The usage a record says: one line's counts ([`Line`]), one model request not yet
//! reported ([`Request`]), and the growth of a count between two reads ([`growth`]).
//! The hook's incremental reading of a transcript (`hook::usage`) and the transcript
//! parser both speak it.

use crate::model::Usage;

/// What one transcript line says about usage.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// The model in use from here on (Codex announces it in `turn_context` lines).
    Model(String),
    /// The latest counts of one model request. Later lines of the same group supersede
    /// it (the largest count of each kind wins).
    Counts { group: String, model: Option<String>, usage: Usage },
    /// A running total over the whole session: each line's growth over the previous
    /// total is one request.
    Cumulative { model: Option<String>, usage: Usage },
    /// Several of the above from one line (Copilot's per-model session metrics).
    Many(Vec<Line>),
}

/// One model request's usage that has not been reported yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub model: Option<String>,
    pub usage: Usage,
    /// The vendor's id of the request, when the transcript gives one (Claude Code's
    /// `requestId`): the server joins it with the agent's own OTLP report of it.
    pub request_id: Option<String>,
}

/// `later - earlier` per count, never negative (a count that shrank reports nothing).
pub fn growth(later: &Usage, earlier: &Usage) -> Usage {
    Usage {
        input_tokens: (later.input_tokens - earlier.input_tokens).max(0),
        output_tokens: (later.output_tokens - earlier.output_tokens).max(0),
        cache_read_tokens: (later.cache_read_tokens - earlier.cache_read_tokens).max(0),
        cache_write_5m_tokens: (later.cache_write_5m_tokens - earlier.cache_write_5m_tokens).max(0),
        cache_write_1h_tokens: (later.cache_write_1h_tokens - earlier.cache_write_1h_tokens).max(0),
        reasoning_tokens: (later.reasoning_tokens - earlier.reasoning_tokens).max(0),
    }
}

//! Token prices and the cost of one event's usage, in integer nano-dollars.
//!
//! Each agent has a price table, `assets/price-tables/price-table.<agent>.v1.json`,
//! embedded in the binary and described by `assets/price-table.schema.json`. A table
//! lists models in order; the first whose `match` regex finds the (trimmed,
//! case-insensitive) model name prices the event. Prices are written as the vendors
//! publish them, decimal strings of US dollars per million tokens, and are converted
//! once, exactly, to integer pico-dollars per token ($1/MTok = 10^12 pUSD / 10^6
//! tokens = 10^6 pUSD per token). A cost is the sum over the six kinds of tokens of
//! count × price, in `i128`, rounded half up once to nano-dollars: no float takes part.
//!
//! Invariants: every embedded table parses, or [`PriceBook::embedded`] fails naming the
//! file, model and field; every price is exact, non-negative and present for all six
//! kinds of tokens; every model's own id is priced by its own entry (so a pattern that
//! would also catch a model listed after it is rejected); an unknown or missing model
//! costs 0 and is reported as unknown, never guessed or priced as a neighbour. The
//! `match` patterns accept provider prefixes and date or variant suffixes but not a
//! different version number, so a new release (say `claude-opus-4-7`) is counted as
//! unknown until its table entry exists. [`PriceTable::json`] serves the exact embedded
//! bytes, and [`PriceTable::etag`] is their SHA-256.
//!
//! An operator may replace an agent's table with a file of the same name in
//! `<data_dir>/price-tables/` ([`PriceBook::load`], `operator.rs`): validated the same
//! way, it is the agent's table from the next start, served to hooks under a new ETag.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use regex::RegexSet;

use crate::model::{AgentType, Usage};

mod catalogue;
mod operator;
mod parse;
pub use catalogue::{Catalogue, CatalogueError, Planned};
pub use operator::{
    ModelDiff, ModelPrices, OperatorTable, Staged, check as operator_check, diff as diff_tables, operator_tables,
    overrides_dir, stage as stage_operator_table,
};

/// The `format` every v1 table declares.
pub const FORMAT_V1: &str = "sightline.price-table.v1";

/// Pico-dollars per token in a price of $1 per million tokens.
const PICO_PER_USD_PER_MTOK: i64 = 1_000_000;
/// Decimal places of $/MTok that pico-dollars per token represent exactly.
const MAX_DECIMALS: usize = 6;
/// Highest accepted price, $/MTok: far above any real price, and low enough that
/// count × price summed over six kinds can never overflow `i128`.
const MAX_USD_PER_MTOK: i64 = 1_000_000;
/// Pico-dollars per nano-dollar.
const PICO_PER_NANO: i128 = 1_000;
/// Distinct model names a table remembers the match of. Agents report a handful of
/// names, so this is never reached in practice; past it, names are still priced, only
/// without the memo, so a flood of made-up names cannot grow memory.
const MEMO_CAPACITY: usize = 1_024;
/// Longest model name (bytes) the memo keeps.
const MEMO_MAX_NAME: usize = 256;

/// The six kinds of tokens, in the order of the file format and of [`Usage`].
const KINDS: [&str; 6] = ["input", "output", "cache_read", "cache_write_5m", "cache_write_1h", "reasoning"];

/// The embedded JSON of an agent's table (what an operator copies to change it).
pub fn embedded_table_json(agent: AgentType) -> &'static str {
    embedded_json(agent)
}

/// The embedded JSON of an agent's table. An exhaustive `match`, so a new agent
/// does not compile until it has a table.
fn embedded_json(agent: AgentType) -> &'static str {
    match agent {
        AgentType::ClaudeCode => {
            include_str!("../../assets/price-tables/price-table.claude_code.v1.json")
        }
        AgentType::Codex => include_str!("../../assets/price-tables/price-table.codex.v1.json"),
        AgentType::GeminiCli => {
            include_str!("../../assets/price-tables/price-table.gemini_cli.v1.json")
        }
        AgentType::CopilotCli => {
            include_str!("../../assets/price-tables/price-table.copilot_cli.v1.json")
        }
        AgentType::Droid => include_str!("../../assets/price-tables/price-table.droid.v1.json"),
        AgentType::Opencode => {
            include_str!("../../assets/price-tables/price-table.opencode.v1.json")
        }
        AgentType::Cline => include_str!("../../assets/price-tables/price-table.cline.v1.json"),
        AgentType::Cursor => include_str!("../../assets/price-tables/price-table.cursor.v1.json"),
        AgentType::Aider => include_str!("../../assets/price-tables/price-table.aider.v1.json"),
        AgentType::Windsurf => {
            include_str!("../../assets/price-tables/price-table.windsurf.v1.json")
        }
        AgentType::QwenCode => {
            include_str!("../../assets/price-tables/price-table.qwen_code.v1.json")
        }
    }
}

/// The file name of an agent's table, as used in error messages and on disk.
pub fn file_name(agent: AgentType) -> String {
    format!("price-table.{}.v1.json", agent.as_str())
}

/// The price tables of all eleven agents, parsed and compiled once at start-up and then
/// only read (it is `Send + Sync`; share it behind an `Arc`).
#[derive(Debug)]
pub struct PriceBook {
    /// Indexed by the position of the agent in [`AgentType::ALL`].
    tables: Vec<PriceTable>,
}

/// One agent's price table: its models compiled for matching, and the exact JSON text
/// it was parsed from, with that text's ETag.
#[derive(Debug)]
pub struct PriceTable {
    agent: AgentType,
    revision: String,
    models: Vec<ModelPrice>,
    /// Pattern `i` is the `match` of `models[i]`, compiled case-insensitive.
    patterns: RegexSet,
    /// Trimmed model names already looked up, and the index of the model entry each
    /// resolved to (`None`: unknown), so the hot path is one read-locked hash lookup.
    memo: RwLock<HashMap<Box<str>, Option<usize>>>,
    json: String,
    etag: String,
    /// The operator's file this table was read from; `None` for the embedded table.
    source: Option<std::path::PathBuf>,
}

/// A model entry of a table, prices converted to pico-dollars per token.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ModelPrice {
    id: String,
    /// Who bills this model (`anthropic`, `openai`, `google`): how reconciliation
    /// matches a vendor's billing lines to the events this entry prices.
    vendor: String,
    prices: Prices,
    long_context: Option<LongContext>,
}

/// The higher tier some vendors bill when an event's prompt is long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LongContext {
    /// The tier applies when the prompt tokens strictly exceed this.
    above_prompt_tokens: i64,
    prices: Prices,
}

/// Prices of the six kinds of tokens, in pico-dollars per token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Prices {
    input: i64,
    output: i64,
    cache_read: i64,
    cache_write_5m: i64,
    cache_write_1h: i64,
    reasoning: i64,
}

impl Prices {
    fn set(&mut self, kind: &str, pico_per_token: i64) {
        match kind {
            "input" => self.input = pico_per_token,
            "output" => self.output = pico_per_token,
            "cache_read" => self.cache_read = pico_per_token,
            "cache_write_5m" => self.cache_write_5m = pico_per_token,
            "cache_write_1h" => self.cache_write_1h = pico_per_token,
            "reasoning" => self.reasoning = pico_per_token,
            _ => unreachable!("kind checked against KINDS"),
        }
    }

    /// Cost of `usage` at these prices, in pico-dollars. Negative counts count as 0.
    fn cost_pico(&self, usage: &Usage) -> i128 {
        let term = |count: i64, price: i64| i128::from(count.max(0)) * i128::from(price);
        term(usage.input_tokens, self.input)
            + term(usage.output_tokens, self.output)
            + term(usage.cache_read_tokens, self.cache_read)
            + term(usage.cache_write_5m_tokens, self.cache_write_5m)
            + term(usage.cache_write_1h_tokens, self.cache_write_1h)
            + term(usage.reasoning_tokens, self.reasoning)
    }
}

/// The cost of one event, and which model entry priced it. Borrows the model id from
/// the [`PriceBook`], so returning it does not allocate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priced<'a> {
    /// Cost in nano-dollars (0 when the model is unknown).
    pub cost_nusd: i64,
    /// Whether a model entry of the agent's table matched the model name.
    pub known_model: bool,
    /// The `id` of the entry that priced the event (`None` when unknown).
    pub model_id: Option<&'a str>,
    /// Whether the long-context tier applied.
    pub long_context: bool,
}

impl Priced<'_> {
    const UNKNOWN: Priced<'static> = Priced { cost_nusd: 0, known_model: false, model_id: None, long_context: false };
}

/// A price table that cannot be used. Each variant names the file, and where it
/// applies the model and the field, so the message alone says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum PricingError {
    /// The text is not JSON at all.
    #[error("{file}: not valid JSON: {source}")]
    Json {
        file: String,
        #[source]
        source: serde_json::Error,
    },
    /// A top-level field is missing, unknown or wrong.
    #[error("{file}: field `{field}`: {problem}")]
    Table { file: String, field: String, problem: String },
    /// A field of one model entry is missing, unknown or wrong. `model` is the entry's
    /// `id`, or `models[i]` when the id itself is unusable.
    #[error("{file}: model `{model}`: field `{field}`: {problem}")]
    Model { file: String, model: String, field: String, problem: String },
}

impl PriceBook {
    /// Parses the ten embedded tables; fails (naming the file and field) if any is invalid.
    pub fn embedded() -> Result<PriceBook, PricingError> {
        // Seven agents share one model list: compile each distinct list once.
        let mut compiled = Vec::new();
        let tables = AgentType::ALL
            .iter()
            .map(|&agent| PriceTable::parse_sharing(agent, embedded_json(agent), file_name(agent), &mut compiled))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PriceBook { tables })
    }

    /// The table of `agent`.
    pub fn table(&self, agent: AgentType) -> &PriceTable {
        &self.tables[agent as usize]
    }

    /// Cost of one event's usage. Unknown model (or no model) → cost 0, known_model false
    /// (callers count these). Does not allocate once the model name has been seen
    /// (about 50 ns in release builds); a new name is matched and remembered.
    pub fn price(&self, agent: AgentType, model: Option<&str>, usage: &Usage) -> Priced<'_> {
        self.table(agent).price(model, usage)
    }
}

impl PriceTable {
    /// The exact embedded bytes, served by `GET /v1/price-table`.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// Strong ETag of [`json`](Self::json): `"` + hex SHA-256 + `"`.
    pub fn etag(&self) -> &str {
        &self.etag
    }

    /// The table's `revision`, the date (YYYY-MM-DD) its prices were last checked.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// The agent this table prices.
    pub fn agent(&self) -> AgentType {
        self.agent
    }

    /// The model ids of the table, in matching order.
    pub fn model_ids(&self) -> impl Iterator<Item = &str> {
        self.models.iter().map(|model| model.id.as_str())
    }

    /// Whether a model entry matches `model` (trimmed, case-insensitive).
    pub fn is_known_model(&self, model: &str) -> bool {
        self.find(model).is_some()
    }

    /// The entry `model` resolves to: its `id` and the `vendor` that bills it.
    pub fn resolve(&self, model: &str) -> Option<(&str, &str)> {
        self.find(model).map(|index| (self.models[index].id.as_str(), self.models[index].vendor.as_str()))
    }

    /// Whether any entry of this table is billed by `vendor`.
    pub fn uses_vendor(&self, vendor: &str) -> bool {
        self.models.iter().any(|model| model.vendor == vendor)
    }

    /// Cost of one event's usage at this table's prices; see [`PriceBook::price`].
    pub fn price(&self, model: Option<&str>, usage: &Usage) -> Priced<'_> {
        let Some(index) = model.and_then(|name| self.find(name)) else {
            return Priced::UNKNOWN;
        };
        let entry = &self.models[index];
        let (prices, long_context) = match &entry.long_context {
            Some(tier) if prompt_tokens(usage) > i128::from(tier.above_prompt_tokens) => (&tier.prices, true),
            _ => (&entry.prices, false),
        };
        Priced {
            cost_nusd: pico_to_nano(prices.cost_pico(usage)),
            known_model: true,
            model_id: Some(&entry.id),
            long_context,
        }
    }

    /// Index of the first model whose pattern matches the trimmed name.
    ///
    /// Names repeat (an agent reports a handful), so a name's answer is remembered:
    /// a seen name costs one read-locked hash lookup and no allocation. A new name runs
    /// the table's `RegexSet` once (one pass over the name for all patterns, which
    /// measured 8–15x faster than trying ~40 `Regex`es in turn) and is remembered.
    fn find(&self, model: &str) -> Option<usize> {
        let name = model.trim();
        if name.is_empty() {
            return None;
        }
        if let Some(&hit) = self.memo.read().unwrap_or_else(PoisonError::into_inner).get(name) {
            return hit;
        }
        let found = first_match(&self.patterns, name);
        let mut memo = self.memo.write().unwrap_or_else(PoisonError::into_inner);
        if memo.len() < MEMO_CAPACITY && name.len() <= MEMO_MAX_NAME {
            memo.insert(name.into(), found);
        }
        found
    }

    /// Parses and validates one table. `agent` must equal the table's `agent`.
    pub fn parse(agent: AgentType, json: &str) -> Result<PriceTable, PricingError> {
        Self::parse_sharing(agent, json, file_name(agent), &mut Vec::new())
    }

    /// The operator's file this table was read from; `None` for the embedded table.
    pub fn source(&self) -> Option<&std::path::Path> {
        self.source.as_deref()
    }
}

/// The index of the first pattern of `set` that matches `name`.
fn first_match(set: &RegexSet, name: &str) -> Option<usize> {
    set.matches(name).iter().next()
}

/// Prompt tokens as the vendors count them for long-context tiers (input plus cache
/// reads and writes), like [`Usage::prompt_tokens`] but immune to overflow and
/// negative counts.
fn prompt_tokens(usage: &Usage) -> i128 {
    [usage.input_tokens, usage.cache_read_tokens, usage.cache_write_5m_tokens, usage.cache_write_1h_tokens]
        .into_iter()
        .map(|count| i128::from(count.max(0)))
        .sum()
}

/// Rounds pico-dollars (never negative here) half up to nano-dollars, saturating.
fn pico_to_nano(pico: i128) -> i64 {
    let nano = (pico + PICO_PER_NANO / 2).div_euclid(PICO_PER_NANO);
    i64::try_from(nano).unwrap_or(i64::MAX)
}

/// A model-level error before it knows the file: (model label, field, problem).
type ModelError = (String, String, String);

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_invalid;
#[cfg(test)]
mod tests_names;
#[cfg(test)]
mod tests_vendors;

#[cfg(test)]
mod fuzz;

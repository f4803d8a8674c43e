//! Shared vocabulary of the platform: the closed enumerations of the wire contract
//! (agents, event types, run kinds, permission modes, notification kinds, tool
//! statuses), token usage, and money.
//!
//! Invariant: every enumeration has exactly one spelling on the wire and in the
//! database (`as_str`), and `parse` accepts only that spelling (the command line's
//! `AgentType::parse_lenient` also takes `claude-code`), so a value read back from
//! storage always parses.

#[cfg(test)]
pub mod arbitrary;
pub mod csv_cells;
pub mod decimal;
pub mod eval_cell;
pub mod event_json;
pub mod instants;
pub mod oauth;
pub mod platform;
pub mod sightings;
pub mod tool_names;
pub mod wire;

use serde::{Deserialize, Serialize};

/// Declares a closed string enumeration with one canonical spelling per variant.
/// Kept local and tiny: it only spares six copies of the same `match` pair.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }

            /// The accepted spellings, for error messages.
            pub fn expected() -> String {
                [$($text),+].join(", ")
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

string_enum!(
    /// The coding agents the platform knows. The first seven have hook adapters;
    /// `cursor`, `aider` and `windsurf` are accepted by the server but have none yet;
    /// `qwen_code` arrives through its own OpenTelemetry export only (`otlp`).
    AgentType {
        ClaudeCode => "claude_code",
        Codex => "codex",
        GeminiCli => "gemini_cli",
        CopilotCli => "copilot_cli",
        Droid => "droid",
        Opencode => "opencode",
        Cline => "cline",
        Cursor => "cursor",
        Aider => "aider",
        Windsurf => "windsurf",
        QwenCode => "qwen_code",
    }
);

impl AgentType {
    /// Accepts the canonical name and the hyphenated spelling people type
    /// (`claude-code`), for command-line use. The wire accepts only `as_str`.
    pub fn parse_lenient(text: &str) -> Option<Self> {
        Self::parse(&text.trim().to_ascii_lowercase().replace('-', "_"))
    }

    pub fn has_adapter(self) -> bool {
        !matches!(self, AgentType::Cursor | AgentType::Aider | AgentType::Windsurf | AgentType::QwenCode)
    }
}

string_enum!(
    /// The nine telemetry event types of wire contract v1.
    EventType {
        SessionStart => "session_start",
        SessionEnd => "session_end",
        PromptSubmit => "prompt_submit",
        ToolStart => "tool_start",
        ToolEnd => "tool_end",
        Notification => "notification",
        TurnEnd => "turn_end",
        SubagentEnd => "subagent_end",
        Compact => "compact",
    }
);

string_enum!(
    /// Whether a person drove the session. `CI` and `EVAL` sessions are stored but
    /// never reach a figure about developer behaviour.
    RunKind {
        Interactive => "INTERACTIVE",
        Ci => "CI",
        Eval => "EVAL",
    }
);

impl RunKind {
    /// A session that was ever non-interactive stays non-interactive: of two kinds
    /// seen, the less interactive wins, so the choice does not depend on order.
    pub fn merge(self, other: RunKind) -> RunKind {
        self.max(other)
    }
}

string_enum!(
    /// Canonical permission modes, ordered by how much the agent may do unasked.
    PermissionMode {
        Normal => "normal",
        Plan => "plan",
        AcceptEdits => "accept_edits",
        Auto => "auto",
        DontAsk => "dont_ask",
        Bypass => "bypass",
    }
);

impl PermissionMode {
    /// Autonomy rank: 0 for `plan` (read-only), rising to 5 for `bypass`.
    /// `plan` ranks below `normal` because it may not edit at all.
    pub fn autonomy_rank(self) -> u8 {
        match self {
            PermissionMode::Plan => 0,
            PermissionMode::Normal => 1,
            PermissionMode::AcceptEdits => 2,
            PermissionMode::Auto => 3,
            PermissionMode::DontAsk => 4,
            PermissionMode::Bypass => 5,
        }
    }

    pub fn from_rank(rank: u8) -> Option<Self> {
        Self::ALL.iter().copied().find(|mode| mode.autonomy_rank() == rank)
    }
}

string_enum!(
    /// Why an agent asked for a person's attention.
    NotificationKind {
        Permission => "permission",
        Idle => "idle",
        Elicitation => "elicitation",
        Auth => "auth",
        Other => "other",
    }
);

string_enum!(
    /// How a tool call ended.
    ToolStatus {
        Success => "success",
        Error => "error",
        Denied => "denied",
    }
);

/// Token counts of one event. Every count is a separate kind of token: `output_tokens`
/// excludes `reasoning_tokens`, and `input_tokens` excludes cache reads and writes,
/// so a price can be applied to each count without double counting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_5m_tokens: i64,
    pub cache_write_1h_tokens: i64,
    pub reasoning_tokens: i64,
}

impl Usage {
    pub fn is_zero(&self) -> bool {
        *self == Usage::default()
    }

    /// Tokens of the prompt as the vendor counts it for long-context tiers: fresh
    /// input plus everything read from or written to the cache.
    pub fn prompt_tokens(&self) -> i64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_5m_tokens + self.cache_write_1h_tokens
    }

    /// The larger of each count.
    pub fn max_with(&self, other: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.max(other.input_tokens),
            output_tokens: self.output_tokens.max(other.output_tokens),
            cache_read_tokens: self.cache_read_tokens.max(other.cache_read_tokens),
            cache_write_5m_tokens: self.cache_write_5m_tokens.max(other.cache_write_5m_tokens),
            cache_write_1h_tokens: self.cache_write_1h_tokens.max(other.cache_write_1h_tokens),
            reasoning_tokens: self.reasoning_tokens.max(other.reasoning_tokens),
        }
    }

    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_5m_tokens += other.cache_write_5m_tokens;
        self.cache_write_1h_tokens += other.cache_write_1h_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
}

/// Nano-dollars per US dollar. Money is integer nano-dollars everywhere inside, so
/// sums are exact; dollars appear only at the edges (JSON, HTML).
pub const NUSD_PER_USD: i64 = 1_000_000_000;

/// Renders nano-dollars as a dollar amount for JSON (`f64` is exact enough for display
/// at this scale, and is what JSON consumers expect).
/// Formats integer milliseconds as RFC 3339 UTC with milliseconds.
/// Lowercase hex SHA-256: content digests on events and the transcript upload's chunk
/// and whole digests, on both sides of the wire.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(sha256(bytes))
}

/// SHA-256 of a JSON value as the hooks digest a tool's input or output: a string's own
/// bytes, anything else as compact JSON with its object keys sorted, so the same input
/// always hashes the same whatever order the agent wrote its keys in. With the digested
/// text's length in bytes.
pub fn json_digest(value: &serde_json::Value) -> ([u8; 32], usize) {
    match value {
        serde_json::Value::String(s) => (sha256(s.as_bytes()), s.len()),
        other => {
            let text = sorted_keys(other).to_string();
            (sha256(text.as_bytes()), text.len())
        }
    }
}

fn sorted_keys(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), sorted_keys(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}

/// SHA-256 of `bytes`: how the tokens we issue and the dashboard's token are compared.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, bytes).as_ref());
    out
}

pub fn rfc3339_ms(ms: i64) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos).ok().and_then(|t| t.format(&format).ok()).unwrap_or_default()
}

/// Percent-encodes text for a URL path segment or query value: RFC 3986 unreserved
/// characters pass, every other byte is `%XX`. The one encoder of the web app, the
/// sign-in redirects and the eval dashboard.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Cuts `text` to at most `max` bytes at a character boundary; answers whether it cut.
pub fn truncate_at_char_boundary(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    true
}

/// XML and HTML text escaping (`&`, `<`, `>`, `"`, `'`) used for all labels, in text and attributes alike.
/// Tabs and line breaks become spaces, and other characters XML 1.0 forbids become U+FFFD, so
/// the output is always well-formed.
pub fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Milliseconds since the epoch of an RFC 3339 timestamp, or `None` when it is not one.
pub fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    let parsed = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    Some((parsed.unix_timestamp_nanos() / 1_000_000) as i64)
}

pub fn nusd_to_usd(nusd: i64) -> f64 {
    nusd as f64 / NUSD_PER_USD as f64
}

/// Nano-dollars in a cent.
const NUSD_PER_CENT: i64 = 10_000_000;

/// Nano-dollars as dollars to the cent: `$1,234.57`, `-$0.05`.
pub fn usd(nusd: i64) -> String {
    let cents = (i128::from(nusd.unsigned_abs()) + i128::from(NUSD_PER_CENT / 2)) / i128::from(NUSD_PER_CENT);
    let sign = if nusd < 0 && cents > 0 { "-" } else { "" };
    format!("{sign}${}.{:02}", count((cents / 100) as i64), cents % 100)
}

/// A count with thousands separators.
pub fn count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// Whether `url` may carry a credential: `https://`, or plain `http://` only to this
/// machine (a stand-in on loopback), and never with credentials in the URL itself.
pub fn is_credential_safe_url(url: &str) -> bool {
    let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
        .iter()
        .any(|prefix| url.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '/'])));
    (url.starts_with("https://") || loopback) && !url.contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_enum_value_round_trips_through_its_spelling() {
        for agent in AgentType::ALL {
            assert_eq!(AgentType::parse(agent.as_str()), Some(*agent));
        }
        for kind in EventType::ALL {
            assert_eq!(EventType::parse(kind.as_str()), Some(*kind));
        }
        assert_eq!(EventType::ALL.len(), 9);
        assert_eq!(AgentType::ALL.len(), 11);
        assert_eq!(AgentType::ALL.iter().filter(|a| a.has_adapter()).count(), 7);
    }

    #[test]
    fn lenient_agent_names_accept_hyphens_and_case() {
        assert_eq!(AgentType::parse_lenient("Claude-Code"), Some(AgentType::ClaudeCode));
        assert_eq!(AgentType::parse("claude-code"), None);
    }

    #[test]
    fn autonomy_ranks_are_distinct_and_ordered() {
        let ranks: Vec<u8> = PermissionMode::ALL.iter().map(|m| m.autonomy_rank()).collect();
        let mut sorted = ranks.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), PermissionMode::ALL.len());
        assert!(PermissionMode::Bypass.autonomy_rank() > PermissionMode::AcceptEdits.autonomy_rank());
        assert_eq!(PermissionMode::from_rank(5), Some(PermissionMode::Bypass));
    }

    #[test]
    fn run_kind_merge_keeps_the_non_interactive_kind() {
        assert_eq!(RunKind::Interactive.merge(RunKind::Ci), RunKind::Ci);
        assert_eq!(RunKind::Ci.merge(RunKind::Interactive), RunKind::Ci);
        assert_eq!(RunKind::Eval.merge(RunKind::Ci), RunKind::Eval);
    }
}

//! What an agent's export said beside its events, as plain data for the stores that
//! keep it: the names no mapping used (`sessions::drift`) and the capabilities an agent
//! reported loading (`sessions::capabilities`). Made by `otlp::logs`; kept here so the
//! mapping and the stores share the words without depending on each other.
//!
//! Invariant: every text is a client's, so the constructors keep it printable and short.

use serde_json::{Map, Value};

use super::AgentType;

/// The longest name, event name or version of an unmapped sighting kept.
pub const MAX_NAME_CHARS: usize = 100;

/// What a name is: an event we skip, or an attribute of an event we map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnmappedKind {
    Event,
    Attribute,
}

impl UnmappedKind {
    pub fn as_str(self) -> &'static str {
        match self {
            UnmappedKind::Event => "event",
            UnmappedKind::Attribute => "attribute",
        }
    }
}

/// One unmapped name as seen: for an attribute, `event` is the event it came on; for an
/// event, `event` and `name` are both its name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unmapped {
    pub agent: AgentType,
    pub version: String,
    pub kind: UnmappedKind,
    pub event: String,
    pub name: String,
}

impl Unmapped {
    /// A sighting with its client-given texts made safe to keep and show.
    pub fn new(agent: AgentType, version: Option<&str>, kind: UnmappedKind, event: &str, name: &str) -> Unmapped {
        let kept = |text: &str| printable(text, MAX_NAME_CHARS);
        Unmapped { agent, version: kept(version.unwrap_or("unknown")), kind, event: kept(event), name: kept(name) }
    }
}

/// `text` at most `max_chars`, a control character as `?`: a client's text made safe to
/// keep and show.
fn printable(text: &str, max_chars: usize) -> String {
    text.chars().take(max_chars).map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// The longest name or detail value kept.
pub const MAX_TEXT_CHARS: usize = 200;
/// The fields of an inventory event kept as its detail (Claude Code 2.1.332's names).
pub const DETAIL_KEYS: &[&str] = &[
    "status",
    "transport_type",
    "server_scope",
    "is_plugin",
    "plugin.name",
    "plugin.version",
    "plugin.scope",
    "marketplace.name",
    "enabled_via",
    "has_hooks",
    "has_mcp",
    "hook_event",
    "hook_type",
    "hook_source",
    "hook_matcher",
    "skill.source",
    "skill.kind",
    "invocation_trigger",
];

/// What kind of capability a sighting is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapabilityKind {
    McpServer,
    Plugin,
    Hook,
    Skill,
}

impl CapabilityKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CapabilityKind::McpServer => "mcp_server",
            CapabilityKind::Plugin => "plugin",
            CapabilityKind::Hook => "hook",
            CapabilityKind::Skill => "skill",
        }
    }
}

/// One inventory report.
#[derive(Debug, Clone, PartialEq)]
pub struct Sighting {
    pub agent: AgentType,
    pub kind: CapabilityKind,
    pub name: String,
    pub detail: Map<String, Value>,
    pub agent_version: Option<String>,
    pub session_id: String,
}

/// `text` clipped to [`MAX_TEXT_CHARS`], control characters as `?`.
pub fn clipped(text: &str) -> String {
    printable(text, MAX_TEXT_CHARS)
}

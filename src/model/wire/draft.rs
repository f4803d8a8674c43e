//! The event a source builds before it is checked: wire contract v1's fields by name.
//! The hook serialises a draft into its batches, `POST /v1/events` decodes one per
//! event, and the OTLP mappings build them in process; every draft becomes an
//! [`Event`](super::Event) only through [`validate`](super::validate), so the three
//! sources meet one set of rules and a misspelt field is a compile error, not a
//! rejection at run time:
//!
//! ```
//! use sightline::model::wire::Draft;
//! use sightline::model::{AgentType, EventType};
//!
//! let mut draft = Draft::new(uuid::Uuid::now_v7(), EventType::SessionStart, 0, AgentType::ClaudeCode, "s1");
//! draft.model = Some("claude-opus-4-5".into());
//! draft.note("source", "otlp");
//! ```
//!
//! ```compile_fail
//! use sightline::model::wire::Draft;
//! use sightline::model::{AgentType, EventType};
//!
//! let mut draft = Draft::new(uuid::Uuid::now_v7(), EventType::SessionStart, 0, AgentType::ClaudeCode, "s1");
//! draft.modle = Some("claude-opus-4-5".into());
//! ```
//!
//! Invariants: the fields stay the wire's own shapes (texts for times and
//! enumerations, as a client sends them), so a draft decoded from JSON and one built in
//! process are checked alike; a field left `None` is not serialised.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::model::{AgentType, EventType, NotificationKind, RunKind, ToolStatus};

/// One event as sent. See the module's page for how it is checked.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Draft {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notification_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<DraftTool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<DraftUsage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git: Option<DraftGit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval: Option<DraftEval>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// The evaluation cell an event's session was run for.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct DraftEval {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// A tool call's fields: hashes as lowercase hex, sizes in bytes, never content.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct DraftTool {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slash_command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_bytes: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_bytes: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

/// Tokens by kind, as the agent counted them.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct DraftUsage {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_5m_tokens: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_1h_tokens: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<i64>,
}

/// The repository a session ran in, at its start (and what it left, at its end).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct DraftGit {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty: Option<bool>,
}

impl Draft {
    /// A draft with what every event needs: its id, kind, time, agent and session.
    pub fn new(event_id: Uuid, kind: EventType, ts_ms: i64, agent: AgentType, session_id: impl Into<String>) -> Draft {
        Draft {
            event_id: Some(event_id.to_string()),
            event_type: Some(kind.as_str().to_string()),
            ts: Some(crate::model::rfc3339_ms(ts_ms)),
            agent_type: Some(agent.as_str().to_string()),
            session_id: Some(session_id.into()),
            ..Draft::default()
        }
    }

    pub fn set_ts_ms(&mut self, ts_ms: i64) {
        self.ts = Some(crate::model::rfc3339_ms(ts_ms));
    }

    pub fn set_run_kind(&mut self, kind: RunKind) {
        self.run_kind = Some(kind.as_str().to_string());
    }

    /// The run kind as sent, `None` when the draft names none (the wire's default is
    /// INTERACTIVE) or names one the wire does not know.
    pub fn run_kind(&self) -> Option<RunKind> {
        self.run_kind.as_deref().and_then(RunKind::parse)
    }

    pub fn set_notification_kind(&mut self, kind: NotificationKind) {
        self.notification_kind = Some(kind.as_str().to_string());
    }

    /// Sets one metadata entry (the metadata object is made if there is none).
    pub fn note(&mut self, key: &str, value: impl Into<Value>) {
        self.metadata.get_or_insert_with(Map::new).insert(key.to_string(), value.into());
    }
}

/// Every count set, as the wire's `usage` object carries a reading of all six.
impl From<crate::model::Usage> for DraftUsage {
    fn from(usage: crate::model::Usage) -> Self {
        DraftUsage {
            input_tokens: Some(usage.input_tokens),
            output_tokens: Some(usage.output_tokens),
            cache_read_tokens: Some(usage.cache_read_tokens),
            cache_write_5m_tokens: Some(usage.cache_write_5m_tokens),
            cache_write_1h_tokens: Some(usage.cache_write_1h_tokens),
            reasoning_tokens: Some(usage.reasoning_tokens),
        }
    }
}

impl DraftTool {
    pub fn set_status(&mut self, status: ToolStatus) {
        self.status = Some(status.as_str().to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_serialised_and_decoded_is_the_same_draft_and_leaves_out_what_is_unset() {
        let mut draft = Draft::new(Uuid::now_v7(), EventType::ToolEnd, 1_790_000_000_000, AgentType::Codex, "s");
        let mut tool = DraftTool { name: Some("codex:shell".into()), ..DraftTool::default() };
        tool.set_status(ToolStatus::Error);
        draft.tool = Some(tool);
        draft.note("source", "otlp");
        let text = serde_json::to_string(&draft).unwrap();
        assert!(!text.contains("null") && !text.contains("usage"), "{text}");
        assert!(text.contains(r#""type":"tool_end""#) && text.contains(r#""status":"error""#), "{text}");
        assert_eq!(serde_json::from_str::<Draft>(&text).unwrap(), draft);
    }
}

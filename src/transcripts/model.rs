//! The normalised transcript: what every agent's transcript format is parsed into, so
//! the viewer and the search index never care which agent wrote it.
//!
//! Invariants: parsing never fails; a line (or record) a parser does not recognise is
//! kept as a [`Role::Raw`] message holding its text, so nothing in a stored transcript
//! is invisible to search. Message order is the transcript's order.

use serde::Serialize;

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// What the person typed (or pasted).
    User,
    /// What the model answered, with the tools it called.
    Assistant,
    /// The model's reasoning, when the agent records it.
    Reasoning,
    /// A tool's result, as sent back to the model.
    Tool,
    /// Instructions, summaries and notices the agent itself inserted.
    System,
    /// A line no parser recognised, kept as it was.
    Raw,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Reasoning => "reasoning",
            Role::Tool => "tool",
            Role::System => "system",
            Role::Raw => "raw",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        [Role::User, Role::Assistant, Role::Reasoning, Role::Tool, Role::System, Role::Raw]
            .into_iter()
            .find(|role| role.as_str() == text)
    }
}

/// A tool the model asked to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCall {
    /// The agent's call id, when it has one (pairs the call with its result).
    pub id: Option<String>,
    pub name: String,
    /// The call's input as the agent recorded it (JSON text, or the command line).
    pub input: String,
}

/// Token usage the agent recorded on a message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
}

/// One message of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    pub role: Role,
    /// What a person reads: the message's text blocks joined by blank lines; for a tool
    /// result, the tool's output; for a raw line, the line.
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    /// For a [`Role::Tool`] message: the tool whose result this is, when known.
    pub tool_name: Option<String>,
    /// For a [`Role::Tool`] message: the call it answers, when the agent says.
    pub tool_call_id: Option<String>,
    /// For a [`Role::Tool`] message: whether the tool reported a failure.
    pub is_error: bool,
    pub ts_ms: Option<i64>,
    pub model: Option<String>,
    pub usage: Option<Usage>,
    /// For a [`Role::System`] message: the agent's own title for the session (Claude
    /// Code's `summary` record, Gemini CLI's summary), which names the session in lists.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_title: bool,
    /// Set when a reader was given `text` cut short (`super::pages`): the length of the
    /// whole text, in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whole_text_bytes: Option<usize>,
}

impl Message {
    /// A message with only a role and text; parsers fill in the rest.
    pub fn new(role: Role, text: impl Into<String>) -> Message {
        Message {
            role,
            text: text.into(),
            tool_calls: Vec::new(),
            tool_name: None,
            tool_call_id: None,
            is_error: false,
            ts_ms: None,
            model: None,
            usage: None,
            is_title: false,
            whole_text_bytes: None,
        }
    }

    /// The names of the tools this message calls or answers for (what `tool:` matches).
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tool_calls.iter().map(|call| call.name.as_str()).chain(self.tool_name.as_deref())
    }
}

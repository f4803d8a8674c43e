//! Agent adapters: each maps its agent's own hook payload onto wire-contract events.
//! Only hashes and byte sizes of tool input and output leave the adapter; raw content
//! never does. An adapter that does not know an event ignores it (no events, no error).

mod ancestry;
pub mod build;
pub mod claude_code;
pub mod cline;
pub mod codex;
pub mod common;
pub mod copilot_cli;
pub mod droid;
pub mod gemini_cli;
pub mod opencode;

use serde_json::Value;

use crate::hook::queue::HookTx;
use crate::model::AgentType;

/// What an adapter needs from outside the payload.
pub struct Context<'a> {
    pub now_ms: i64,
    /// The hook's transaction on the queue database: tool start times (for durations)
    /// and transcript offsets live there, committed with the events.
    pub state: &'a HookTx<'a>,
}

#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    #[error("agent {0} has no hook adapter yet")]
    NoAdapter(AgentType),
    #[error("hook payload is not a JSON object")]
    NotAnObject,
    #[error("hook payload has no {0}")]
    Missing(&'static str),
    #[error(transparent)]
    State(#[from] crate::db::DbError),
}

/// Maps one hook invocation to wire events.
pub fn map(
    agent: AgentType,
    hook_event: &str,
    payload: &Value,
    context: &mut Context<'_>,
) -> Result<Vec<crate::model::wire::Draft>, AdapterError> {
    if !payload.is_object() {
        return Err(AdapterError::NotAnObject);
    }
    match agent {
        AgentType::ClaudeCode => claude_code::map(hook_event, payload, context),
        AgentType::Codex => codex::map(hook_event, payload, context),
        AgentType::GeminiCli => gemini_cli::map(hook_event, payload, context),
        AgentType::CopilotCli => copilot_cli::map(hook_event, payload, context),
        AgentType::Droid => droid::map(hook_event, payload, context),
        AgentType::Opencode => opencode::map(hook_event, payload, context),
        AgentType::Cline => cline::map(hook_event, payload, context),
        other => Err(AdapterError::NoAdapter(other)),
    }
}

#[cfg(test)]
mod fuzz;

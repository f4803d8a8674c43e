//! Tool calls of an imported session: a start remembers its call until the matching end
//! arrives, so each end carries the start's tool object, its outcome and its duration,
//! as hooks report them. An end without a start is dropped (the start is what counts a
//! call).

use std::collections::HashMap;

use serde_json::Value;

use super::event;
use crate::hook::adapters::common::{digest_of, target_hash};
use crate::model::wire::{Draft, DraftTool};
use crate::model::{AgentType, EventType};

pub struct Tools {
    agent: AgentType,
    session: String,
    started: HashMap<String, (i64, DraftTool)>,
    pub events: Vec<Draft>,
}

/// A tool call as an importer reads it.
pub struct Call<'a> {
    pub use_id: &'a str,
    /// The agent's own tool name; the wire name is `<agent>:<name>`.
    pub name: &'a str,
    pub action: &'static str,
    pub server: Option<&'a str>,
    pub input: &'a Value,
}

impl Tools {
    pub fn new(agent: AgentType, session: &str) -> Tools {
        Tools { agent, session: session.to_string(), started: HashMap::new(), events: Vec::new() }
    }

    pub fn start(&mut self, ts_ms: i64, call: &Call<'_>) {
        // Arguments some agents send as JSON text are digested as sent, targeted as parsed.
        let parsed = call.input.as_str().and_then(|s| serde_json::from_str::<Value>(s).ok());
        let (digest, bytes) = digest_of(call.input);
        let tool = DraftTool {
            name: Some(format!("{}:{}", self.agent.as_str(), call.name)),
            action: Some(call.action.to_string()),
            use_id: Some(call.use_id.to_string()),
            input_sha256: Some(digest),
            input_bytes: Some(bytes as i64),
            server: call.server.map(str::to_string),
            target_hash: target_hash(parsed.as_ref().unwrap_or(call.input)),
            ..DraftTool::default()
        };
        let mut start = event(self.agent, &self.session, EventType::ToolStart, ts_ms, call.use_id);
        start.tool = Some(tool.clone());
        self.events.push(start);
        self.started.insert(call.use_id.to_string(), (ts_ms, tool));
    }

    /// Ends the call `use_id` with `status` (`success`, `error`, `denied`).
    pub fn end(&mut self, ts_ms: i64, use_id: &str, output: &Value, status: &str) {
        let Some((start_ms, mut tool)) = self.started.remove(use_id) else { return };
        let (digest, bytes) = digest_of(output);
        tool.output_sha256 = Some(digest);
        tool.output_bytes = Some(bytes as i64);
        tool.status = Some(status.to_string());
        tool.duration_ms = Some((ts_ms - start_ms).max(0));
        let mut end = event(self.agent, &self.session, EventType::ToolEnd, ts_ms, use_id);
        end.tool = Some(tool);
        self.events.push(end);
    }

    /// Ends every call still open with `status`, oldest first: for agents that never
    /// record a refusal, a call without a result when its turn is over was not run.
    pub fn end_open(&mut self, ts_ms: i64, status: &str) {
        let mut open: Vec<(i64, String)> = self.started.iter().map(|(id, (at, _))| (*at, id.clone())).collect();
        open.sort();
        for (_, use_id) in open {
            self.end(ts_ms, &use_id, &Value::Null, status);
        }
    }
}

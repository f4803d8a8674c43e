//! Building wire events from an adapter's reading of a payload, the same way for every
//! agent: ids and timestamps, tool objects with content-free digests, tool durations
//! across processes, usage per model request read from the transcript, and tool calls
//! that never ended reported as denied when their turn ends.

use serde_json::{Map, Value, json};

use super::common::{digest_of, git_context, sha256_hex, target_hash, usage_events};
use super::{AdapterError, Context};
use crate::agents::usage::{Line, Request};
use crate::config::machine::MachineVariable;
use crate::hook::usage;
use crate::model::{AgentType, ToolStatus};

/// One hook invocation's identity: which agent, session and hook event it came from.
pub struct Builder<'c, 'a> {
    pub context: &'c Context<'a>,
    pub agent: AgentType,
    pub session: String,
    pub hook_event: String,
    /// The agent's working directory, when the payload gives it: the repository whose
    /// git context `session_start` and `session_end` carry.
    pub cwd: Option<String>,
}

/// A tool call as an adapter reads it from a payload.
pub struct ToolCall<'p> {
    /// The agent's own tool name; the wire name is `<agent>:<name>`.
    pub name: String,
    pub action: &'static str,
    /// MCP server, when the tool is an MCP tool.
    pub server: Option<String>,
    /// The agent's id of the call. Agents without one are paired by name and input.
    pub use_id: Option<String>,
    pub input: Option<&'p Value>,
}

impl<'p> ToolCall<'p> {
    /// A call named the Claude Code way, which Codex and Droid copy: MCP tools are
    /// `mcp__<server>__<tool>`.
    pub fn claude_style(
        name: Option<&str>,
        use_id: Option<&str>,
        input: Option<&'p Value>,
        action: fn(&str) -> &'static str,
    ) -> ToolCall<'p> {
        let name = name.unwrap_or("unknown").to_string();
        ToolCall {
            action: action(&name),
            server: name.strip_prefix("mcp__").and_then(|rest| rest.split("__").next()).map(str::to_string),
            use_id: use_id.map(str::to_string),
            input,
            name,
        }
    }

    /// The key that pairs this call's start with its end: the agent's id, else the name
    /// and the input's digest (the one already in the wire tool object).
    fn pairing_key(&self, tool: &Map<String, Value>) -> String {
        match &self.use_id {
            Some(id) => id.clone(),
            None => {
                let input = tool.get("input_sha256").and_then(Value::as_str).unwrap_or_default();
                format!("~{}", &sha256_hex(format!("{}\u{1f}{input}", self.name).as_bytes())[..32])
            }
        }
    }
}

impl Builder<'_, '_> {
    pub fn event(&self, kind: &str) -> Value {
        json!({
            "event_id": uuid::Uuid::now_v7().to_string(),
            "type": kind,
            "ts": crate::model::rfc3339_ms(self.context.now_ms),
            "agent_type": self.agent.as_str(),
            "session_id": self.session,
            "metadata": {"hook_event": self.hook_event},
        })
    }

    fn tool_object(&self, call: &ToolCall<'_>) -> Map<String, Value> {
        let mut tool = Map::new();
        tool.insert("name".into(), json!(format!("{}:{}", self.agent.as_str(), call.name)));
        if let Some(server) = &call.server {
            tool.insert("server".into(), json!(server));
        }
        tool.insert("action".into(), json!(call.action));
        if let Some(use_id) = &call.use_id {
            tool.insert("use_id".into(), json!(use_id));
        }
        if let Some(input) = call.input {
            let (digest, bytes) = digest_of(input);
            tool.insert("input_sha256".into(), json!(digest));
            tool.insert("input_bytes".into(), json!(bytes));
            if let Some(target) = target_hash(input) {
                tool.insert("target_hash".into(), json!(target));
            }
        }
        tool
    }

    /// A `tool_start`, remembering when it started for the matching end.
    pub fn tool_start(&self, call: &ToolCall<'_>) -> Result<Value, AdapterError> {
        let tool = self.tool_object(call);
        let key = call.pairing_key(&tool);
        let tool = Value::Object(tool);
        self.context.state.tool_started(&self.session, &key, self.context.now_ms, &tool.to_string())?;
        let mut event = self.event("tool_start");
        event["tool"] = tool;
        Ok(event)
    }

    /// A `tool_end` with its status, output digest and (when its start was seen) duration.
    pub fn tool_end(
        &self,
        call: &ToolCall<'_>,
        output: Option<&Value>,
        status: ToolStatus,
    ) -> Result<Value, AdapterError> {
        let mut tool = self.tool_object(call);
        let key = call.pairing_key(&tool);
        if let Some(output) = output.filter(|o| !o.is_null()) {
            let (digest, bytes) = digest_of(output);
            tool.insert("output_sha256".into(), json!(digest));
            tool.insert("output_bytes".into(), json!(bytes));
        }
        tool.insert("status".into(), json!(status.as_str()));
        if let Some(started) = self.context.state.tool_finished(&self.session, &key)? {
            tool.insert("duration_ms".into(), json!((self.context.now_ms - started).max(0)));
        }
        let mut event = self.event("tool_end");
        event["tool"] = Value::Object(tool);
        Ok(event)
    }

    /// Tool calls of this session that started and never ended, as `denied` ends: when
    /// a turn is over, a call without an end did not run (the person or a policy
    /// refused it; the agents that say so explicitly end it themselves).
    pub fn unended_tools_denied(&self) -> Result<Vec<Value>, AdapterError> {
        let mut events = Vec::new();
        for (started, tool) in self.context.state.take_open_tools(&self.session)? {
            let mut tool: Value = serde_json::from_str(&tool).unwrap_or_else(|_| json!({}));
            tool["status"] = json!(ToolStatus::Denied.as_str());
            tool["duration_ms"] = json!(0);
            let mut event = self.event("tool_end");
            // Refused when it was asked for: it ended, without running, as it started
            // (not when the turn did), so it sits in the trace where it was asked.
            event["ts"] = json!(crate::model::rfc3339_ms(started));
            event["metadata"]["inferred"] = json!("no end before the turn ended");
            event["tool"] = tool;
            events.push(event);
        }
        Ok(events)
    }

    /// The usage the transcript at `path` gained since it was last read.
    pub fn usage_since_last_read(
        &self,
        path: Option<&str>,
        parse: fn(&str) -> Option<Line>,
    ) -> Result<Vec<Request>, AdapterError> {
        match path.filter(|p| !p.is_empty()) {
            Some(path) => Ok(usage::read_new(self.context.state, path, parse, self.context.now_ms)?),
            None => Ok(Vec::new()),
        }
    }
}

/// The lifecycle events every adapter emits the same way.
impl Builder<'_, '_> {
    /// A `session_start` with the git context of the working directory.
    pub fn session_start(&self, source: Option<&str>, model: Option<&str>) -> Value {
        let mut event = self.event("session_start");
        if let Some(source) = source {
            event["metadata"]["source"] = json!(source);
        }
        if let Some(model) = model {
            event["model"] = json!(model);
        }
        if let Some(git) = self.cwd.as_deref().and_then(|cwd| git_context(cwd.as_ref())) {
            event["git"] = git;
        }
        if let Some(number) = pull_request_of_ci_run(MachineVariable::GithubRef.text().as_deref()) {
            event["metadata"]["pull_request"] = json!(number);
        }
        event
    }

    /// The end of a turn: calls that never ended (denied), then one `turn_end` per
    /// model request the transcript gained (or one without usage).
    pub fn turn_end(
        &self,
        transcript: Option<&str>,
        parse: fn(&str) -> Option<Line>,
        metadata: Value,
    ) -> Result<Vec<Value>, AdapterError> {
        let requests = self.usage_since_last_read(transcript, parse)?;
        self.turn_end_with(transcript, requests, metadata)
    }

    /// Records that hooks saw this session, so `import` leaves it to them (for agents
    /// whose sessions `import` keys by id, see [`usage::session_key`]).
    pub fn mark_seen(&self) -> Result<(), AdapterError> {
        Ok(usage::mark_seen(self.context.state, &usage::session_key(self.agent, &self.session))?)
    }

    /// Tells the shipper about the session's transcript (due once the session ended or
    /// went quiet).
    fn note_transcript(&self, transcript: Option<&str>, ended: bool) -> Result<(), AdapterError> {
        if let Some(path) = transcript.filter(|p| !p.is_empty()) {
            let state = self.context.state;
            state.queue_transcript(self.agent.as_str(), &self.session, path, ended, self.context.now_ms)?;
        }
        Ok(())
    }

    /// [`Builder::turn_end`] with usage the adapter found itself.
    /// `transcript` is the session's transcript for the shipper, if the agent has one.
    pub fn turn_end_with(
        &self,
        transcript: Option<&str>,
        requests: Vec<Request>,
        metadata: Value,
    ) -> Result<Vec<Value>, AdapterError> {
        self.note_transcript(transcript, false)?;
        let mut events = self.unended_tools_denied()?;
        events.extend(self.requests(requests, metadata));
        Ok(events)
    }

    /// One `turn_end` per model request (or one without usage), closing nothing: what a
    /// turn's end reports of its requests.
    pub fn requests(&self, requests: Vec<Request>, metadata: Value) -> Vec<Value> {
        let mut event = self.event("turn_end");
        merge_metadata(&mut event, metadata);
        usage_events(&event, requests)
    }

    /// A subagent's end, with the usage of its own transcript when the agent names one.
    pub fn subagent_end(
        &self,
        transcript: Option<&str>,
        parse: fn(&str) -> Option<Line>,
        subagent_type: Option<&str>,
    ) -> Result<Vec<Value>, AdapterError> {
        let mut event = self.event("subagent_end");
        if let Some(kind) = subagent_type {
            event["metadata"]["subagent_type"] = json!(kind);
        }
        Ok(usage_events(&event, self.usage_since_last_read(transcript, parse)?))
    }

    /// A `notification` of `kind` (the wire's permission, idle, elicitation, auth, other).
    pub fn notification(&self, kind: &str) -> Value {
        let mut event = self.event("notification");
        event["notification_kind"] = json!(kind);
        event
    }

    pub fn compact(&self, trigger: Option<&str>) -> Value {
        let mut event = self.event("compact");
        if let Some(trigger) = trigger {
            event["metadata"]["trigger"] = json!(trigger);
        }
        event
    }

    /// The session's end: calls that never ended, usage the transcript gained since the
    /// last turn (a turn cut short has no end hook), then `session_end`.
    pub fn session_end(
        &self,
        transcript: Option<&str>,
        parse: fn(&str) -> Option<Line>,
        reason: Option<&str>,
    ) -> Result<Vec<Value>, AdapterError> {
        let left = self.usage_since_last_read(transcript, parse)?;
        self.session_end_with(transcript, left, reason)
    }

    /// [`Builder::session_end`] with usage the adapter found itself; `transcript` is the
    /// session's transcript for the shipper (due now), if the agent has one.
    pub fn session_end_with(
        &self,
        transcript: Option<&str>,
        left: Vec<Request>,
        reason: Option<&str>,
    ) -> Result<Vec<Value>, AdapterError> {
        self.note_transcript(transcript, true)?;
        let mut events = self.unended_tools_denied()?;
        if !left.is_empty() {
            let mut turn = self.event("turn_end");
            turn["metadata"]["usage_left_at"] = json!("session_end");
            events.extend(usage_events(&turn, left));
        }
        let mut event = self.event("session_end");
        if let Some(reason) = reason {
            event["metadata"]["reason"] = json!(reason);
        }
        // What the session left: its last commit, a branch it made.
        if let Some(git) = self.cwd.as_deref().and_then(|cwd| git_context(cwd.as_ref())) {
            event["git"] = git;
        }
        events.push(event);
        Ok(events)
    }
}

/// The pull request a GitHub Actions run was started for (`GITHUB_REF` is
/// `refs/pull/<n>/merge` or `…/head`), if it was.
pub fn pull_request_of_ci_run(github_ref: Option<&str>) -> Option<u64> {
    let rest = github_ref?.strip_prefix("refs/pull/")?;
    let (number, kind) = rest.split_once('/')?;
    matches!(kind, "merge" | "head").then(|| number.parse().ok()).flatten().filter(|n| *n > 0)
}

fn merge_metadata(event: &mut Value, extra: Value) {
    if let (Some(target), Value::Object(extra)) = (event["metadata"].as_object_mut(), extra) {
        target.extend(extra);
    }
}

/// Sets the canonical permission mode on every event of the invocation.
pub fn with_permission_mode(events: Vec<Value>, mode: Option<&str>) -> Vec<Value> {
    events
        .into_iter()
        .map(|mut event| {
            if let Some(mode) = mode {
                event["permission_mode"] = json!(mode);
            }
            event
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::pull_request_of_ci_run;

    #[test]
    fn a_ci_run_of_a_pull_request_names_it() {
        assert_eq!(pull_request_of_ci_run(Some("refs/pull/42/merge")), Some(42));
        assert_eq!(pull_request_of_ci_run(Some("refs/pull/7/head")), Some(7));
        for not_one in
            [None, Some("refs/heads/main"), Some("refs/pull/x/merge"), Some("refs/pull/0/merge"), Some("refs/pull/3")]
        {
            assert_eq!(pull_request_of_ci_run(not_one), None, "{not_one:?}");
        }
    }
}

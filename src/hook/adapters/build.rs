//! Building wire events from an adapter's reading of a payload, the same way for every
//! agent: ids and timestamps, tool objects with content-free digests, tool durations
//! across processes, usage per model request read from the transcript, and tool calls
//! that never ended reported as denied when their turn ends. Events are built as
//! `model::wire::Draft`s, the wire contract's fields by name, and serialised into the
//! queue as they are.

use serde_json::Value;

use super::common::{digest_of, git_context, sha256_hex, target_hash, usage_events};
use super::{AdapterError, Context};
use crate::agents::usage::{Line, Request};
use crate::config::machine::MachineVariable;
use crate::hook::usage;
use crate::model::wire::{Draft, DraftTool};
use crate::model::{AgentType, EventType, NotificationKind, ToolStatus};

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
    fn pairing_key(&self, tool: &DraftTool) -> String {
        match &self.use_id {
            Some(id) => id.clone(),
            None => {
                let input = tool.input_sha256.as_deref().unwrap_or_default();
                format!("~{}", &sha256_hex(format!("{}\u{1f}{input}", self.name).as_bytes())[..32])
            }
        }
    }
}

impl Builder<'_, '_> {
    pub fn event(&self, kind: EventType) -> Draft {
        let mut event = Draft::new(uuid::Uuid::now_v7(), kind, self.context.now_ms, self.agent, self.session.clone());
        event.note("hook_event", self.hook_event.clone());
        event
    }

    fn tool_object(&self, call: &ToolCall<'_>) -> DraftTool {
        let mut tool = DraftTool {
            name: Some(format!("{}:{}", self.agent.as_str(), call.name)),
            server: call.server.clone(),
            action: Some(call.action.to_string()),
            use_id: call.use_id.clone(),
            ..DraftTool::default()
        };
        if let Some(input) = call.input {
            let (digest, bytes) = digest_of(input);
            tool.input_sha256 = Some(digest);
            tool.input_bytes = Some(bytes as i64);
            tool.target_hash = target_hash(input);
        }
        tool
    }

    /// A `tool_start`, remembering when it started for the matching end.
    pub fn tool_start(&self, call: &ToolCall<'_>) -> Result<Draft, AdapterError> {
        let tool = self.tool_object(call);
        let key = call.pairing_key(&tool);
        let text = serde_json::to_string(&tool).unwrap_or_default();
        self.context.state.tool_started(&self.session, &key, self.context.now_ms, &text)?;
        let mut event = self.event(EventType::ToolStart);
        event.tool = Some(tool);
        Ok(event)
    }

    /// A `tool_end` with its status, output digest and (when its start was seen) duration.
    pub fn tool_end(
        &self,
        call: &ToolCall<'_>,
        output: Option<&Value>,
        status: ToolStatus,
    ) -> Result<Draft, AdapterError> {
        let mut tool = self.tool_object(call);
        let key = call.pairing_key(&tool);
        if let Some(output) = output.filter(|o| !o.is_null()) {
            let (digest, bytes) = digest_of(output);
            tool.output_sha256 = Some(digest);
            tool.output_bytes = Some(bytes as i64);
        }
        tool.set_status(status);
        if let Some(started) = self.context.state.tool_finished(&self.session, &key)? {
            tool.duration_ms = Some((self.context.now_ms - started).max(0));
        }
        let mut event = self.event(EventType::ToolEnd);
        event.tool = Some(tool);
        Ok(event)
    }

    /// Tool calls of this session that started and never ended, as `denied` ends: when
    /// a turn is over, a call without an end did not run (the person or a policy
    /// refused it; the agents that say so explicitly end it themselves).
    pub fn unended_tools_denied(&self) -> Result<Vec<Draft>, AdapterError> {
        let mut events = Vec::new();
        for (started, tool) in self.context.state.take_open_tools(&self.session)? {
            // A start the queue kept from an older hook reads the same (the same names).
            let mut tool: DraftTool = serde_json::from_str(&tool).unwrap_or_default();
            tool.set_status(ToolStatus::Denied);
            tool.duration_ms = Some(0);
            let mut event = self.event(EventType::ToolEnd);
            // Refused when it was asked for: it ended, without running, as it started
            // (not when the turn did), so it sits in the trace where it was asked.
            event.set_ts_ms(started);
            event.note("inferred", "no end before the turn ended");
            event.tool = Some(tool);
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
    pub fn session_start(&self, source: Option<&str>, model: Option<&str>) -> Draft {
        let mut event = self.event(EventType::SessionStart);
        if let Some(source) = source {
            event.note("source", source);
        }
        event.model = model.map(str::to_string);
        event.git = self.cwd.as_deref().and_then(|cwd| git_context(cwd.as_ref()));
        if let Some(number) = pull_request_of_ci_run(MachineVariable::GithubRef.text().as_deref()) {
            event.note("pull_request", number);
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
    ) -> Result<Vec<Draft>, AdapterError> {
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
    ) -> Result<Vec<Draft>, AdapterError> {
        self.note_transcript(transcript, false)?;
        let mut events = self.unended_tools_denied()?;
        events.extend(self.requests(requests, metadata));
        Ok(events)
    }

    /// One `turn_end` per model request (or one without usage), closing nothing: what a
    /// turn's end reports of its requests.
    pub fn requests(&self, requests: Vec<Request>, metadata: Value) -> Vec<Draft> {
        let mut event = self.event(EventType::TurnEnd);
        merge_metadata(&mut event, metadata);
        usage_events(&event, requests)
    }

    /// A subagent's end, with the usage of its own transcript when the agent names one.
    pub fn subagent_end(
        &self,
        transcript: Option<&str>,
        parse: fn(&str) -> Option<Line>,
        subagent_type: Option<&str>,
    ) -> Result<Vec<Draft>, AdapterError> {
        let mut event = self.event(EventType::SubagentEnd);
        if let Some(kind) = subagent_type {
            event.note("subagent_type", kind);
        }
        Ok(usage_events(&event, self.usage_since_last_read(transcript, parse)?))
    }

    /// A `notification` of `kind` (the wire's permission, idle, elicitation, auth, other).
    pub fn notification(&self, kind: NotificationKind) -> Draft {
        let mut event = self.event(EventType::Notification);
        event.set_notification_kind(kind);
        event
    }

    pub fn compact(&self, trigger: Option<&str>) -> Draft {
        let mut event = self.event(EventType::Compact);
        if let Some(trigger) = trigger {
            event.note("trigger", trigger);
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
    ) -> Result<Vec<Draft>, AdapterError> {
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
    ) -> Result<Vec<Draft>, AdapterError> {
        self.note_transcript(transcript, true)?;
        let mut events = self.unended_tools_denied()?;
        if !left.is_empty() {
            let mut turn = self.event(EventType::TurnEnd);
            turn.note("usage_left_at", "session_end");
            events.extend(usage_events(&turn, left));
        }
        let mut event = self.event(EventType::SessionEnd);
        if let Some(reason) = reason {
            event.note("reason", reason);
        }
        // What the session left: its last commit, a branch it made.
        event.git = self.cwd.as_deref().and_then(|cwd| git_context(cwd.as_ref()));
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

fn merge_metadata(event: &mut Draft, extra: Value) {
    if let Value::Object(extra) = extra {
        event.metadata.get_or_insert_with(Default::default).extend(extra);
    }
}

/// Sets the canonical permission mode on every event of the invocation.
pub fn with_permission_mode(events: Vec<Draft>, mode: Option<&str>) -> Vec<Draft> {
    events
        .into_iter()
        .map(|mut event| {
            if let Some(mode) = mode {
                event.permission_mode = Some(mode.to_string());
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

//! GitHub Copilot CLI's transcript store: `~/.copilot/session-state/<session>/events.jsonl`
//! (or under `$COPILOT_HOME`). A session becomes session_start (`session.start`),
//! prompt_submit (each `user.message` of the main agent), tool_start/tool_end (each
//! `tool.execution_start` and its `tool.execution_complete`: `error` when not
//! `success`, `denied` when the error says the person refused), subagent_end
//! (`subagent.completed`/`failed`), compact (`session.compaction_complete`), one turn_end
//! per (`session.shutdown`, model) with the usage hooks read from the same line, and
//! session_end (last line).

use std::path::Path;

use serde_json::Value;

use super::tools::{Call, Tools};
use super::{ImportedSession, Importer, Store, by_path, event, parse_ms, usage_event};
use crate::agents::copilot_cli::tool_action;
use crate::agents::text;
use crate::agents::usage::Line;
use crate::config::machine::MachineVariable;
use crate::hook::adapters::copilot_cli::{reads_as_refusal, transcript_line};
use crate::hook::local::dir_from_env;
use crate::model::{AgentType, EventType};

pub const IMPORTER: Importer = Importer {
    default_root: || dir_from_env(MachineVariable::CopilotHome, ".copilot").join("session-state"),
    store: Store::Files(|path| path.file_name().is_some_and(|n| n == "events.jsonl")),
    parse: |source| by_path(parse_file, source),
    usage_line: Some(transcript_line),
};

const AGENT: AgentType = AgentType::CopilotCli;

fn parse_file(path: &Path) -> anyhow::Result<Option<ImportedSession>> {
    let text_all = std::fs::read_to_string(path)?;
    let mut session: Option<String> = None;
    let (mut first_ms, mut last_ms) = (None::<i64>, 0i64);
    let mut events = Vec::new();
    let mut tools: Option<Tools> = None;
    for (number, raw) in text_all.lines().enumerate() {
        let Ok(line) = serde_json::from_str::<Value>(raw) else { continue };
        let Some(ts) = text(&line, "timestamp").and_then(parse_ms) else { continue };
        let data = line.get("data").unwrap_or(&Value::Null);
        let kind = text(&line, "type").unwrap_or("");
        if session.is_none() && kind == "session.start" {
            session = text(data, "sessionId").map(str::to_string);
        }
        let Some(id) = session.as_deref() else { continue };
        first_ms.get_or_insert(ts);
        last_ms = last_ms.max(ts);
        let calls = tools.get_or_insert_with(|| Tools::new(AGENT, id));
        let key = text(&line, "id").map(str::to_string).unwrap_or_else(|| number.to_string());
        match kind {
            "user.message" if line.get("agentId").is_none() => {
                events.push(event(AGENT, id, EventType::PromptSubmit, ts, &key));
            }
            "tool.execution_start" => {
                let Some(use_id) = text(data, "toolCallId") else { continue };
                let name = text(data, "toolName").unwrap_or("unknown");
                let input = data.get("arguments").unwrap_or(&Value::Null);
                let server = text(data, "mcpServerName");
                let action = if server.is_some() { "mcp" } else { tool_action(name) };
                calls.start(ts, &Call { use_id, name, action, server, input });
            }
            "tool.execution_complete" => {
                let Some(use_id) = text(data, "toolCallId") else { continue };
                let error = data.get("error");
                let said = error.and_then(|e| text(e, "message")).unwrap_or("");
                let code = error.and_then(|e| text(e, "code")).unwrap_or("");
                let status = if data.get("success").and_then(Value::as_bool) == Some(true) {
                    "success"
                } else if code.starts_with("denied") || code == "rejected" || reads_as_refusal(said) {
                    "denied"
                } else {
                    "error"
                };
                let output = data.get("result").or(error).unwrap_or(&Value::Null);
                calls.end(ts, use_id, output, status);
            }
            "subagent.completed" | "subagent.failed" => {
                let mut end = event(AGENT, id, EventType::SubagentEnd, ts, &key);
                if let Some(name) = text(data, "agentName") {
                    end.note("subagent_type", name);
                }
                events.push(end);
            }
            "session.compaction_complete" => events.push(event(AGENT, id, EventType::Compact, ts, &key)),
            "session.shutdown" => {
                let Some(Line::Many(lines)) = transcript_line(raw) else { continue };
                for line in lines {
                    let Line::Counts { group, model, usage } = line else { continue };
                    if !usage.is_zero() {
                        events.push(usage_event(AGENT, id, EventType::TurnEnd, ts, &group, model.as_deref(), &usage)?);
                    }
                }
            }
            _ => {}
        }
    }
    let (Some(id), Some(first_ms)) = (session, first_ms) else { return Ok(None) };
    let mut all = vec![event(AGENT, &id, EventType::SessionStart, first_ms, "start")];
    all.extend(tools.map(|t| t.events).unwrap_or_default());
    all.extend(events);
    all.push(event(AGENT, &id, EventType::SessionEnd, last_ms, "end"));
    Ok(Some(ImportedSession { events: all, last_ms, ledger: Vec::new() }))
}

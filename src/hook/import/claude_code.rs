//! Claude Code's transcript store: `~/.claude/projects/<project>/<session>.jsonl`, and a
//! subagent's own file under `<session>/subagents/`. A session becomes session_start
//! (first line), prompt_submit (each person's message), tool_start/tool_end (each
//! `tool_use` block and its `tool_result`, `error` when `is_error`, `denied` when the
//! person refused it), one turn_end per model request (subagent_end in a subagent's
//! file) with its usage counted as the hook counts it, and session_end (last line).

use std::path::Path;

use serde_json::{Value, json};

use super::tools::{Call, Tools};
use super::{ImportedSession, Importer, Store, by_path, event, parse_ms, usage_event};
use crate::agents::claude_code::{record_usage, tool_action, transcript_line};
use crate::agents::usage::Line;
use crate::config::machine::MachineVariable;
use crate::hook::local::dir_from_env;
use crate::model::{AgentType, EventType, Usage};

pub const IMPORTER: Importer = Importer {
    default_root: || dir_from_env(MachineVariable::ClaudeConfigDir, ".claude").join("projects"),
    store: Store::Files(|path| path.extension().is_some_and(|e| e == "jsonl")),
    parse: |source| by_path(parse_file, source),
    usage_line: Some(transcript_line),
};

const AGENT: AgentType = AgentType::ClaudeCode;

fn is_person_prompt(line: &Value) -> bool {
    if line.get("isMeta") == Some(&json!(true)) || line.get("isSidechain") == Some(&json!(true)) {
        return false;
    }
    match line.get("message").and_then(|m| m.get("content")) {
        Some(Value::String(text)) => !text.starts_with("<command-") && !text.starts_with("<local-command"),
        Some(Value::Array(blocks)) => {
            blocks.iter().any(|b| b.get("type") == Some(&json!("text")))
                && !blocks.iter().any(|b| b.get("type") == Some(&json!("tool_result")))
        }
        _ => false,
    }
}

fn parse_file(path: &Path) -> anyhow::Result<Option<ImportedSession>> {
    let text = std::fs::read_to_string(path)?;
    let subagent = path.components().any(|c| c.as_os_str() == "subagents");
    let mut session: Option<String> = None;
    let (mut first_ms, mut last_ms) = (None::<i64>, 0i64);
    // The session's events in transcript order, tool calls paired as they end.
    let mut recorded: Option<Tools> = None;
    // Usage groups in order, with their largest counts and the time of their last line.
    let mut groups: Vec<(String, Option<String>, Usage, i64)> = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let Ok(line) = serde_json::from_str::<Value>(raw) else { continue };
        let Some(ts) = line.get("timestamp").and_then(Value::as_str).and_then(parse_ms) else { continue };
        if session.is_none() {
            session = line.get("sessionId").and_then(Value::as_str).map(str::to_string);
        }
        let Some(id) = session.clone() else { continue };
        let calls = recorded.get_or_insert_with(|| Tools::new(AGENT, &id));
        first_ms.get_or_insert(ts);
        last_ms = last_ms.max(ts);
        let key = line.get("uuid").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| number.to_string());
        let blocks = line.get("message").and_then(|m| m.get("content")).and_then(Value::as_array);
        match line.get("type").and_then(Value::as_str) {
            Some("user") if !subagent && is_person_prompt(&line) => {
                calls.events.push(event(AGENT, &id, EventType::PromptSubmit, ts, &key));
            }
            Some("user") => {
                for block in blocks.into_iter().flatten().filter(|b| b.get("type") == Some(&json!("tool_result"))) {
                    let Some(use_id) = block.get("tool_use_id").and_then(Value::as_str) else { continue };
                    let output = block.get("content").unwrap_or(&Value::Null);
                    let said = output.as_str().unwrap_or("");
                    let status = if block.get("is_error") == Some(&json!(true)) {
                        if said.contains("doesn't want to proceed") || said.contains("rejected") {
                            "denied"
                        } else {
                            "error"
                        }
                    } else {
                        "success"
                    };
                    calls.end(ts, use_id, output, status);
                }
            }
            Some("assistant") => {
                for block in blocks.into_iter().flatten().filter(|b| b.get("type") == Some(&json!("tool_use"))) {
                    let Some(use_id) = block.get("id").and_then(Value::as_str) else { continue };
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("unknown");
                    let input = block.get("input").unwrap_or(&Value::Null);
                    calls.start(ts, &Call { use_id, name, action: tool_action(name), server: None, input });
                }
                if let Some(Line::Counts { group, model, usage }) = record_usage(&line) {
                    match groups.iter_mut().find(|g| g.0 == group) {
                        Some(entry) => {
                            entry.2 = usage.max_with(&entry.2);
                            entry.3 = ts;
                        }
                        None => groups.push((group, model, usage, ts)),
                    }
                }
            }
            _ => {}
        }
    }
    let (Some(id), Some(first_ms)) = (session, first_ms) else { return Ok(None) };
    let kind = if subagent { EventType::SubagentEnd } else { EventType::TurnEnd };
    let mut events = recorded.map(|calls| calls.events).unwrap_or_default();
    for (group, model, usage, ts) in groups.into_iter().filter(|g| !g.2.is_zero()) {
        events.push(usage_event(AGENT, &id, kind, ts, &group, model.as_deref(), &usage)?);
    }
    if !subagent {
        events.insert(0, event(AGENT, &id, EventType::SessionStart, first_ms, "start"));
        events.push(event(AGENT, &id, EventType::SessionEnd, last_ms, "end"));
    }
    Ok(Some(ImportedSession { events, last_ms, ledger: Vec::new() }))
}

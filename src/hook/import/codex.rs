//! Codex's transcript store: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (or under
//! `$CODEX_HOME`). A rollout becomes session_start (`session_meta`), prompt_submit (each
//! `user_message`), tool_start/tool_end (each `function_call` or `custom_tool_call` and
//! its output, `error` when the output states a non-zero exit code), one turn_end per
//! `token_count` request (running totals differenced, as the hook does) and session_end.

use std::path::Path;

use serde_json::Value;

use super::tools::{Call, Tools};
use super::{ImportedSession, Importer, Store, by_path, event, parse_ms, usage_event};
use crate::agents::codex::{exit_code, record_usage, tool_action, transcript_line};
use crate::agents::usage::Line;
use crate::config::machine::MachineVariable;
use crate::hook::local::dir_from_env;
use crate::model::{AgentType, EventType, Usage};

pub const IMPORTER: Importer = Importer {
    default_root: || dir_from_env(MachineVariable::CodexHome, ".codex").join("sessions"),
    store: Store::Files(|path| {
        path.extension().is_some_and(|e| e == "jsonl")
            && path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
    }),
    parse: |source| by_path(parse_file, source),
    usage_line: Some(transcript_line),
};

const AGENT: AgentType = AgentType::Codex;

fn parse_file(path: &Path) -> anyhow::Result<Option<ImportedSession>> {
    let text = std::fs::read_to_string(path)?;
    let mut session: Option<String> = None;
    let (mut first_ms, mut last_ms) = (None::<i64>, 0i64);
    // The session's events in transcript order, tool calls paired as they end.
    let mut recorded: Option<Tools> = None;
    let (mut model, mut total) = (None::<String>, Usage::default());
    for (number, raw) in text.lines().enumerate() {
        let Ok(line) = serde_json::from_str::<Value>(raw) else { continue };
        let Some(ts) = line.get("timestamp").and_then(Value::as_str).and_then(parse_ms) else { continue };
        let payload = line.get("payload").unwrap_or(&Value::Null);
        let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
        if kind == "session_meta" {
            session = payload.get("id").and_then(Value::as_str).map(str::to_string);
        }
        let Some(id) = session.clone() else { continue };
        let calls = recorded.get_or_insert_with(|| Tools::new(AGENT, &id));
        first_ms.get_or_insert(ts);
        last_ms = last_ms.max(ts);
        let key = number.to_string();
        match (kind, payload.get("type").and_then(Value::as_str)) {
            ("event_msg", Some("user_message")) => {
                calls.events.push(event(AGENT, &id, EventType::PromptSubmit, ts, &key))
            }
            ("response_item", Some(call @ ("function_call" | "custom_tool_call"))) => {
                let Some(call_id) = payload.get("call_id").and_then(Value::as_str) else { continue };
                let name = payload.get("name").and_then(Value::as_str).unwrap_or("unknown");
                let input_key = if call == "function_call" { "arguments" } else { "input" };
                let input = payload.get(input_key).unwrap_or(&Value::Null);
                // Hooks see shell calls as `Bash`; imported calls are named the same.
                let name = if matches!(name, "shell" | "shell_command" | "local_shell" | "exec_command") {
                    "Bash"
                } else {
                    name
                };
                let call = Call { use_id: call_id, name, action: tool_action(name), server: None, input };
                calls.start(ts, &call);
            }
            ("response_item", Some("function_call_output" | "custom_tool_call_output")) => {
                let Some(call_id) = payload.get("call_id").and_then(Value::as_str) else { continue };
                let output = payload.get("output").unwrap_or(&Value::Null);
                let said = output.as_str().map(str::to_string).unwrap_or_else(|| output.to_string());
                let failed = exit_code(&said).is_some_and(|code| code != 0);
                calls.end(ts, call_id, output, if failed { "error" } else { "success" });
            }
            _ => match record_usage(&line) {
                Some(Line::Model(name)) => model = Some(name),
                Some(Line::Cumulative { usage, .. }) => {
                    let grown = crate::agents::usage::growth(&usage, &total);
                    total = usage.max_with(&total);
                    if !grown.is_zero() {
                        calls.events.push(usage_event(
                            AGENT,
                            &id,
                            EventType::TurnEnd,
                            ts,
                            &key,
                            model.as_deref(),
                            &grown,
                        )?);
                    }
                }
                _ => {}
            },
        }
    }
    let (Some(id), Some(first_ms)) = (session, first_ms) else { return Ok(None) };
    let mut events = recorded.map(|calls| calls.events).unwrap_or_default();
    events.insert(0, event(AGENT, &id, EventType::SessionStart, first_ms, "start"));
    events.push(event(AGENT, &id, EventType::SessionEnd, last_ms, "end"));
    Ok(Some(ImportedSession { events, last_ms, ledger: Vec::new() }))
}

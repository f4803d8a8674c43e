//! Cline: the task's `ui_messages.json`, the message list Cline's panel shows (types
//! in cline/cline `src/shared/ExtensionMessage.ts`): one JSON array of `{ts (ms), type:
//! "say"|"ask", say|ask, text, partial?, modelInfo?}`. A text that is not an array is
//! read as raw lines. Cline records no call ids: a call's result is the next one shown.
//!
//! Mapping: `task`, `user_feedback` and `user_feedback_diff` are User; `text`,
//! `completion_result` and the questions of `followup`/`plan_mode_respond` are Assistant;
//! `reasoning` is Reasoning. A `tool`, `command` or `use_mcp_server` message is a call
//! (named as the import names it), added to the Assistant message of the same API
//! request; its result is the `command_output` or `mcp_server_response` shown, else the
//! next `api_req_started`'s request text, which begins with the result as Cline sent it
//! to the model (`[read_file for '…'] Result:`; an error when it says the tool failed or
//! the person denied it). Each `api_req_started` gives its usage and model
//! (`modelInfo.modelId`) to the first Assistant message of its request. `error`,
//! `diff_error`, `clineignore_error`, `shell_integration_warning`, `mcp_notification`,
//! `api_req_failed`, `mistake_limit_reached` and `auto_approval_max_req_reached` are
//! System.
//!
//! Skipped: `api_req_started` itself (its request text repeats the task or a tool's
//! result), `api_req_finished`, `api_req_retried`, `deleted_api_reqs`,
//! `checkpoint_created`, `resume_task`, `resume_completed_task` (bookkeeping) and asks
//! with no text (the button under a finished task). Other messages are raw, as their JSON.

use serde_json::Value;

use super::{Calls, message, raw, raw_lines, time_ms, usage_of};
use crate::agents::cline::api_requests;
use crate::agents::cline::{shown_tool, tool_result};
use crate::agents::text;
use crate::transcripts::model::{Message, Role, Usage};

#[derive(Default)]
struct Task {
    messages: Vec<Message>,
    calls: Calls,
    model: Option<String>,
    /// The usage of the latest API request, until its first Assistant message takes it.
    usage: Option<Usage>,
    /// The Assistant message of the latest API request.
    reply: Option<usize>,
    /// The last call shown, and whether its result was shown too.
    open_call: Option<(String, bool)>,
}

pub fn parse(transcript: &str) -> Vec<Message> {
    let Ok(Value::Array(shown)) = serde_json::from_str::<Value>(transcript) else {
        return raw_lines(transcript);
    };
    let mut task = Task::default();
    for ui_message in &shown {
        task.read(ui_message);
    }
    task.messages
}

impl Task {
    fn read(&mut self, ui_message: &Value) {
        let ts_ms = time_ms(ui_message, "ts");
        let said = text(ui_message, "text").unwrap_or("");
        let kind = text(ui_message, "say").or_else(|| text(ui_message, "ask")).unwrap_or("");
        match kind {
            "api_req_started" => self.request(ui_message, said, ts_ms),
            "task" | "user_feedback" | "user_feedback_diff" => self.messages.push(message(Role::User, said, ts_ms)),
            "reasoning" => {
                let model = self.model.clone();
                self.messages.push(Message { model, ..message(Role::Reasoning, said, ts_ms) });
            }
            "text" | "completion_result" | "followup" | "plan_mode_respond" if !said.is_empty() => {
                // Questions and plans are JSON with the words in `question` or `response`.
                let asked = serde_json::from_str::<Value>(said).ok();
                let words = asked.as_ref().and_then(|a| text(a, "question").or_else(|| text(a, "response")));
                self.reply(words.unwrap_or(said), None, ts_ms);
            }
            "tool" | "command" | "use_mcp_server" => match shown_tool(ui_message) {
                Some((name, _)) => {
                    let call = self.calls.call(None, &name, said.to_string());
                    self.open_call = Some((name, false));
                    self.reply("", Some(call), ts_ms);
                }
                None => self.messages.push(raw(&ui_message.to_string())),
            },
            "command_output" | "mcp_server_response" => {
                let name = self.open_call.as_mut().map(|(name, answered)| {
                    *answered = true;
                    name.clone()
                });
                let result = self.calls.result(None, name.as_deref(), said.to_string(), false);
                self.messages.push(Message { ts_ms, ..result });
            }
            "error"
            | "diff_error"
            | "clineignore_error"
            | "shell_integration_warning"
            | "mcp_notification"
            | "api_req_failed"
            | "mistake_limit_reached"
            | "auto_approval_max_req_reached" => {
                self.messages.push(message(Role::System, said, ts_ms));
            }
            "api_req_finished"
            | "api_req_retried"
            | "deleted_api_reqs"
            | "checkpoint_created"
            | "resume_task"
            | "resume_completed_task" => {}
            _ if text(ui_message, "type") == Some("ask") && said.is_empty() => {}
            _ => self.messages.push(raw(&ui_message.to_string())),
        }
    }

    /// A new API request: the result of the call before it, when none was shown, and
    /// the usage and model of what follows.
    fn request(&mut self, ui_message: &Value, said: &str, ts_ms: Option<i64>) {
        let info = serde_json::from_str::<Value>(said).ok();
        let request = info.as_ref().and_then(|info| text(info, "request")).unwrap_or("");
        if let Some((called, answered)) = self.open_call.take()
            && !answered
        {
            let (named, status) = tool_result(request);
            let name = named.unwrap_or(&called);
            let result = self.calls.result(None, Some(name), request.to_string(), status != "success");
            self.messages.push(Message { ts_ms, ..result });
        }
        let request_usage = api_requests(std::slice::from_ref(ui_message), None).into_iter().next();
        if let Some((_, model, _)) = &request_usage {
            self.model = model.clone().or(self.model.take());
        }
        self.usage = request_usage.and_then(|(_, _, counts)| usage_of(&counts));
        self.reply = None;
    }

    /// Text or a call of the model's: added to the Assistant message of the current
    /// request while that is the last message, else a new one (with the request's usage).
    fn reply(&mut self, said: &str, call: Option<crate::transcripts::model::ToolCall>, ts_ms: Option<i64>) {
        let last = self.messages.len().checked_sub(1);
        if let Some(at) = self.reply.filter(|at| Some(*at) == last)
            && let Some(reply) = self.messages.get_mut(at)
        {
            super::append_text(&mut reply.text, said);
            reply.tool_calls.extend(call);
            return;
        }
        self.reply = Some(self.messages.len());
        self.messages.push(Message {
            tool_calls: call.into_iter().collect(),
            model: self.model.clone(),
            usage: self.usage.take(),
            ..message(Role::Assistant, said, ts_ms)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UI_MESSAGES: &str = include_str!("../../../tests/fixtures/agents/cline/ui_messages.json");

    fn parsed() -> Vec<Message> {
        let mut shown: Vec<Value> = serde_json::from_str(UI_MESSAGES).unwrap();
        shown.insert(1, serde_json::json!({"ts": 1762300000050_i64, "type": "say", "say": "mystery", "text": "?"}));
        parse(&Value::Array(shown).to_string())
    }

    #[test]
    fn the_fixture_reads_as_a_conversation() {
        let messages = parsed();
        use Role::*;
        assert_eq!(
            messages.iter().map(|m| m.role).collect::<Vec<_>>(),
            [User, Raw, Assistant, Tool, Assistant, Tool, Assistant]
        );
        assert_eq!(messages[0].text, "Fix the failing test in src/parse.ts");
        assert_eq!(messages[0].ts_ms, Some(1_762_300_000_040));
        assert!(messages[1].text.contains(r#""say":"mystery""#));
        let first = &messages[2];
        assert_eq!(first.text, "I'll start by reading src/parse.ts.");
        assert_eq!(first.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
        assert_eq!(
            first.usage,
            Some(Usage { input_tokens: 12, output_tokens: 180, cache_read_tokens: 0, cache_write_tokens: 13950 })
        );
        assert_eq!(
            first.tool_calls.iter().map(|c| (c.name.as_str(), c.id.as_deref())).collect::<Vec<_>>(),
            [("read_file", None)]
        );
        assert!(first.tool_calls[0].input.starts_with(r#"{"tool": "readFile", "path": "src/parse.ts""#));
        assert_eq!(messages[6].text, "Fixed parse() to trim items; all 12 tests pass.");
        assert_eq!(messages[6].usage.map(|u| u.cache_read_tokens), Some(15570));
    }

    #[test]
    fn results_come_from_the_output_shown_or_the_next_request() {
        let messages = parsed();
        let read = &messages[3];
        assert_eq!((read.tool_name.as_deref(), read.is_error), (Some("read_file"), false));
        assert!(read.text.starts_with("[read_file for 'src/parse.ts'] Result:\nexport function parse"));
        let command = &messages[4];
        assert_eq!(
            (command.tool_calls[0].name.as_str(), command.tool_calls[0].input.as_str()),
            ("execute_command", "npm test")
        );
        assert_eq!(command.usage.map(|u| u.input_tokens), Some(8));
        let output = &messages[5];
        assert_eq!(
            (output.tool_name.as_deref(), output.text.as_str()),
            (Some("execute_command"), "FAIL src/parse.test.ts\nTests: 1 failed, 11 passed")
        );
    }

    #[test]
    fn a_text_that_is_no_array_is_raw_lines() {
        let messages = parse("not json\n{\"ts\": 1}");
        assert_eq!(
            messages.iter().map(|m| (m.role, m.text.as_str())).collect::<Vec<_>>(),
            [(Role::Raw, "not json"), (Role::Raw, "{\"ts\": 1}")]
        );
        let denied = r#"[{"ts": 1, "type": "ask", "ask": "tool", "text": "{\"tool\": \"editedExistingFile\", \"path\": \"a.ts\"}"},
            {"ts": 2, "type": "say", "say": "api_req_started", "text": "{\"request\": \"[replace_in_file for 'a.ts'] Result:\\nThe user denied this operation.\"}"}]"#;
        let messages = parse(denied);
        assert_eq!((messages[1].tool_name.as_deref(), messages[1].is_error), (Some("replace_in_file"), true));
    }
}

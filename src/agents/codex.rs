//! Codex's records: its tools as actions, a call's outcome from its model-facing output,
//! and the running usage totals of its rollout.

use serde_json::Value;

use super::usage::Line;
use crate::model::{ToolStatus, Usage};

pub fn tool_action(tool: &str) -> &'static str {
    match tool {
        "Bash" | "shell" | "shell_command" | "local_shell" | "exec_command" => "exec",
        "apply_patch" => "edit",
        "read_file" | "view_image" | "read_mcp_resource" => "read",
        "grep_files" | "list_dir" | "list_mcp_resources" | "list_mcp_resource_templates" => "search",
        "web_search" => "fetch",
        "spawn_agent" | "send_input" | "wait" | "close_agent" | "resume_agent" => "delegate",
        "update_plan" => "plan",
        _ if tool.starts_with("mcp__") => "mcp",
        _ => "other",
    }
}

/// The exit code in Codex's model-facing tool output, if it states one.
pub fn exit_code(output: &str) -> Option<i64> {
    ["Exit code: ", "Process exited with code "].iter().find_map(|marker| {
        let rest = &output[output.find(marker)? + marker.len()..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
        digits.parse().ok()
    })
}

/// The outcome of a call as Codex reports it in its OTLP `tool_result` (`success`, the
/// model-facing `output`) and its rollout's `function_call_output`: a call refused before
/// it ran (an execpolicy rule's `forbidden`, an approval declined) is `denied`, one that
/// could not run or exited non-zero is `error`.
pub fn reported_status(success: Option<bool>, output: &str) -> ToolStatus {
    if success == Some(false) {
        // `exec_command failed: CreateProcess { message: "Rejected(\"… rejected: …\")" }`
        let refused = output.contains("Rejected(") || output.contains("rejected by user");
        return if refused { ToolStatus::Denied } else { ToolStatus::Error };
    }
    if exit_code(output).is_some_and(|code| code != 0) { ToolStatus::Error } else { ToolStatus::Success }
}

/// One rollout line: `turn_context` names the model, `token_count` carries the running
/// total.
pub fn transcript_line(line: &str) -> Option<Line> {
    if !line.contains("token_count") && !line.contains("turn_context") {
        return None;
    }
    record_usage(&serde_json::from_str(line).ok()?)
}

/// [`transcript_line`] for a line already parsed (import reads every line anyway).
pub fn record_usage(value: &Value) -> Option<Line> {
    let payload = value.get("payload")?;
    match value.get("type").and_then(Value::as_str)? {
        "turn_context" => payload.get("model").and_then(Value::as_str).map(|m| Line::Model(m.to_string())),
        "event_msg" if payload.get("type").and_then(Value::as_str) == Some("token_count") => {
            let total = payload.get("info")?.get("total_token_usage")?;
            let count = |key: &str| total.get(key).and_then(Value::as_i64).unwrap_or(0).max(0);
            let (input, cached) = (count("input_tokens"), count("cached_input_tokens"));
            let (output, reasoning) = (count("output_tokens"), count("reasoning_output_tokens"));
            Some(Line::Cumulative {
                model: None,
                usage: Usage {
                    input_tokens: (input - cached).max(0),
                    output_tokens: (output - reasoning).max(0),
                    cache_read_tokens: cached,
                    reasoning_tokens: reasoning,
                    ..Usage::default()
                },
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_reads_the_same_from_the_export_and_the_rollout() {
        // Codex 0.171.0's `tool_result` outputs, run for real: `success` is true for a
        // command that exited 128, false for one an execpolicy rule forbade.
        let failed = "Chunk ID: fc04fc\nWall time: 0.0000 seconds\nProcess exited with code 128\nOutput:\nfatal: x\n";
        assert_eq!(reported_status(Some(true), failed), ToolStatus::Error);
        assert_eq!(reported_status(Some(true), "Process exited with code 0\nOutput:\n"), ToolStatus::Success);
        let forbidden = r#"exec_command failed: CreateProcess { message: "Rejected(\"`/bin/bash -lc 'git push'` rejected: pushes go through review\")" }"#;
        assert_eq!(reported_status(Some(false), forbidden), ToolStatus::Denied);
        assert_eq!(reported_status(Some(false), "exec_command failed: No such file"), ToolStatus::Error);
        assert_eq!(reported_status(None, "Success. Updated the following files:"), ToolStatus::Success);
    }
}

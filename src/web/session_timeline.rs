//! A session's events as the session page lists them: the flat table (one step per
//! event, its time from the session's first event, what happened, its cost) and its
//! CSV, and each turn's summary line with its own waterfall (`web::trace`).
//!
//! Invariants: built from the one page of events the session page read; every time is
//! an offset from the session's first event (`charts::offset`, the waterfall's own).

use axum::response::Response;

use super::trace;
use crate::charts::offset;
use crate::model::EventType;
use crate::model::wire::Event;

/// One line of the timeline.
pub struct Step {
    /// Time since the session's first event, `m:ss` or `h:mm:ss`.
    pub offset: String,
    /// When it happened (ms), for the link to its place in the transcript.
    pub ts_ms: i64,
    pub kind: &'static str,
    pub what: String,
    /// `error`, `denied` … for the row's class; empty when there is nothing to flag.
    pub flag: &'static str,
    pub cost: String,
}

/// One turn as the trace lists it: its summary line and its own waterfall.
pub struct TurnRow {
    pub label: String,
    /// When it began, from the session's first event.
    pub at: String,
    pub took: String,
    pub model: String,
    pub tokens: String,
    pub cost: String,
    /// `Bash ×3, Edit`, and how many failed.
    pub tools: String,
    pub failed: usize,
    pub waits: usize,
    pub chart: String,
}

impl TurnRow {
    pub fn of(turn: &trace::Turn, session_start_ms: i64) -> TurnRow {
        let chart = crate::charts::waterfall(
            &turn.label(),
            &turn.spans,
            turn.start_ms,
            turn.end_ms.max(turn.start_ms + 1),
            900,
        );
        TurnRow {
            label: turn.label(),
            at: offset(turn.start_ms - session_start_ms),
            took: offset(turn.end_ms - turn.start_ms),
            model: turn.model.clone().unwrap_or_else(|| "—".into()),
            tokens: format!(
                "{} in, {} out",
                crate::model::count(turn.input_tokens),
                crate::model::count(turn.output_tokens)
            ),
            cost: format!("${:.4}", crate::model::nusd_to_usd(turn.cost_nusd)),
            tools: match trace::tools_of(turn) {
                tools if tools.is_empty() => "no tool calls".into(),
                tools => tools,
            },
            failed: turn.failed_calls,
            waits: turn.waits,
            chart,
        }
    }
}

/// The flat table of a page of events as CSV (the time from the session's first event,
/// the kind, the detail, the cost).
pub fn timeline_csv(session_id: &str, steps: &[Step]) -> Response {
    let mut writer = csv::Writer::from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = writer.write_record(["At", "What", "Detail", "Cost"]);
    for step in steps {
        let _ = writer.write_record([step.offset.as_str(), step.kind, step.what.as_str(), step.cost.as_str()]);
    }
    let body = writer.into_inner().unwrap_or_default();
    super::report::csv_download(&format!("session-{session_id}-events.csv"), body)
}

/// The steps of a page of events; a model switch is noted on the turn that switched.
pub fn timeline(start_ms: i64, events: &[Event]) -> Vec<Step> {
    let mut model: Option<&str> = None;
    events
        .iter()
        .map(|event| {
            let at = offset(event.ts_ms - start_ms);
            let tool = event.tool.as_ref();
            let tool_name = tool.map_or("a tool".to_string(), |t| t.name.clone());
            let (kind, what, flag) = match event.event_type {
                EventType::SessionStart => ("start", git_line(event), ""),
                EventType::SessionEnd => ("end", "the session ended".to_string(), ""),
                EventType::PromptSubmit => (
                    "prompt",
                    event
                        .response_ms
                        .map_or("a prompt".to_string(), |ms| format!("a prompt; first response after {}", offset(ms))),
                    "",
                ),
                EventType::ToolStart => ("tool", format!("{tool_name} started"), ""),
                EventType::ToolEnd => {
                    let status = tool.and_then(|t| t.status).map_or("ended", |s| s.as_str());
                    let took = tool.and_then(|t| t.duration_ms).map_or(String::new(), |ms| format!(" in {} ms", ms));
                    let flag = match status {
                        "error" => "error",
                        "denied" => "denied",
                        _ => "",
                    };
                    ("tool", format!("{tool_name}: {status}{took}"), flag)
                }
                EventType::Notification => {
                    ("wait", format!("notification: {}", event.notification_kind.map_or("other", |k| k.as_str())), "")
                }
                EventType::TurnEnd => {
                    let switched = match (model, event.model.as_deref()) {
                        (Some(before), Some(now)) if before != now => format!(" (switched from {before})"),
                        _ => String::new(),
                    };
                    if let Some(now) = event.model.as_deref() {
                        model = Some(now);
                    }
                    let u = &event.usage;
                    (
                        "turn",
                        format!(
                            "{}{switched}: {} in, {} out, {} cache read, {} cache written",
                            event.model.as_deref().unwrap_or("a turn"),
                            u.input_tokens,
                            u.output_tokens,
                            u.cache_read_tokens,
                            u.cache_write_5m_tokens + u.cache_write_1h_tokens
                        ),
                        "",
                    )
                }
                EventType::SubagentEnd => ("subagent", "a subagent finished".to_string(), ""),
                EventType::Compact => ("compaction", "the context was compacted".to_string(), ""),
            };
            let cost = if event.cost_nusd != 0 {
                format!("${:.4}", crate::model::nusd_to_usd(event.cost_nusd))
            } else {
                String::new()
            };
            Step { offset: at, ts_ms: event.ts_ms, kind, what, flag, cost }
        })
        .collect()
}

fn git_line(event: &Event) -> String {
    match &event.git {
        Some(git) => format!(
            "started on {} at {}",
            git.branch.as_deref().unwrap_or("an unknown branch"),
            git.commit.as_deref().map_or("an unknown commit".to_string(), |c| c.chars().take(10).collect())
        ),
        None => "the session started".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_read_as_clocks() {
        assert_eq!(offset(0), "0:00");
        assert_eq!(offset(61_500), "1:01");
        assert_eq!(offset(3_723_000), "1:02:03");
        assert_eq!(offset(-5), "0:00");
    }
}

//! A session's events read as a trace, for the session page: turns (from a prompt to
//! the agent's answer), each with the tool calls, waits and subagents that happened in
//! it, its model, tokens and cost; drawn as a waterfall (`charts::waterfall`) and listed
//! turn by turn.
//!
//! Subagents nest under the call that started them: no event links the two, so a
//! subagent's end, and every call started while a delegating call (the adapters'
//! `delegate` action) is open, belong to the innermost such call, drawn a level below it.
//!
//! Invariants: built from the events of one page of the session (never from other
//! sessions'); a tool call is its `tool_start` and the `tool_end` with the same
//! `use_id` (or the next end of the same tool when the agent gives no id), and a call
//! with no end lasts until its turn ends; events before the first prompt form a turn of
//! their own ("before the first prompt"), so nothing is dropped.

use std::collections::HashMap;

use crate::charts::{Span, SpanKind};
use crate::model::wire::Event;
use crate::model::{EventType, NotificationKind, ToolStatus};

/// One turn, summed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Turn {
    /// 1-based; 0 for what came before the first prompt.
    pub number: usize,
    pub start_ms: i64,
    pub end_ms: i64,
    pub model: Option<String>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_nusd: i64,
    pub calls: usize,
    pub failed_calls: usize,
    pub waits: usize,
    /// Its rows for the waterfall: the turn, then what happened in it, in order.
    pub spans: Vec<Span>,
}

impl Turn {
    pub fn label(&self) -> String {
        if self.number == 0 { "Before the first prompt".into() } else { format!("Turn {}", self.number) }
    }
}

struct OpenCall {
    /// Which call of the page this is (the order of starts): how children find it.
    serial: usize,
    name: String,
    start_ms: i64,
    use_id: Option<String>,
    /// A call that hands work to a subagent (the adapters' `delegate` action: Claude
    /// Code's Task, Codex's spawn_agent, …).
    delegates: bool,
    /// The open delegating call this one started inside: the subagent's own work.
    parent: Option<usize>,
    /// Rows of what its subagent did, already at their depth below this call.
    children: Vec<Span>,
}

/// Puts `rows` (a finished call and what nested under it) under the open call `parent`,
/// one level deeper; gives them back when that call is not open (they belong to the turn).
fn nest(open: &mut [OpenCall], parent: Option<usize>, mut rows: Vec<Span>) -> Option<Vec<Span>> {
    match parent.and_then(|serial| open.iter_mut().find(|call| call.serial == serial)) {
        Some(parent) => {
            rows.iter_mut().for_each(|row| row.depth += 1);
            parent.children.extend(rows);
            None
        }
        None => Some(rows),
    }
}

/// The rows of a call that reported no end, ended at `end_ms` (its turn's or its
/// parent's end) at `depth`, with what nested under it.
fn unended(call: OpenCall, end_ms: i64, depth: usize) -> Vec<Span> {
    let mut rows = vec![Span {
        label: call.name.clone(),
        depth,
        start_ms: call.start_ms,
        end_ms,
        kind: SpanKind::Call,
        failed: false,
        hover: format!("{}: no end was reported", call.name),
    }];
    rows.extend(call.children.into_iter().map(|row| Span { depth: row.depth + depth - 1, ..row }));
    rows
}

/// The open delegating call a subagent's work belongs to: the innermost one.
fn delegating(open: &[OpenCall]) -> Option<usize> {
    open.iter().rev().find(|call| call.delegates).map(|call| call.serial)
}

/// The turns of `events` (one page of a session, in order).
pub fn turns(events: &[Event]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    let mut open: Vec<OpenCall> = Vec::new();
    let mut current = Turn::default();
    let mut started = false;
    let mut serial = 0;
    for event in events {
        if event.event_type == EventType::PromptSubmit {
            if started || !current.spans.is_empty() {
                finish(&mut current, &mut open, event.ts_ms);
                turns.push(std::mem::take(&mut current));
            }
            current.number = turns.iter().filter(|t| t.number > 0).count() + 1;
            current.start_ms = event.ts_ms;
            started = true;
        } else if !started && current.spans.is_empty() {
            current.start_ms = event.ts_ms;
            started = true;
        }
        current.end_ms = current.end_ms.max(event.ts_ms);
        match event.event_type {
            EventType::ToolStart => {
                let tool = event.tool.as_ref();
                serial += 1;
                open.push(OpenCall {
                    serial,
                    name: tool.map_or("a tool".into(), |t| t.name.clone()),
                    start_ms: event.ts_ms,
                    use_id: tool.and_then(|t| t.use_id.clone()),
                    delegates: tool.and_then(|t| t.action.as_deref()) == Some("delegate"),
                    parent: delegating(&open),
                    children: Vec::new(),
                });
            }
            EventType::ToolEnd => {
                let tool = event.tool.as_ref();
                let name = tool.map_or("a tool".to_string(), |t| t.name.clone());
                let use_id = tool.and_then(|t| t.use_id.as_deref());
                let at = open
                    .iter()
                    .position(|call| use_id.is_some() && call.use_id.as_deref() == use_id)
                    .or_else(|| open.iter().position(|call| call.name == name));
                let status = tool.and_then(|t| t.status);
                let (start_ms, parent, children) = match at {
                    Some(at) => {
                        let mut call = open.remove(at);
                        // Its subagent's calls that never reported an end end with it.
                        while let Some(at) = open.iter().rposition(|child| child.parent == Some(call.serial)) {
                            let child = open.remove(at);
                            current.calls += 1;
                            call.children.extend(unended(child, event.ts_ms, 2));
                        }
                        (call.start_ms, call.parent, call.children)
                    }
                    // An end without its start: as long as the agent said it took.
                    None => (event.ts_ms - tool.and_then(|t| t.duration_ms).unwrap_or(0), None, Vec::new()),
                };
                let failed = matches!(status, Some(ToolStatus::Error) | Some(ToolStatus::Denied));
                let outcome = status.map_or("ended", |s| s.as_str());
                current.calls += 1;
                current.failed_calls += usize::from(failed);
                let mut rows = vec![Span {
                    label: name.clone(),
                    depth: 1,
                    start_ms,
                    end_ms: event.ts_ms,
                    kind: SpanKind::Call,
                    failed,
                    hover: format!("{name}: {outcome} after {}", crate::charts::offset(event.ts_ms - start_ms)),
                }];
                rows.extend(children);
                current.spans.extend(nest(&mut open, parent, rows).into_iter().flatten());
            }
            EventType::Notification => {
                let kind = event.notification_kind;
                let waiting = matches!(
                    kind,
                    Some(NotificationKind::Permission)
                        | Some(NotificationKind::Idle)
                        | Some(NotificationKind::Elicitation)
                );
                if waiting {
                    current.waits += 1;
                    // Until the next event: the person answered, or the agent moved on.
                    current.spans.push(Span {
                        label: "waiting for the person".into(),
                        depth: 1,
                        start_ms: event.ts_ms,
                        end_ms: event.ts_ms,
                        kind: SpanKind::Wait,
                        failed: false,
                        hover: format!("{} (waiting for the person)", kind.map_or("notification", |k| k.as_str())),
                    });
                }
            }
            EventType::SubagentEnd => {
                // No event links a subagent to the call that started it: it ran inside
                // the innermost delegating call still open, from that call's start.
                let parent = delegating(&open);
                let started = open.iter().find(|call| Some(call.serial) == parent);
                let (start_ms, hover) = match started {
                    Some(call) => (
                        call.start_ms,
                        format!(
                            "a subagent started by {}: finished after {}",
                            call.name,
                            crate::charts::offset(event.ts_ms - call.start_ms)
                        ),
                    ),
                    None => (event.ts_ms, "a subagent finished".into()),
                };
                let row = Span {
                    label: "subagent".into(),
                    depth: 1,
                    start_ms,
                    end_ms: event.ts_ms,
                    kind: SpanKind::Subagent,
                    failed: false,
                    hover,
                };
                current.spans.extend(nest(&mut open, parent, vec![row]).into_iter().flatten());
            }
            EventType::TurnEnd => {
                if let Some(model) = &event.model {
                    current.model = Some(model.clone());
                }
                current.input_tokens += event.usage.input_tokens + event.usage.cache_read_tokens;
                current.output_tokens += event.usage.output_tokens;
            }
            _ => {}
        }
        current.cost_nusd += event.cost_nusd;
        // A wait lasts until the next thing happens.
        if event.event_type != EventType::Notification
            && let Some(wait) =
                current.spans.iter_mut().rev().find(|s| s.kind == SpanKind::Wait && s.end_ms == s.start_ms)
        {
            wait.end_ms = event.ts_ms;
        }
    }
    if started {
        let end = current.end_ms;
        finish(&mut current, &mut open, end);
        turns.push(current);
    }
    // The session's start alone before the first prompt is not a turn worth a row.
    turns.retain(|turn| turn.number > 0 || turn.calls + turn.waits > 0 || turn.cost_nusd != 0);
    turns
}

/// Closes the turn at `end_ms`: calls still open end there; the turn's own row goes first.
fn finish(turn: &mut Turn, open: &mut Vec<OpenCall>, end_ms: i64) {
    // The innermost first, so each lands under its parent while that is still open; the
    // turn's own calls then go in the order they started.
    let mut unnested: Vec<Vec<Span>> = Vec::new();
    while let Some(call) = open.pop() {
        turn.calls += 1;
        let parent = call.parent;
        unnested.extend(nest(open, parent, unended(call, end_ms, 1)));
    }
    turn.spans.extend(unnested.into_iter().rev().flatten());
    turn.end_ms = turn.end_ms.max(end_ms.min(turn.end_ms.max(turn.start_ms)));
    let hover = format!(
        "{}: {}{}, {} tool calls, ${:.4}",
        turn.label(),
        crate::charts::offset(turn.end_ms - turn.start_ms),
        turn.model.as_deref().map(|m| format!(" on {m}")).unwrap_or_default(),
        turn.calls,
        crate::model::nusd_to_usd(turn.cost_nusd)
    );
    let row = Span {
        label: turn.label(),
        depth: 0,
        start_ms: turn.start_ms,
        end_ms: turn.end_ms,
        kind: SpanKind::Turn,
        failed: false,
        hover,
    };
    turn.spans.insert(0, row);
}

/// Every turn's rows, in order, for one waterfall of the page.
pub fn spans(turns: &[Turn]) -> Vec<Span> {
    turns.iter().flat_map(|turn| turn.spans.iter().cloned()).collect()
}

/// How many of each tool a turn called, for its summary line (`Bash ×3, Edit`).
pub fn tools_of(turn: &Turn) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for span in turn.spans.iter().filter(|s| s.kind == SpanKind::Call) {
        match seen.get(&span.label) {
            Some(&at) => counts[at].1 += 1,
            None => {
                seen.insert(span.label.clone(), counts.len());
                counts.push((span.label.clone(), 1));
            }
        }
    }
    counts.into_iter().map(|(name, n)| if n > 1 { format!("{name} ×{n}") } else { name }).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::wire::ToolFields;

    fn event(kind: EventType, ts_ms: i64) -> Event {
        Event {
            event_id: uuid::Uuid::now_v7(),
            event_type: kind,
            ts_ms,
            agent_type: crate::model::AgentType::ClaudeCode,
            session_id: "s".into(),
            run_kind: crate::model::RunKind::Interactive,
            model: None,
            agent_version: None,
            permission_mode: None,
            notification_kind: None,
            tool: None,
            usage: crate::model::Usage::default(),
            cost_nusd: 0,
            client_cost_nusd: None,
            response_ms: None,
            git: None,
            eval: None,
            metadata: None,
        }
    }

    fn tool(kind: EventType, ts_ms: i64, name: &str, use_id: Option<&str>, status: Option<ToolStatus>) -> Event {
        let mut e = event(kind, ts_ms);
        e.tool =
            Some(ToolFields { name: name.into(), use_id: use_id.map(str::to_string), status, ..ToolFields::default() });
        e
    }

    #[test]
    fn calls_nest_under_the_prompt_that_caused_them() {
        let mut end = event(EventType::TurnEnd, 9_000);
        end.model = Some("claude-sonnet-4-5".into());
        end.usage.input_tokens = 100;
        end.usage.output_tokens = 20;
        end.cost_nusd = 1_000_000;
        let mut wait = event(EventType::Notification, 3_000);
        wait.notification_kind = Some(NotificationKind::Permission);
        let events = vec![
            event(EventType::SessionStart, 0),
            event(EventType::PromptSubmit, 1_000),
            tool(EventType::ToolStart, 2_000, "Bash", Some("a"), None),
            wait,
            tool(EventType::ToolStart, 4_000, "Read", Some("b"), None),
            tool(EventType::ToolEnd, 5_000, "Read", Some("b"), Some(ToolStatus::Success)),
            tool(EventType::ToolEnd, 6_000, "Bash", Some("a"), Some(ToolStatus::Error)),
            end,
            event(EventType::PromptSubmit, 10_000),
            tool(EventType::ToolStart, 11_000, "Edit", None, None),
        ];
        let turns = turns(&events);
        let labels: Vec<String> = turns.iter().map(Turn::label).collect();
        assert_eq!(labels, ["Turn 1", "Turn 2"], "the start alone is no turn");
        let first = &turns[0];
        assert_eq!((first.calls, first.failed_calls, first.waits), (2, 1, 1));
        assert_eq!((first.input_tokens, first.output_tokens, first.cost_nusd), (100, 20, 1_000_000));
        assert_eq!(first.model.as_deref(), Some("claude-sonnet-4-5"));
        let rows: Vec<(&str, i64, i64, bool)> =
            first.spans.iter().map(|s| (s.label.as_str(), s.start_ms, s.end_ms, s.failed)).collect();
        assert_eq!(
            rows,
            [
                ("Turn 1", 1_000, 9_000, false),
                ("waiting for the person", 3_000, 4_000, false),
                ("Read", 4_000, 5_000, false),
                ("Bash", 2_000, 6_000, true),
            ]
        );
        assert_eq!(tools_of(first), "Read, Bash");
        // A call never ended lasts until its turn ends, and says so.
        let last = &turns[1];
        assert_eq!(last.spans[1].hover, "Edit: no end was reported");
        assert_eq!(spans(&turns).len(), 4 + 2);
        // Work before the first prompt (a resumed session's tail) keeps its own row.
        let early = super::turns(&[tool(EventType::ToolEnd, 500, "Read", None, Some(ToolStatus::Success))]);
        assert_eq!(early.iter().map(Turn::label).collect::<Vec<_>>(), ["Before the first prompt"]);
    }

    /// A subagent and the calls it made sit a level below the delegating call that
    /// started it (Claude Code's Task), its bar from that call's start to its end.
    #[test]
    fn a_subagent_and_its_calls_nest_under_the_call_that_started_it() {
        let delegate = |kind, ts, id: &str, status| {
            let mut e = tool(kind, ts, "claude_code:Task", Some(id), status);
            e.tool.as_mut().unwrap().action = Some("delegate".into());
            e
        };
        let events = vec![
            event(EventType::PromptSubmit, 0),
            delegate(EventType::ToolStart, 1_000, "t", None),
            tool(EventType::ToolStart, 2_000, "claude_code:Grep", Some("g"), None),
            tool(EventType::ToolEnd, 3_000, "claude_code:Grep", Some("g"), Some(ToolStatus::Success)),
            tool(EventType::ToolStart, 3_500, "claude_code:Read", Some("r"), None),
            event(EventType::SubagentEnd, 4_000),
            delegate(EventType::ToolEnd, 4_500, "t", Some(ToolStatus::Success)),
            tool(EventType::ToolStart, 5_000, "claude_code:Edit", Some("e"), None),
            tool(EventType::ToolEnd, 6_000, "claude_code:Edit", Some("e"), Some(ToolStatus::Success)),
        ];
        let turns = turns(&events);
        let rows: Vec<(&str, usize, i64, i64)> =
            turns[0].spans.iter().map(|s| (s.label.as_str(), s.depth, s.start_ms, s.end_ms)).collect();
        assert_eq!(
            rows,
            [
                ("Turn 1", 0, 0, 6_000),
                ("claude_code:Task", 1, 1_000, 4_500),
                ("claude_code:Grep", 2, 2_000, 3_000),
                ("subagent", 2, 1_000, 4_000),
                // Never ended: it lasts until its parent's end, under it.
                ("claude_code:Read", 2, 3_500, 4_500),
                ("claude_code:Edit", 1, 5_000, 6_000),
            ]
        );
        assert_eq!(turns[0].spans[3].hover, "a subagent started by claude_code:Task: finished after 0:03");
        assert_eq!(turns[0].calls, 4);
    }
}

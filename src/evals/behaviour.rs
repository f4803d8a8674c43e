//! The agents' behaviour across a run, from the sessions harnesses linked to its cells
//! (read from the platform, `evals::platform`): per harness and model, what the agents
//! did per cell (tool calls, errors, denials, retries, time waiting) and what the
//! platform's trajectory scorers make of it (friction, step efficiency), beside success,
//! so the run page says *why* one harness beats another and the comparison page sets two
//! selections side by side.
//!
//! Invariants: a session counts for the harness and model its cell id names (the shape is
//! the results database's); per-cell figures divide by the cells that have a linked
//! session, never by cells without one; a retry is a session of a cell beyond one per
//! phase (a multi-phase cell's phases are not retries).

use std::collections::{BTreeMap, BTreeSet};

use super::platform::AgentSession;

/// One harness and model's agents, summed over their linked sessions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Behaviour {
    pub model: String,
    pub harness: String,
    pub cells: usize,
    pub sessions: usize,
    pub tool_calls_per_cell: f64,
    pub errors_per_cell: f64,
    pub denials_per_cell: f64,
    pub retries: usize,
    /// Means over sessions of the platform's scorers (0–100, and a share).
    pub friction: f64,
    pub step_efficiency: f64,
    pub waiting_ms_per_cell: f64,
    pub cost_usd_per_cell: f64,
}

/// Sums `sessions` (of one group) into one row.
pub fn summarise(model: &str, harness: &str, sessions: &[&AgentSession]) -> Behaviour {
    let mut phases_of: BTreeMap<&str, BTreeSet<Option<&str>>> = BTreeMap::new();
    for session in sessions {
        phases_of.entry(session.cell_id.as_str()).or_default().insert(session.phase.as_deref());
    }
    let cells = phases_of.len();
    let distinct_runs: usize = phases_of.values().map(BTreeSet::len).sum();
    let per_cell = |total: f64| if cells == 0 { 0.0 } else { total / cells as f64 };
    let mean = |total: f64| if sessions.is_empty() { 0.0 } else { total / sessions.len() as f64 };
    let sum = |figure: fn(&AgentSession) -> f64| sessions.iter().map(|session| figure(session)).sum::<f64>();
    Behaviour {
        model: model.to_string(),
        harness: harness.to_string(),
        cells,
        sessions: sessions.len(),
        tool_calls_per_cell: per_cell(sum(|s| s.tool_calls as f64)),
        errors_per_cell: per_cell(sum(|s| s.tool_errors as f64)),
        denials_per_cell: per_cell(sum(|s| s.denials as f64)),
        retries: sessions.len() - distinct_runs,
        friction: mean(sum(|s| s.behaviour.friction)),
        step_efficiency: mean(sum(|s| s.behaviour.step_efficiency)),
        waiting_ms_per_cell: per_cell(sum(|s| s.behaviour.waiting_ms as f64)),
        cost_usd_per_cell: per_cell(sum(|s| s.cost_usd)),
    }
}

/// The harness and model a session's cell id names.
fn group_of(session: &AgentSession) -> Option<(String, String)> {
    crate::model::eval_cell::parse_cell_id(&session.cell_id)
        .ok()
        .map(|parts| (parts.model.to_string(), parts.harness.to_string()))
}

/// One row per model and harness, models then harnesses in name order.
pub fn by_harness_and_model(sessions: &[AgentSession]) -> Vec<Behaviour> {
    let mut groups: BTreeMap<(String, String), Vec<&AgentSession>> = BTreeMap::new();
    for session in sessions {
        if let Some(key) = group_of(session) {
            groups.entry(key).or_default().push(session);
        }
    }
    groups.iter().map(|((model, harness), members)| summarise(model, harness, members)).collect()
}

/// The sessions of one side of a comparison: its harness and model, when it names them.
pub fn of_selection(sessions: &[AgentSession], model: Option<&str>, harness: Option<&str>) -> Behaviour {
    let members: Vec<&AgentSession> = sessions
        .iter()
        .filter(|session| {
            group_of(session).is_some_and(|(m, h)| {
                model.is_none_or(|wanted| wanted == m) && harness.is_none_or(|wanted| wanted == h)
            })
        })
        .collect();
    summarise(model.unwrap_or("every model"), harness.unwrap_or("every harness"), &members)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(cell: &str, phase: Option<&str>, tool_calls: i64, friction: f64) -> AgentSession {
        serde_json::from_value(serde_json::json!({
            "id": format!("{cell}-{phase:?}-{tool_calls}"), "url": "/sessions/x", "agent_type": "claude_code",
            "cell_id": cell, "phase": phase, "first_event_ms": 0, "last_event_ms": 1, "ended": true,
            "prompts": 1, "tool_calls": tool_calls, "tool_errors": 1, "denials": 0, "notifications": 0,
            "subagents": 0, "usage": {"input_tokens": 1, "output_tokens": 1, "cache_read_tokens": 0,
            "cache_write_5m_tokens": 0, "cache_write_1h_tokens": 0, "reasoning_tokens": 0},
            "cost_usd": 0.5, "unknown_model_events": 0,
            "behaviour": {"friction": friction, "step_efficiency": 0.5, "shape": "flow", "retry_loops": 0,
                          "permission_waits": 0, "waiting_ms": 1000},
        }))
        .unwrap()
    }

    #[test]
    fn sessions_sum_per_cell_and_retries_are_sessions_beyond_one_per_phase() {
        let sessions = [
            session("cc__sonnet__t1__r0", None, 4, 10.0),
            session("cc__sonnet__t1__r0", None, 6, 30.0),
            session("cc__sonnet__t2__r0", Some("implement"), 2, 20.0),
            session("cc__sonnet__t2__r0", Some("review"), 0, 20.0),
            session("codex__sonnet__t1__r0", None, 9, 50.0),
        ];
        let rows = by_harness_and_model(&sessions);
        assert_eq!(rows.len(), 2);
        let cc = &rows[0];
        assert_eq!((cc.harness.as_str(), cc.cells, cc.sessions, cc.retries), ("cc", 2, 4, 1));
        assert_eq!(cc.tool_calls_per_cell, 6.0);
        assert_eq!(cc.errors_per_cell, 2.0);
        assert_eq!(cc.friction, 20.0);
        assert_eq!(cc.waiting_ms_per_cell, 2000.0);
        let codex = of_selection(&sessions, Some("sonnet"), Some("codex"));
        assert_eq!((codex.cells, codex.tool_calls_per_cell, codex.retries), (1, 9.0, 0));
        assert_eq!(of_selection(&sessions, None, None).sessions, 5);
    }
}

//! The cell page's "The agent" section: the sessions the platform linked to the cell
//! (`evals::platform`), each drawn as a trace (the shared waterfall, a table of its turns
//! behind it), with its redacted transcript, tokens, and the cost Sightline recomputed
//! beside the harness's `total_cost` (flagged beyond `platform::cost_differs`); a
//! multi-phase cell matches its sessions to `harness_metadata.phases`.
//!
//! Invariant: everything shown comes from the platform's answer (read and audited
//! there); the dashboard adds only arithmetic and layout.

use crate::charts::Span;
use crate::evals::detail::Phase;
use crate::evals::platform::{AgentSession, Platform, cost_differs};

/// The section as the template draws it.
pub struct AgentsView {
    pub sessions: Vec<SessionView>,
    /// The harness's cost beside Sightline's, over every linked session.
    pub cost: Option<CostCheck>,
    /// Each phase of a multi-phase cell with the session that ran it.
    pub phases: Vec<PhaseMatch>,
}

pub struct CostCheck {
    pub harness: String,
    pub sightline: String,
    pub difference: String,
    pub differs: bool,
}

pub struct PhaseMatch {
    pub name: String,
    pub harness_cost: String,
    /// Index into `sessions` (1-based for the page), or 0 when no session named it.
    pub session: usize,
    pub sightline_cost: String,
    pub differs: bool,
}

pub struct SessionView {
    pub number: usize,
    pub link: String,
    pub agent_type: String,
    pub phase: Option<String>,
    pub duration: String,
    pub ended: bool,
    pub tokens: i64,
    pub cost: String,
    pub prompts: i64,
    pub tool_calls: i64,
    pub tool_errors: i64,
    pub denials: i64,
    pub waits: i64,
    pub subagents: i64,
    pub friction: String,
    pub step_efficiency: String,
    pub waiting: String,
    pub unknown_model_events: i64,
    pub chart: String,
    pub turns: Vec<TurnLine>,
    pub events_truncated: bool,
    pub messages: Vec<MessageLine>,
    pub transcript_total: usize,
}

pub struct TurnLine {
    pub label: String,
    pub at: String,
    pub took: String,
    pub model: String,
    pub tokens: i64,
    pub cost: String,
    pub calls: i64,
    pub failed: i64,
    pub waits: i64,
    pub tools: String,
}

pub struct MessageLine {
    pub role: String,
    pub text: String,
    pub cut: bool,
    pub tool: Option<String>,
    pub is_error: bool,
    pub calls: Vec<(String, String)>,
}

fn usd(value: f64) -> String {
    format!("${}", crate::model::decimal::decimal(value, 4))
}

/// The most rows one session's waterfall draws (the platform has the rest).
const MAX_SPANS: usize = 400;

fn session_view(number: usize, session: &AgentSession, platform: &Platform) -> SessionView {
    let spans: Vec<Span> = session.turns.iter().flat_map(|turn| &turn.spans).take(MAX_SPANS).cloned().collect();
    let (from, to) = (session.first_event_ms, session.last_event_ms.max(session.first_event_ms + 1));
    let chart = if spans.is_empty() {
        String::new()
    } else {
        crate::charts::waterfall(&format!("Trace of session {number}"), &spans, from, to, 900)
    };
    let behaviour = &session.behaviour;
    SessionView {
        number,
        link: platform.session_url(&session.url),
        agent_type: session.agent_type.clone(),
        phase: session.phase.clone(),
        duration: crate::charts::offset(session.last_event_ms - session.first_event_ms),
        ended: session.ended,
        tokens: session.tokens(),
        cost: usd(session.cost_usd),
        prompts: session.prompts,
        tool_calls: session.tool_calls,
        tool_errors: session.tool_errors,
        denials: session.denials,
        waits: session.notifications,
        subagents: session.subagents,
        friction: crate::model::decimal::decimal(behaviour.friction, 0),
        step_efficiency: format!("{}%", crate::model::decimal::decimal(behaviour.step_efficiency * 100.0, 0)),
        waiting: crate::charts::offset(behaviour.waiting_ms),
        unknown_model_events: session.unknown_model_events,
        chart,
        turns: session
            .turns
            .iter()
            .map(|turn| TurnLine {
                label: turn.label.clone(),
                at: crate::charts::offset(turn.start_ms - session.first_event_ms),
                took: crate::charts::offset(turn.end_ms - turn.start_ms),
                model: turn.model.clone().unwrap_or_default(),
                tokens: turn.input_tokens + turn.output_tokens,
                cost: usd(turn.cost_usd),
                calls: turn.calls,
                failed: turn.failed_calls,
                waits: turn.waits,
                tools: turn.tools.clone(),
            })
            .collect(),
        events_truncated: session.events_truncated,
        messages: session
            .transcript
            .iter()
            .flat_map(|transcript| &transcript.messages)
            .map(|message| MessageLine {
                role: message.role.clone(),
                text: crate::evals::text::strip_control(&message.text),
                cut: message.whole_text_bytes.is_some(),
                tool: message.tool_name.clone(),
                is_error: message.is_error,
                calls: message.tool_calls.iter().map(|call| (call.name.clone(), call.input.clone())).collect(),
            })
            .collect(),
        transcript_total: session.transcript.as_ref().map_or(0, |transcript| transcript.total),
    }
}

/// The section for one cell: `harness_cost` is the cell's `total_cost`, `phases` its
/// `harness_metadata.phases`.
pub fn view(sessions: &[AgentSession], platform: &Platform, harness_cost: Option<f64>, phases: &[Phase]) -> AgentsView {
    let views: Vec<SessionView> =
        sessions.iter().enumerate().map(|(i, session)| session_view(i + 1, session, platform)).collect();
    let sightline: f64 = sessions.iter().map(|session| session.cost_usd).sum();
    let cost = harness_cost.filter(|_| !sessions.is_empty()).map(|harness| CostCheck {
        harness: usd(harness),
        sightline: usd(sightline),
        difference: format!("{}{}", if sightline >= harness { "+" } else { "−" }, usd((sightline - harness).abs())),
        differs: cost_differs(harness, sightline),
    });
    // A phase is run by the session that named it; phases no session named take the
    // unnamed sessions in the order they ran.
    let mut unnamed = sessions.iter().enumerate().filter(|(_, session)| session.phase.is_none()).map(|(i, _)| i);
    let matches = phases
        .iter()
        .map(|phase| {
            let found = sessions
                .iter()
                .position(|session| session.phase.as_deref() == Some(phase.name.as_str()))
                .or_else(|| unnamed.next());
            let session_cost = found.map(|i| sessions[i].cost_usd);
            PhaseMatch {
                name: phase.name.clone(),
                harness_cost: phase.total_cost.map(usd).unwrap_or_else(|| "—".into()),
                session: found.map_or(0, |i| i + 1),
                sightline_cost: session_cost.map(usd).unwrap_or_else(|| "—".into()),
                differs: matches!((phase.total_cost, session_cost), (Some(h), Some(s)) if cost_differs(h, s)),
            }
        })
        .collect();
    AgentsView { sessions: views, cost, phases: matches }
}

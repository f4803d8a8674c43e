//! `/api/evals`: what the eval dashboard reads of the platform, for an eval engineer
//! (`state::caller::EvalReader`): the agent sessions a harness linked to one cell, with
//! their trace, trajectory figures and transcript (`GET /api/evals/cells/{cell_id}`), and
//! the figures of every session linked to a run (`GET /api/evals/runs/{run_name}`).
//!
//! Invariants: only `EVAL` sessions linked to a cell are ever read (`sessions::eval_links`),
//! each through `sessions::read::authorize_eval`, which audits the read per owner before
//! any event or transcript is opened; a cell id of another shape is a 422 naming it.

use std::sync::Arc;

use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};

use super::trace::{self, Turn};
use crate::charts::SpanKind;
use crate::db::DbError;
use crate::events::reads;
use crate::http::errors::AppError;
use crate::http::extract::{Json, Path, Query};
use crate::model::NUSD_PER_USD;
use crate::model::wire::Event;
use crate::scoring::trajectory::{self, Step, Trajectory};
use crate::sessions::eval_links::{self, LinkedSession};
use crate::sessions::read::{self, Reading, SessionRead};
use crate::state::AppState;
use crate::state::caller::EvalReader;
use crate::transcripts::pages;

/// The most events of one session read for its trace and figures.
const MAX_EVENTS: usize = 5000;
/// The most transcript messages handed to the cell page (the platform's transcript page
/// has the rest).
const MAX_MESSAGES: usize = 300;

fn turn_json(turn: &Turn) -> Value {
    json!({
        "number": turn.number, "label": turn.label(), "start_ms": turn.start_ms, "end_ms": turn.end_ms,
        "model": turn.model, "input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens,
        "cost_usd": turn.cost_nusd as f64 / NUSD_PER_USD as f64, "calls": turn.calls,
        "failed_calls": turn.failed_calls, "waits": turn.waits, "tools": trace::tools_of(turn),
        "spans": turn.spans,
    })
}

/// What the scorers make of a session's events, and how long it waited on a person.
fn behaviour(events: &[Event], turns: &[Turn]) -> Value {
    let figures: Trajectory = trajectory::score(events.iter().map(Step::of).collect());
    let waiting_ms: i64 = turns
        .iter()
        .flat_map(|turn| &turn.spans)
        .filter(|span| span.kind == SpanKind::Wait)
        .map(|span| span.end_ms - span.start_ms)
        .sum();
    json!({
        "friction": figures.friction, "step_efficiency": figures.step_efficiency, "shape": figures.shape.as_str(),
        "retry_loops": figures.retry_loops, "edit_thrash": figures.edit_thrash,
        "redundant_reads": figures.redundant_reads, "permission_waits": figures.permission_waits,
        "waiting_ms": waiting_ms,
    })
}

fn session_json(linked: &LinkedSession) -> Value {
    let mut value = serde_json::to_value(linked).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut value {
        fields.insert("url".into(), format!("/sessions/{}", linked.id).into());
    }
    value
}

fn events_of(
    data_dir: &std::path::Path,
    proof: &SessionRead,
    linked: &LinkedSession,
) -> Result<(Vec<Event>, bool), DbError> {
    let page =
        reads::session_events_page(data_dir, proof, linked.first_event_ms, linked.last_event_ms, None, MAX_EVENTS)?;
    Ok((page.events.into_iter().map(|stored| stored.event).collect(), page.next_cursor.is_some()))
}

#[derive(Deserialize)]
pub struct CellQuery {
    /// The run the cell is of: sessions that named another run are left out.
    #[serde(default)]
    run: String,
}

/// The linked sessions `reader` may read, each with its proof, the read audited first
/// (`sessions::read::authorize_eval`, on the writer).
async fn authorized(
    state: &AppState,
    reader: &EvalReader,
    linked: Vec<LinkedSession>,
    reading: Reading,
) -> Result<Vec<(SessionRead, LinkedSession)>, AppError> {
    let (user_id, role, now_ms) = (reader.user_id.clone(), reader.role, state.clock.now_ms());
    state
        .write(move |tx| read::authorize_eval(tx, read::Reader { user_id: &user_id, role }, linked, reading, now_ms))
        .await
}

/// `GET /api/evals/cells/{cell_id}?run=`: each linked session with its trace, figures and
/// the start of its transcript.
pub async fn cell(
    State(state): State<Arc<AppState>>,
    reader: EvalReader,
    Path(cell_id): Path<String>,
    Query(query): Query<CellQuery>,
) -> Result<Json<Value>, AppError> {
    crate::model::eval_cell::parse_cell_id(&cell_id)
        .map_err(|reason| AppError::Invalid { parameter: "cell_id".into(), message: format!("cell_id {reason}") })?;
    let (wanted, run) = (cell_id.clone(), Some(query.run).filter(|run| !run.is_empty()));
    let linked = state.read(move |conn| eval_links::of_cell(conn, &wanted, run.as_deref())).await?;
    let readable = authorized(&state, &reader, linked, Reading::Transcript).await?;
    let data_dir = state.config.data_dir.clone();
    let sessions = state
        .read(move |conn| {
            let mut out = Vec::new();
            for (proof, linked) in &readable {
                let (events, truncated) = events_of(&data_dir, proof, linked)?;
                let turns = trace::turns(&events);
                let window = pages::Wanted::Window { offset: 0, limit: MAX_MESSAGES };
                let transcript = pages::read(conn, &data_dir, proof, window)?
                    .map(|page| json!({ "total": page.total, "messages": super::sessions::positioned(page.messages) }));
                let mut value = session_json(linked);
                value["behaviour"] = behaviour(&events, &turns);
                value["turns"] = turns.iter().map(turn_json).collect();
                value["events_truncated"] = truncated.into();
                value["transcript"] = transcript.unwrap_or(Value::Null);
                out.push(value);
            }
            Ok::<_, DbError>(out)
        })
        .await?;
    Ok(Json(json!({ "cell_id": cell_id, "sessions": sessions })))
}

/// `GET /api/evals/runs/{run_name}`: the figures of every session that named the run.
pub async fn run(
    State(state): State<Arc<AppState>>,
    reader: EvalReader,
    Path(run_name): Path<String>,
) -> Result<Json<Value>, AppError> {
    crate::model::eval_cell::check_name(&run_name, crate::model::eval_cell::MAX_RUN_NAME_CHARS)
        .map_err(|reason| AppError::Invalid { parameter: "run_name".into(), message: format!("run_name {reason}") })?;
    let wanted = run_name.clone();
    let linked = state.read(move |conn| eval_links::of_run(conn, &wanted)).await?;
    let readable = authorized(&state, &reader, linked, Reading::Session).await?;
    let data_dir = state.config.data_dir.clone();
    let sessions = state
        .read(move |_conn| {
            let mut out = Vec::new();
            for (proof, linked) in &readable {
                let (events, _) = events_of(&data_dir, proof, linked)?;
                let mut value = session_json(linked);
                value["behaviour"] = behaviour(&events, &trace::turns(&events));
                out.push(value);
            }
            Ok::<_, DbError>(out)
        })
        .await?;
    Ok(Json(json!({ "run_name": run_name, "sessions": sessions })))
}

//! The caller's own sessions on the ingest API, for the hook CLI's `status`:
//! `GET /v1/me/sessions/{agent_type}/{session_id}` and `.../events`.
//!
//! Invariant: every query is keyed by the token owner's user id, so these routes
//! can only ever return the caller's own data; another person's session is a 404,
//! indistinguishable from one that does not exist.

use std::sync::Arc;

use axum::extract::State;
use serde_json::json;

use crate::db;
use crate::events::reads;
use crate::http::errors::AppError;
use crate::http::extract::{Json, Path, Query};
use crate::model::AgentType;
use crate::model::event_json::event_to_json;
use crate::sessions::read::{self, SessionRead};
use crate::sessions::views::{self, EventsQuery, SessionView};
use crate::state::AppState;
use crate::state::caller::HookUser;

fn parse_agent(text: &str) -> Result<AgentType, AppError> {
    AgentType::parse(text).ok_or_else(|| {
        AppError::bad_request(
            "agent_type",
            format!("unknown agent {text:?}; expected one of {}", AgentType::expected()),
        )
    })
}

async fn load_session(
    state: &Arc<AppState>,
    user_id: String,
    agent: AgentType,
    session_id: String,
) -> Result<(SessionView, SessionRead), AppError> {
    state
        .read(move |conn| {
            let Some(proof) = read::own_by_agent_key(conn, &user_id, agent, &session_id)? else { return Ok(None) };
            Ok(views::session_view(conn, &proof)?.map(|view| (view, proof)))
        })
        .await?
        .ok_or(AppError::NotFound)
}

pub async fn session(
    State(state): State<Arc<AppState>>,
    user: HookUser,
    Path((agent_type, session_id)): Path<(String, String)>,
) -> Result<Json<SessionView>, AppError> {
    let agent = parse_agent(&agent_type)?;
    Ok(Json(load_session(&state, user.user_id, agent, session_id).await?.0))
}

pub async fn session_events(
    State(state): State<Arc<AppState>>,
    user: HookUser,
    Path((agent_type, session_id)): Path<(String, String)>,
    Query(query): Query<EventsQuery>,
) -> Result<Json<serde_json::Value>, AppError> {
    let agent = parse_agent(&agent_type)?;
    let (cursor, limit) = query.page()?;
    let (session, proof) = load_session(&state, user.user_id, agent, session_id).await?;
    let data_dir = state.config.data_dir.clone();
    let (first_ms, last_ms) = (session.first_event_ms, session.last_event_ms);
    let page =
        db::blocking(move || reads::session_events_page(&data_dir, &proof, first_ms, last_ms, cursor, limit)).await?;
    Ok(Json(json!({
        "events": page.events.iter().map(|e| event_to_json(&e.event)).collect::<Vec<_>>(),
        "next_cursor": page.next_cursor,
    })))
}

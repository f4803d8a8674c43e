//! Reading one session by id: `GET /api/sessions/{id}`, `.../events`, `.../transcript`.
//! Thin: get the proof from `sessions::read` (own sessions on a read connection; anyone
//! else's through the audited decision on the writer), then read with it.
//!
//! Invariant: a session the caller may not read answers 404, exactly like one that
//! does not exist.

use std::sync::Arc;

use axum::extract::State;
use serde_json::{Value, json};

use crate::db::DbError;
use crate::events::reads;
use crate::http::errors::AppError;
use crate::http::extract::{Json, Path, Query};
use crate::http::query::StrictQuery;
use crate::model::event_json::event_to_json;
use crate::sessions::read::{self, Basis, Reading, SessionRead};
use crate::sessions::views;
use crate::state::AppState;
use crate::state::caller::Caller;
use crate::transcripts::pages;

/// The proof for `session_id` and the ground it was given on (owner first, on a read
/// connection with no audit row; anyone else through `read::authorize`, audited), or 404.
/// The JSON API and the session and transcript pages share it.
pub(crate) async fn authorize(
    state: &AppState,
    caller: &Caller,
    session_id: &str,
    reading: Reading,
) -> Result<(SessionRead, Basis), AppError> {
    let (user_id, id) = (caller.user.id.clone(), session_id.to_string());
    let own = state.read(move |conn| read::own(conn, &user_id, &id, reading)).await?;
    if let Some(proof) = own {
        return Ok((proof, Basis::Own));
    }
    let (user_id, role, id, now_ms) =
        (caller.user.id.clone(), caller.role, session_id.to_string(), state.clock.now_ms());
    state
        .write(move |tx| read::authorize(tx, read::Reader { user_id: &user_id, role }, &id, reading, now_ms))
        .await?
        .ok_or(AppError::NotFound)
}

pub async fn session(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(session_id): Path<String>,
) -> Result<Json<Value>, AppError> {
    let (proof, basis) = authorize(&state, &caller, &session_id, Reading::Session).await?;
    let view = state.read(move |conn| views::session_view(conn, &proof)).await?.ok_or(AppError::NotFound)?;
    Ok(Json(json!({ "session": view, "access": basis })))
}

pub async fn events(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(session_id): Path<String>,
    Query(query): Query<views::EventsQuery>,
) -> Result<Json<Value>, AppError> {
    let (cursor, limit) = query.page()?;
    let (proof, basis) = authorize(&state, &caller, &session_id, Reading::Session).await?;
    let data_dir = state.config.data_dir.clone();
    let page = state
        .read(move |conn| {
            let Some(view) = views::session_view(conn, &proof)? else { return Ok(None) };
            let page =
                reads::session_events_page(&data_dir, &proof, view.first_event_ms, view.last_event_ms, cursor, limit)?;
            Ok::<_, DbError>(Some(page))
        })
        .await?
        .ok_or(AppError::NotFound)?;
    let events: Vec<Value> = page.events.iter().map(|stored| event_to_json(&stored.event)).collect();
    Ok(Json(json!({ "events": events, "next_cursor": page.next_cursor, "access": basis })))
}

/// One window of the transcript (`?offset=&limit=`, as the events API pages): the
/// messages with their positions, the transcript's total and where the next window starts.
pub async fn transcript(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(session_id): Path<String>,
    StrictQuery(query): StrictQuery<pages::PageQuery>,
) -> Result<Json<Value>, AppError> {
    let (offset, limit) = query.window()?;
    let (proof, basis) = authorize(&state, &caller, &session_id, Reading::Transcript).await?;
    let data_dir = state.config.data_dir.clone();
    let page = state
        .read(move |conn| pages::read(conn, &data_dir, &proof, pages::Wanted::Window { offset, limit }))
        .await?
        .ok_or(AppError::NotFound)?;
    let next_offset = page.messages.last().map(|(position, _)| position + 1).filter(|next| *next < page.total);
    let messages = positioned(page.messages);
    Ok(Json(json!({
        "messages": messages, "offset": offset, "total": page.total, "next_offset": next_offset, "access": basis,
    })))
}

/// Transcript messages as JSON, each with its `position` in the transcript.
pub(crate) fn positioned(messages: Vec<(usize, crate::transcripts::model::Message)>) -> Vec<Value> {
    messages
        .into_iter()
        .map(|(position, message)| {
            let mut value = serde_json::to_value(message).unwrap_or(Value::Null);
            if let Value::Object(fields) = &mut value {
                fields.insert("position".into(), position.into());
            }
            value
        })
        .collect()
}

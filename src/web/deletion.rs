//! `POST /api/me/deletion` (ask for one's own data to be deleted; 202 with the
//! request) and `GET /api/me/deletion` (where the latest request stands). Thin: the
//! caller from the [`Caller`] extractor, one `deletion` call, JSON out.
//!
//! Invariants: a caller asks only about themself (no user id is read from the
//! request); asking twice returns the open request, not a second one.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;

use crate::deletion::{self, DeletionRequest};
use crate::http::errors::AppError;
use crate::http::extract::Json;
use crate::state::AppState;
use crate::state::caller::Caller;

pub async fn request(
    State(state): State<Arc<AppState>>,
    caller: Caller,
) -> Result<(StatusCode, Json<DeletionRequest>), AppError> {
    let now_ms = state.clock.now_ms();
    let user_id = caller.user.id;
    let request = state.write(move |tx| deletion::request(tx, &user_id, &user_id, now_ms)).await?;
    Ok((StatusCode::ACCEPTED, Json(request)))
}

pub async fn status(State(state): State<Arc<AppState>>, caller: Caller) -> Result<Json<DeletionRequest>, AppError> {
    let user_id = caller.user.id;
    let found = state.read(move |conn| deletion::by_user(conn, &user_id)).await?;
    found.map(Json).ok_or(AppError::NotFound)
}

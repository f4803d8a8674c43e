//! The web listener's routes. Today: `/health` and the JSON API the web app will use
//! (`GET /api/search`); the pages themselves come with the web app.
//!
//! Invariants: every data route takes the caller from an extractor and passes a scope
//! built from it to the library; no handler reads another person's data on its own.

pub mod deletion;
pub mod search;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::server::{AppState, listener_router};

pub fn router(state: Arc<AppState>) -> Router {
    listener_router(
        state,
        "web",
        Router::new()
            .route("/api/search", get(search::search))
            .route("/api/me/deletion", post(deletion::request).get(deletion::status)),
    )
}

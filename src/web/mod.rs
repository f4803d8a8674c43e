//! The web listener's routes: sign-in (`/login`, `/logout`, `/device`, `/oauth/*`),
//! the subject's pages (`/me/grants`, `/me/settings/audit`), and the JSON API
//! (`/api/search`, `/api/sessions/{id}…`, `/api/grants…`, `/api/me/…` including the
//! deletion request).
//!
//! Invariants: every route sits behind [`security::guard`] (CSRF on state-changing
//! requests, security headers on all answers); every data route takes the caller
//! from an extractor, and a read of another person's session goes through
//! `access::read::authorize`, never around it.

pub mod deletion;
pub mod device;
pub mod grants;
pub mod login;
pub mod me;
pub mod search;
pub mod security;
pub mod sessions;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::server::{AppState, listener_router};

pub fn router(state: Arc<AppState>) -> Router {
    let routes = Router::new()
        .route("/login", get(login::show).post(login::submit))
        .route("/logout", post(login::logout))
        .route("/auth/github", get(crate::auth::github::start))
        .route("/auth/github/callback", get(crate::auth::github::callback))
        .route("/device", get(device::show).post(device::submit))
        .route("/me/settings/audit", get(me::audit_page))
        .route("/me/grants", get(me::grants_page))
        .route("/api/me/audit", get(me::audit_json))
        .route("/api/me/grants", get(me::grants_json))
        .route("/api/me/visibility", get(me::visibility).patch(me::set_visibility))
        .route("/api/me/deletion", post(deletion::request).get(deletion::status))
        .route("/api/search", get(search::search))
        .route("/api/sessions/{id}", get(sessions::session))
        .route("/api/sessions/{id}/events", get(sessions::events))
        .route("/api/sessions/{id}/transcript", get(sessions::transcript))
        .route("/api/grants", get(grants::list).post(grants::request))
        .route("/api/grants/{id}/approve", post(grants::approve))
        .route("/api/grants/{id}/deny", post(grants::deny))
        .route("/api/grants/{id}/revoke", post(grants::revoke))
        .route("/api/users/{id}/visibility", axum::routing::patch(grants::lower_visibility))
        .merge(crate::auth::oauth::routes())
        .layer(axum::middleware::from_fn_with_state(state.clone(), security::guard));
    listener_router(state, "web", routes)
}

//! The web listener's guard: CSRF protection on every state-changing request (the
//! decision is `http::security`'s; every listener's answers get the security headers
//! in `app::ops::listener_router`).
//! Sign-in cookies are also `SameSite=Lax`.
//!
//! Invariant: the guard wraps every route of the web listener, pages and API alike.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;

use crate::auth::signins::cookie_name;
use crate::http::cookies::cookie_value;
use crate::http::security::{csrf_allows, csrf_refusal};
use crate::state::AppState;

pub async fn guard(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let safe = matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if safe {
        next.run(request).await
    } else {
        // Read exactly as sign-in reads it (every Cookie header), so a request that
        // authenticates by cookie is always one the guard saw a cookie on.
        let has_cookie = cookie_value(request.headers(), cookie_name(state.https())).is_some();
        if csrf_allows(request.headers(), &state.web_origin, has_cookie) {
            next.run(request).await
        } else {
            csrf_refusal()
        }
    }
}

//! The ingest listener: the `/v1` API that developer machines talk to (events,
//! price tables, the caller's own sessions) and the operational endpoints
//! (`/health`, `/readyz`, `/metrics`).
//!
//! Handlers are thin: extract, call one function of this module's submodules or of
//! the storage layer, map to a response.

pub mod batch;
pub mod me;
pub mod sessions;
pub mod transcripts;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::auth::extract::HookUser;
use crate::error::AppError;
use crate::model::AgentType;
use crate::server::{AppState, ops_routes, track_requests};

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/v1/events", post(post_events))
        .route("/v1/price-table", get(price_table))
        .route("/v1/transcripts/{session_id}", get(transcripts::state_of).post(transcripts::post_chunk))
        .route("/v1/me/sessions/{agent_type}/{session_id}", get(me::session))
        .route("/v1/me/sessions/{agent_type}/{session_id}/events", get(me::session_events))
        // The token endpoints, so `sightline login` needs only this listener's address;
        // behind the same CSRF guard and headers as on the web listener.
        .merge(
            crate::auth::oauth::routes()
                .layer(axum::middleware::from_fn_with_state(state.clone(), crate::web::security::guard)),
        )
        .merge(ops_routes(true))
        .layer(axum::middleware::from_fn_with_state((state.clone(), "ingest"), track_requests))
        .with_state(state)
}

async fn post_events(
    State(state): State<Arc<AppState>>,
    user: HookUser,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, AppError> {
    let outcome = batch::ingest(&state, &user.user_id, &headers, body).await?;
    Ok(axum::Json(outcome).into_response())
}

#[derive(serde::Deserialize)]
struct PriceTableQuery {
    agent: Option<String>,
}

/// The active price table of one agent, with a strong ETag so hooks revalidate
/// cheaply (`If-None-Match` → 304). Public list prices: no credential needed.
async fn price_table(
    State(state): State<Arc<AppState>>,
    Query(query): Query<PriceTableQuery>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let name = query.agent.ok_or_else(|| AppError::bad_request("agent", "query parameter agent is required"))?;
    let agent = AgentType::parse_lenient(&name).ok_or_else(|| {
        AppError::bad_request("agent", format!("unknown agent {name:?}; expected one of {}", AgentType::expected()))
    })?;
    let table = state.prices.table(agent);
    let etag = table.etag();
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        // If-None-Match uses the weak comparison (RFC 9110 13.1.2): W/ is ignored.
        .is_some_and(|v| {
            v.split(',').map(|tag| tag.trim().trim_start_matches("W/")).any(|tag| tag == etag || tag == "*")
        });
    let etag_header = HeaderValue::from_str(etag).map_err(|e| AppError::Internal(e.to_string()))?;
    let cache = HeaderValue::from_static("no-cache");
    if matches {
        return Ok(
            (StatusCode::NOT_MODIFIED, [(header::ETAG, etag_header), (header::CACHE_CONTROL, cache)]).into_response()
        );
    }
    Ok((
        StatusCode::OK,
        [
            (header::ETAG, etag_header),
            (header::CACHE_CONTROL, cache),
            (header::CONTENT_TYPE, HeaderValue::from_static("application/json")),
        ],
        table.json().to_string(),
    )
        .into_response())
}

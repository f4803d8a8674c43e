//! The ingest listener's handlers: the `/v1` API that developer machines talk to
//! (events, price tables, transcript upload, the caller's own sessions). The routes are
//! mounted in `app::routes`; `/health`, `/readyz` and `/metrics` are `app::ops`.
//!
//! Three listeners carry events in (`batch` for the hook's `/v1/events`, `otlp` for
//! OTLP/HTTP, `otlp_grpc` for OTLP/gRPC); each only decodes its transport and answers
//! [`error::IngestError`] in its own terms. Whatever carried them, events reach the
//! store through one path, `pipeline::accept`; the OTLP exports are mapped and split by
//! sender first (`otlp_senders`, `otlp_exports`, `otlp_metrics`).
//!
//! Handlers are thin: extract, call one function of this module's submodules or of
//! the storage layer, map to a response.

pub mod batch;
pub mod body;
pub mod error;
pub mod me;
pub mod otlp;
pub mod otlp_exports;
pub mod otlp_grpc;
pub mod otlp_metrics;
pub mod otlp_senders;
pub mod pipeline;
pub mod transcripts;

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::http::errors::AppError;
use crate::http::extract::Query;
use crate::model::AgentType;
use crate::state::AppState;
use crate::state::caller::HookUser;

/// `POST /v1/events`: one batch, counted by how it ended (`sightline_ingest_batches_total`),
/// a refused credential too.
pub async fn post_events(
    State(state): State<Arc<AppState>>,
    user: Result<HookUser, AppError>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, AppError> {
    use crate::metrics::BatchOutcome;
    let stored = match user {
        Ok(user) => batch::ingest(&state, &user, &headers, body).await,
        Err(AppError::Unauthorized) => Err(error::IngestError::Unauthorized),
        // The credential could not be checked (storage): counted by its status.
        Err(err) => {
            state.metrics.count_batch(BatchOutcome::of_http_status(err.status_and_message().0.as_u16()));
            return Err(err);
        }
    };
    state.metrics.count_batch(stored.as_ref().map_or_else(error::IngestError::outcome, |_| BatchOutcome::Accepted));
    Ok(axum::Json(stored?).into_response())
}

#[derive(serde::Deserialize)]
pub struct PriceTableQuery {
    agent: Option<String>,
}

/// The active price table of one agent, with a strong ETag so hooks revalidate
/// cheaply (`If-None-Match` → 304). Public list prices: no credential needed.
pub async fn price_table(
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
    let matches = crate::http::conditional::none_match_hits(&headers, etag);
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

//! The operational endpoints every listener serves (`/health`; `/readyz` and `/metrics`
//! on the ingest listener), the request metrics layer and the security headers.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::db::{self, Checkpointing, Durability};
use crate::jobs::registry::Availability;
use crate::metrics::JobLabels;
use crate::state::AppState;

/// A listener's `routes` with `/health` (and `/readyz`, `/metrics` where `full_ops`), request
/// metrics labelled `listener`, and the state.
pub fn listener_router(
    state: Arc<AppState>,
    listener: &'static str,
    routes: Router<Arc<AppState>>,
    full_ops: bool,
) -> Router {
    routes
        .merge(ops_routes(full_ops))
        .layer(axum::middleware::from_fn_with_state((state.clone(), listener), track_requests))
        .layer(axum::middleware::from_fn_with_state(state.clone(), security_headers))
        .with_state(state)
}

/// Every answer of every listener carries the security headers (HSTS where the server
/// speaks HTTPS), whatever produced it: a page, an error, `/metrics`.
async fn security_headers(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    crate::http::security::set_security_headers(response.headers_mut(), state.https());
    response
}

/// `/health` on every listener; `/readyz` and `/metrics` where `full`.
fn ops_routes(full: bool) -> Router<Arc<AppState>> {
    let router = Router::new().route("/health", get(|| async { "ok\n" }));
    if full { router.route("/readyz", get(readyz)).route("/metrics", get(metrics)) } else { router }
}

/// Ready when main.db is at this binary's schema version and can take a write lock.
async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    let path = state.config.main_db_path();
    let check = db::blocking(move || {
        let conn = db::open(&path, Durability::PowerSafe, Checkpointing::Background)?;
        if !db::migrations::is_current(&conn)? {
            return Ok(Err("main.db schema is not current"));
        }
        conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK;")?;
        Ok(Ok(()))
    })
    .await;
    match check {
        Ok(Ok(())) => (StatusCode::OK, "ready\n").into_response(),
        Ok(Err(reason)) => (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {reason}\n")).into_response(),
        Err(err) => (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {err}\n")).into_response(),
    }
}

/// `/metrics`: the figures kept in memory, and those read from main.db at scrape time
/// (the jobs' standing, the aggregates' and the transcript index's lag, the webhook
/// deliveries), each an indexed lookup or a read of a small table: `app::scrape`.
async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    // The jobs' figures are read at scrape time, so a run or breach recorded by `sightline
    // jobs run` beside the server shows too.
    let pool = state.readers.clone();
    let now_ms = state.clock.now_ms();
    match db::blocking(move || super::scrape::read(&*pool.get()?, now_ms)).await {
        Ok(scrape) => {
            for job in scrape.jobs.into_iter().filter(|s| s.job.availability == Availability::Available) {
                let labels = JobLabels { job_name: job.job.name, severity: job.job.alert.severity.as_str() };
                state.metrics.set_job(labels, job.breached, job.last_success_ms);
            }
            state.metrics.aggregate_refresh_lag.set(scrape.aggregate_lag_ms / 1000);
            state.metrics.transcript_index_pending.set(scrape.transcripts_pending);
            state.metrics.transcript_index_lag.set(scrape.transcript_lag_ms / 1000);
            state.metrics.webhook_delivery_success.set(scrape.deliveries.success_ratio());
            state.metrics.webhook_deliveries_pending.set(scrape.deliveries.pending);
        }
        Err(err) => tracing::warn!(error = %err, "cannot read main.db's figures for /metrics"),
    }
    ([(header::CONTENT_TYPE, crate::metrics::exposition::CONTENT_TYPE)], state.metrics.render()).into_response()
}

/// Counts and times every request by listener, matched route and status.
async fn track_requests(
    State((state, listener)): State<(Arc<AppState>, &'static str)>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let route =
        request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()).unwrap_or_else(|| "unmatched".into());
    // The request's span (`http::serve`) names its route for every line it logs.
    tracing::Span::current().record("route", route.as_str());
    let response = next.run(request).await;
    let (status, seconds) = (response.status().as_u16(), started.elapsed().as_secs_f64());
    state.metrics.observe_request(listener, &route, status, seconds);
    state.slis.request(listener, &route, status, seconds);
    response
}

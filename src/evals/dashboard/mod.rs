//! `sightline dashboard`: the interactive eval-results viewer and its JSON API over a
//! read-only `results.db`.
//!
//! Invariants: handlers are thin — parse parameters ([`params`]), call one query of
//! `evals::db` on the blocking pool, render JSON or a template; an unknown run is a
//! 404 everywhere; bad parameters are 422 naming the parameter; every request passes
//! [`auth::guard`] (Host check, credentials, security headers).

pub mod api;
pub mod auth;
pub mod cache;
pub mod diff;
pub mod pages;
pub mod params;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags};

use super::db::EvalsError;
use crate::cli::evals::DashboardArgs;

pub struct DashState {
    pub pool: r2d2::Pool<SqliteConnectionManager>,
    pub cache: cache::Cache,
    pub auth: Option<auth::TokenAuth>,
    /// Bound to loopback without a token: Host and Origin must be loopback too.
    pub check_loopback_host: bool,
}

impl DashState {
    pub fn new(db_path: &std::path::Path, token: Option<&str>, loopback: bool) -> Result<DashState, EvalsError> {
        let cache = cache::Cache::new(super::db::open(db_path)?);
        let manager = SqliteConnectionManager::file(db_path)
            .with_flags(OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_init(|conn| super::db::prepare(conn));
        let pool = r2d2::Pool::builder()
            .max_size(8)
            .build(manager)
            .map_err(|e| EvalsError::NotResults { path: db_path.to_path_buf(), reason: e.to_string() })?;
        let auth = token.filter(|t| !t.is_empty()).map(auth::TokenAuth::new);
        let check_loopback_host = loopback && auth.is_none();
        Ok(DashState { pool, cache, auth, check_loopback_host })
    }

    /// Runs a query on the blocking pool with a pooled read-only connection.
    pub async fn query<T, F>(self: &Arc<Self>, f: F) -> Result<T, EvalsError>
    where
        F: FnOnce(&Connection) -> Result<T, EvalsError> + Send + 'static,
        T: Send + 'static,
    {
        let state = self.clone();
        tokio::task::spawn_blocking(move || {
            let conn = state
                .pool
                .get()
                .map_err(|e| EvalsError::Io { context: "results.db".into(), source: std::io::Error::other(e) })?;
            f(&conn)
        })
        .await
        .unwrap_or_else(|e| Err(EvalsError::Io { context: "query task".into(), source: std::io::Error::other(e) }))
    }
}

pub const APP_JS: &str = include_str!("../../../assets/static/app.js");
pub const OPENAPI: &str = include_str!("../../../assets/dashboard-openapi.json");

pub fn router(state: Arc<DashState>) -> Router {
    let mut router = Router::new()
        .route("/", get(pages::overview))
        .route("/run/{run}", get(pages::run_detail))
        .route("/run/{run}/cell/{*cell_id}", get(pages::cell))
        .route("/run/{run}/export/{format}", get(api::export))
        .route("/compare", get(pages::compare))
        .route("/login", get(pages::login_form).post(pages::login))
        .route("/logout", post(pages::logout))
        .route("/health", get(|| async { "ok\n" }))
        .route("/static/app.js", get(|| async { ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], APP_JS) }))
        .route("/api/runs", get(api::runs))
        .route("/api/run/{run}", get(api::results_page))
        .route("/api/run/{run}/leaderboard", get(api::leaderboard))
        .route("/api/run/{run}/status", get(api::status))
        .route("/api/run/{run}/errors", get(api::errors))
        .route("/api/run/{run}/cell/{*cell_id}", get(api::cell))
        .route("/api/compare", get(api::compare));
    if state.auth.is_none() {
        // Interactive documentation only without authentication (spec §5 rule 2).
        router = router
            .route("/openapi.json", get(|| async { ([(header::CONTENT_TYPE, "application/json")], OPENAPI) }))
            .route("/docs", get(pages::docs))
            .route("/redoc", get(|| async { axum::response::Redirect::permanent("/docs") }));
    }
    router.fallback(not_found).layer(axum::middleware::from_fn_with_state(state.clone(), auth::guard)).with_state(state)
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found\n").into_response()
}

/// Starts the dashboard and serves until Ctrl-C or SIGTERM.
pub async fn run(args: &DashboardArgs) -> anyhow::Result<()> {
    let ip: std::net::IpAddr =
        args.host.parse().with_context(|| format!("--host {:?} is not an IP address", args.host))?;
    let token = args.token.as_deref().filter(|t| !t.is_empty());
    // The dashboard outlives whoever reads its first lines (`| head -1`): a closed
    // stdout or stderr is not a reason to stop serving, so these writes ignore it.
    use std::io::Write;
    if ip.is_unspecified() && token.is_none() {
        let _ = writeln!(
            std::io::stderr(),
            "warning: the dashboard is bound to {ip} without a token: anyone who can reach this machine can read the results. Set SIGHTLINE_DASHBOARD_TOKEN."
        );
    }
    let state = Arc::new(DashState::new(&args.db.db, token, ip.is_loopback())?);
    let listener = tokio::net::TcpListener::bind(SocketAddr::new(ip, args.port))
        .await
        .with_context(|| format!("cannot listen on {ip}:{}", args.port))?;
    let bound = listener.local_addr()?;
    let shown = if ip.is_unspecified() { format!("127.0.0.1:{}", bound.port()) } else { bound.to_string() };
    let auth = if token.is_some() { "token required" } else { "no authentication" };
    let _ = writeln!(std::io::stdout(), "dashboard: http://{shown}/ ({auth})");
    axum::serve(listener, router(state)).with_graceful_shutdown(crate::server::shutdown_signal()).await?;
    Ok(())
}

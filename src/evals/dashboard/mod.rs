//! `sightline dashboard`: the interactive eval-results viewer and its JSON API over a
//! read-only `results.db`.
//!
//! Invariants: handlers are thin — parse parameters ([`params`]), call one query of
//! `evals::db` on the blocking pool, render JSON or a template; an unknown run is a
//! 404 everywhere; bad parameters are 422 naming the parameter; every request passes
//! [`auth::guard`] (Host check, credentials, security headers).

pub mod agents;
pub mod api;
pub mod auth;
pub mod cache;
pub mod diff;
pub mod pages;
pub mod params;

use std::sync::Arc;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags};

use super::db::EvalsError;
use crate::http::errors::AppError;

pub struct DashState {
    pub pool: r2d2::Pool<SqliteConnectionManager>,
    pub cache: cache::Cache,
    pub auth: Option<auth::TokenAuth>,
    /// Bound to loopback without a token: Host and Origin must be loopback too.
    pub check_loopback_host: bool,
    /// The Sightline platform whose agent sessions the cell and run pages show, if any.
    pub platform: Option<crate::evals::platform::Platform>,
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
        Ok(DashState { pool, cache, auth, check_loopback_host, platform: None })
    }

    /// Asks the platform (on the blocking pool: its client waits on the network), or
    /// `None` when no platform is configured.
    pub async fn ask_platform<T, F>(self: &Arc<Self>, f: F) -> Option<Result<T, String>>
    where
        F: FnOnce(&crate::evals::platform::Platform) -> Result<T, String> + Send + 'static,
        T: Send + 'static,
    {
        let platform = self.platform.clone()?;
        Some(
            tokio::task::spawn_blocking(move || f(&platform))
                .await
                .unwrap_or_else(|err| Err(format!("the platform request failed: {err}"))),
        )
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

/// `/static/app.js`: the pages' one script (progressive enhancement only).
pub async fn app_js() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], APP_JS).into_response()
}

/// `/openapi.json`, served only without authentication (docs/evals-dashboard.md).
pub async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

/// An address with no route: JSON under `/api/`, the dashboard's error page otherwise.
pub async fn not_found(uri: axum::http::Uri) -> Response {
    if uri.path().starts_with("/api/") {
        AppError::NotFound.into_response()
    } else {
        pages::PageError(AppError::NotFound).into_response()
    }
}

/// The dashboard answers in the platform's error family: an unknown run is a 404 naming
/// it, a bad parameter a 422 naming the parameter, anything else a 500 (cause logged).
impl From<EvalsError> for AppError {
    fn from(err: EvalsError) -> Self {
        match err {
            EvalsError::UnknownRun(run) => AppError::Unknown(format!("unknown run {run:?}")),
            EvalsError::BadParameter { parameter, message } => {
                AppError::Invalid { parameter: parameter.to_string(), message }
            }
            other => AppError::Internal(format!("dashboard query failed: {other}")),
        }
    }
}

//! `AppState`: everything a request handler may use, shared by the three listeners,
//! and who is calling ([`caller`]: the credential extractors).
//!
//! Invariant: it sits below every module with handlers and above the stores and
//! services it holds (`auth`, `events`, `transcripts`, `db`): it imports no handler
//! and no route, so a feature's handlers depend on it and nothing it holds depends
//! on them.

pub mod caller;

use std::sync::Arc;

use crate::auth::code_throttle::CodeThrottle;
use crate::auth::jwt::SigningKeys;
use crate::auth::throttle::LoginThrottle;
use crate::clock::Clock;
use crate::config::Config;
use crate::db::{DbError, MainPool};
use crate::events::writer::EventWriter;
use crate::http::errors::AppError;
use crate::metrics::Metrics;
use crate::model::wire::EventLimits;
use crate::pricing::PriceBook;
use crate::transcripts::index::TranscriptIndex;
use crate::transcripts::index::worker::Indexer;

/// Everything a request handler may use. Shared by the three listeners.
pub struct AppState {
    pub config: Config,
    pub readers: MainPool,
    pub writer: EventWriter,
    /// The event store's owner: the rewrite lock every rewrite of a partition holds,
    /// shared with any command beside the server through its lock file.
    pub events: crate::events::store::Store,
    pub prices: Arc<PriceBook>,
    pub metrics: Arc<Metrics>,
    pub event_limits: EventLimits,
    /// The transcript index, for searches.
    pub transcripts: Arc<TranscriptIndex>,
    /// The transcript indexer task (the index's one writer).
    pub indexer: Indexer,
    /// The access-token signing key.
    pub keys: SigningKeys,
    /// "Now" for every expiry decision (manual in tests).
    pub clock: Clock,
    pub login_throttle: LoginThrottle,
    /// Wrong codes entered at `/device` (RFC 8628 §5.1), apart from password failures
    /// so a mistyped code never locks anyone out of signing in.
    pub device_throttle: CodeThrottle,
    /// The web app's public origin (`auth.public_url`, or the bound web address).
    pub web_origin: String,
    /// Woken by the webhook receiver when it stores a delivery for the worker.
    pub webhook_arrivals: Arc<tokio::sync::Notify>,
    /// The address the ingest listener is bound to (its port is what `/install` shows).
    pub ingest_addr: std::net::SocketAddr,
    /// The service-level counts since the last flush to `sli_daily`.
    pub slis: Arc<crate::slo::recorder::Recorder>,
    /// What the agents sent that no mapping uses, since the last flush (with `slis`).
    pub unmapped: Arc<crate::sessions::drift::Recorder>,
    /// The session of each trace seen lately, across exports: bounded, emptied by a
    /// restart (a span whose sibling came before it then takes its trace id as its
    /// session).
    pub trace_sessions: std::sync::Mutex<crate::otlp::traces::TraceSessions>,
    /// Until when (Unix ms) no request goes to GitHub, after its rate limit; 0 when free
    /// (`github::app_client`, shared by the webhook worker and `sync-teams`).
    pub github_resting_until_ms: Arc<std::sync::atomic::AtomicI64>,
    /// What `/admin/retention`'s preview counted in the day files it read whole, kept
    /// while their files are unchanged (`events::days::Counted`).
    pub retention_counted: Arc<std::sync::Mutex<crate::events::days::Counted>>,
}

impl AppState {
    /// The client's address for throttling: the peer, or what a configured trusted proxy
    /// says it forwarded for (`http::security::client_ip`).
    pub fn client_ip(&self, headers: &axum::http::HeaderMap, peer: std::net::SocketAddr) -> std::net::IpAddr {
        crate::http::security::client_ip(headers, peer, &self.config.listen.trusted_proxies)
    }

    /// True when the web app is served over HTTPS (secure cookie prefix, HSTS).
    pub fn https(&self) -> bool {
        self.web_origin.starts_with("https://")
    }

    /// Runs `work` on a reader connection, on the blocking pool: the one way a handler
    /// reads main.db.
    pub async fn read<T, F>(&self, work: F) -> Result<T, AppError>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, DbError> + Send + 'static,
    {
        let pool = self.readers.clone();
        Ok(crate::db::blocking(move || work(&*pool.get()?)).await?)
    }

    /// Runs `work` in one main.db write transaction on the writer thread, with its audit
    /// rows: the one way a handler writes main.db.
    pub async fn write<T, F>(&self, work: F) -> Result<T, AppError>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Transaction<'_>) -> Result<T, DbError> + Send + 'static,
    {
        Ok(self.writer.transact(work).await?)
    }
}

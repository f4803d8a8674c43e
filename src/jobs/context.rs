//! What a job runs with, in the server and in `sightline jobs run` alike: its
//! [`JobContext`] (the configuration, the clock, and a [`Host`] that owns the handles),
//! what a run did ([`Done`]) and why it failed ([`JobError`]).
//!
//! Invariants: a job's work is one function over a context, so the server and the
//! command line execute the same code; the host decides how a write reaches `main.db`
//! (the writer thread in the server, a direct transaction in the command line) and how
//! the transcript index is touched (the indexer thread, or the index writer of the
//! command), so neither of the server's single writers is ever bypassed. Work runs on a
//! blocking thread: a host's methods may block.

use std::ops::Deref;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, Transaction};

use crate::config::Config;
use crate::db::DbError;
use crate::deletion::runner::DeletionTarget;
use crate::pricing::PriceBook;

/// Where a job runs: the server's handles or the command line's connection.
pub trait Host {
    /// Where `main.db` changes, transcript removals and partition drops go: the
    /// deletion runner's target, which every job writes through.
    fn target(&self) -> &dyn DeletionTarget;
    /// The event store: a job that rewrites partitions takes its rewrite lock
    /// ([`crate::events::store::Store::rewriting`]), held against every other rewriter
    /// of the data directory, in this process or another.
    fn store(&self) -> &crate::events::store::Store;
    /// When GitHub's rate limit lets the next request go (shared by the host's clients).
    fn github_resting_until_ms(&self) -> crate::github::app_client::RestingUntil;
    /// A connection to read `main.db`.
    fn reader(&self) -> Result<Conn<'_>, DbError>;
    /// A connection of the job's own, for a few short writes between long waits (the
    /// judge between API calls, re-redaction's resume point): the side door of main.db
    /// (`db::side_door`), whose long wait orders them with the writer thread's.
    fn own_connection(&self) -> Result<Conn<'_>, DbError>;
    /// Brings the transcript index up to date with the store; the sessions indexed.
    fn index_transcripts(&self) -> Result<usize, JobError>;
    /// The price tables new events are priced with.
    fn prices(&self) -> Result<Arc<PriceBook>, JobError>;
    /// Forgets ended sign-in throttle windows, which live in the server's memory; how
    /// many were forgotten.
    fn prune_throttles(&self, _now_ms: i64) -> usize {
        0
    }
}

/// A connection a host lends, pools or opens.
pub enum Conn<'a> {
    Borrowed(&'a Connection),
    Pooled(r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>),
    Owned(Connection),
}

impl Deref for Conn<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        match self {
            Conn::Borrowed(conn) => conn,
            Conn::Pooled(conn) => conn,
            Conn::Owned(conn) => conn,
        }
    }
}

/// What one run of a job has: the configuration and the host's handles.
pub struct JobContext<'a> {
    pub config: &'a Config,
    pub host: &'a dyn Host,
}

impl JobContext<'_> {
    pub fn now_ms(&self) -> i64 {
        self.host.target().now_ms()
    }

    /// Runs `change` in one `main.db` write transaction through the host.
    pub fn change_main(&self, change: crate::events::writer::MainChange) -> Result<(), DbError> {
        self.host.target().change_main(change)
    }

    pub fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }

    /// Holds the event store's rewrite lock for this job until dropped (waiting for any
    /// other rewriter of the data directory to finish first).
    pub fn rewriting(&self, job: &str) -> Result<crate::events::store::Rewrite<'_>, JobError> {
        Ok(self.host.store().rewriting(job)?)
    }

    pub fn reader(&self) -> Result<Conn<'_>, JobError> {
        Ok(self.host.reader()?)
    }

    /// Runs `work` in one `main.db` write transaction through the host and answers its
    /// value once committed.
    pub fn write<T, F>(&self, work: F) -> Result<T, JobError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, DbError> + Send + 'static,
    {
        let slot = Arc::new(Mutex::new(None));
        let filled = slot.clone();
        self.change_main(Box::new(move |tx| {
            let value = work(tx)?;
            *filled.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(value);
            Ok(())
        }))?;
        let value = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        value.ok_or_else(|| JobError::Stopped("the write committed without its value".into()))
    }
}

/// What a run did: the rows it touched and, where a count says too little, a summary
/// (and for a report, its table, which the command line prints).
#[derive(Debug, Default)]
pub struct Done {
    pub rows: Option<i64>,
    pub summary: Option<String>,
    pub table: Option<(Vec<&'static str>, Vec<Vec<String>>)>,
}

impl Done {
    pub fn rows(rows: i64) -> Done {
        Done { rows: Some(rows), ..Done::default() }
    }

    pub fn described(rows: i64, summary: impl Into<String>) -> Done {
        Done { rows: Some(rows), summary: Some(summary.into()), table: None }
    }
}

/// Why a run failed, in words for `job_runs.error`.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Db(#[from] DbError),
    /// A setting the job needs is missing or wrong.
    #[error("configuration: {0}")]
    Configuration(String),
    /// A service outside Sightline (GitHub, Jira, a billing API, the judge's model,
    /// a chat channel) answered with an error or not at all.
    #[error("{}", named(service, message))]
    Remote { service: &'static str, message: String },
    /// The work stopped part way; the next run resumes or redoes it.
    #[error("{0}")]
    Stopped(String),
}

/// A remote service's message, with the service's name unless the message starts with it.
fn named(service: &str, message: &str) -> String {
    if message.starts_with(service) { message.to_string() } else { format!("{service}: {message}") }
}

impl JobError {
    pub fn remote(service: &'static str, message: impl std::fmt::Display) -> JobError {
        JobError::Remote { service, message: message.to_string() }
    }

    pub fn stopped(message: impl std::fmt::Display) -> JobError {
        JobError::Stopped(message.to_string())
    }
}

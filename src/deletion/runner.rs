//! The deletion runner: works through the open deletion requests, removing each
//! person's data session by session, then records completion. Generic over where
//! `main.db` changes and transcript forgetting go ([`DeletionTarget`]): the server's
//! writer and indexer threads, or the CLI's own connection and index writer.
//!
//! Invariants: per session, the order is (a) its events from every partition file
//! (every day, not only the session's span: late events land anywhere; compacted files
//! alike), (b) its transcript (index documents, then files), (c) one `main.db`
//! transaction removing its scores, feedback, transcript row, models and the session
//! row and adding the counts to the request. The session row goes last, so a run
//! killed anywhere leaves the session listed and the next run does it again; every
//! step is re-runnable. Completion is recorded only after a final sweep of the
//! person's events from every partition and only when no session of theirs remains,
//! in the transaction that writes `DELETION_COMPLETED`, and after every compacted
//! partition the deletion touched is rebuilt (a resumed request, which cannot know what
//! the stopped run touched, rebuilds every compacted partition). Counts recorded on the
//! request are the rows each committed step removed: a kill between (a) and (c) removes
//! events that no count records.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use rusqlite::OptionalExtension;
use rusqlite::{Connection, params};
use serde::Serialize;

use super::DeletionRequest;
use crate::audit::{self, Action, Entry};
use crate::db::DbError;
use crate::events::days::{self, Day, DayDeletion};
use crate::events::store::Rewrite;
use crate::events::writer::MainChange;
use crate::transcripts::{store, upload};

/// Where the runner's writes go.
pub trait DeletionTarget {
    /// Runs `change` in one `main.db` write transaction and waits for its commit.
    fn change_main(&self, change: MainChange) -> Result<(), DbError>;
    /// Removes a session's index documents (committed), then its transcript files.
    fn forget_transcript(&self, session_id: &str) -> Result<(), String>;
    /// Removes a whole day's partition file and its ledger entry (retention); answers
    /// whether there was a file. Only a holder of the store's rewrite lock may.
    fn drop_partition(&self, rewrite: &Rewrite<'_>, day: Day) -> Result<bool, DbError>;
    /// "Now" for the request's timestamps: the server's clock in the server, the system
    /// clock for the operator's command.
    fn now_ms(&self) -> i64 {
        crate::clock::system_now_ms()
    }
}

/// Sessions handled per pass: each partition file is opened once per pass.
const SESSIONS_PER_PASS: usize = 100;

/// What a run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DeletionReport {
    pub requests_completed: usize,
    pub sessions_deleted: u64,
    pub events_deleted: u64,
    pub transcripts_removed: u64,
    /// Requests that stopped on an error, and the error; the next run resumes them.
    pub failed: Vec<(String, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum DeletionError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("cannot remove the transcript of session {session_id}: {message}")]
    Transcript { session_id: String, message: String },
    #[error("session {0} is still there after its deletion committed")]
    Survived(String),
}

impl From<rusqlite::Error> for DeletionError {
    fn from(err: rusqlite::Error) -> Self {
        DeletionError::Db(DbError::Sqlite(err))
    }
}

/// Works through every open request. `reads` is a `main.db` connection for reading
/// (it sees what `target` committed). A request that fails is reported in
/// [`DeletionReport::failed`] and the others still run.
pub fn run(reads: &Connection, rewrite: &Rewrite<'_>, target: &dyn DeletionTarget) -> Result<DeletionReport, DbError> {
    let mut report = DeletionReport::default();
    for request in super::open_requests(reads)? {
        match run_request(reads, rewrite, target, &request, &mut report) {
            Ok(true) => report.requests_completed += 1,
            Ok(false) => {}
            Err(err) => {
                tracing::error!(request = %request.id, user = %request.user_id, error = %err, "deletion request stopped; the next run resumes it");
                report.failed.push((request.id.clone(), err.to_string()));
            }
        }
    }
    Ok(report)
}

/// A session to delete.
struct Doomed {
    id: String,
    agent_type: String,
    agent_session_id: String,
    has_transcript_row: bool,
}

/// Returns whether the request completed.
fn run_request(
    reads: &Connection,
    rewrite: &Rewrite<'_>,
    target: &dyn DeletionTarget,
    request: &DeletionRequest,
    report: &mut DeletionReport,
) -> Result<bool, DeletionError> {
    if request.started_at_ms.is_none() {
        let (id, now_ms) = (request.id.clone(), target.now_ms());
        target.change_main(Box::new(move |tx| {
            tx.execute(
                "UPDATE deletion_requests SET started_at_ms = ?2 WHERE id = ?1 AND started_at_ms IS NULL",
                params![id, now_ms],
            )?;
            Ok(())
        }))?;
    }
    let resumed = request.started_at_ms.is_some();
    let mut touched = BTreeSet::new();
    let mut done = HashSet::new();
    loop {
        let doomed = sessions_of(reads, &request.user_id)?;
        if doomed.is_empty() {
            break;
        }
        if let Some(survivor) = doomed.iter().find(|session| done.contains(&session.id)) {
            return Err(DeletionError::Survived(survivor.id.clone()));
        }
        delete_sessions(rewrite, target, request, &doomed, &mut touched, report)?;
        done.extend(doomed.into_iter().map(|session| session.id));
    }
    // Events that arrived with no session row (or whose row a crash lost) go too.
    let swept = for_each_partition(rewrite, &mut touched, |day| day.events_of(&request.user_id))?;
    report.events_deleted += swept;
    // A compacted partition's zstd dictionary was trained on its rows, the deleted ones
    // too: compact it again with a dictionary trained on what is left.
    // The swept days lose events too; a resumed request cannot know which days its first
    // run touched, so it has every folded day rebuilt.
    let swept_days: BTreeSet<i64> = touched.iter().map(|day| day.start_ms()).collect();
    let rebuild = if resumed { compacted_days(rewrite.data_dir())? } else { touched };
    for day in rebuild {
        rewrite.recompact(day, target.now_ms())?;
    }
    let (id, user_id, now_ms) = (request.id.clone(), request.user_id.clone(), target.now_ms());
    target.change_main(Box::new(move |tx| {
        if resumed {
            crate::analytics::partials::force_rebuild_all(tx, now_ms)?;
        } else {
            crate::analytics::partials::force_rebuild(tx, &swept_days, now_ms)?;
        }
        finish(tx, &id, &user_id, swept, now_ms)
    }))?;
    let completed = super::by_id(reads, &request.id)?.is_some_and(|request| request.is_completed());
    if completed {
        tracing::info!(request = %request.id, user = %request.user_id, "deletion request completed");
    }
    Ok(completed)
}

fn sessions_of(reads: &Connection, user_id: &str) -> Result<Vec<Doomed>, DbError> {
    let mut stmt = reads.prepare_cached(
        "SELECT s.id, s.agent_type, s.agent_session_id,
                s.transcript_path IS NOT NULL OR EXISTS (SELECT 1 FROM transcript_index t WHERE t.session_id = s.id)
         FROM sessions s WHERE s.user_id = ?1 ORDER BY s.id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![user_id, SESSIONS_PER_PASS as i64], |row| {
        Ok(Doomed {
            id: row.get(0)?,
            agent_type: row.get(1)?,
            agent_session_id: row.get(2)?,
            has_transcript_row: row.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Runs `delete` in one transaction on every day of the event store and returns the
/// rows it removed; compacted days it removed rows from are added to `touched` (each
/// day's WAL is truncated after, see [`days::DayEditor::delete`]).
fn for_each_partition(
    rewrite: &Rewrite<'_>,
    touched: &mut BTreeSet<Day>,
    mut delete: impl FnMut(&DayDeletion<'_>) -> Result<u64, DbError>,
) -> Result<u64, DbError> {
    let mut total = 0;
    for day in days::list_days(rewrite.data_dir())? {
        let Some(editor) = rewrite.edit(day)? else { continue };
        let deleted = editor.delete(&mut delete)?;
        if deleted > 0 && editor.is_compacted()? {
            touched.insert(day);
        }
        total += deleted;
    }
    Ok(total)
}

fn compacted_days(data_dir: &Path) -> Result<BTreeSet<Day>, DbError> {
    let mut compacted = BTreeSet::new();
    for day in days::list_days(data_dir)? {
        if let Some(reader) = days::read(data_dir, day)?
            && reader.is_compacted()?
        {
            compacted.insert(day);
        }
    }
    Ok(compacted)
}

fn delete_sessions(
    rewrite: &Rewrite<'_>,
    target: &dyn DeletionTarget,
    request: &DeletionRequest,
    doomed: &[Doomed],
    touched: &mut BTreeSet<Day>,
    report: &mut DeletionReport,
) -> Result<(), DeletionError> {
    let data_dir = rewrite.data_dir();
    // (a) Events, from every partition.
    let mut events: HashMap<&str, u64> = HashMap::new();
    for_each_partition(rewrite, touched, |day| {
        let mut deleted = 0;
        for session in doomed {
            let n = day.session(&request.user_id, &session.agent_type, &session.agent_session_id)?;
            *events.entry(&session.id).or_default() += n;
            deleted += n;
        }
        Ok(deleted)
    })?;
    for session in doomed {
        // (b) The transcript: documents, stored file, uploads in progress.
        let has_files = data_dir.join(store::relative_path(&session.id)).exists()
            || !upload::staged(data_dir, &session.id).is_empty();
        if session.has_transcript_row || has_files {
            target
                .forget_transcript(&session.id)
                .map_err(|message| DeletionError::Transcript { session_id: session.id.clone(), message })?;
            report.transcripts_removed += 1;
        }
        // What the judge wrote about the session, every version of it.
        crate::scoring::judge::forget_rationales(data_dir, &session.id)?;
        // (c) The rows, and the counts.
        let deleted_events = events.get(session.id.as_str()).copied().unwrap_or(0);
        let (request_id, session_id, now_ms) = (request.id.clone(), session.id.clone(), target.now_ms());
        target.change_main(Box::new(move |tx| {
            delete_session_rows(tx, &request_id, &session_id, deleted_events, now_ms)
        }))?;
        report.sessions_deleted += 1;
        report.events_deleted += deleted_events;
    }
    Ok(())
}

/// Step (c). The scores have no foreign key to sessions (subjects of several kinds), so
/// they are deleted by name; the others would cascade but are named too, so this list
/// is the one place to read what a session's deletion takes.
fn delete_session_rows(
    tx: &Connection,
    request_id: &str,
    session_id: &str,
    deleted_events: u64,
    now_ms: i64,
) -> Result<(), DbError> {
    crate::db::with_secure_delete(tx, crate::db::SecureDelete::On, || {
        // The days the session spanned lose its numbers: the aggregate refresh rebuilds
        // them whole (their watermarks are cleared and their first hours marked here, with
        // the rows, so a crash cannot separate them). The session's own partials go now,
        // not at that rebuild: they name it.
        let session: Option<(i64, i64, String, String, String)> = tx
            .query_row(
                "SELECT first_event_ms, last_event_ms, user_id, agent_type, agent_session_id FROM sessions WHERE id = ?1",
                [session_id],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)),
            )
            .optional()?;
        if let Some((first_ms, last_ms, user_id, agent_type, agent_session_id)) = session {
            let days = crate::analytics::partials::days_spanned(first_ms, last_ms);
            crate::analytics::partials::force_rebuild(tx, &days, now_ms)?;
            crate::analytics::partials::forget_session(tx, &days, &user_id, &agent_type, &agent_session_id)?;
        }
        tx.execute("DELETE FROM scores WHERE subject_type = 'session' AND subject_id = ?1", [session_id])?;
        tx.execute("DELETE FROM session_feedback WHERE session_id = ?1", [session_id])?;
        tx.execute("DELETE FROM transcript_index WHERE session_id = ?1", [session_id])?;
        tx.execute("DELETE FROM session_models WHERE session_id = ?1", [session_id])?;
        let sessions = tx.execute("DELETE FROM sessions WHERE id = ?1", [session_id])?;
        tx.execute(
            "UPDATE deletion_requests SET sessions_deleted = sessions_deleted + ?2, events_deleted = events_deleted + ?3
             WHERE id = ?1",
            params![request_id, sessions as i64, deleted_events as i64],
        )?;
        Ok(())
    })
}

/// Records the sweep's count and, if no session of the user remains, completion with
/// its audit row. A session that arrived meanwhile leaves the request open for the
/// next run.
fn finish(tx: &Connection, request_id: &str, user_id: &str, swept: u64, now_ms: i64) -> Result<(), DbError> {
    tx.execute(
        "UPDATE deletion_requests SET events_deleted = events_deleted + ?2 WHERE id = ?1",
        params![request_id, swept as i64],
    )?;
    let remaining: bool =
        tx.query_row("SELECT EXISTS (SELECT 1 FROM sessions WHERE user_id = ?1)", [user_id], |row| row.get(0))?;
    if remaining {
        return Ok(());
    }
    let completed = tx.execute(
        "UPDATE deletion_requests SET completed_at_ms = ?2 WHERE id = ?1 AND completed_at_ms IS NULL",
        params![request_id, now_ms],
    )?;
    if completed == 0 {
        return Ok(());
    }
    crate::analytics::redactions::forget(tx, user_id)?;
    crate::events::writer::forget_otlp_sessions(tx, user_id)?;
    crate::sessions::reported::forget(tx, user_id)?;
    crate::sessions::capabilities::forget(tx, user_id)?;
    crate::scoring::bands::forget(tx, user_id)?;
    crate::db::with_secure_delete(tx, crate::db::SecureDelete::On, || {
        crate::analytics::partials::forget_person(tx, user_id)
    })?;
    let (sessions, events): (i64, i64) = tx.query_row(
        "SELECT sessions_deleted, events_deleted FROM deletion_requests WHERE id = ?1",
        [request_id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    audit::record(
        tx,
        &Entry {
            actor_id: None,
            action: Action::DeletionCompleted,
            subject_user_id: Some(user_id),
            target: Some(request_id),
            detail: serde_json::json!({
                "request_id": request_id,
                "sessions_deleted": sessions,
                "events_deleted": events,
            }),
        },
        now_ms,
    )?;
    Ok(())
}

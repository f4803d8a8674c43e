//! Getting stored transcripts into the index and out of it again: read the file, parse
//! it into normalised messages, replace the session's documents, commit, then record
//! the session as indexed. Used by the server's indexer task and by `index-transcripts`.
//!
//! A transcript is read as a stream of segments (`super::segments`), parsed segment by
//! segment exactly as the viewer reads it, so memory stays bounded however large (or
//! however many tiny lines) a transcript is and a message's position is the viewer's.
//! At most [`MAX_INDEXED_MESSAGES`] documents of one transcript are indexed.
//!
//! Invariants: a row is marked indexed only after the commit that holds its documents,
//! so a crash between the two re-indexes the session (harmless: documents are replaced
//! whole), never leaves it marked and missing. A drain ends even when rows cannot be
//! indexed: each (session, upload) is tried once per drain. Forgetting a session
//! removes its documents (committed) before its files.

use std::collections::HashSet;
use std::path::Path;

use tantivy::{IndexWriter, TantivyDocument};

use super::index::documents::{self, SessionFacts};
use super::index::{IndexError, TranscriptIndex};
use super::segments::{self, SegmentError, SegmentsEnd};
use super::store::{self, StoredTranscript};
use super::title::TitleFinder;
use crate::db::DbError;

/// Sessions per commit: small enough that a new upload waits little behind a backlog.
pub const BATCH_SESSIONS: usize = 200;
/// Most documents indexed for one transcript (a session of this many messages is far
/// beyond any real one; the cap stops a transcript of tiny lines from flooding the index).
pub const MAX_INDEXED_MESSAGES: usize = 200_000;
/// A session whose documents were committed.
#[derive(Debug, Clone)]
pub struct Indexed {
    pub session_id: String,
    pub upload_sha256: String,
    pub message_count: usize,
    /// The session's name found in it (`super::title`).
    pub title: Option<String>,
}

/// What a drain did.
#[derive(Debug, Default, Clone, Copy)]
pub struct DrainReport {
    pub sessions: usize,
    pub messages: usize,
    pub unreadable: usize,
}

fn facts(stored: &StoredTranscript) -> SessionFacts {
    SessionFacts {
        session_id: stored.session_id.clone(),
        owner_id: stored.owner_id.clone(),
        team_id: String::new(),
        agent_type: stored.agent_type.clone(),
        model: stored.model.clone(),
        started_ms: stored.started_ms,
    }
}

/// Queues one session's documents in `writer` (not committed). A transcript that cannot
/// be read is logged and indexed as empty, so it does not stop the others.
fn index_one(
    index: &TranscriptIndex,
    writer: &IndexWriter<TantivyDocument>,
    data_dir: &Path,
    stored: &StoredTranscript,
    report: &mut DrainReport,
) -> Result<Indexed, IndexError> {
    let facts = facts(stored);
    documents::remove_session(writer, index.fields(), &facts.session_id);
    let mut progress = documents::Progress::new(&facts);
    let mut title = TitleFinder::default();
    let read = store::open(data_dir, &stored.relative_path).and_then(|text| {
        segments::for_each(text, |segment| {
            let messages = super::parse::parse(&stored.agent_type, segment);
            title.feed(&messages);
            documents::add_documents(writer, index.fields(), &facts, &messages, &mut progress, MAX_INDEXED_MESSAGES)
        })
        .map_err(|err| match err {
            SegmentError::Read(err) => err,
            SegmentError::Consumer(err) => {
                DbError::Io { context: "indexing a transcript".into(), source: std::io::Error::other(err.to_string()) }
            }
        })
    });
    match read {
        Ok(SegmentsEnd::Read) => {}
        Ok(SegmentsEnd::Stopped) => {
            tracing::warn!(session = %stored.session_id, limit = MAX_INDEXED_MESSAGES, "transcript has more messages than are indexed; the rest is not searchable");
        }
        Err(err) => {
            tracing::error!(session = %stored.session_id, error = %err, indexed = progress.added, "cannot read a stored transcript (whole); indexed what could be read");
            report.unreadable += 1;
        }
    }
    let count = progress.added;
    report.sessions += 1;
    report.messages += count;
    Ok(Indexed {
        session_id: stored.session_id.clone(),
        upload_sha256: stored.upload_sha256.clone(),
        message_count: count,
        title: title.title(),
    })
}

/// Indexes what `next_batch` returns until it returns nothing new: each batch is
/// committed, made visible, then handed to `mark` to record. `progress` hears the count
/// of sessions done so far.
pub fn drain(
    index: &TranscriptIndex,
    writer: &mut IndexWriter<TantivyDocument>,
    data_dir: &Path,
    mut next_batch: impl FnMut() -> Result<Vec<StoredTranscript>, DbError>,
    mut mark: impl FnMut(Vec<Indexed>) -> Result<(), DbError>,
    mut progress: impl FnMut(usize),
) -> Result<DrainReport, IndexError> {
    let mut report = DrainReport::default();
    let mut tried = HashSet::new();
    loop {
        let batch: Vec<StoredTranscript> = next_batch()?
            .into_iter()
            .filter(|stored| tried.insert((stored.session_id.clone(), stored.upload_sha256.clone())))
            .collect();
        if batch.is_empty() {
            return Ok(report);
        }
        let mut indexed = Vec::with_capacity(batch.len());
        for stored in &batch {
            indexed.push(index_one(index, writer, data_dir, stored, &mut report)?);
        }
        writer.commit()?;
        index.reload()?;
        mark(indexed)?;
        progress(report.sessions);
    }
}

/// The deletion hook of the privacy runner: removes a session's documents (committed),
/// then its stored file and any upload of it still in progress. Re-runnable: absent
/// files or documents are fine.
pub fn forget(
    index: &TranscriptIndex,
    writer: &mut IndexWriter<TantivyDocument>,
    data_dir: &Path,
    session_id: &str,
) -> Result<(), IndexError> {
    documents::remove_session(writer, index.fields(), session_id);
    writer.commit()?;
    index.reload()?;
    store::remove(data_dir, session_id)?;
    super::upload::discard_staged(data_dir, session_id)?;
    Ok(())
}

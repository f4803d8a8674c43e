//! Getting stored transcripts into the index and out of it again: read the file, parse
//! it into normalised messages, replace the session's documents, commit, then record
//! the session as indexed. Used by the server's indexer task and by `index-transcripts`.
//!
//! A transcript is read as a stream: one of up to [`WHOLE_PARSE_BYTES`] and
//! [`WHOLE_PARSE_LINES`] is parsed whole, exactly as the viewer parses it; a larger one
//! in consecutive segments of that size, so memory stays bounded however large (or
//! however many tiny lines) a transcript is. At most [`MAX_INDEXED_MESSAGES`] documents
//! of one transcript are indexed.
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
use super::store::{self, StoredTranscript};
use crate::db::DbError;

/// Sessions per commit: small enough that a new upload waits little behind a backlog.
pub const BATCH_SESSIONS: usize = 200;
/// A transcript of at most this many bytes and [`WHOLE_PARSE_LINES`] lines is parsed
/// whole; a larger one in segments of that size. A segment boundary can split what the
/// agent wrote as one message group (a Claude Code response over several lines, a Gemini
/// record re-appended later) into two documents: search still finds every word.
pub const WHOLE_PARSE_BYTES: usize = 16 << 20;
pub const WHOLE_PARSE_LINES: usize = 50_000;
/// Most documents indexed for one transcript (a session of this many messages is far
/// beyond any real one; the cap stops a transcript of tiny lines from flooding the index).
pub const MAX_INDEXED_MESSAGES: usize = 200_000;
/// A longer line is indexed by its first this many bytes (each message's indexed text is
/// cut to 32 KiB anyway); uploads refuse such lines, older files may hold them.
const MAX_LINE_BYTES: u64 = 16 << 20;

/// A session whose documents were committed.
#[derive(Debug, Clone)]
pub struct Indexed {
    pub session_id: String,
    pub upload_sha256: String,
    pub message_count: usize,
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
    let read = store::open(data_dir, &stored.relative_path).and_then(|text| {
        for_each_segment(text, |segment| {
            let messages = super::parse::parse(&stored.agent_type, segment);
            documents::add_documents(writer, index.fields(), &facts, &messages, &mut progress, MAX_INDEXED_MESSAGES)
        })
    });
    match read {
        Ok(SegmentsEnd::Read) => {}
        Ok(SegmentsEnd::Full) => {
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
    })
}

/// How a transcript's segments ended.
enum SegmentsEnd {
    Read,
    /// `index` said there is no room for more.
    Full,
}

/// Skips to just after the next `\n` without holding what it skips.
fn skip_line(text: &mut impl std::io::BufRead) -> std::io::Result<()> {
    loop {
        let buffer = text.fill_buf()?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|b| *b == b'\n') {
            Some(end) => {
                text.consume(end + 1);
                return Ok(());
            }
            None => {
                let all = buffer.len();
                text.consume(all);
            }
        }
    }
}

/// Hands the transcript to `index` in segments of whole lines: all of it at once when it
/// is within [`WHOLE_PARSE_BYTES`] and [`WHOLE_PARSE_LINES`], else consecutive segments of
/// about that size. `index` answers whether it wants more.
fn for_each_segment(
    mut text: impl std::io::BufRead,
    mut index: impl FnMut(&str) -> tantivy::Result<bool>,
) -> Result<SegmentsEnd, DbError> {
    use std::io::{BufRead, Read};
    let failed = |err: std::io::Error| DbError::Io { context: "reading a stored transcript".into(), source: err };
    let index_error = |err: tantivy::TantivyError| DbError::Io {
        context: "indexing a transcript".into(),
        source: std::io::Error::other(err.to_string()),
    };
    let (mut segment, mut lines, mut line) = (String::new(), 0usize, Vec::new());
    loop {
        line.clear();
        let read = (&mut text).take(MAX_LINE_BYTES).read_until(b'\n', &mut line).map_err(failed)?;
        if read as u64 == MAX_LINE_BYTES && !line.ends_with(b"\n") {
            skip_line(&mut text).map_err(failed)?;
        }
        if read > 0 {
            segment.push_str(&String::from_utf8_lossy(&line));
            if !segment.ends_with('\n') {
                segment.push('\n');
            }
            lines += 1;
        }
        let full = segment.len() >= WHOLE_PARSE_BYTES || lines >= WHOLE_PARSE_LINES;
        if (read == 0 || full) && !segment.is_empty() {
            if !index(&segment).map_err(index_error)? {
                return Ok(SegmentsEnd::Full);
            }
            segment.clear();
            lines = 0;
        }
        if read == 0 {
            return Ok(SegmentsEnd::Read);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn segments_of(text: &str, room: usize) -> (Vec<String>, bool) {
        let mut seen = Vec::new();
        let end = for_each_segment(text.as_bytes(), |segment| {
            seen.push(segment.to_string());
            Ok(seen.len() < room)
        })
        .unwrap();
        (seen, matches!(end, SegmentsEnd::Full))
    }

    #[test]
    fn a_small_transcript_is_one_segment_exactly_as_stored() {
        let text = "{\"a\":1}\r\n\nplain\nno end";
        let (seen, full) = segments_of(text, usize::MAX);
        assert_eq!(seen, vec!["{\"a\":1}\r\n\nplain\nno end\n".to_string()]);
        assert!(!full);
        assert!(segments_of("", usize::MAX).0.is_empty());
    }

    #[test]
    fn many_tiny_lines_come_in_bounded_segments_of_whole_lines() {
        let text: String = (0..WHOLE_PARSE_LINES * 2 + 7).map(|i| format!("{i}\n")).collect();
        let (seen, _) = segments_of(&text, usize::MAX);
        assert_eq!(
            seen.iter().map(|s| s.lines().count()).collect::<Vec<_>>(),
            [WHOLE_PARSE_LINES, WHOLE_PARSE_LINES, 7]
        );
        assert_eq!(seen.concat(), text, "nothing lost or repeated at the boundaries");
        let (seen, full) = segments_of(&text, 1);
        assert_eq!((seen.len(), full), (1, true), "no more is read once the index wants no more");
    }

    #[test]
    fn an_overlong_line_is_cut_and_the_next_line_still_read() {
        let long = "x".repeat(MAX_LINE_BYTES as usize + 10);
        let text = format!("first\n{long}\nafter\n");
        let (seen, _) = segments_of(&text, usize::MAX);
        let lines: Vec<&str> = seen.iter().flat_map(|s| s.lines()).collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1].len(), MAX_LINE_BYTES as usize);
        assert_eq!(lines[2], "after");
    }
}

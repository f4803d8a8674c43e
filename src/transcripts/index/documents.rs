//! From a session's normalised messages to index documents, and back out again.
//!
//! Invariants: a session's documents are always replaced whole: [`replace_session`]
//! deletes by session before adding, in the same (uncommitted) writer batch, so a commit
//! shows the old set or the new set. Keyword fields (agent, model, role, tool) are
//! lower-cased here and in queries, so `tool:Bash` and `tool:bash` are the same filter.
//! A message's indexed text is capped at [`MAX_INDEXED_TEXT_BYTES`]: the viewer reads
//! the whole transcript from its file; the index only has to find it.

use tantivy::schema::Term;
use tantivy::{IndexWriter, TantivyDocument};

use super::Fields;
use crate::transcripts::model::Message;

/// The most text of one message that is indexed and kept for snippets.
pub const MAX_INDEXED_TEXT_BYTES: usize = 32 * 1024;

/// What the index records about the session a message belongs to.
#[derive(Debug, Clone)]
pub struct SessionFacts {
    pub session_id: String,
    pub owner_id: String,
    /// Empty until teams exist (identity issue); the field is in the schema already.
    pub team_id: String,
    pub agent_type: String,
    /// Used for messages that do not name their model.
    pub model: Option<String>,
    /// Used for messages without a time of their own (and before the first that has one).
    pub started_ms: i64,
}

/// The text of a message as indexed: its text, then each tool call's name and input.
pub fn indexed_text(message: &Message) -> String {
    let mut text = message.text.clone();
    for call in &message.tool_calls {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&call.name);
        text.push(' ');
        text.push_str(&call.input);
    }
    crate::model::truncate_at_char_boundary(&mut text, MAX_INDEXED_TEXT_BYTES);
    text
}

/// How far a session's documents have got while its transcript is added piece by piece.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// The next message's position in the transcript.
    position: u64,
    /// The time of the last message that had one (or the session's start).
    last_ms: i64,
    /// Documents added so far.
    pub added: usize,
}

impl Progress {
    pub fn new(facts: &SessionFacts) -> Progress {
        Progress { position: 0, last_ms: facts.started_ms, added: 0 }
    }
}

/// The document of one message, or `None` for a message with no text to index. A
/// message without a time takes the time of the message before it.
fn document(
    fields: &Fields,
    facts: &SessionFacts,
    message: &Message,
    progress: &mut Progress,
) -> Option<TantivyDocument> {
    let position = progress.position;
    progress.position += 1;
    let text = indexed_text(message);
    if text.trim().is_empty() {
        return None;
    }
    progress.last_ms = message.ts_ms.unwrap_or(progress.last_ms);
    let mut doc = TantivyDocument::new();
    doc.add_text(fields.session, &facts.session_id);
    doc.add_text(fields.owner, &facts.owner_id);
    doc.add_text(fields.team, &facts.team_id);
    doc.add_text(fields.agent, facts.agent_type.to_ascii_lowercase());
    if let Some(model) = message.model.as_deref().or(facts.model.as_deref()) {
        doc.add_text(fields.model, model.to_ascii_lowercase());
    }
    doc.add_text(fields.role, message.role.as_str());
    let mut tools: Vec<String> = message.tool_names().map(str::to_ascii_lowercase).collect();
    tools.dedup();
    for tool in tools {
        doc.add_text(fields.tool, tool);
    }
    doc.add_i64(fields.time, progress.last_ms);
    doc.add_u64(fields.position, position);
    doc.add_text(fields.text, text);
    Some(doc)
}

/// Queues the documents of `messages`, the next part of a session's transcript, one at
/// a time (never all of them built at once), until `progress.added` reaches `limit`.
/// Returns whether there is room for more.
pub fn add_documents(
    writer: &IndexWriter<TantivyDocument>,
    fields: &Fields,
    facts: &SessionFacts,
    messages: &[Message],
    progress: &mut Progress,
    limit: usize,
) -> tantivy::Result<bool> {
    for message in messages {
        if progress.added >= limit {
            return Ok(false);
        }
        if let Some(doc) = document(fields, facts, message, progress) {
            writer.add_document(doc)?;
            progress.added += 1;
        }
    }
    Ok(progress.added < limit)
}

/// Queues the replacement of a session's documents in `writer` (seen at its next
/// commit). Returns how many documents the session now has.
pub fn replace_session(
    writer: &IndexWriter<TantivyDocument>,
    fields: &Fields,
    facts: &SessionFacts,
    messages: &[Message],
) -> tantivy::Result<usize> {
    remove_session(writer, fields, &facts.session_id);
    let mut progress = Progress::new(facts);
    add_documents(writer, fields, facts, messages, &mut progress, usize::MAX)?;
    Ok(progress.added)
}

/// Queues the removal of every document of a session.
pub fn remove_session(writer: &IndexWriter<TantivyDocument>, fields: &Fields, session_id: &str) {
    writer.delete_term(Term::from_field_text(fields.session, session_id));
}

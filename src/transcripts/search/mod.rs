//! Full-text search over transcripts: the library function behind `GET /api/search`
//! (and the benchmark). A query ([`query`]) becomes one Tantivy query that already
//! holds who may see what ([`Scope`]); it runs under a time cap ([`run`]) and returns
//! hits with snippets and highlights.
//!
//! Invariants: privacy is part of the query, never a filter applied to hits: the scope's
//! clause is required in the same boolean query as the words, so a document outside the
//! scope is never scored, counted or shown. Every search ends within its time cap plus
//! the work on one document, and says when it was cut short.

pub mod query;
pub mod run;

use std::ops::Bound;
use std::time::Duration;

use serde::Serialize;
use tantivy::query::{
    BooleanQuery, ConstScoreQuery, Occur, PhraseQuery, Query, RangeQuery, RegexQuery, TermQuery, TermSetQuery,
};
use tantivy::schema::{Field, IndexRecordOption, Term};

pub use self::query::{Clause, QueryError};
use super::index::{Fields, IndexError, TranscriptIndex, analyzer};

/// Whose sessions a search may return. Who may see which is decided by `access/`
/// before the scope is built; the search only keeps to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    OwnSessions {
        user_id: String,
    },
    /// The caller's own sessions and these other sessions (`/org/search`: transcripts
    /// their owners shared and the caller may open, `access::drill_in`).
    OwnAndSessions {
        user_id: String,
        session_ids: Vec<String>,
    },
}

/// How hits are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sort {
    /// Best match first (BM25), newer first among equals. Queries with no words sort by time.
    #[default]
    Relevance,
    Newest,
}

/// The default and most hits per page, and the deepest offset served.
pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 100;
pub const MAX_OFFSET: usize = 1000;
/// Every search stops looking after this long (DESIGN: a phrase of two very common words
/// can take half a second at a million messages).
pub const TIME_CAP: Duration = Duration::from_millis(250);

/// A search to run.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: String,
    pub scope: Scope,
    pub sort: Sort,
    pub limit: usize,
    pub offset: usize,
    pub time_cap: Duration,
}

impl SearchRequest {
    pub fn new(query: impl Into<String>, scope: Scope) -> SearchRequest {
        SearchRequest {
            query: query.into(),
            scope,
            sort: Sort::Relevance,
            limit: DEFAULT_LIMIT,
            offset: 0,
            time_cap: TIME_CAP,
        }
    }
}

/// Why a search was not run.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("{0}")]
    Query(#[from] QueryError),
    #[error("{field}: {message}")]
    Paging { field: &'static str, message: String },
    #[error(transparent)]
    Index(#[from] IndexError),
}

impl From<tantivy::TantivyError> for SearchError {
    fn from(err: tantivy::TantivyError) -> Self {
        SearchError::Index(IndexError::Tantivy(err))
    }
}

/// A matching message.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub session_id: String,
    /// The message's position in the normalised transcript.
    pub position: u64,
    pub role: String,
    pub agent: String,
    pub model: Option<String>,
    pub tools: Vec<String>,
    pub time_ms: i64,
    pub time: String,
    pub score: f32,
    pub snippet: Snippet,
}

/// A fragment of the message around the best match. `highlights` are byte ranges of
/// `fragment`; `html` is the fragment HTML-escaped with matches in `<mark>`.
#[derive(Debug, Clone, Serialize)]
pub struct Snippet {
    pub fragment: String,
    pub highlights: Vec<[usize; 2]>,
    pub html: String,
}

/// A page of hits.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    pub hits: Vec<Hit>,
    /// Matching messages counted; exact unless `cut_short`.
    pub total: u64,
    /// The time cap stopped the search: hits and total cover only what was looked at.
    pub cut_short: bool,
    pub took_ms: f64,
    pub offset: usize,
    pub limit: usize,
    /// The offset of the next page, when there may be one.
    pub next_offset: Option<usize>,
    pub sort: Sort,
}

fn keyword(field: Field, value: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(field, value), IndexRecordOption::Basic))
}

/// A clause that only filters: it must match, and adds nothing to the score.
fn filter(query: Box<dyn Query>) -> (Occur, Box<dyn Query>) {
    (Occur::Must, Box::new(ConstScoreQuery::new(query, 0.0)))
}

/// The terms of `text` as the index's analyser cuts them: `(position, term)`, words and
/// common grams.
fn text_terms(index: &TranscriptIndex, text: &str) -> Result<Vec<(usize, String)>, SearchError> {
    let mut analyzer = index.index().tokenizer_for_field(index.fields().text)?;
    let mut stream = analyzer.token_stream(text);
    let mut terms = Vec::new();
    stream.process(&mut |token| terms.push((token.position, token.text.clone())));
    Ok(terms)
}

/// One word is a term query; more are a phrase, with common pairs looked up as grams.
fn text_query(field: Field, tokens: &[(usize, String)]) -> Box<dyn Query> {
    let mut terms: Vec<(usize, Term)> = analyzer::phrase_terms(tokens)
        .into_iter()
        .map(|(offset, text)| (offset, Term::from_field_text(field, &text)))
        .collect();
    if terms.len() == 1 {
        let (_, term) = terms.remove(0);
        Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs))
    } else {
        Box::new(PhraseQuery::new_with_offset(terms))
    }
}

/// The scope's clause: which owners' (or sessions') documents the query may touch.
fn scope_clause(fields: &Fields, scope: &Scope) -> (Occur, Box<dyn Query>) {
    match scope {
        Scope::OwnSessions { user_id } => filter(keyword(fields.owner, user_id)),
        Scope::OwnAndSessions { user_id, session_ids } => {
            let sessions = TermSetQuery::new(session_ids.iter().map(|id| Term::from_field_text(fields.session, id)));
            filter(Box::new(BooleanQuery::new(vec![
                (Occur::Should, keyword(fields.owner, user_id)),
                (Occur::Should, Box::new(sessions)),
            ])))
        }
    }
}

/// Builds the one query a search runs: the scope's clause and the parsed clauses.
/// Returns the query and whether it has words to rank by. A query with neither words
/// the index knows nor a filter (only punctuation or exclusions once analysed) is an error.
pub fn build(index: &TranscriptIndex, scope: &Scope, clauses: &[Clause]) -> Result<(BooleanQuery, bool), SearchError> {
    let fields = index.fields();
    let mut parts = vec![scope_clause(fields, scope)];
    let mut has_words = false;
    let mut has_filters = false;
    for clause in clauses {
        has_filters |= !matches!(clause, Clause::Text { .. });
        parts.push(match clause {
            Clause::Text { text, negated } => {
                let terms = text_terms(index, text)?;
                if terms.is_empty() {
                    continue;
                }
                if *negated {
                    (Occur::MustNot, text_query(fields.text, &terms))
                } else {
                    has_words = true;
                    (Occur::Must, text_query(fields.text, &terms))
                }
            }
            Clause::Tool(name) => filter(keyword(fields.tool, name)),
            Clause::Agent(name) => filter(keyword(fields.agent, name)),
            Clause::Role(role) => filter(keyword(fields.role, role.as_str())),
            Clause::Session(id) => filter(keyword(fields.session, id)),
            Clause::Model(prefix) => {
                filter(Box::new(RegexQuery::from_pattern(&format!("{}.*", regex::escape(prefix)), fields.model)?))
            }
            Clause::After(ms) => filter(Box::new(RangeQuery::new(
                Bound::Included(Term::from_field_i64(fields.time, *ms)),
                Bound::Unbounded,
            ))),
            Clause::Before(ms) => filter(Box::new(RangeQuery::new(
                Bound::Unbounded,
                Bound::Excluded(Term::from_field_i64(fields.time, *ms)),
            ))),
        });
    }
    // Text the analyser drops whole (`...`, `-`) looks for nothing: without this, the
    // scope alone would match every message the caller may see.
    if !has_words && !has_filters {
        let texts: Vec<&str> = clauses
            .iter()
            .filter_map(|c| if let Clause::Text { text, .. } = c { Some(text.as_str()) } else { None })
            .collect();
        return Err(SearchError::Query(QueryError {
            term: texts.join(" "),
            message: "the query has no words to search for; give words, a \"phrase\" or a filter such as tool:bash"
                .into(),
        }));
    }
    Ok((BooleanQuery::new(parts), has_words))
}

/// Runs a search. See the module invariants for privacy and the time cap.
pub fn search(index: &TranscriptIndex, request: &SearchRequest) -> Result<SearchResults, SearchError> {
    if request.limit == 0 || request.limit > MAX_LIMIT {
        return Err(SearchError::Paging { field: "limit", message: format!("limit must be 1 to {MAX_LIMIT}") });
    }
    if request.offset > MAX_OFFSET {
        return Err(SearchError::Paging {
            field: "offset",
            message: format!("offset must be at most {MAX_OFFSET}; narrow the query instead"),
        });
    }
    let clauses = query::parse(&request.query)?;
    let (built, has_words) = build(index, &request.scope, &clauses)?;
    let sort = if has_words { request.sort } else { Sort::Newest };
    run::run(index, &built, sort, request)
}

#[cfg(test)]
mod tests;

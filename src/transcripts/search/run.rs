//! Running a built query under a time cap: walk each segment's matching documents,
//! keep the best `offset + limit`, count the rest, and stop when the cap is reached.
//! Then read the page's documents and cut their snippets.
//!
//! Invariants: the clock is checked every [`CHECK_EVERY`] matching documents (and
//! between segments), so a search overruns its cap by at most that much work; deleted
//! documents are skipped; a cut-short search still returns the best hits it saw.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::Instant;

use tantivy::query::{EnableScoring, Query};
use tantivy::schema::Value;
use tantivy::snippet::SnippetGenerator;
use tantivy::{DocAddress, DocSet, TERMINATED, TantivyDocument};

use super::{Hit, SearchError, SearchRequest, SearchResults, Snippet, Sort};
use crate::transcripts::index::{TranscriptIndex, names};

/// Matching documents between two looks at the clock.
const CHECK_EVERY: u64 = 512;
/// The longest snippet, in characters.
const SNIPPET_CHARS: usize = 240;

/// A document kept for the page, ordered by (score, time): for [`Sort::Newest`] every
/// score is 0, so time decides.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    score: f32,
    time_ms: i64,
    address: DocAddress,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score.total_cmp(&other.score).then(self.time_ms.cmp(&other.time_ms)).then(other.address.cmp(&self.address))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

pub fn run(
    index: &TranscriptIndex,
    query: &dyn Query,
    sort: Sort,
    request: &SearchRequest,
) -> Result<SearchResults, SearchError> {
    let started = Instant::now();
    let deadline = started + request.time_cap;
    let searcher = index.searcher();
    let scoring = match sort {
        Sort::Relevance => EnableScoring::enabled_from_searcher(&searcher),
        Sort::Newest => EnableScoring::disabled_from_searcher(&searcher),
    };
    let weight = query.weight(scoring)?;
    let keep = request.offset + request.limit;
    let mut best: BinaryHeap<Reverse<Candidate>> = BinaryHeap::with_capacity(keep + 1);
    let mut total = 0u64;
    let mut cut_short = false;
    'segments: for (ordinal, segment) in searcher.segment_readers().iter().enumerate() {
        if Instant::now() >= deadline {
            cut_short = true;
            break;
        }
        let times = segment.fast_fields().i64(names::TIME)?;
        let alive = segment.alive_bitset();
        let mut scorer = weight.scorer(segment, 1.0)?;
        let mut doc = scorer.doc();
        while doc != TERMINATED {
            if alive.is_none_or(|bits| bits.is_alive(doc)) {
                total += 1;
                let score = if sort == Sort::Relevance { scorer.score() } else { 0.0 };
                let time_ms = times.first(doc).unwrap_or(0);
                let candidate = Candidate { score, time_ms, address: DocAddress::new(ordinal as u32, doc) };
                if best.len() < keep {
                    best.push(Reverse(candidate));
                } else if best.peek().is_some_and(|Reverse(worst)| candidate > *worst) {
                    best.pop();
                    best.push(Reverse(candidate));
                }
                if total.is_multiple_of(CHECK_EVERY) && Instant::now() >= deadline {
                    cut_short = true;
                    break 'segments;
                }
            }
            doc = scorer.advance();
        }
    }
    let mut ranked: Vec<Candidate> = best.into_iter().map(|Reverse(c)| c).collect();
    ranked.sort_by(|a, b| b.cmp(a));
    let page: Vec<Candidate> = ranked.into_iter().skip(request.offset).collect();
    let mut hits = Vec::with_capacity(page.len());
    if page.is_empty() {
        return Ok(results(hits, total, cut_short, started, request, sort));
    }
    let mut generator = SnippetGenerator::create(&searcher, query, index.fields().text)?;
    generator.set_max_num_chars(SNIPPET_CHARS);
    for candidate in page {
        let doc: TantivyDocument = searcher.doc(candidate.address)?;
        hits.push(hit(index, &generator, &doc, candidate));
    }
    Ok(results(hits, total, cut_short, started, request, sort))
}

fn results(
    hits: Vec<Hit>,
    total: u64,
    cut_short: bool,
    started: Instant,
    request: &SearchRequest,
    sort: Sort,
) -> SearchResults {
    let keep = request.offset + request.limit;
    let next_offset = (total as usize > keep && hits.len() == request.limit).then_some(keep);
    SearchResults {
        hits,
        total,
        cut_short,
        took_ms: started.elapsed().as_secs_f64() * 1000.0,
        offset: request.offset,
        limit: request.limit,
        next_offset,
        sort,
    }
}

fn hit(index: &TranscriptIndex, generator: &SnippetGenerator, doc: &TantivyDocument, candidate: Candidate) -> Hit {
    let fields = index.fields();
    let text_of = |field| doc.get_first(field).and_then(|v| v.as_str()).map(str::to_string);
    let mut snippet = generator.snippet_from_doc(doc);
    let (fragment, highlights) = if snippet.is_empty() {
        // Filter-only queries have no words to centre on: show the message's start.
        let text = text_of(fields.text).unwrap_or_default();
        (text.chars().take(SNIPPET_CHARS).collect::<String>(), Vec::new())
    } else {
        (snippet.fragment().to_string(), snippet.highlighted().iter().map(|r| [r.start, r.end]).collect())
    };
    snippet.set_snippet_prefix_postfix("<mark>", "</mark>");
    let html = if snippet.is_empty() { crate::model::escape_markup(&fragment) } else { snippet.to_html() };
    Hit {
        session_id: text_of(fields.session).unwrap_or_default(),
        position: doc.get_first(fields.position).and_then(|v| v.as_u64()).unwrap_or(0),
        role: text_of(fields.role).unwrap_or_default(),
        agent: text_of(fields.agent).unwrap_or_default(),
        model: text_of(fields.model),
        tools: doc.get_all(fields.tool).filter_map(|v| v.as_str()).map(str::to_string).collect(),
        time_ms: candidate.time_ms,
        time: crate::model::rfc3339_ms(candidate.time_ms),
        score: candidate.score,
        snippet: Snippet { fragment, highlights, html },
    }
}

//! `/sessions/{id}/transcript`: a session's transcript, as stored (redacted), rendered: messages by role, tool calls and their results folded with their input and
//! output, reasoning folded, redaction markers visible, 200 messages a page (`?page=`);
//! `?find=` lists the first 200 messages that contain the words, each linked to its page.
//!
//! Invariants: read through `sessions::read` like the session page: the owner, or a reader
//! `authorize` allows (which needs the owner's sharing on, and audits the read), with the
//! same banner; anyone else's is a 404;
//! every piece of transcript text is escaped before the page marks anything in it; the
//! transcript is read through `transcripts::pages`, so a view holds one page, never the
//! file.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;

use super::login::render;
use super::transcript_work;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Path, Query};
use crate::model::escape_markup;
use crate::sessions::read::Reading;
use crate::state::AppState;
use crate::state::caller::PageCaller;
use crate::transcripts::model::{Message, Role};
use crate::transcripts::pages::{self, Wanted};

const PAGE_MESSAGES: usize = 200;
/// Most matches `find` lists (the page says how many there are in all).
const MAX_FOUND: usize = 200;

#[derive(Deserialize, Default)]
pub struct TranscriptParams {
    #[serde(default)]
    page: String,
    #[serde(default)]
    find: String,
    /// A time (ms since the epoch): the page holding the first message from then, with
    /// that message marked `#at` (the session page's rows link here).
    #[serde(default)]
    at: String,
}

/// A tool call as the page shows it: its name, the line saying what it did, and its
/// input (an edit as removed and added lines), all escaped and marked.
pub struct ShownCall {
    pub name: String,
    pub headline: String,
    pub input: String,
    /// The input is an edit's removed and added lines.
    pub edit: bool,
}

/// A message ready for the page: its text already escaped and marked.
pub struct Shown {
    pub position: usize,
    pub page: usize,
    pub role: &'static str,
    pub when: String,
    /// Tool results, reasoning and system notices are folded.
    pub folded: bool,
    pub summary: String,
    pub html: String,
    pub calls: Vec<ShownCall>,
    pub error: bool,
    /// The message an `?at=` link asked for.
    pub here: bool,
    /// The whole text's length when what is shown was cut.
    pub whole_bytes: Option<usize>,
}

#[derive(Template)]
#[template(path = "web/me_transcript.html")]
struct TranscriptPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    session_id: String,
    /// Its title (`transcripts::title`): this reader reads the transcript it comes from.
    title: Option<String>,
    /// Why a reader who is not the owner may read it (`None` for the owner).
    ground: Option<String>,
    total: usize,
    page: usize,
    pages: usize,
    find: String,
    messages: Vec<Shown>,
    found: Option<usize>,
    /// More messages matched than are listed.
    more_found: bool,
}

/// Escapes `text`, then marks the redaction labels and (case-insensitively) `find`.
pub fn marked(text: &str, find: &str) -> String {
    let mut html = escape_markup(text);
    // Labels are `[REDACTED:<rule>]`; brackets and rule names survive escaping.
    let mut out = String::with_capacity(html.len());
    let mut rest = html.as_str();
    while let Some(at) = rest.find("[REDACTED:") {
        let end = rest[at..].find(']').map_or(rest.len(), |e| at + e + 1);
        out.push_str(&rest[..at]);
        out.push_str("<span class=\"redacted\">");
        out.push_str(&rest[at..end]);
        out.push_str("</span>");
        rest = &rest[end..];
    }
    out.push_str(rest);
    html = out;
    let needle = escape_markup(find.trim()).to_lowercase();
    if needle.is_empty() {
        return html;
    }
    let lower = html.to_lowercase();
    if lower.len() != html.len() {
        return html; // Case folding changed lengths: offsets would not line up; leave unmarked.
    }
    let mut out = String::with_capacity(html.len() + 16);
    let mut from = 0;
    while let Some(at) = lower[from..].find(&needle) {
        let at = from + at;
        // Never mark inside a tag the page added.
        let open_tag = html[..at].rfind('<').is_some_and(|lt| html[..at].rfind('>').is_none_or(|gt| gt < lt));
        out.push_str(&html[from..at]);
        if open_tag {
            out.push_str(&html[at..at + needle.len()]);
        } else {
            out.push_str("<mark>");
            out.push_str(&html[at..at + needle.len()]);
            out.push_str("</mark>");
        }
        from = at + needle.len();
    }
    out.push_str(&html[from..]);
    out
}

fn shown(position: usize, message: &Message, find: &str) -> Shown {
    let role = message.role.as_str();
    // A short tool result is shown open; a long one, reasoning and notices are folded.
    let folded = match message.role {
        Role::Tool => !transcript_work::short(&message.text),
        Role::Reasoning | Role::System => true,
        _ => false,
    };
    let summary = match message.role {
        Role::Tool => format!(
            "{} result{}: {}",
            message.tool_name.as_deref().unwrap_or("tool"),
            if message.is_error { " (failed)" } else { "" },
            transcript_work::one_line(&message.text)
        ),
        Role::Reasoning => "reasoning".into(),
        Role::System => "from the agent".into(),
        _ => role.into(),
    };
    Shown {
        position,
        page: position / PAGE_MESSAGES + 1,
        role,
        when: message.ts_ms.map(crate::model::instants::exact_utc).unwrap_or_default(),
        folded,
        summary,
        html: marked(&message.text, find),
        calls: message
            .tool_calls
            .iter()
            .map(|call| {
                let edit = transcript_work::edit_lines(&call.input);
                ShownCall {
                    name: escape_markup(&call.name),
                    headline: marked(&transcript_work::headline(&call.input), find),
                    edit: edit.is_some(),
                    input: marked(&edit.unwrap_or_else(|| transcript_work::readable_input(&call.input)), find),
                }
            })
            .collect(),
        error: message.is_error,
        here: false,
        whole_bytes: message.whole_text_bytes,
    }
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(session_id): Path<String>,
    Query(params): Query<TranscriptParams>,
) -> Result<Response, PageError> {
    let page: usize = match params.page.as_str() {
        "" => 1,
        text => text.parse().ok().filter(|page| *page >= 1).ok_or_else(|| {
            PageError(AppError::bad_request("page", format!("page must be a number from 1, not {text:?}")))
        })?,
    };
    let at_ms: Option<i64> = match params.at.as_str() {
        "" => None,
        text => Some(text.parse().map_err(|_| {
            PageError(AppError::bad_request("at", format!("at must be a time in milliseconds, not {text:?}")))
        })?),
    };
    let find = params.find.trim().to_string();
    let needle = find.to_lowercase();
    let (proof, basis) = super::sessions::authorize(&state, &caller, &session_id, Reading::Transcript).await?;
    let data_dir = state.config.data_dir.clone();
    let (read_page, (ground, title)) = state
        .read(move |conn| {
            let ground = super::reading_ground::describe(conn, &basis, proof.owner_id())?;
            // The access rules let this reader read the transcript: its owner's name for it.
            let title = crate::transcripts::store::titles(conn, proof.owner_id(), &[proof.session_id()])?
                .remove(proof.session_id());
            let ground = (ground, title);
            let wanted = match (needle.as_str(), at_ms) {
                ("", Some(ts_ms)) => Wanted::WindowAt { ts_ms, limit: PAGE_MESSAGES },
                ("", None) => Wanted::Window { offset: (page - 1).saturating_mul(PAGE_MESSAGES), limit: PAGE_MESSAGES },
                (needle, _) => Wanted::Containing { needle, limit: MAX_FOUND },
            };
            Ok::<_, crate::db::DbError>(pages::read(conn, &data_dir, &proof, wanted)?.map(|page| (page, ground)))
        })
        .await?
        .ok_or(PageError(AppError::NotFound))?;
    let total = read_page.total;
    let pages = total.div_ceil(PAGE_MESSAGES).max(1);
    let found = (!find.is_empty()).then_some(read_page.matched);
    // An `?at=` read is of the window holding its message: that window's page.
    let page = match (at_ms, read_page.messages.first()) {
        (Some(_), Some((first, _))) if find.is_empty() => first / PAGE_MESSAGES + 1,
        _ => page,
    };
    let shown_messages = read_page
        .messages
        .iter()
        .map(|(position, m)| Shown { here: read_page.at == Some(*position), ..shown(*position, m, &find) })
        .collect();
    Ok(render(&TranscriptPage {
        nav_role: caller.role.as_str(),
        session_id,
        title,
        ground,
        total,
        page,
        pages,
        find,
        more_found: read_page.matched > read_page.messages.len(),
        messages: shown_messages,
        found,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_then_redactions_and_matches_are_marked() {
        assert_eq!(
            marked("key <b>[REDACTED:openai_key]</b> & Key", "key"),
            "<mark>key</mark> &lt;b&gt;<span class=\"redacted\">[REDACTED:openai_<mark>key</mark>]</span>&lt;/b&gt; &amp; <mark>Key</mark>",
            "a label's text is text: it is marked too, never its tag"
        );
        assert_eq!(marked("a & b", "&"), "a <mark>&amp;</mark> b", "the term is escaped as the text is");
        assert_eq!(
            marked("x [REDACTED:aws_key] y", "redacted"),
            "x <span class=\"redacted\">[<mark>REDACTED</mark>:aws_key]</span> y"
        );
        assert_eq!(marked("span", "span"), "<mark>span</mark>");
        assert_eq!(
            marked("[REDACTED:x] span", "span"),
            "<span class=\"redacted\">[REDACTED:x]</span> <mark>span</mark>",
            "never inside a tag"
        );
    }
}

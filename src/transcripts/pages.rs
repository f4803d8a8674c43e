//! People's reads of a stored transcript, a page at a time: the owner's transcript page,
//! its `find`, and `GET /api/sessions/{id}/transcript`. The file is read as a stream of
//! segments (`super::segments`) and parsed segment by segment; only the messages asked
//! for are kept, each message's text and tool inputs cut at [`MAX_READ_TEXT_BYTES`].
//!
//! Invariants: what one read holds is one segment being parsed plus the messages it
//! keeps (at most [`MAX_PAGE_MESSAGES`], each cut), never the file, whatever the file
//! holds; every read takes the `SessionRead` proof of `sessions::read`, and a proof for
//! the session alone does not cover its transcript. Positions are those of the indexer.

use std::path::Path;

use rusqlite::Connection;

use super::model::Message;
use super::segments::{self, SegmentError};
use super::store;
use crate::db::DbError;
use crate::model::truncate_at_char_boundary;
use crate::model::wire::Rejection;
use crate::sessions::read::SessionRead;

/// Most messages one read returns.
pub const MAX_PAGE_MESSAGES: usize = 500;
/// A message's text (and each tool call's input) is cut to this many bytes for a reader;
/// [`Message::whole_text_bytes`] then says how long the whole was.
pub const MAX_READ_TEXT_BYTES: usize = 64 << 10;

/// Messages the API returns when the request names no `limit`.
pub const DEFAULT_PAGE_MESSAGES: usize = 200;

/// The query of `GET /api/sessions/{id}/transcript`, as text, parsed in
/// [`PageQuery::window`] so a bad value gets the error naming it.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    offset: Option<String>,
    limit: Option<String>,
}

impl PageQuery {
    /// The window asked for (offset, limit), or the rejection naming the parameter (a
    /// 400 at the edge).
    pub fn window(&self) -> Result<(usize, usize), Rejection> {
        let offset = match self.offset.as_deref() {
            None => 0,
            Some(text) => text
                .parse::<usize>()
                .map_err(|_| Rejection::new("offset", format!("offset must be a whole number from 0, not {text:?}")))?,
        };
        let limit = match self.limit.as_deref() {
            None => DEFAULT_PAGE_MESSAGES,
            Some(text) => {
                text.parse::<usize>().ok().filter(|n| (1..=MAX_PAGE_MESSAGES).contains(n)).ok_or_else(|| {
                    Rejection::new("limit", format!("limit must be a whole number between 1 and {MAX_PAGE_MESSAGES}"))
                })?
            }
        };
        Ok((offset, limit))
    }
}

/// Messages of one transcript, with their positions, and how many it holds in all.
#[derive(Debug)]
pub struct Page {
    pub messages: Vec<(usize, Message)>,
    pub total: usize,
    /// How many messages matched, when the read looked for some (may exceed `messages`).
    pub matched: usize,
    /// The position of the message a [`Wanted::WindowAt`] read found.
    pub at: Option<usize>,
}

/// Which messages a read keeps.
#[derive(Debug, Clone, Copy)]
pub enum Wanted<'a> {
    /// `limit` messages from position `offset`.
    Window { offset: usize, limit: usize },
    /// Up to `limit` messages containing `needle` (lower-case), in their text or a tool
    /// call's input.
    Containing { needle: &'a str, limit: usize },
    /// The window of `limit` messages (windows start at multiples of `limit`) holding
    /// the first message at or after `ts_ms`; the last window when none is. `Page::at`
    /// says which message that is.
    WindowAt { ts_ms: i64, limit: usize },
}

/// A message as a reader gets it: text and tool inputs cut to [`MAX_READ_TEXT_BYTES`].
pub fn for_reader(mut message: Message) -> Message {
    let whole = message.text.len();
    if truncate_at_char_boundary(&mut message.text, MAX_READ_TEXT_BYTES) {
        message.whole_text_bytes = Some(whole);
    }
    for call in &mut message.tool_calls {
        if truncate_at_char_boundary(&mut call.input, MAX_READ_TEXT_BYTES) {
            call.input.push_str(" …");
        }
    }
    message
}

fn contains(message: &Message, needle: &str) -> bool {
    message.text.to_lowercase().contains(needle)
        || message.tool_calls.iter().any(|call| call.input.to_lowercase().contains(needle))
}

/// Reads what `wanted` asks of the transcript the proof covers; `None` when the proof
/// does not cover the transcript or the session has none.
pub fn read(
    conn: &Connection,
    data_dir: &Path,
    proof: &SessionRead,
    wanted: Wanted<'_>,
) -> Result<Option<Page>, DbError> {
    let Some(relative) = store::path_for(conn, proof)? else { return Ok(None) };
    read_file(data_dir, &relative, proof.agent_type().as_str(), wanted).map(Some)
}

/// [`read`] on a stored file of `agent_type`, without the proof: for the system's own
/// measuring (`bench transcript-memory`). People's reads go through [`read`].
pub fn read_file(data_dir: &Path, relative: &str, agent_type: &str, wanted: Wanted<'_>) -> Result<Page, DbError> {
    let text = store::open(data_dir, relative)?;
    let mut page = Page { messages: Vec::new(), total: 0, matched: 0, at: None };
    segments::for_each(text, |segment| {
        for message in super::parse::parse(agent_type, segment) {
            let position = page.total;
            page.total += 1;
            if let Wanted::WindowAt { ts_ms, limit } = wanted {
                let limit = limit.max(1);
                if page.at.is_none() {
                    // Until the message is found, keep only the window being read.
                    if position.is_multiple_of(limit) {
                        page.messages.clear();
                    }
                    if message.ts_ms.is_some_and(|ts| ts >= ts_ms) {
                        page.at = Some(position);
                    }
                    page.messages.push((position, for_reader(message)));
                } else if position / limit == page.at.unwrap_or(0) / limit {
                    page.messages.push((position, for_reader(message)));
                }
                continue;
            }
            let keep = match wanted {
                Wanted::Window { offset, limit } => position >= offset && position - offset < limit,
                Wanted::Containing { needle, limit } => {
                    let matches = contains(&message, needle);
                    page.matched += usize::from(matches);
                    matches && page.messages.len() < limit
                }
                Wanted::WindowAt { .. } => false,
            };
            if keep && page.messages.len() < MAX_PAGE_MESSAGES {
                page.messages.push((position, for_reader(message)));
            }
        }
        Ok::<_, std::convert::Infallible>(true)
    })
    .map_err(|err| match err {
        SegmentError::Read(err) => err,
        SegmentError::Consumer(never) => match never {},
    })?;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(lines: &[String]) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let relative = store::write(dir.path(), "s1", &lines.join("\n")).unwrap();
        (dir, relative)
    }

    #[test]
    fn a_window_is_found_by_the_time_of_its_message() {
        let lines: Vec<String> = (0..45)
            .map(|i| {
                serde_json::json!({
                    "type": "user",
                    "message": {"role": "user", "content": format!("message {i}")},
                    "timestamp": crate::model::rfc3339_ms(1_000 * i),
                })
                .to_string()
            })
            .collect();
        let (dir, relative) = stored(&lines);
        let found =
            read_file(dir.path(), &relative, "claude_code", Wanted::WindowAt { ts_ms: 23_500, limit: 20 }).unwrap();
        let positions: Vec<usize> = found.messages.iter().map(|(p, _)| *p).collect();
        assert_eq!(found.at, Some(24), "the first message at or after the time");
        assert_eq!(positions, (20..40).collect::<Vec<_>>(), "its whole window");
        let late =
            read_file(dir.path(), &relative, "claude_code", Wanted::WindowAt { ts_ms: 99_000, limit: 20 }).unwrap();
        assert_eq!((late.at, late.messages.len()), (None, 5), "past the end: the last window");
    }

    #[test]
    fn a_window_keeps_only_its_messages_and_counts_them_all() {
        let lines: Vec<String> = (0..segments::SEGMENT_LINES + 50).map(|i| format!("line {i}")).collect();
        let (dir, relative) = stored(&lines);
        let page = read_file(dir.path(), &relative, "aider", Wanted::Window { offset: 19_990, limit: 20 }).unwrap();
        assert_eq!(page.total, lines.len());
        let positions: Vec<usize> = page.messages.iter().map(|(p, _)| *p).collect();
        assert_eq!(positions, (19_990..20_010).collect::<Vec<_>>(), "across a segment boundary");
        assert_eq!(page.messages[0].1.text, "line 19990");
        let past = read_file(dir.path(), &relative, "aider", Wanted::Window { offset: 99_999, limit: 20 }).unwrap();
        assert!(past.messages.is_empty());
    }

    #[test]
    fn finding_counts_every_match_and_keeps_the_first() {
        let lines: Vec<String> =
            (0..300).map(|i| if i % 3 == 0 { format!("Needle {i}") } else { format!("hay {i}") }).collect();
        let (dir, relative) = stored(&lines);
        let page =
            read_file(dir.path(), &relative, "aider", Wanted::Containing { needle: "needle", limit: 5 }).unwrap();
        assert_eq!((page.matched, page.messages.len(), page.total), (100, 5, 300));
        assert_eq!(page.messages.iter().map(|(p, _)| *p).collect::<Vec<_>>(), [0, 3, 6, 9, 12]);
    }

    #[test]
    fn the_api_window_names_a_bad_parameter() {
        let query = |offset: Option<&str>, limit: Option<&str>| PageQuery {
            offset: offset.map(str::to_string),
            limit: limit.map(str::to_string),
        };
        assert_eq!(query(None, None).window().unwrap(), (0, DEFAULT_PAGE_MESSAGES));
        assert_eq!(query(Some("400"), Some("500")).window().unwrap(), (400, 500));
        assert_eq!(query(Some("-1"), None).window().unwrap_err().field, "offset");
        assert_eq!(query(None, Some("501")).window().unwrap_err().field, "limit");
        assert_eq!(query(None, Some("0")).window().unwrap_err().field, "limit");
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary_and_says_how_long_it_was() {
        let long = format!("{}é tail", "a".repeat(MAX_READ_TEXT_BYTES - 1));
        let message = for_reader(Message::new(super::super::model::Role::User, long.clone()));
        assert_eq!(message.text.len(), MAX_READ_TEXT_BYTES - 1, "the two-byte é does not fit");
        assert_eq!(message.whole_text_bytes, Some(long.len()));
        let short = for_reader(Message::new(super::super::model::Role::User, "short"));
        assert_eq!(short.whole_text_bytes, None);
    }
}

//! A stored transcript read as consecutive segments of whole lines, so that nothing
//! which reads a transcript (the indexer, the viewer's pages, the API) ever holds more
//! of it than one segment. A transcript of up to [`SEGMENT_BYTES`] and [`SEGMENT_LINES`]
//! is one segment, parsed exactly as a whole; a larger one comes in consecutive
//! segments of about that size.
//!
//! Invariants: segments are whole lines, in order, nothing lost or repeated at a
//! boundary; a line longer than [`MAX_LINE_BYTES`] is cut there (uploads refuse such
//! lines, older files may hold them) and the next line is still read. The indexer and
//! the readers use the same segments, so a message's position is the same number in a
//! search hit, on the transcript page and in the API.

use std::io::{BufRead, Read};

use crate::db::DbError;

/// A segment holds at most about this many bytes of transcript text...
pub const SEGMENT_BYTES: usize = 8 << 20;
/// ...and at most this many lines. A segment boundary can split what the agent wrote as
/// one message group (a Claude Code response over several lines, a Gemini record
/// re-appended later) into two messages: every word is still there.
pub const SEGMENT_LINES: usize = 20_000;
/// A longer line is read as its first this many bytes.
pub const MAX_LINE_BYTES: u64 = 16 << 20;

/// How a transcript's segments ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentsEnd {
    /// Every segment was handed over.
    Read,
    /// The consumer said it wants no more.
    Stopped,
}

/// Why reading segments stopped early.
#[derive(Debug, thiserror::Error)]
pub enum SegmentError<E> {
    #[error(transparent)]
    Read(DbError),
    #[error(transparent)]
    Consumer(E),
}

/// Skips to just after the next `\n` without holding what it skips.
fn skip_line(text: &mut impl BufRead) -> std::io::Result<()> {
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

/// Hands the transcript to `consume` in segments of whole lines. `consume` answers
/// whether it wants more.
pub fn for_each<E>(
    mut text: impl BufRead,
    mut consume: impl FnMut(&str) -> Result<bool, E>,
) -> Result<SegmentsEnd, SegmentError<E>> {
    let failed = |err: std::io::Error| {
        SegmentError::Read(DbError::Io { context: "reading a stored transcript".into(), source: err })
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
        let full = segment.len() >= SEGMENT_BYTES || lines >= SEGMENT_LINES;
        if (read == 0 || full) && !segment.is_empty() {
            if !consume(&segment).map_err(SegmentError::Consumer)? {
                return Ok(SegmentsEnd::Stopped);
            }
            segment.clear();
            lines = 0;
        }
        if read == 0 {
            return Ok(SegmentsEnd::Read);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments_of(text: &str, room: usize) -> (Vec<String>, bool) {
        let mut seen = Vec::new();
        let end = for_each(text.as_bytes(), |segment| {
            seen.push(segment.to_string());
            Ok::<_, std::convert::Infallible>(seen.len() < room)
        })
        .unwrap();
        (seen, end == SegmentsEnd::Stopped)
    }

    #[test]
    fn a_small_transcript_is_one_segment_exactly_as_stored() {
        let text = "{\"a\":1}\r\n\nplain\nno end";
        let (seen, stopped) = segments_of(text, usize::MAX);
        assert_eq!(seen, vec!["{\"a\":1}\r\n\nplain\nno end\n".to_string()]);
        assert!(!stopped);
        assert!(segments_of("", usize::MAX).0.is_empty());
    }

    #[test]
    fn many_tiny_lines_come_in_bounded_segments_of_whole_lines() {
        let text: String = (0..SEGMENT_LINES * 2 + 7).map(|i| format!("{i}\n")).collect();
        let (seen, _) = segments_of(&text, usize::MAX);
        assert_eq!(seen.iter().map(|s| s.lines().count()).collect::<Vec<_>>(), [SEGMENT_LINES, SEGMENT_LINES, 7]);
        assert_eq!(seen.concat(), text, "nothing lost or repeated at the boundaries");
        let (seen, stopped) = segments_of(&text, 1);
        assert_eq!((seen.len(), stopped), (1, true), "no more is read once the consumer wants no more");
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

//! Token usage read from an agent's own transcript, incrementally: each read starts at
//! the offset the previous one stopped at, takes only complete lines, and reports how
//! much each usage group grew since it was last reported.
//!
//! Invariants: a group's total over all reports equals its final counts, however its
//! lines are split across reads — agents that stream (Claude Code repeats a message's
//! usage on every content block, with output counts that grow) and agents with
//! cumulative counters (Codex) both reduce to "report the growth of a group"; the offset
//! and the reported counts are written in the hook's one transaction, with the events
//! that carry the usage, so nothing is counted twice or skipped when a hook fails.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::agents::usage::{Line, Request, growth};
use crate::db::DbError;
use crate::hook::queue::{HookTx, TranscriptMark};
use crate::model::{AgentType, Usage};

/// At most this much of a transcript is read by one hook (the rest waits for the next).
const MAX_READ_BYTES: u64 = 32 << 20;

/// Usage groups untouched this long are forgotten (by the flusher, off the hooks' path):
/// they can no longer grow.
pub const GROUP_RETENTION_MS: i64 = 7 * 24 * 3600 * 1000;

/// The complete lines of `path` after `offset`, and the offset after the last of them.
/// A transcript that shrank (rewritten) is read again from the start; the group ledger
/// keeps that from counting anything twice.
pub fn new_lines(path: &Path, offset: u64) -> std::io::Result<(Vec<u8>, u64)> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let start = if len < offset { 0 } else { offset };
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES).read_to_end(&mut bytes)?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(complete);
    Ok((bytes, start + complete as u64))
}

/// The growth of a whole-session running total that an agent keeps in a small file it
/// rewrites in place (Droid's `tokenUsage`), since `key` last reported it.
pub fn grown_total(
    tx: &HookTx<'_>,
    key: &str,
    model: Option<String>,
    total: Usage,
    now_ms: i64,
) -> Result<Option<Request>, DbError> {
    Ok(report_groups(tx, key, vec![(CUMULATIVE_GROUP.to_string(), model, total)], now_ms)?.pop())
}

/// Reports per-request usage groups found in one read of `path` (or one payload): each
/// group's growth since it was last reported, in the order given.
pub fn report_groups(
    tx: &HookTx<'_>,
    path: &str,
    groups: Vec<(String, Option<String>, Usage)>,
    now_ms: i64,
) -> Result<Vec<Request>, DbError> {
    let mut requests = Vec::new();
    for (group, group_model, latest) in groups {
        let reported = tx.usage_group(path, &group)?;
        let grown = growth(&latest, &reported);
        tx.set_usage_group(path, &group, &latest.max_with(&reported), now_ms)?;
        if !grown.is_zero() {
            let request_id = request_id_of(&group);
            requests.push(Request { model: group_model, usage: grown, request_id });
        }
    }
    Ok(requests)
}

/// The request id in a usage group's key: Claude Code's groups are
/// `<message id>\u{1f}<requestId>` (`agents::claude_code::record_usage`).
fn request_id_of(group: &str) -> Option<String> {
    let (_, request) = group.split_once('\u{1f}')?;
    (!request.is_empty()).then(|| request.to_string())
}

/// The ledger key of a transcript's running total.
pub const CUMULATIVE_GROUP: &str = "\u{1}cumulative";

/// The read-record key of a session whose agent keeps no line-by-line transcript that
/// hooks read (Droid, OpenCode, Cline): `import` skips a session hooks have seen.
pub fn session_key(agent: AgentType, session: &str) -> String {
    format!("{}:{session}", agent.as_str())
}

/// Records that hooks (or an import) have seen the session at `key`, without moving a
/// real read offset forward.
pub fn mark_seen(tx: &HookTx<'_>, key: &str) -> Result<(), DbError> {
    let mut mark = tx.transcript_mark(key)?;
    if mark.offset == 0 {
        mark.offset = 1;
        tx.set_transcript_mark(key, &mark)?;
    }
    Ok(())
}

/// Reads what is new in the transcript at `path` and returns the growth of every usage
/// group since its last report, in transcript order. A missing transcript is no usage.
pub fn read_new(
    tx: &HookTx<'_>,
    path: &str,
    parse: fn(&str) -> Option<Line>,
    now_ms: i64,
) -> Result<Vec<Request>, DbError> {
    let mark = tx.transcript_mark(path)?;
    let (bytes, offset) = match new_lines(Path::new(path), mark.offset) {
        Ok(read) => read,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(DbError::Io { context: format!("cannot read transcript {path}"), source }),
    };
    let mut model = mark.model.clone();
    // Latest counts per group within this read, in order of first appearance.
    let mut groups: Vec<(String, Option<String>, Usage)> = Vec::new();
    let mut requests = Vec::new();
    let mut running: Option<Usage> = None;
    let text = String::from_utf8_lossy(&bytes);
    let parsed = text.lines().filter_map(parse).flat_map(|line| match line {
        Line::Many(lines) => lines,
        one => vec![one],
    });
    for line in parsed {
        match line {
            Line::Model(name) => model = Some(name),
            Line::Cumulative { model: line_model, usage } => {
                let previous = match running {
                    Some(previous) => previous,
                    None => tx.usage_group(path, CUMULATIVE_GROUP)?,
                };
                let grown = growth(&usage, &previous);
                running = Some(usage.max_with(&previous));
                if !grown.is_zero() {
                    requests.push(Request {
                        model: line_model.or_else(|| model.clone()),
                        usage: grown,
                        request_id: None,
                    });
                }
            }
            Line::Counts { group, model: line_model, usage } => {
                let line_model = line_model.or_else(|| model.clone());
                match groups.iter_mut().find(|(g, _, _)| *g == group) {
                    Some(entry) => {
                        entry.1 = line_model.or(entry.1.take());
                        entry.2 = entry.2.max_with(&usage);
                    }
                    None => groups.push((group, line_model, usage)),
                }
            }
            Line::Many(_) => {}
        }
    }
    if let Some(total) = running {
        tx.set_usage_group(path, CUMULATIVE_GROUP, &total, now_ms)?;
    }
    requests.extend(report_groups(tx, path, groups, now_ms)?);
    tx.set_transcript_mark(path, &TranscriptMark { offset, model })?;
    Ok(requests)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::queue::Queue;

    /// `group:input:output` lines, or `total:input:output` for a running total.
    fn parse(line: &str) -> Option<Line> {
        let mut parts = line.split(':');
        let group = parts.next()?.to_string();
        let usage = Usage {
            input_tokens: parts.next()?.parse().ok()?,
            output_tokens: parts.next()?.parse().ok()?,
            ..Usage::default()
        };
        Some(if group == "total" {
            Line::Cumulative { model: None, usage }
        } else {
            Line::Counts { group, model: Some("m".into()), usage }
        })
    }

    fn read(queue: &mut Queue, path: &Path) -> Vec<(i64, i64)> {
        let tx = queue.begin().unwrap();
        let requests = read_new(&tx, path.to_str().unwrap(), parse, 1_000).unwrap();
        tx.commit().unwrap();
        requests.iter().map(|r| (r.usage.input_tokens, r.usage.output_tokens)).collect()
    }

    #[test]
    fn a_group_split_across_reads_and_a_half_written_line_count_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut queue = Queue::open(&dir.path().join("q.db")).unwrap();
        let transcript = dir.path().join("t.jsonl");
        std::fs::write(&transcript, "a:10:1\na:10:5\nb:3:2\nc:7:").unwrap();
        assert_eq!(read(&mut queue, &transcript), [(10, 5), (3, 2)], "the unfinished line waits");
        std::fs::write(&transcript, "a:10:1\na:10:5\nb:3:2\nc:7:9\nb:3:8\n").unwrap();
        assert_eq!(read(&mut queue, &transcript), [(7, 9), (0, 6)], "b grew by 6 after its first report");
        assert_eq!(read(&mut queue, &transcript), [], "nothing new");
        std::fs::write(&transcript, "a:10:5\n").unwrap();
        assert_eq!(read(&mut queue, &transcript), [], "a rewritten transcript is re-read without recounting");
    }

    #[test]
    fn running_totals_are_differenced_line_by_line_across_reads() {
        let dir = tempfile::tempdir().unwrap();
        let mut queue = Queue::open(&dir.path().join("q.db")).unwrap();
        let transcript = dir.path().join("t.jsonl");
        std::fs::write(&transcript, "total:100:10\ntotal:250:30\n").unwrap();
        assert_eq!(read(&mut queue, &transcript), [(100, 10), (150, 20)]);
        std::fs::write(&transcript, "total:100:10\ntotal:250:30\ntotal:250:30\ntotal:400:35\n").unwrap();
        assert_eq!(read(&mut queue, &transcript), [(150, 5)], "a repeated total is no request");
    }

    #[test]
    fn a_missing_transcript_is_no_usage() {
        let dir = tempfile::tempdir().unwrap();
        let mut queue = Queue::open(&dir.path().join("q.db")).unwrap();
        assert_eq!(read(&mut queue, &dir.path().join("absent.jsonl")), []);
    }
}

#[cfg(test)]
mod request_id_tests {
    use super::request_id_of;

    #[test]
    fn a_claude_group_names_its_request_and_other_groups_do_not() {
        assert_eq!(request_id_of("msg_01X\u{1f}req_011CV").as_deref(), Some("req_011CV"));
        assert_eq!(request_id_of("msg_01X\u{1f}"), None, "a line without requestId");
        assert_eq!(request_id_of("gemini-message-id"), None);
        assert_eq!(request_id_of(super::CUMULATIVE_GROUP), None);
    }
}

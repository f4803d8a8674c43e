//! The generated corpus of `bench search`: sessions of Claude Code and Codex
//! transcripts in each agent's real format, words drawn from a Zipf distribution over a
//! vocabulary of common English, common programming words and a long tail of rare
//! made-up words, written into a real data directory (users, sessions and
//! `transcript_index` rows in main.db; zstd files under transcripts/) exactly where an
//! upload would leave them, so `index-transcripts` indexes it as it would a real one.
//!
//! Invariants: the corpus is a function of its arguments (fixed seed), so runs compare;
//! the words the benchmark queries for are all in it at known frequencies.

use std::path::Path;

use rusqlite::{Connection, params};
use serde_json::json;

/// Frequent English words first: the Zipf head.
const ENGLISH: &[&str] = &[
    "the", "of", "to", "and", "a", "in", "is", "it", "that", "for", "on", "with", "as", "this", "be", "at", "by",
    "not", "we", "are", "from", "or", "an", "but", "if", "can", "so", "now", "then", "there", "which", "when", "all",
    "will", "one", "should", "it's", "let", "me", "i", "you", "have", "has", "was", "what", "use", "need", "check",
    "make", "see", "new", "also", "into", "only", "just", "out", "again", "first", "still", "because", "instead",
];
/// Programming words, the body of the distribution.
const CODE: &[&str] = &[
    "error",
    "test",
    "file",
    "function",
    "build",
    "fix",
    "cargo",
    "run",
    "type",
    "value",
    "return",
    "config",
    "code",
    "module",
    "import",
    "struct",
    "string",
    "path",
    "request",
    "response",
    "server",
    "client",
    "database",
    "query",
    "index",
    "table",
    "migration",
    "schema",
    "deploy",
    "login",
    "timeout",
    "session",
    "token",
    "user",
    "cache",
    "retry",
    "rate",
    "limit",
    "handler",
    "route",
    "async",
    "await",
    "thread",
    "lock",
    "panic",
    "result",
    "option",
    "vector",
    "buffer",
    "parse",
    "json",
    "yaml",
    "docker",
    "branch",
    "commit",
    "merge",
    "review",
    "refactor",
    "lint",
    "warning",
    "compile",
    "linker",
    "crate",
    "package",
    "version",
    "release",
    "flaky",
    "assert",
    "mock",
    "fixture",
    "benchmark",
    "latency",
    "memory",
    "allocation",
    "pointer",
    "reference",
    "lifetime",
    "trait",
    "impl",
    "closure",
    "iterator",
    "channel",
    "socket",
    "header",
    "payload",
    "encode",
    "decode",
    "hash",
    "digest",
    "signature",
    "key",
    "secret",
    "auth",
    "permission",
    "denied",
    "missing",
    "failed",
    "passed",
    "unused",
    "deprecated",
    "upgrade",
];
/// Syllables of the long tail's made-up words.
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "zen", "tor", "qua", "vel", "rin", "sop", "dar", "fex", "gul", "hin", "jor", "ny", "pra", "sul",
    "tek", "ulm", "vor", "wex", "yas", "zor", "bri", "cal", "dun", "eph", "fra",
];
/// Made-up words in the tail (ranks after ENGLISH and CODE).
const TAIL_WORDS: usize = 30_000;
/// A tail word's rank (0-based in the tail) that occurs a handful of times at 1M messages.
pub const RARE_TAIL_RANK: usize = 20_000;
const TOOLS: &[(&str, &str)] =
    &[("Bash", "command"), ("Read", "file_path"), ("Edit", "file_path"), ("Grep", "pattern")];
/// 2026-08-03T00:00:00Z: the corpus spans the 90 days from here.
pub const CORPUS_START_MS: i64 = 1_785_715_200_000;
pub const CORPUS_DAYS: i64 = 90;

/// The tail word of a rank.
pub fn tail_word(rank: usize) -> String {
    let n = SYLLABLES.len();
    format!("{}{}{}x", SYLLABLES[rank % n], SYLLABLES[(rank / n) % n], SYLLABLES[(rank / n / n) % n])
}

/// Words by rank, with a Zipf (s = 1) sampler over them.
struct Vocabulary {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Vocabulary {
    fn new() -> Vocabulary {
        let mut words: Vec<String> = ENGLISH.iter().chain(CODE).map(|w| w.to_string()).collect();
        words.extend((0..TAIL_WORDS).map(tail_word));
        let mut total = 0.0;
        let cumulative = (1..=words.len())
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        Vocabulary { words, cumulative }
    }

    fn sentence(&self, rng: &mut fastrand::Rng, length: std::ops::Range<usize>) -> String {
        let words = rng.usize(length);
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let mut out = String::new();
        for i in 0..words {
            let target = rng.f64() * total;
            let at = self.cumulative.partition_point(|&c| c < target).min(self.words.len() - 1);
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&self.words[at]);
        }
        out
    }
}

fn iso(ms: i64) -> String {
    crate::model::rfc3339_ms(ms)
}

/// One session's transcript with `messages` normalised messages, in its agent's format.
fn transcript(vocabulary: &Vocabulary, rng: &mut fastrand::Rng, codex: bool, messages: usize, start_ms: i64) -> String {
    let model = if codex { "gpt-5-codex" } else { ["claude-sonnet-4-5", "claude-opus-4-1"][rng.usize(..2)] };
    let mut lines = Vec::with_capacity(messages + 4);
    if codex {
        lines.push(
            json!({"timestamp": iso(start_ms), "type": "turn_context", "payload": {"model": model, "cwd": "/w"}}),
        );
    }
    let mut ts = start_ms;
    for i in 0..messages {
        ts += rng.i64(1_000..20_000);
        let when = iso(ts);
        let call_id = format!("call_{i}");
        // A turn: the person asks, then the model answers with a tool call and the tool replies.
        match (i % 3, codex) {
            (0, false) => lines.push(json!({"type": "user", "timestamp": when, "message": {"role": "user", "content": vocabulary.sentence(rng, 8..40)}})),
            (0, true) => lines.push(json!({"timestamp": when, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": vocabulary.sentence(rng, 8..40)}]}})),
            (1, _) => {
                let (tool, key) = TOOLS[rng.usize(..TOOLS.len())];
                let input = format!("src/{}/{}.rs", vocabulary.sentence(rng, 1..2), vocabulary.sentence(rng, 1..2));
                let text = vocabulary.sentence(rng, 15..80);
                if codex {
                    lines.push(json!({"timestamp": when, "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}}));
                    lines.push(json!({"timestamp": when, "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": json!({"command": ["bash", "-lc", input]}).to_string(), "call_id": call_id}}));
                    lines.push(json!({"timestamp": when, "type": "event_msg", "payload": {"type": "token_count", "info": null}}));
                } else {
                    lines.push(json!({"type": "assistant", "timestamp": when, "message": {"id": format!("msg_{i}"), "role": "assistant", "model": model,
                        "content": [{"type": "text", "text": text}, {"type": "tool_use", "id": call_id, "name": tool, "input": {key: input}}],
                        "usage": {"input_tokens": 1000 + i, "output_tokens": 200, "cache_read_input_tokens": 5000}}}));
                }
            }
            _ => {
                let output = vocabulary.sentence(rng, 20..150);
                let prior = format!("call_{}", i - 1);
                if codex {
                    lines.push(json!({"timestamp": when, "type": "response_item", "payload": {"type": "function_call_output", "call_id": prior, "output": output}}));
                } else {
                    lines.push(json!({"type": "user", "timestamp": when, "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": prior, "content": output}]}}));
                }
            }
        }
    }
    let mut text = String::new();
    for line in lines {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    text
}

/// Writes the corpus into `data_dir` (main.db must exist). Returns the owners' user ids.
pub fn write(
    data_dir: &Path,
    conn: &mut Connection,
    messages: usize,
    sessions: usize,
    owners: usize,
) -> anyhow::Result<Vec<String>> {
    let mut rng = fastrand::Rng::with_seed(20261121);
    let vocabulary = Vocabulary::new();
    let folder = crate::transcripts::store::dir(data_dir);
    std::fs::create_dir_all(&folder)?;
    let tx = conn.transaction()?;
    let owner_ids: Vec<String> = (0..owners.max(1)).map(|i| format!("bench-owner-{i}")).collect();
    for (i, id) in owner_ids.iter().enumerate() {
        tx.execute(
            "INSERT INTO users (id, email, name, org_role, created_at_ms) VALUES (?1, ?2, ?3, 'MEMBER', 0)",
            params![id, format!("bench{i}@example.com"), format!("Bench {i}")],
        )?;
    }
    let progress = indicatif::ProgressBar::new(sessions as u64);
    for s in 0..sessions {
        let count = messages / sessions + usize::from(s < messages % sessions);
        let codex = s % 4 == 3;
        let start_ms = CORPUS_START_MS + rng.i64(0..CORPUS_DAYS * 86_400_000);
        let text = transcript(&vocabulary, &mut rng, codex, count, start_ms);
        let id = format!("bench-session-{s:06}");
        let relative = crate::transcripts::store::relative_path(&id);
        std::fs::write(data_dir.join(&relative), zstd::bulk::compress(text.as_bytes(), 3)?)?;
        let agent = if codex { "codex" } else { "claude_code" };
        tx.execute(
            "INSERT INTO sessions (id, user_id, agent_type, agent_session_id, first_event_ms, last_event_ms, started_at_ms,
                transcript_path, transcript_bytes, transcript_rules_version)
             VALUES (?1, ?2, ?3, ?1, ?4, ?4, ?4, ?5, ?6, ?7)",
            params![id, owner_ids[s % owner_ids.len()], agent, start_ms, relative, text.len() as i64, crate::redact::RULES_VERSION],
        )?;
        tx.execute(
            "INSERT INTO transcript_index (session_id, upload_sha256, stored_ms, indexed_ms, message_count) VALUES (?1, ?1, ?2, NULL, NULL)",
            params![id, start_ms],
        )?;
        progress.inc(1);
    }
    progress.finish_and_clear();
    tx.commit()?;
    Ok(owner_ids)
}

//! `import`: historical backfill from an agent's own transcript store, for sessions that
//! ran before the hooks were installed.
//!
//! Invariants: idempotent — every imported event has an id derived from its transcript
//! (session, line, kind), so the server drops a re-sent one, and a transcript already
//! read (by a hook or an earlier import) is skipped; importing a transcript also records
//! its read position and usage ledger in the same transaction as the events, so hooks
//! that later resume the session continue from there instead of counting it again.
//! Content never leaves the machine: events carry digests and sizes like hook events.

mod claude_code;
mod codex;
mod gemini_cli;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::hook::local;
use crate::hook::queue::Queue;
use crate::hook::usage::{self, Line};
use crate::model::AgentType;

/// Transcripts older than this are not imported (the server refuses events older than
/// 400 days).
const MAX_AGE_MS: i64 = 395 * 86_400_000;

/// One transcript turned into wire events.
pub struct ImportedSession {
    pub events: Vec<Value>,
    /// Time of the transcript's last event.
    pub last_ms: i64,
}

/// What an agent's importer provides.
pub struct Importer {
    /// Where the agent keeps transcripts.
    pub default_root: fn() -> PathBuf,
    /// Whether a file under the root is a transcript to import.
    pub is_transcript: fn(&Path) -> bool,
    pub parse_file: fn(&Path) -> anyhow::Result<Option<ImportedSession>>,
    /// The usage parser hooks use on the same file, to record it as read.
    pub usage_line: fn(&str) -> Option<Line>,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub transcripts: usize,
    pub imported: usize,
    pub already_read: usize,
    pub too_old: usize,
    pub unreadable: usize,
    pub events: usize,
}

fn importer(agent: AgentType) -> anyhow::Result<Importer> {
    Ok(match agent {
        AgentType::ClaudeCode => claude_code::IMPORTER,
        AgentType::Codex => codex::IMPORTER,
        AgentType::GeminiCli => gemini_cli::IMPORTER,
        other => anyhow::bail!(
            "import from {} is not supported yet (claude_code, codex and gemini_cli are); its hooks record new sessions",
            other.as_str()
        ),
    })
}

/// A stable event id for an imported event: the same transcript gives the same ids.
pub fn stable_id(parts: &[&str]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, parts.join("\u{1f}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest.as_ref()[..16]);
    uuid::Builder::from_random_bytes(bytes).into_uuid().to_string()
}

pub use crate::model::parse_rfc3339_ms as parse_ms;

/// A wire event of an imported session.
pub fn event(agent: AgentType, session: &str, kind: &str, ts_ms: i64, key: &str) -> Value {
    json!({
        "event_id": stable_id(&[agent.as_str(), session, kind, key]),
        "type": kind,
        "ts": crate::model::rfc3339_ms(ts_ms),
        "agent_type": agent.as_str(),
        "session_id": session,
        "metadata": {"imported": true},
    })
}

fn transcripts(root: &Path, is_transcript: fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            transcripts(&path, is_transcript, out);
        } else if is_transcript(&path) {
            out.push(path);
        }
    }
}

/// Imports every transcript under `root` (default: the agent's store) that no hook or
/// earlier import has read, with a progress bar on a terminal.
pub fn run(agent: AgentType, root: Option<PathBuf>) -> anyhow::Result<Summary> {
    let importer = importer(agent)?;
    let root = root.unwrap_or_else(|| (importer.default_root)());
    anyhow::ensure!(root.is_dir(), "{} does not exist or is not a directory", root.display());
    let mut files = Vec::new();
    transcripts(&root, importer.is_transcript, &mut files);
    let mut queue = Queue::open(&local::queue_path())?;
    let now_ms = crate::db::now_ms();
    let progress = indicatif::ProgressBar::new(files.len() as u64).with_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} transcripts {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut summary = Summary { transcripts: files.len(), ..Summary::default() };
    for path in &files {
        progress.inc(1);
        let key = path.to_string_lossy().into_owned();
        if queue.transcript_offset(&key)? > 0 {
            summary.already_read += 1;
            continue;
        }
        // Parsed before taking the queue's write lock, which hooks are waiting on.
        let session = match (importer.parse_file)(path) {
            Ok(Some(session)) => session,
            Ok(None) => continue,
            Err(err) => {
                local::log(&format!("import: {}: {err:#}", path.display()));
                summary.unreadable += 1;
                continue;
            }
        };
        if session.last_ms < now_ms - MAX_AGE_MS {
            summary.too_old += 1;
            continue;
        }
        let tx = queue.begin()?;
        if tx.transcript_mark(&key)?.offset > 0 {
            // A hook read it while it was being parsed.
            summary.already_read += 1;
            continue;
        }
        // Record the transcript as read, so hooks of a resumed session go on from here.
        usage::read_new(&tx, &key, importer.usage_line, now_ms)?;
        tx.push(&session.events.iter().map(Value::to_string).collect::<Vec<_>>(), now_ms)?;
        tx.commit()?;
        summary.imported += 1;
        summary.events += session.events.len();
        progress.set_message(format!("{} events", summary.events));
    }
    progress.finish_and_clear();
    Ok(summary)
}

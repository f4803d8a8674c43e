//! `import`: historical backfill from an agent's own session store, for sessions that
//! ran before the hooks were installed.
//!
//! Invariants: idempotent — every imported event has an id derived from its source
//! (session, line, kind), so the server drops a re-sent one, and a session already seen
//! (by a hook or an earlier import) is skipped: a line-by-line transcript by its read
//! offset, a session of an agent whose hooks read no transcript (Droid, OpenCode, Cline)
//! by the mark hooks leave under `usage::session_key`. Importing a session records its
//! read position and usage ledger in the same transaction as the events, so hooks that
//! later resume the session continue from there instead of counting it again. Content
//! never leaves the machine: events carry digests and sizes like hook events.

mod claude_code;
pub(crate) mod cline;
mod codex;
mod copilot_cli;
mod droid;
mod gemini_cli;
mod opencode;
mod tools;

use std::path::{Path, PathBuf};

use crate::agents::usage::Line;
use crate::hook::local;
use crate::hook::queue::Queue;
use crate::hook::usage;
use crate::model::wire::{Draft, DraftUsage};
use crate::model::{AgentType, EventType, Usage};

/// Transcripts older than this are not imported (the server refuses events older than
/// 400 days).
const MAX_AGE_MS: i64 = 395 * 86_400_000;

/// One usage group as the hooks' ledger keeps it: (group, model, counts).
pub type Group = (String, Option<String>, Usage);

/// One transcript turned into wire events.
pub struct ImportedSession {
    pub events: Vec<Draft>,
    /// Time of the transcript's last event.
    pub last_ms: i64,
    /// Usage groups the hooks keep outside the transcript's own lines (Droid's sidecar,
    /// Cline's task file, OpenCode's messages), by ledger key: recorded as reported so
    /// that hooks of a resumed session count only what grows after the import.
    pub ledger: Vec<(String, Vec<Group>)>,
}

/// One session to import: `key` is what hooks record when they read it (a transcript's
/// path, or `opencode:<session>`), `path` the file to read, `id` the session when
/// the file holds many.
pub struct Source {
    pub key: String,
    pub path: PathBuf,
    pub id: Option<String>,
    /// The calling session's key, for a subagent's own transcript: hooks that saw the
    /// caller saw the subagent's calls too.
    pub parent_key: Option<String>,
}

/// How an agent's sessions are found under its root.
pub enum Store {
    /// One file per session: those for which the predicate holds.
    Files(fn(&Path) -> bool),
    /// Sessions listed some other way (a database).
    Listed(fn(&Path) -> anyhow::Result<Vec<Source>>),
}

/// What an agent's importer provides.
pub struct Importer {
    /// Where the agent keeps transcripts.
    pub default_root: fn() -> PathBuf,
    pub store: Store,
    pub parse: fn(&Source) -> anyhow::Result<Option<ImportedSession>>,
    /// The usage parser hooks use on a line-oriented transcript, to record it as read;
    /// `None` when hooks do not read the source line by line.
    pub usage_line: Option<fn(&str) -> Option<Line>>,
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
        AgentType::CopilotCli => copilot_cli::IMPORTER,
        AgentType::Droid => droid::IMPORTER,
        AgentType::Opencode => opencode::IMPORTER,
        AgentType::Cline => cline::IMPORTER,
        other => anyhow::bail!(
            "{} has no adapter, so there is nothing to import from (the seven adapter agents can be imported)",
            other.as_str()
        ),
    })
}

/// A stable event id for an imported event: the same transcript gives the same ids.
pub fn stable_id(parts: &[&str]) -> uuid::Uuid {
    let digest = ring::digest::digest(&ring::digest::SHA256, parts.join("\u{1f}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest.as_ref()[..16]);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

pub use crate::model::parse_rfc3339_ms as parse_ms;

/// A wire event of an imported session.
pub fn event(agent: AgentType, session: &str, kind: EventType, ts_ms: i64, key: &str) -> Draft {
    let id = stable_id(&[agent.as_str(), session, kind.as_str(), key]);
    let mut event = Draft::new(id, kind, ts_ms, agent, session);
    event.note("imported", true);
    event
}

/// A `turn_end` (or `subagent_end`) of an imported session carrying one request's usage.
pub fn usage_event(
    agent: AgentType,
    session: &str,
    kind: EventType,
    ts_ms: i64,
    key: &str,
    model: Option<&str>,
    usage: &Usage,
) -> anyhow::Result<Draft> {
    let mut turn = event(agent, session, kind, ts_ms, key);
    turn.model = model.map(str::to_string);
    turn.usage = Some(DraftUsage::from(*usage));
    Ok(turn)
}

pub fn transcripts(root: &Path, is_transcript: fn(&Path) -> bool, out: &mut Vec<Source>) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            transcripts(&path, is_transcript, out);
        } else if is_transcript(&path) {
            out.push(Source { key: path.to_string_lossy().into_owned(), path, id: None, parent_key: None });
        }
    }
}

/// A one-file-per-session parser as an importer's `parse`.
fn by_path(
    parse: fn(&Path) -> anyhow::Result<Option<ImportedSession>>,
    source: &Source,
) -> anyhow::Result<Option<ImportedSession>> {
    parse(&source.path)
}

/// Imports every transcript under `root` (default: the agent's store) that no hook or
/// earlier import has read, with a progress bar on a terminal.
pub fn run(agent: AgentType, root: Option<PathBuf>) -> anyhow::Result<Summary> {
    let importer = importer(agent)?;
    let root = root.unwrap_or_else(|| (importer.default_root)());
    anyhow::ensure!(root.exists(), "{} does not exist", root.display());
    let files = match importer.store {
        Store::Files(is_transcript) => {
            anyhow::ensure!(root.is_dir(), "{} is not a directory", root.display());
            let mut files = Vec::new();
            transcripts(&root, is_transcript, &mut files);
            files
        }
        Store::Listed(list) => list(&root)?,
    };
    let mut queue = Queue::open(&local::queue_path())?;
    let now_ms = crate::clock::system_now_ms();
    let progress = indicatif::ProgressBar::new(files.len() as u64).with_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} transcripts {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut summary = Summary { transcripts: files.len(), ..Summary::default() };
    // Sessions this run imported: their subagents are not "seen by hooks".
    let mut imported_now = std::collections::HashSet::new();
    for source in &files {
        progress.inc(1);
        let key = &source.key;
        let parent_seen = match &source.parent_key {
            Some(parent) => !imported_now.contains(parent) && queue.transcript_offset(parent)? > 0,
            None => false,
        };
        if parent_seen || queue.transcript_offset(key)? > 0 {
            summary.already_read += 1;
            continue;
        }
        // Parsed before taking the queue's write lock, which hooks are waiting on.
        let session = match (importer.parse)(source) {
            Ok(Some(session)) => session,
            Ok(None) => continue,
            Err(err) => {
                local::log(&format!("import: {key}: {err:#}"));
                summary.unreadable += 1;
                continue;
            }
        };
        if session.last_ms < now_ms - MAX_AGE_MS {
            summary.too_old += 1;
            continue;
        }
        let tx = queue.begin()?;
        if tx.transcript_mark(key)?.offset > 0 {
            // A hook read it while it was being parsed.
            summary.already_read += 1;
            continue;
        }
        // Record the source as read, so hooks of a resumed session go on from here.
        match importer.usage_line {
            Some(usage_line) => {
                usage::read_new(&tx, key, usage_line, now_ms)?;
            }
            None => usage::mark_seen(&tx, key)?,
        }
        for (ledger_key, groups) in session.ledger {
            usage::report_groups(&tx, &ledger_key, groups, now_ms)?;
        }
        let lines = session.events.iter().map(serde_json::to_string).collect::<Result<Vec<_>, _>>()?;
        tx.push(&lines, now_ms)?;
        tx.commit()?;
        imported_now.insert(key.clone());
        summary.imported += 1;
        summary.events += session.events.len();
        progress.set_message(format!("{} events", summary.events));
    }
    progress.finish_and_clear();
    Ok(summary)
}

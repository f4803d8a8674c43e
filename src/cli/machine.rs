//! Developer-machine housekeeping: `install`, `uninstall`, `pause`, `resume` and
//! `purge-local`.

use clap::Args;

use crate::hook::{flusher, install, local, pause};
use crate::model::AgentType;

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The agent: claude_code, codex, gemini_cli, copilot_cli, droid, opencode or cline
    /// (hyphens accepted, e.g. claude-code).
    #[arg(long, required_unless_present = "found", conflicts_with = "found")]
    pub agent: Option<String>,
    /// Every agent whose own directory exists on this machine (~/.claude, ~/.codex,
    /// ~/.gemini, ~/.copilot, ~/.factory, ~/.config/opencode, Documents/Cline).
    #[arg(long)]
    pub found: bool,
}

/// The agents a command names: the one given, or those found on this machine.
fn agents_of(args: &AgentArgs) -> anyhow::Result<Vec<AgentType>> {
    match &args.agent {
        Some(name) => Ok(vec![parse_agent(name)?]),
        None => {
            let found = install::found_agents();
            if found.is_empty() {
                println!("no agent found on this machine (none of their directories exists)");
            }
            for (agent, dir) in &found {
                println!("found {} ({})", agent.as_str(), dir.display());
            }
            Ok(found.into_iter().map(|(agent, _)| agent).collect())
        }
    }
}

#[derive(Debug, Args)]
pub struct PauseArgs {
    /// Resume by itself after this long (e.g. 30m, 2h, 1d); without it, until `resume`.
    #[arg(long = "for", value_name = "DURATION")]
    pub duration: Option<String>,
}

#[derive(Debug, Args)]
pub struct PurgeArgs {
    /// Also forget the login, this machine's id and the transcript read positions.
    #[arg(long)]
    pub all: bool,
}

pub fn parse_agent(name: &str) -> anyhow::Result<AgentType> {
    AgentType::parse_lenient(name).ok_or_else(|| {
        anyhow::anyhow!("unknown agent {name:?}; expected one of claude_code, codex, gemini_cli, copilot_cli, droid, opencode, cline")
    })
}

pub fn install(args: &AgentArgs) -> anyhow::Result<i32> {
    for agent in agents_of(args)? {
        for line in install::install(agent)?.lines {
            println!("{line}");
        }
    }
    Ok(0)
}

pub fn uninstall(args: &AgentArgs) -> anyhow::Result<i32> {
    for agent in agents_of(args)? {
        for line in install::uninstall(agent)?.lines {
            println!("{line}");
        }
    }
    Ok(0)
}

pub fn pause(args: &PauseArgs) -> anyhow::Result<i32> {
    let until = match &args.duration {
        Some(text) => Some(
            crate::clock::system_now_ms() + pause::parse_duration(text).map_err(|e| anyhow::anyhow!("--for {e}"))?,
        ),
        None => None,
    };
    pause::pause(until)?;
    match until {
        Some(ms) => println!("recording paused until {}", crate::model::rfc3339_ms(ms)),
        None => println!("recording paused until `sightline resume`"),
    }
    Ok(0)
}

pub fn resume() -> anyhow::Result<i32> {
    if pause::resume()? {
        println!("recording resumed");
    } else {
        println!("recording was not paused");
    }
    Ok(0)
}

/// Deletes the local queue (queued and rejected events), tool timings and the log. The
/// transcript read positions stay unless `--all`: forgetting them would make the next
/// hook report a transcript's whole usage again.
pub fn purge_local(args: &PurgeArgs) -> anyhow::Result<i32> {
    let Some(_lock) = flusher::try_lock()? else {
        anyhow::bail!("a flusher is running; wait for it to finish (sightline status) and run purge-local again");
    };
    let queue = crate::hook::queue::Queue::open(&local::queue_path())?;
    let (queued, rejected) = queue.purge(args.all)?;
    drop(queue);
    let _ = std::fs::remove_file(local::log_path());
    if args.all {
        let _ = std::fs::remove_file(local::config_path());
        let _ = std::fs::remove_file(local::data_dir().join("machine_id"));
        for name in ["queue.db", "queue.db-wal", "queue.db-shm"] {
            let _ = std::fs::remove_file(local::data_dir().join(name));
        }
    }
    println!("removed {queued} queued and {rejected} rejected events and the local log");
    if args.all {
        println!("forgot the login, the machine id and the transcript read positions");
    }
    Ok(0)
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The agent whose past sessions to import (any of the seven with an adapter).
    #[arg(long)]
    pub agent: String,
    /// Where the sessions are (default: the agent's own store, e.g. ~/.claude/projects;
    /// for OpenCode a directory holding opencode.db, or the database file).
    #[arg(long)]
    pub from: Option<std::path::PathBuf>,
}

/// Backfills sessions from the agent's transcripts, then starts the flusher exactly as
/// a hook does, so what was imported reaches the server with no other command (the
/// usual reason to import is a machine whose hooks are not installed yet).
pub fn import(args: &ImportArgs) -> anyhow::Result<i32> {
    let summary = crate::hook::import::run(parse_agent(&args.agent)?, args.from.clone())?;
    println!(
        "{} transcripts: {} imported ({} events queued), {} already recorded, {} older than the server keeps, {} unreadable (see the log)",
        summary.transcripts,
        summary.imported,
        summary.events,
        summary.already_read,
        summary.too_old,
        summary.unreadable
    );
    if summary.events > 0 {
        super::hook::ensure_flusher();
        if local::load_config()?.is_some() {
            println!("{} events are on their way to the server; follow them with `sightline status`", summary.events);
        } else {
            println!(
                "{} events wait in the local queue: this machine is not signed in; run `sightline login --server <url>` and they ship",
                summary.events
            );
        }
    }
    Ok(0)
}

//! The developer machine's commands, one list for both binaries: `sightline` flattens it
//! into its own commands, and `sightline-hook` (`src/bin/sightline-hook.rs`) is this list
//! alone, so the two parse and run them the same way.

use clap::Subcommand;

use super::{hook, machine};

#[derive(Debug, Subcommand)]
pub enum DeveloperCommand {
    /// Record one agent hook event (called by the agent's hooks; always exits 0).
    Hook(hook::HookArgs),
    /// Ship queued events to the server (started by hooks; one per user).
    Flusher(hook::FlusherArgs),
    /// Sign this machine in: device code in a browser, or --email with --password-stdin.
    Login(hook::LoginArgs),
    /// Show the local queue, credentials and flusher state.
    Status,
    /// Register the hook CLI in an agent's configuration (idempotent, with a backup).
    Install(machine::AgentArgs),
    /// Remove exactly the hooks `install` added.
    Uninstall(machine::AgentArgs),
    /// Stop recording agent events (until `resume`, or for a while with --for).
    Pause(machine::PauseArgs),
    /// Record agent events again.
    Resume,
    /// Delete the local queue and log (and with --all, the login too).
    PurgeLocal(machine::PurgeArgs),
    /// Backfill past sessions from an agent's own transcripts (idempotent).
    Import(machine::ImportArgs),
}

impl DeveloperCommand {
    /// False for `hook` (it promises to exit 0 whatever happens) and `flusher` (it must
    /// outlive a reader that went away): they keep ignoring SIGPIPE.
    pub fn ends_quietly_on_closed_stdout(&self) -> bool {
        !matches!(self, DeveloperCommand::Hook(_) | DeveloperCommand::Flusher(_))
    }

    pub fn run(self) -> anyhow::Result<i32> {
        match self {
            DeveloperCommand::Hook(args) => Ok(hook::hook(&args)),
            DeveloperCommand::Flusher(args) => hook::flusher(&args),
            DeveloperCommand::Login(args) => hook::login(&args),
            DeveloperCommand::Status => hook::status(),
            DeveloperCommand::Install(args) => machine::install(&args),
            DeveloperCommand::Uninstall(args) => machine::uninstall(&args),
            DeveloperCommand::Pause(args) => machine::pause(&args),
            DeveloperCommand::Resume => machine::resume(),
            DeveloperCommand::PurgeLocal(args) => machine::purge_local(&args),
            DeveloperCommand::Import(args) => machine::import(&args),
        }
    }
}

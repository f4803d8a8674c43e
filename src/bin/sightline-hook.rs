//! `sightline-hook`: the developer machine's binary. It carries only the commands a
//! developer's machine runs (`login`, `install`, `uninstall`, `hook`, `flusher`,
//! `status`, `pause`, `resume`, `purge-local`, `import`), the same code as those of
//! `sightline`, so the linker leaves the server (its listeners, stores, index and pages)
//! out. Hooks it installs call this binary; `sightline` keeps every command too, so a
//! machine may use either. `docs/hook-cli.md` says which to use where.
#![forbid(unsafe_code)]

use clap::{Parser, Subcommand};
use sightline::cli::{hook, machine};

/// Records the coding agents' events on this machine and ships them to a Sightline server.
#[derive(Debug, Parser)]
#[command(name = "sightline-hook", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
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

fn main() {
    sightline::memory::configure();
    // As `sightline`: an agent runs `hook` once per event, so its one argument shape is
    // read before any parser is built.
    if let Some(args) = hook::HookArgs::from_argv(std::env::args_os().skip(1)) {
        std::process::exit(hook::hook(&args));
    }
    let cli = Cli::parse();
    // The printing commands end quietly on a closed stdout, as `sightline`'s do; `hook`
    // and `flusher` keep ignoring SIGPIPE.
    if !matches!(cli.command, Command::Hook(_) | Command::Flusher(_)) {
        sigpipe::reset();
    }
    let outcome = match cli.command {
        Command::Hook(args) => Ok(hook::hook(&args)),
        Command::Flusher(args) => hook::flusher(&args),
        Command::Login(args) => hook::login(&args),
        Command::Status => hook::status(),
        Command::Install(args) => machine::install(&args),
        Command::Uninstall(args) => machine::uninstall(&args),
        Command::Pause(args) => machine::pause(&args),
        Command::Resume => machine::resume(),
        Command::PurgeLocal(args) => machine::purge_local(&args),
        Command::Import(args) => machine::import(&args),
    };
    std::process::exit(outcome.unwrap_or_else(|err| {
        eprintln!("error: {err:#}");
        2
    }));
}

//! `sightline-hook`: the developer machine's binary. It carries only the commands a
//! developer's machine runs (`login`, `install`, `uninstall`, `hook`, `flusher`,
//! `status`, `pause`, `resume`, `purge-local`, `import`), the same code as those of
//! `sightline`, so the linker leaves the server (its listeners, stores, index and pages)
//! out. Hooks it installs call this binary; `sightline` keeps every command too, so a
//! machine may use either. `docs/hook-cli.md` says which to use where.
#![forbid(unsafe_code)]

use clap::Parser;
use sightline::cli::developer::DeveloperCommand;
use sightline::cli::hook;

/// Records the coding agents' events on this machine and ships them to a Sightline server.
#[derive(Debug, Parser)]
#[command(name = "sightline-hook", version)]
struct Cli {
    #[command(subcommand)]
    command: DeveloperCommand,
}

fn main() {
    sightline::memory::configure();
    // As `sightline`: an agent runs `hook` once per event, so its one argument shape is
    // read before any parser is built.
    if let Some(args) = hook::HookArgs::from_argv(std::env::args_os().skip(1)) {
        std::process::exit(hook::hook(&args));
    }
    let cli = Cli::parse();
    if cli.command.ends_quietly_on_closed_stdout() {
        sigpipe::reset();
    }
    std::process::exit(cli.command.run().unwrap_or_else(|err| {
        eprintln!("error: {err:#}");
        2
    }));
}

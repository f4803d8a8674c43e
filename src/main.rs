//! The `sightline` binary: parse arguments, run one command, map the outcome to an
//! exit code. Everything else lives in the library.
#![forbid(unsafe_code)]

use clap::Parser;

fn main() {
    sightline::memory::configure();
    // An agent runs `hook` once per event, within a latency budget: its one argument
    // shape is read directly instead of building every command's parser first.
    if let Some(args) = sightline::cli::hook::HookArgs::from_argv(std::env::args_os().skip(1)) {
        std::process::exit(sightline::cli::hook::hook(&args));
    }
    let cli = sightline::cli::Cli::parse();
    // Rust ignores SIGPIPE, so `println!` to a closed pipe (`sightline status | head -1`)
    // would panic with a backtrace. Commands that print and exit take the default
    // action back, as C tools have it.
    if cli.command.ends_quietly_on_closed_stdout() {
        sigpipe::reset();
    }
    let code = match sightline::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            2
        }
    };
    std::process::exit(code);
}

//! The `sightline` binary: parse arguments, run one command, map the outcome to an
//! exit code. Everything else lives in the library.
#![forbid(unsafe_code)]

use clap::Parser;

fn main() {
    let cli = sightline::cli::Cli::parse();
    let code = match sightline::cli::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            2
        }
    };
    std::process::exit(code);
}

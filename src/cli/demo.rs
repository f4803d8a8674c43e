//! `sightline demo`: the command line of the demo organisation (`crate::demo`).

use std::io::BufRead;

use clap::Args;

use super::{ConfigArgs, load_config};
use crate::config::Overrides;

#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Developers in the organisation (besides an administrator, an investigator and a
    /// viewer of aggregates).
    #[arg(long, default_value_t = 200)]
    pub developers: usize,
    /// Days of history, ending today.
    #[arg(long, default_value_t = 365)]
    pub days: i64,
    /// Read one password for every demo person from the first line of standard input
    /// (default: a random one, printed at the end).
    #[arg(long)]
    pub password_stdin: bool,
    /// The seed of the organisation (the same seed, the same organisation).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn demo(args: &DemoArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(args.developers >= 1 && args.days >= 1, "--developers and --days must be at least 1");
    anyhow::ensure!(args.days <= 390, "--days must be at most 390: the server keeps events for 400 days");
    let config = load_config(&args.config, Overrides::default())?;
    let password = if args.password_stdin {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line.trim_end_matches(['\r', '\n']).to_string()
    } else {
        format!("demo-{}", uuid::Uuid::new_v4().simple())
    };
    let options = crate::demo::Options {
        developers: args.developers,
        days: args.days,
        password,
        password_chosen: args.password_stdin,
        seed: args.seed,
    };
    crate::demo::run(&config, &options)?;
    Ok(0)
}

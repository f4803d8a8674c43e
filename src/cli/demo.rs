//! `sightline demo`: the command line of the demo organisation (`crate::demo`).

use std::io::BufRead;

use anyhow::Context;
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
    /// The moment the history ends, in RFC 3339 (default: now). The organisation is a
    /// function of the seed and this moment: two demos a minute apart differ in the
    /// sessions that started within that minute.
    #[arg(long, value_name = "RFC3339")]
    pub until: Option<String>,
}

pub fn demo(args: &DemoArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(args.developers >= 1 && args.days >= 1, "--developers and --days must be at least 1");
    anyhow::ensure!(args.days <= 390, "--days must be at most 390: the server keeps events for 400 days");
    let now_ms = crate::clock::system_now_ms();
    let until_ms = match &args.until {
        None => now_ms,
        Some(text) => {
            let until = crate::model::parse_rfc3339_ms(text)
                .with_context(|| format!("--until {text:?} is not an RFC 3339 time such as 2026-12-01T12:00:00Z"))?;
            anyhow::ensure!(until <= now_ms + 60_000, "--until {text} is in the future: the history ends by now");
            until
        }
    };
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
        until_ms,
    };
    crate::demo::run(&config, &options)?;
    Ok(0)
}

//! Command-line interface: the argument grammar (clap derive; doc comments are the
//! help text) and dispatch to one function per command.

pub mod backup;
pub mod deletions;
pub mod demo;
pub mod developer;
pub mod evals;
pub mod hook;
pub mod hook_binaries;
pub mod jobs;
pub mod machine;
pub mod operator;
pub mod people;
pub mod prices;
pub mod transcripts;

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::{Config, Overrides};

#[derive(Debug, Parser)]
#[command(name = "sightline", version, about = "Self-hosted observability for AI coding agents")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Where the configuration comes from; shared by every server-side command.
#[derive(Debug, Clone, Args, Default)]
pub struct ConfigArgs {
    /// Configuration file (default: ./sightline.toml if present). Env: SIGHTLINE_CONFIG.
    #[arg(long, env = "SIGHTLINE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Data directory (main.db, events/, transcripts/, index/, keys/, run/).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server: ingest, web and GitHub app listeners, writer, jobs.
    Serve(ServeArgs),
    /// Configuration helpers.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Exit 0 if the local server answers /readyz, 1 otherwise (for systemd).
    Healthcheck(HealthcheckArgs),
    /// Manage users: add, list, set-role, set-password, disable.
    #[command(subcommand)]
    User(people::UserCommand),
    /// Manage teams: add, add-member, list.
    #[command(subcommand)]
    Team(people::TeamCommand),
    /// Manage tokens.
    #[command(subcommand)]
    Token(operator::TokenCommand),
    /// Back up the data directory (online, beside a running server) into a new dated
    /// directory of --to (or backup.dir), linking files unchanged since the last backup.
    Backup(backup::BackupArgs),
    /// Restore a backup into an empty data directory (--check: verify it, write nothing).
    Restore(backup::RestoreArgs),
    /// The hook binaries this server hands to developer machines: `add <file>`, `list`.
    #[command(subcommand)]
    HookBinaries(hook_binaries::HookBinariesCommand),
    /// Create or migrate main.db to this binary's schema, then exit.
    Migrate(ConfigArgs),
    /// Compact event partitions older than the configured age (zstd + VACUUM).
    Compact(operator::CompactArgs),
    /// Index stored transcripts that are not yet searchable (--rebuild: all of them).
    IndexTranscripts(transcripts::IndexArgs),
    /// Re-redact events and transcripts stored under older redaction rules (resumable), then
    /// re-index the transcripts.
    BackfillRedaction(ConfigArgs),
    /// Carry out the open deletion requests now (the server does it every 6 hours).
    RunDeletions(ConfigArgs),
    /// Deletion requests: ask for a user's data to be deleted, list open requests.
    #[command(subcommand)]
    Deletion(deletions::DeletionCommand),
    /// The dispatchable jobs (docs/jobs.md): `jobs list`, `jobs set`, `jobs run`, `jobs history`.
    #[command(subcommand)]
    Jobs(jobs::JobsCommand),
    /// The price tables in force: `prices list`, `prices show <agent>`, `prices check`.
    #[command(subcommand)]
    Prices(prices::PricesCommand),
    /// Fill an empty data directory with a demo organisation (people, teams, a year of
    /// sessions of seven agents, transcripts, a grant, a deletion) through the real ingest path.
    Demo(demo::DemoArgs),
    /// Load generators and measurements.
    #[command(subcommand)]
    Bench(crate::bench::BenchCommand),
    /// Print a run's results as a table (or the list of runs), from results.db.
    Results(evals::ResultsArgs),
    /// Write a run's HTML, JSON and CSV reports into a directory.
    Report(evals::ReportArgs),
    /// Serve the eval-results dashboard and its JSON API.
    Dashboard(evals::DashboardArgs),
    /// Eval-results helpers (demo database).
    #[command(subcommand)]
    Evals(evals::EvalsCommand),
    /// The developer machine's commands (`hook`, `flusher`, `login`, `status`, `install`,
    /// `uninstall`, `pause`, `resume`, `purge-local`, `import`), as in `sightline-hook`.
    #[command(flatten)]
    Developer(developer::DeveloperCommand),
}

impl Command {
    /// Whether a closed stdout should end this command the way it ends `cat` or `ls`:
    /// quietly, by SIGPIPE, with the status a shell expects (141). True for every
    /// command that prints and exits; false for the long-running ones, which write to
    /// sockets and child processes and must outlive a reader that went away (what little
    /// they print ignores a closed stream).
    pub fn ends_quietly_on_closed_stdout(&self) -> bool {
        // `hook` promises to exit 0 whatever happens, and `bench hook` writes into its
        // hooks' stdin, so both keep ignoring SIGPIPE too (and write to stdout ignoring
        // a closed pipe).
        match self {
            Command::Developer(command) => command.ends_quietly_on_closed_stdout(),
            Command::Serve(_) | Command::Dashboard(_) | Command::Bench(crate::bench::BenchCommand::Hook(_)) => false,
            _ => true,
        }
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Ingest listener address (default 127.0.0.1:4000; port 0 picks a free port).
    #[arg(long)]
    pub ingest_addr: Option<SocketAddr>,
    /// Web listener address (default 127.0.0.1:3000).
    #[arg(long)]
    pub web_addr: Option<SocketAddr>,
    /// GitHub app listener address (default 127.0.0.1:4001).
    #[arg(long)]
    pub github_addr: Option<SocketAddr>,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the annotated default configuration file.
    Default,
    /// Print the effective configuration after all layers, as TOML-like debug text.
    Show(ConfigArgs),
}

#[derive(Debug, Args)]
pub struct HealthcheckArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Check this URL instead of the ingest address in run/addresses.json.
    #[arg(long)]
    pub url: Option<String>,
}

/// Loads the layered configuration for a server-side command.
pub fn load_config(args: &ConfigArgs, extra: Overrides) -> anyhow::Result<Config> {
    let overrides = Overrides { data_dir: args.data_dir.clone().or(extra.data_dir), ..extra };
    Ok(Config::load(args.config.as_deref(), crate::config::machine::process_environment(), &overrides)?)
}

/// For an operator command that works on the data directory: the configuration, logging
/// set up, and `main.db` migrated and open.
pub fn open_main_with_logging(args: &ConfigArgs) -> anyhow::Result<(rusqlite::Connection, Config)> {
    let config = load_config(args, Overrides::default())?;
    crate::logging::init(&config.log);
    let conn = operator::open_main(&config)?;
    Ok((conn, config))
}

/// Runs one command; the returned code is the process exit code.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Serve(args) => {
            let config = load_config(
                &args.config,
                Overrides {
                    ingest_addr: args.ingest_addr,
                    web_addr: args.web_addr,
                    github_addr: args.github_addr,
                    ..Default::default()
                },
            )?;
            crate::logging::init(&config.log);
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            runtime.block_on(crate::app::serve::serve(config, crate::app::serve::shutdown_signal()))?;
            Ok(0)
        }
        Command::Config(ConfigCommand::Default) => {
            print!("{}", crate::config::DEFAULT_FILE);
            Ok(0)
        }
        Command::Config(ConfigCommand::Show(args)) => {
            println!("{:#?}", load_config(&args, Overrides::default())?);
            Ok(0)
        }
        Command::Healthcheck(args) => operator::healthcheck(&args),
        Command::User(command) => people::user(command),
        Command::Team(command) => people::team(command),
        Command::Token(command) => operator::token(command),
        Command::Migrate(args) => {
            let config = load_config(&args, Overrides::default())?;
            let found = crate::app::serve::prepare_main_db(&config)?;
            let latest = crate::db::migrations::latest_version();
            match found {
                0 => println!("created main.db at schema version {latest}"),
                _ if found == latest => println!("main.db is at schema version {latest}; nothing to migrate"),
                _ => println!("migrated main.db from schema version {found} to {latest}"),
            }
            Ok(0)
        }
        Command::HookBinaries(command) => hook_binaries::hook_binaries(command),
        Command::Backup(args) => backup::backup(&args),
        Command::Restore(args) => backup::restore(&args),
        Command::Compact(args) => operator::compact(&args),
        Command::IndexTranscripts(args) => transcripts::index_transcripts(&args),
        Command::BackfillRedaction(args) => transcripts::backfill_redaction(&args),
        Command::RunDeletions(args) => deletions::run_deletions(&args),
        Command::Deletion(command) => deletions::deletion(command),
        Command::Jobs(command) => jobs::jobs(command),
        Command::Prices(command) => prices::prices(command),
        Command::Bench(command) => crate::bench::run(command),
        Command::Demo(args) => demo::demo(&args),
        Command::Results(args) => evals::results(&args),
        Command::Report(args) => evals::report(&args),
        Command::Dashboard(args) => evals::dashboard(&args),
        Command::Evals(command) => evals::evals(command),
        Command::Developer(command) => command.run(),
    }
}

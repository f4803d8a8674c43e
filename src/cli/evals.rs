//! The eval-results commands: `results`, `report`, `dashboard`, `evals demo`. They
//! read a harness's `results.db` (`--db`, `SIGHTLINE_RESULTS_DB`, default
//! `./results.db`) and never write it.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::evals::console::{self, Format};
use crate::evals::{db, report};

#[derive(Debug, Clone, Args)]
pub struct DbArgs {
    /// The results database written by the eval harness.
    #[arg(long, env = "SIGHTLINE_RESULTS_DB", default_value = "./results.db")]
    pub db: PathBuf,
}

#[derive(Debug, Args)]
pub struct ResultsArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// The run to show; without it, every run is listed.
    pub run: Option<String>,
    /// table (aligned for people), json or csv (for scripts).
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// The run to report on.
    pub run: String,
    /// Directory for <run>_report.html, .json and .csv (created if missing).
    #[arg(long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub platform: PlatformArgs,
}

#[derive(Debug, Args)]
pub struct DashboardArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Address to bind; 0.0.0.0 exposes the dashboard and needs a token.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to bind (0 picks a free one).
    #[arg(long, default_value_t = 8700)]
    pub port: u16,
    /// Access token. Prefer SIGHTLINE_DASHBOARD_TOKEN: a flag shows in process listings.
    #[arg(long, env = "SIGHTLINE_DASHBOARD_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    #[command(flatten)]
    pub platform: PlatformArgs,
}

/// The Sightline platform whose agent sessions the eval pages and reports show beside
/// each cell (docs/results-db.md).
#[derive(Debug, Args)]
pub struct PlatformArgs {
    /// The platform's web address (where people sign in), e.g. https://sightline.example.
    #[arg(long, env = "SIGHTLINE_PLATFORM_URL")]
    pub platform_url: Option<String>,
    /// An eval token of an EVAL_ENGINEER (`sightline token create --kind eval`). Prefer the
    /// variable: a flag shows in process listings.
    #[arg(long, env = "SIGHTLINE_PLATFORM_TOKEN", hide_env_values = true)]
    pub platform_token: Option<String>,
}

impl PlatformArgs {
    pub fn platform(&self) -> anyhow::Result<Option<crate::evals::platform::Platform>> {
        crate::evals::platform::Platform::new(self.platform_url.as_deref(), self.platform_token.as_deref())
            .map_err(|err| anyhow::anyhow!(err))
    }
}

#[derive(Debug, Subcommand)]
pub enum EvalsCommand {
    /// Write a realistic demo results database (several harnesses, models, tracks, a run in progress).
    Demo {
        /// Where to write it; an existing file is never overwritten.
        #[arg(long, default_value = "./results.db")]
        out: PathBuf,
        /// Random seed, for a reproducible database.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// Instead of the demo, one large run of about this many cells (benchmarks).
        #[arg(long)]
        cells: Option<usize>,
    },
}

/// A terminal gets the aligned table, $COLUMNS wide when set, else 80; a pipe or file
/// gets one line per cell with no width limit.
fn layout() -> console::Layout {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return console::Layout::Lines;
    }
    let width = crate::config::machine::MachineVariable::Columns
        .text()
        .and_then(|c| c.parse().ok())
        .filter(|w| *w >= 40)
        .unwrap_or(80);
    console::Layout::Terminal { width }
}

pub fn results(args: &ResultsArgs) -> anyhow::Result<i32> {
    use std::io::Write;
    let conn = db::open(&args.db.db)?;
    let text = console::results(&conn, args.run.as_deref(), args.format, layout())?;
    // A reader that stops early (`| head`) is not an error.
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
        _ => Ok(0),
    }
}

pub fn report(args: &ReportArgs) -> anyhow::Result<i32> {
    let conn = db::open(&args.db.db)?;
    let mut links = report::SessionLinks::default();
    if let Some(platform) = args.platform.platform()? {
        for session in platform.run(&args.run).map_err(|err| anyhow::anyhow!(err))? {
            links.by_cell.entry(session.cell_id).or_default().push(session.id);
        }
        links.platform_url = Some(platform.url);
    }
    let written = report::write_linked(&conn, &args.run, &args.output, &links)?;
    for path in [&written.html, &written.json, &written.csv] {
        println!("wrote {}", path.display());
    }
    Ok(0)
}

pub fn dashboard(args: &DashboardArgs) -> anyhow::Result<i32> {
    crate::logging::init(&crate::config::Log::default());
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let platform = args.platform.platform()?;
    runtime.block_on(crate::app::serve::dashboard(
        &args.db.db,
        &args.host,
        args.port,
        args.token.as_deref(),
        platform,
    ))?;
    Ok(0)
}

pub fn evals(command: EvalsCommand) -> anyhow::Result<i32> {
    match command {
        EvalsCommand::Demo { out, seed, cells } => {
            let scale = match cells {
                Some(n) => crate::evals::demo::Scale::Cells(n),
                None => crate::evals::demo::Scale::Demo,
            };
            let summary = crate::evals::demo::write_demo(&out, &crate::evals::demo::DemoOptions { seed, scale })?;
            for (run, cells) in &summary.runs {
                println!("{run}: {cells} cells");
            }
            println!("wrote {}", out.display());
            Ok(0)
        }
    }
}

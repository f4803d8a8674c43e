//! `sightline jobs …`: the job registry and its runs from the command line: `jobs list`
//! (every job with its tier, schedule, target and whether this build can run it), `jobs
//! run` (a job now, in this process, recorded in `job_runs`) and `jobs history` (the
//! latest runs), and `jobs set` (an operator's schedule of a tier-1 job).

use std::io::IsTerminal;

use clap::Subcommand;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use std::sync::Arc;

use super::deletions::CliTarget;
use super::{ConfigArgs, load_config};
use crate::config::Overrides;
use crate::db::DbError;
use crate::deletion::runner::DeletionTarget;
use crate::jobs::config as jobs_config;
use crate::jobs::context::{Conn, Done, Host, JobContext, JobError};
use crate::jobs::registry::{self, Availability};
use crate::jobs::runs::{self, Outcome, Started, Trigger};
use crate::jobs::status as jobs_status;
use crate::pricing::PriceBook;
use crate::transcripts::offline::index_stored;

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Every job: name, tier, schedule (UTC; an operator's, or the default), enabled,
    /// target duration, whether this build can run it (and why not), its last run and
    /// its next scheduled time.
    List {
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Sets a tier-1 job's schedule (a cron pattern in UTC) and/or whether it runs.
    Set {
        #[command(flatten)]
        config: ConfigArgs,
        /// The job's name (one of the seven `job_config` jobs).
        job: String,
        /// A five-field cron pattern in UTC, e.g. "0 2 * * *".
        #[arg(long)]
        cron: Option<String>,
        /// Whether the job runs on its schedule.
        #[arg(long)]
        enabled: Option<bool>,
    },
    /// Runs a job now, in this process (beside a running server or without one), and
    /// records the run in `job_runs` (trigger `cli`). Refused, and recorded as refused,
    /// when this build cannot run it or a run of it is going.
    Run {
        #[command(flatten)]
        config: ConfigArgs,
        /// The job's name (`sightline jobs list`).
        job: String,
    },
    /// The latest runs, newest first: start (UTC), job, trigger, outcome, duration, rows
    /// touched, error.
    History {
        #[command(flatten)]
        config: ConfigArgs,
        /// Only this job's runs.
        job: Option<String>,
        /// How many runs to show.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
}

pub fn jobs(command: JobsCommand) -> anyhow::Result<i32> {
    match command {
        JobsCommand::List { config } => {
            let config = load_config(&config, Overrides::default())?;
            let conn = super::operator::open_main(&config)?;
            print_rows(&LIST_HEADERS, list_rows(&conn, &config, crate::clock::system_now_ms())?);
            Ok(0)
        }
        JobsCommand::Set { config, job, cron, enabled } => {
            let Some(spec) = registry::find(&job) else {
                anyhow::bail!("there is no job named {job:?}; `sightline jobs list` names them all");
            };
            if cron.is_none() && enabled.is_none() {
                anyhow::bail!("nothing to set: give --cron, --enabled, or both");
            }
            let conn = open_main(&config)?;
            let now = jobs_config::set(&conn, spec, cron.as_deref(), enabled, crate::clock::system_now_ms())?;
            println!("{job}: {}, {}", now.schedule.describe(), if now.enabled { "enabled" } else { "disabled" });
            Ok(0)
        }
        JobsCommand::Run { config, job } => run(&config, &job),
        JobsCommand::History { config, job, limit } => {
            if let Some(name) = job.as_deref()
                && registry::find(name).is_none()
            {
                anyhow::bail!("there is no job named {name:?}; `sightline jobs list` names them all");
            }
            let conn = open_main(&config)?;
            print_rows(&HISTORY_HEADERS, history_rows(&runs::history(&conn, job.as_deref(), limit)?));
            Ok(0)
        }
    }
}

fn open_main(config: &ConfigArgs) -> anyhow::Result<rusqlite::Connection> {
    super::operator::open_main(&load_config(config, Overrides::default())?)
}

fn run(config: &ConfigArgs, name: &str) -> anyhow::Result<i32> {
    let Some(job) = registry::find(name) else {
        anyhow::bail!("there is no job named {name:?}; `sightline jobs list` names them all");
    };
    let (conn, config) = super::open_main_with_logging(config)?;
    let now_ms = crate::clock::system_now_ms;
    if let Availability::Unavailable(why) = job.availability {
        runs::record_refused(&conn, name, Trigger::Cli, why, now_ms())?;
        anyhow::bail!("{name} cannot run in this build: {why}");
    }
    let run_id = match runs::start(&conn, name, Trigger::Cli, now_ms())? {
        Started::Started(id) => id,
        refused => anyhow::bail!("{}; it must end first", refused.refusal(name).unwrap_or_default()),
    };
    let started = std::time::Instant::now();
    let result = {
        let host = CliHost {
            conn: &conn,
            target: CliTarget::new(&conn, &config.data_dir),
            store: crate::events::store::Store::at(&config.data_dir),
            github_resting_until_ms: Arc::default(),
        };
        let done = (job.run)(&JobContext { config: &config, host: &host });
        // A failure to release the index writer is the run's failure, recorded as such.
        match host.target.close() {
            Ok(()) => done,
            Err(err) => done.and(Err(JobError::stopped(format!("{err:#}")))),
        }
    };
    let (outcome, rows, error) = match &result {
        Ok(done) => (Outcome::Succeeded, done.rows, None),
        Err(err) => (Outcome::Failed, None, Some(err.to_string())),
    };
    if let Ok(Done { summary: Some(summary), .. }) = &result {
        runs::set_summary(&conn, &run_id, summary)?;
    }
    if let Some(breach) = runs::finish_and_check(&conn, job, &run_id, outcome, rows, error.as_deref(), now_ms())? {
        eprintln!("{name} breached its service level ({}): {}", breach.severity, breach.reason);
    }
    let took = started.elapsed().as_secs_f64();
    match result {
        Ok(done) => {
            if let Some((headers, lines)) = done.table {
                print_rows(&headers, lines);
            }
            if let Some(summary) = &done.summary {
                println!("{summary}");
            }
            println!("{name} succeeded in {took:.1} s: {} rows touched (run {run_id})", done.rows.unwrap_or(0));
            Ok(0)
        }
        Err(err) => Err(anyhow::Error::new(err).context(format!("{name} failed after {took:.1} s (run {run_id})"))),
    }
}

/// The command line's host: its own `main.db` connection for reads and direct write
/// transactions, the index writer it opens when a deletion needs it, and the event
/// store, whose rewrite lock it shares with a server on the same data directory.
struct CliHost<'a> {
    conn: &'a rusqlite::Connection,
    target: CliTarget<'a>,
    store: crate::events::store::Store,
    github_resting_until_ms: crate::github::app_client::RestingUntil,
}

impl Host for CliHost<'_> {
    fn target(&self) -> &dyn DeletionTarget {
        &self.target
    }

    fn store(&self) -> &crate::events::store::Store {
        &self.store
    }

    fn github_resting_until_ms(&self) -> crate::github::app_client::RestingUntil {
        self.github_resting_until_ms.clone()
    }

    fn reader(&self) -> Result<Conn<'_>, DbError> {
        Ok(Conn::Borrowed(self.conn))
    }

    fn own_connection(&self) -> Result<Conn<'_>, DbError> {
        Ok(Conn::Borrowed(self.conn))
    }

    fn index_transcripts(&self) -> Result<usize, JobError> {
        let run = index_stored(self.conn, self.target.data_dir(), false, false)
            .map_err(|err| JobError::stopped(format!("{err:#}")))?;
        Ok(run.report.sessions)
    }

    fn prices(&self) -> Result<Arc<PriceBook>, JobError> {
        let book = PriceBook::load(self.target.data_dir())
            .map_err(|err| JobError::Configuration(format!("the price tables on disk: {err}")))?;
        Ok(Arc::new(book))
    }
}

/// A table on a terminal; piped, one tab-separated line per row (for `cut` and `grep`).
fn print_rows(headers: &[&str], rows: Vec<Vec<String>>) {
    if std::io::stdout().is_terminal() {
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
        table.set_header(headers.to_vec());
        table.add_rows(rows);
        println!("{table}");
    } else {
        let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
        print!("{}", crate::evals::console::lines(&headers, rows.into_iter()));
    }
}

const LIST_HEADERS: [&str; 9] =
    ["job", "tier", "schedule", "enabled", "target", "available", "last run", "next run", "alert"];
const HISTORY_HEADERS: [&str; 7] = ["started", "job", "trigger", "outcome", "took", "rows", "error"];

fn history_rows(runs: &[runs::JobRun]) -> Vec<Vec<String>> {
    runs.iter()
        .map(|run| {
            let took = run
                .ended_at_ms
                .map_or("—".to_string(), |end| format!("{:.1} s", (end - run.started_at_ms) as f64 / 1000.0));
            vec![
                crate::model::rfc3339_ms(run.started_at_ms),
                run.job.clone(),
                run.trigger.clone(),
                run.outcome.as_str().to_string(),
                took,
                run.rows_touched.map_or("—".to_string(), |rows| rows.to_string()),
                run.error.clone().unwrap_or_default(),
            ]
        })
        .collect()
}

fn list_rows(
    conn: &rusqlite::Connection,
    config: &crate::config::Config,
    now_ms: i64,
) -> anyhow::Result<Vec<Vec<String>>> {
    let rows = jobs_status::all(conn, config, now_ms)?
        .into_iter()
        .map(|status| {
            let job = status.job;
            let target = job.target.map_or("n/a".to_string(), |t| match t.as_secs() {
                secs if secs >= 60 => format!("< {} min", secs / 60),
                secs => format!("< {secs} s"),
            });
            let available = match job.availability {
                Availability::Available => "yes".to_string(),
                Availability::Unavailable(why) => format!("no: {why}"),
            };
            let last_run = status.last.as_ref().map_or("—".to_string(), |run| {
                format!("{} {}", run.outcome.as_str(), crate::model::rfc3339_ms(run.started_at_ms))
            });
            let effective = &status.effective;
            let schedule =
                format!("{}{}", effective.schedule.describe(), if effective.configured { " (set)" } else { "" });
            let alert = status.breach.map_or(String::new(), |breach| format!("{}: {}", breach.severity, breach.reason));
            vec![
                job.name.to_string(),
                job.tier.as_str().to_string(),
                schedule,
                if effective.enabled { "yes" } else { "no" }.to_string(),
                target,
                available,
                last_run,
                status.next_run_ms.map_or("—".to_string(), crate::model::rfc3339_ms),
                alert,
            ]
        })
        .collect();
    Ok(rows)
}

//! `sightline jobs …`: the job registry and its runs from the command line: `jobs list`
//! (every job with its tier, schedule, target and whether this build can run it) and
//! `jobs history` (the latest runs from `job_runs`). `jobs run` and `jobs set` come with
//! the rest of issue 15.

use std::io::IsTerminal;

use clap::Subcommand;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use super::{ConfigArgs, load_config};
use crate::app::serve::prepare_main_db;
use crate::config::Overrides;
use crate::db::{self, Checkpointing, Durability};
use crate::jobs::registry::{self, Availability, JOBS};
use crate::jobs::runs;

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Every job: name, tier, schedule (UTC), enabled by default, target duration, and
    /// whether this build can run it (and why not).
    List,
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
        JobsCommand::List => {
            print_rows(&LIST_HEADERS, list_rows());
            Ok(0)
        }
        JobsCommand::History { config, job, limit } => {
            if let Some(name) = job.as_deref()
                && registry::find(name).is_none()
            {
                anyhow::bail!("there is no job named {name:?}; `sightline jobs list` names them all");
            }
            let config = load_config(&config, Overrides::default())?;
            prepare_main_db(&config)?;
            let conn = db::open(&config.main_db_path(), Durability::PowerSafe, Checkpointing::Automatic)?;
            print_rows(&HISTORY_HEADERS, history_rows(&runs::history(&conn, job.as_deref(), limit)?));
            Ok(0)
        }
    }
}

/// A table on a terminal; piped, one tab-separated line per row (for `cut` and `grep`).
fn print_rows<const N: usize>(headers: &[&str; N], rows: Vec<Vec<String>>) {
    if std::io::stdout().is_terminal() {
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
        table.set_header(headers.to_vec());
        table.add_rows(rows);
        println!("{table}");
    } else {
        for row in std::iter::once(headers.map(str::to_string).to_vec()).chain(rows) {
            println!("{}", row.join("\t"));
        }
    }
}

const LIST_HEADERS: [&str; 6] = ["job", "tier", "default schedule", "enabled", "target", "available"];
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

fn list_rows() -> Vec<Vec<String>> {
    JOBS.iter()
        .map(|job| {
            let target = job.target.map_or("n/a".to_string(), |t| match t.as_secs() {
                secs if secs >= 60 => format!("< {} min", secs / 60),
                secs => format!("< {secs} s"),
            });
            let available = match job.availability {
                Availability::Available => "yes".to_string(),
                Availability::Unavailable(why) => format!("no: {why}"),
            };
            vec![
                job.name.to_string(),
                job.tier.as_str().to_string(),
                job.schedule.schedule().describe(),
                if job.enabled_by_default { "yes" } else { "no" }.to_string(),
                target,
                available,
            ]
        })
        .collect()
}

//! `sightline jobs …`: the job registry from the command line. For now `jobs list`
//! (every job with its tier, schedule, target and whether this build can run it); run
//! history, `jobs run` and `jobs set` come with the scheduler (issue 15).

use std::io::IsTerminal;

use clap::Subcommand;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use crate::jobs::registry::{Availability, JOBS};

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Every job: name, tier, schedule (UTC), enabled by default, target duration, and
    /// whether this build can run it (and why not).
    List,
}

pub fn jobs(command: JobsCommand) -> anyhow::Result<i32> {
    match command {
        JobsCommand::List => {
            let rows = list_rows();
            if std::io::stdout().is_terminal() {
                let mut table = Table::new();
                table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
                table.set_header(HEADERS);
                table.add_rows(rows);
                println!("{table}");
            } else {
                // Piped: one tab-separated line per job, for `cut` and `grep`.
                for row in std::iter::once(HEADERS.map(str::to_string).to_vec()).chain(rows) {
                    println!("{}", row.join("\t"));
                }
            }
            Ok(0)
        }
    }
}

const HEADERS: [&str; 6] = ["job", "tier", "default schedule", "enabled", "target", "available"];

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

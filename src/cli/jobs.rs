//! `sightline jobs …`: the job registry and its runs from the command line: `jobs list`
//! (every job with its tier, schedule, target and whether this build can run it), `jobs
//! run` (a job now, in this process, recorded in `job_runs`) and `jobs history` (the
//! latest runs), and `jobs set` (an operator's schedule of a tier-1 job).

use std::io::IsTerminal;

use clap::Subcommand;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use super::deletions::CliTarget;
use super::{ConfigArgs, load_config};
use crate::config::Overrides;
use crate::deletion;
use crate::events::reredact;
use crate::jobs::config as jobs_config;
use crate::jobs::registry::{self, Availability};
use crate::jobs::runs::{self, Outcome, Started, Trigger};
use crate::jobs::status as jobs_status;
use crate::transcripts::backfill;
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
            let conn = open_main(&config)?;
            print_rows(&LIST_HEADERS, list_rows(&conn, crate::clock::system_now_ms())?);
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
    let result = execute(job.name, &conn, &config);
    let (outcome, rows, error) = match &result {
        Ok((rows, _)) => (Outcome::Succeeded, Some(*rows), None),
        Err(err) => (Outcome::Failed, None, Some(format!("{err:#}"))),
    };
    if let Ok((_, Some(summary))) = &result {
        runs::set_summary(&conn, &run_id, summary)?;
    }
    if let Some(breach) = runs::finish_and_check(&conn, job, &run_id, outcome, rows, error.as_deref(), now_ms())? {
        eprintln!("{name} breached its service level ({}): {}", breach.severity, breach.reason);
    }
    let took = started.elapsed().as_secs_f64();
    match result {
        Ok((rows, summary)) => {
            println!("{name} succeeded in {took:.1} s: {rows} rows touched (run {run_id})");
            if let Some(summary) = summary {
                println!("{summary}");
            }
            Ok(0)
        }
        Err(err) => Err(err.context(format!("{name} failed after {took:.1} s (run {run_id})"))),
    }
}

/// Does an available job's work here; the rows it touched, and a summary where a count
/// says too little.
fn execute(
    name: &str,
    conn: &rusqlite::Connection,
    config: &crate::config::Config,
) -> anyhow::Result<(i64, Option<String>)> {
    use crate::sessions::reprice;
    let data_dir = config.data_dir.as_path();
    let report = match name {
        "reprice-events" => Some(reprice::report(data_dir, &crate::pricing::PriceBook::load(data_dir)?)?),
        "reprice-events-apply" => {
            let change_main = |change: crate::events::writer::MainChange| {
                let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
                change(&tx)?;
                Ok(tx.commit()?)
            };
            let book = crate::pricing::PriceBook::load(data_dir)?;
            Some(reprice::apply(data_dir, conn, &book, &change_main, crate::clock::system_now_ms())?)
        }
        "compute-trajectory-scores" | "rescore-trajectory" => {
            let change_main = |change: crate::events::writer::MainChange| {
                let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
                change(&tx)?;
                Ok(tx.commit()?)
            };
            let all = name == "rescore-trajectory";
            let report =
                crate::scoring::run::compute(data_dir, conn, &change_main, crate::clock::system_now_ms(), all)?;
            if all {
                crate::scoring::store::sweep_old_versions(conn)?;
            }
            let described = crate::scoring::run::describe(&report);
            println!("{described}");
            return Ok((report.sessions as i64, Some(described)));
        }
        "compute-effectiveness"
        | "compute-effectiveness-backfill"
        | "rescore-effectiveness"
        | "compute-subject-scores" => {
            let now_ms = crate::clock::system_now_ms();
            let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
            let (scored, what) = match name {
                "compute-subject-scores" => {
                    (crate::scoring::outcomes::compute_subject_scores(&tx, now_ms)?, "pull requests")
                }
                _ => (crate::scoring::outcomes::compute_effectiveness(&tx, now_ms)?, "sessions"),
            };
            if name == "rescore-effectiveness" {
                // As rescore-trajectory does: no score of an older version outlives a rescoring.
                crate::scoring::store::sweep_old_versions_of(&tx, &[crate::scoring::registry::EFFECTIVENESS])?;
            }
            tx.commit()?;
            let described = format!("{scored} {what} scored");
            println!("{described}");
            return Ok((scored as i64, Some(described)));
        }
        "evaluate-alerts" => {
            let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
            let transitions = crate::alerts::store::evaluate(&tx, crate::clock::system_now_ms())?;
            tx.commit()?;
            let channels = crate::alerts::channel_configs::in_use(conn, |name| std::env::var(name).ok())?
                .map_err(anyhow::Error::msg)?;
            let (attempts, described) = crate::alerts::channels::notify(
                &channels,
                &transitions,
                &crate::clock::system_now_ms,
                &std::thread::sleep,
            );
            crate::alerts::channels::log(conn, &attempts)?;
            println!("{described}");
            return Ok((transitions.len() as i64, Some(described)));
        }
        "judge-sessions" => {
            let settings = crate::scoring::judge::JudgeSettings::from_env(|name| std::env::var(name).ok())
                .map_err(anyhow::Error::msg)?;
            let report =
                crate::scoring::judge::run(conn, data_dir, &settings, crate::clock::system_now_ms(), &|body| {
                    crate::scoring::judge::ask_api(&settings, body)
                })
                .map_err(anyhow::Error::msg)?;
            let described = report.describe();
            println!("{described}");
            return Ok((report.judged as i64, Some(described)));
        }
        "sync-jira" => {
            let Some(jira) = crate::jira::from_env(|name| std::env::var(name).ok()).map_err(anyhow::Error::msg)? else {
                println!("{}", crate::jira::NOT_CONFIGURED);
                return Ok((0, Some(crate::jira::NOT_CONFIGURED.to_string())));
            };
            let keys = crate::github::pulls::issue_keys(conn)?;
            let fetched = crate::jira::client::fetch(&jira, &keys).map_err(anyhow::Error::msg)?;
            let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
            let stored = crate::jira::store::upsert(&tx, &fetched, crate::clock::system_now_ms())?;
            tx.commit()?;
            let described = stored.describe();
            println!("{described}");
            return Ok((stored.rows(), Some(described)));
        }
        "reconcile-cost" => {
            let settings =
                crate::billing::Settings::from_env(|name| std::env::var(name).ok()).map_err(anyhow::Error::msg)?;
            let now_ms = crate::clock::system_now_ms();
            let book = crate::pricing::PriceBook::load(data_dir)?;
            let today = crate::events::partitions::Day::of_ms(now_ms);
            let run = crate::billing::run::prepare(data_dir, &book, &settings, today).map_err(anyhow::Error::msg)?;
            let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
            let stored = crate::billing::store::replace(&tx, &run, now_ms)?;
            tx.commit()?;
            return Ok((stored.drift_rows as i64, Some(stored.summary)));
        }
        "sync-teams" => {
            if let Some(why) = crate::github::teams::not_configured(config) {
                println!("{why}");
                return Ok((0, Some(why.to_string())));
            }
            let now_ms = crate::clock::system_now_ms();
            let teams = crate::github::teams::fetch(config, now_ms / 1000).map_err(anyhow::Error::msg)?;
            let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
            let summary = crate::access::teams::sync(&tx, &teams, now_ms)?;
            tx.commit()?;
            let rows = summary.teams_added + summary.teams_updated + summary.members_added + summary.members_removed;
            let described = crate::github::teams::describe(&summary);
            println!("{described}");
            return Ok((rows as i64, Some(described)));
        }
        _ => None,
    };
    if let Some(report) = report {
        let rows = if name == "reprice-events" { report.changed() } else { report.rows_rewritten };
        print_reprice(&report);
        return Ok((rows as i64, Some(report.summary())));
    }
    Ok((execute_counted(name, conn, config)?, None))
}

/// The reprice report, one row per agent and model.
fn print_reprice(report: &crate::sessions::reprice::RepriceReport) {
    let usd = |nusd: i64| format!("{:.4}", crate::model::nusd_to_usd(nusd));
    let rows = report.lines.iter().map(|line| {
        vec![
            line.agent.clone(),
            line.model.clone(),
            line.events.to_string(),
            line.changed.to_string(),
            usd(line.cost_before_nusd),
            usd(line.cost_after_nusd),
        ]
    });
    print_rows(&["agent", "model", "events", "would change", "cost before $", "cost after $"], rows.collect());
}

/// The jobs whose work is a count of rows.
fn execute_counted(name: &str, conn: &rusqlite::Connection, config: &crate::config::Config) -> anyhow::Result<i64> {
    let data_dir = config.data_dir.as_path();
    match name {
        "run-deletions" => {
            let target = CliTarget::new(conn, data_dir);
            let report = deletion::runner::run(conn, data_dir, &target)?;
            target.close()?;
            if let Some((request, error)) = report.failed.first() {
                anyhow::bail!("deletion request {request} stopped: {error} (run again to resume it)");
            }
            Ok((report.sessions_deleted + report.events_deleted) as i64)
        }
        "sweep-retention" => {
            let target = CliTarget::new(conn, data_dir);
            let report = deletion::retention::sweep(conn, data_dir, &target, config.jobs.retention_days)?;
            target.close()?;
            Ok(report.rows())
        }
        "index-transcripts" => Ok(index_stored(conn, data_dir, false, false)?.report.sessions as i64),
        "backfill-redaction" => {
            let events = reredact::reredact_all(data_dir, conn, crate::clock::system_now_ms(), |_| {})?;
            let transcripts = backfill::reredact_all(conn, data_dir, |_| {})?;
            index_stored(conn, data_dir, false, false)?;
            Ok(events.rows_changed as i64 + transcripts.changed as i64)
        }
        "sweep-scratch" => {
            use crate::transcripts::upload;
            let uploads = upload::expire_staged(data_dir, upload::STAGING_MAX_AGE, std::time::SystemTime::now())?;
            let rows = crate::auth::delete_expired(conn, crate::clock::system_now_ms())?;
            // Sign-in throttle windows live in the server's memory; its own runs prune them.
            Ok((uploads + rows) as i64)
        }
        "sweep-abandoned" => {
            let quiet_ms = config.jobs.abandon_after_mins * 60_000;
            let now_ms = crate::clock::system_now_ms();
            Ok(crate::sessions::abandon::close_abandoned(conn, quiet_ms, now_ms)? as i64)
        }
        other => anyhow::bail!("{other} has no runner in this build"),
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
        print!("{}", crate::evals::console::lines(&headers.map(str::to_string), rows.into_iter()));
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

fn list_rows(conn: &rusqlite::Connection, now_ms: i64) -> anyhow::Result<Vec<Vec<String>>> {
    let rows = jobs_status::all(conn, now_ms)?
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

//! The registry of the 20 dispatchable jobs (docs/jobs.md), with the schedules, target
//! durations and alert thresholds of docs/jobs.md.
//!
//! Invariants: every job the spec names is here exactly once, by its spec name; a job
//! whose feature has not landed is `Unavailable` with the reason, and refuses to run (it
//! never records a success it did not earn); tier 3 jobs are never run over HTTP.

use std::time::Duration;

use super::context::{Done, JobContext, JobError};
use super::schedule::Schedule;
use super::work::{alerts, backup, deletions, integrations, pricing, scoring, sweeps, transcripts};
use crate::config::Config;

/// How a job is scheduled and who may start it (docs/jobs.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Cadence and enabled flag in `job_config`, editable by an operator.
    Configurable,
    /// Fixed timers, or triggered over HTTP.
    Fixed,
    /// One-shot, in-process only (`sightline jobs run` on the server host).
    OneShot,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Configurable => "job_config",
            Tier::Fixed => "fixed",
            Tier::OneShot => "one-shot",
        }
    }
}

/// How loud a breach of a job's thresholds is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Warning,
    /// `run-deletions`: a privacy-deletion obligation.
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// When a run breaches the job's service level (docs/jobs.md, "Alert when").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// A run longer than this.
    pub max_duration: Option<Duration>,
    /// This many failed runs in a row.
    pub consecutive_failures: Option<u32>,
    /// Any failed run.
    pub any_failure: bool,
    /// A scheduled run that had not started by its slot plus the target completion
    /// (`jobs::slo::missed`; docs/jobs.md, `evaluate-alerts`).
    pub missed_run: bool,
    /// A run that stopped at its spending cap (docs/jobs.md, `judge-sessions` "on spend").
    pub spend_cap: bool,
    pub severity: Severity,
}

/// Whether the job can run in this build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Availability {
    Available,
    /// Listed, refuses to run, says why.
    Unavailable(&'static str),
}

/// The default schedule, before any `job_config` override.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultSchedule {
    Cron(&'static str),
    Every(Duration),
    Triggered,
}

impl DefaultSchedule {
    pub fn schedule(self) -> Schedule {
        match self {
            DefaultSchedule::Cron(pattern) => Schedule::cron(pattern).expect("the registry's patterns parse"),
            DefaultSchedule::Every(period) => Schedule::Every(period),
            DefaultSchedule::Triggered => Schedule::Triggered,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct JobSpec {
    pub name: &'static str,
    pub tier: Tier,
    pub schedule: DefaultSchedule,
    /// Enabled unless an operator turns it off (`judge-sessions` is seeded disabled).
    pub enabled_by_default: bool,
    /// The target completion time (docs/jobs.md); `None` where the spec says n/a.
    pub target: Option<Duration>,
    pub alert: Thresholds,
    /// Jobs it never runs beside: a run of this one is refused while one of these runs
    /// (docs/jobs.md: trajectory scores never overlap effectiveness; docs/cost.md: no report while an
    /// apply rewrites history).
    pub excludes: &'static [&'static str],
    pub availability: Availability,
    /// A setting that must be on for the job to be enabled: a one-shot job with one is
    /// also scheduled by the server while it is (`reconcile-cost`, daily when
    /// `billing.reconciliation_enabled`, docs/jobs.md).
    pub switch: Option<fn(&Config) -> bool>,
    /// One line on what it does, for `jobs list` and docs/jobs.md.
    pub what: &'static str,
    /// The job's work (`super::work`), the same in the server and the command line. A
    /// work that rewrites partitions takes the store's rewrite lock
    /// (`JobContext::rewriting`): it cannot reach a partition to rewrite without it.
    pub run: Work,
}

const fn minutes(n: u64) -> Duration {
    Duration::from_secs(n * 60)
}

const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

const fn cron(pattern: &'static str) -> DefaultSchedule {
    DefaultSchedule::Cron(pattern)
}

const fn every(period: Duration) -> DefaultSchedule {
    DefaultSchedule::Every(period)
}

const TRIGGERED: DefaultSchedule = DefaultSchedule::Triggered;

const fn slower_than(limit: Duration) -> Thresholds {
    Thresholds { max_duration: Some(limit), ..NEVER }
}

const NEVER: Thresholds = Thresholds {
    max_duration: None,
    consecutive_failures: None,
    any_failure: false,
    missed_run: false,
    spend_cap: false,
    severity: Severity::Warning,
};

const ANY_FAILURE: Thresholds = Thresholds { any_failure: true, ..NEVER };

impl Thresholds {
    const fn or_failing(self, in_a_row: u32) -> Thresholds {
        Thresholds { consecutive_failures: Some(in_a_row), ..self }
    }

    const fn or_any_failure(self) -> Thresholds {
        Thresholds { any_failure: true, ..self }
    }

    const fn or_missed_run(self) -> Thresholds {
        Thresholds { missed_run: true, ..self }
    }

    const fn or_spend_cap(self) -> Thresholds {
        Thresholds { spend_cap: true, ..self }
    }

    const fn critical(self) -> Thresholds {
        Thresholds { severity: Severity::Critical, ..self }
    }
}

type Work = fn(&JobContext<'_>) -> Result<Done, JobError>;

const fn job(
    name: &'static str,
    tier: Tier,
    schedule: DefaultSchedule,
    target: Option<Duration>,
    run: Work,
) -> JobSpec {
    JobSpec {
        name,
        tier,
        schedule,
        enabled_by_default: true,
        target,
        alert: NEVER,
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "",
        run,
    }
}

/// A tier-1 job: its cron pattern an operator may change (`job_config`).
const fn configurable(name: &'static str, schedule: DefaultSchedule, target: Option<Duration>, run: Work) -> JobSpec {
    job(name, Tier::Configurable, schedule, target, run)
}

/// A tier-2 job: a fixed timer, or triggered over HTTP.
const fn fixed(name: &'static str, schedule: DefaultSchedule, target: Option<Duration>, run: Work) -> JobSpec {
    job(name, Tier::Fixed, schedule, target, run)
}

/// A tier-3 job: run in-process on the server's host.
const fn one_shot(name: &'static str, schedule: DefaultSchedule, target: Option<Duration>, run: Work) -> JobSpec {
    job(name, Tier::OneShot, schedule, target, run)
}

impl JobSpec {
    /// When a run breaches the job's service level (docs/jobs.md, "Alert when").
    const fn alert(self, alert: Thresholds) -> JobSpec {
        JobSpec { alert, ..self }
    }

    const fn what(self, what: &'static str) -> JobSpec {
        JobSpec { what, ..self }
    }

    const fn disabled_by_default(self) -> JobSpec {
        JobSpec { enabled_by_default: false, ..self }
    }

    const fn excluding(self, excludes: &'static [&'static str]) -> JobSpec {
        JobSpec { excludes, ..self }
    }

    const fn switched_by(self, switch: fn(&Config) -> bool) -> JobSpec {
        JobSpec { switch: Some(switch), ..self }
    }
}

/// Every job, tier 1 first. Each: its name, default schedule, target completion (`None`
/// where docs/jobs.md says n/a), when a run breaches its service level, and its work
/// (`super::work`), then what is unusual about it and what it does (for `jobs list`).
pub const JOBS: [JobSpec; 20] = [
    configurable("sweep-retention", cron("0 2 * * *"), Some(minutes(10)), deletions::sweep_retention)
        .alert(slower_than(minutes(30)).or_any_failure())
        .what("drops raw events past their retention (global, or the team's override)"),
    configurable("index-transcripts", cron("30 3 * * *"), Some(minutes(30)), transcripts::index_transcripts)
        .alert(slower_than(minutes(60)))
        .what("indexes stored transcripts that are not searchable yet"),
    configurable("compute-effectiveness", cron("0 5 * * *"), Some(minutes(15)), scoring::effectiveness)
        .alert(slower_than(minutes(45)))
        .excluding(&["compute-trajectory-scores"])
        .what("computes effectiveness scores"),
    configurable("compute-trajectory-scores", cron("30 5 * * *"), Some(minutes(20)), scoring::trajectory_scores)
        .alert(slower_than(minutes(60)))
        .excluding(&["compute-effectiveness"])
        .what("computes trajectory scores (never while compute-effectiveness runs)"),
    configurable("compute-subject-scores", cron("0 6 * * *"), Some(minutes(10)), scoring::subject_scores)
        .alert(slower_than(minutes(30)))
        .what("computes per-subject scores"),
    configurable("evaluate-alerts", cron("0 1 * * *"), Some(minutes(5)), alerts::evaluate_alerts)
        .alert(ANY_FAILURE.or_missed_run())
        .what("evaluates the alert rules, opening and resolving alert events and notifying the channels"),
    configurable("judge-sessions", cron("30 6 * * *"), Some(minutes(30)), scoring::judge_sessions)
        .alert(ANY_FAILURE.or_spend_cap())
        .disabled_by_default()
        .what("asks the LLM judge about sessions of owners who opted in (seeded disabled)"),
    configurable("backup", cron("15 3 * * *"), Some(minutes(30)), backup::backup)
        .alert(slower_than(minutes(120)).or_any_failure().or_missed_run())
        .switched_by(backup_configured)
        .what("backs up the data directory to backup.dir (unchanged files linked, not copied), keeping backup.keep"),
    fixed("sync-teams", every(minutes(60)), Some(secs(60)), integrations::sync_teams)
        .alert(slower_than(minutes(5)).or_failing(2))
        .what("syncs teams from the code-hosting service"),
    fixed("sync-jira", every(minutes(360)), Some(minutes(5)), integrations::sync_jira)
        .alert(slower_than(minutes(15)).or_failing(2))
        .what("reads the Jira issues pull requests name, with their business value (when SIGHTLINE_JIRA_* are set)"),
    fixed("sweep-abandoned", every(minutes(10)), Some(secs(30)), sweeps::sweep_abandoned)
        .alert(slower_than(minutes(2)).or_failing(3))
        .what("closes sessions quiet for too long as abandoned"),
    fixed("sweep-scratch", every(minutes(60)), Some(secs(30)), sweeps::sweep_scratch)
        .alert(slower_than(minutes(5)).or_failing(2))
        .what("removes stale upload chunks, expired device codes, refresh tokens and throttle entries"),
    fixed("run-deletions", every(minutes(360)), Some(minutes(2)), deletions::run_deletions)
        .alert(ANY_FAILURE.critical())
        .what("carries out the open deletion requests"),
    fixed("backfill-redaction", TRIGGERED, None, transcripts::backfill_redaction)
        .alert(ANY_FAILURE)
        .what("re-redacts events and transcripts stored under older rules (drains the backlog)"),
    fixed("reprice-events", TRIGGERED, Some(minutes(5)), pricing::reprice_report)
        .alert(ANY_FAILURE)
        .excluding(&["reprice-events-apply"])
        .what("reports what the price tables in force would change (writes nothing)"),
    fixed("reprice-events-apply", TRIGGERED, Some(minutes(30)), pricing::reprice_apply)
        .alert(ANY_FAILURE)
        .excluding(&["reprice-events"])
        .what("rewrites stored costs that differ under the price tables in force"),
    one_shot("compute-effectiveness-backfill", TRIGGERED, None, scoring::effectiveness)
        .alert(ANY_FAILURE)
        .what("computes effectiveness over past history"),
    one_shot("rescore-effectiveness", TRIGGERED, None, scoring::rescore_effectiveness)
        .alert(ANY_FAILURE)
        .what("re-scores effectiveness after a scorer version bump"),
    one_shot("rescore-trajectory", TRIGGERED, None, scoring::rescore_trajectory)
        .alert(ANY_FAILURE)
        .what("re-scores trajectories after a scorer version bump"),
    one_shot("reconcile-cost", cron("0 7 * * *"), Some(minutes(15)), integrations::reconcile_cost)
        .alert(ANY_FAILURE)
        .switched_by(billing_reconciliation_enabled)
        .what("compares recomputed cost with the vendors' bills per day and model (daily when switched on)"),
];

/// Whether the job's switch is on (true for a job without one).
pub fn switched_on(job: &JobSpec, config: &Config) -> bool {
    job.switch.is_none_or(|on| on(config))
}

fn backup_configured(config: &Config) -> bool {
    config.backup.dir().is_some()
}

fn billing_reconciliation_enabled(config: &Config) -> bool {
    config.billing.reconciliation_enabled
}

/// The job named `name` (its spec name), if there is one.
pub fn find(name: &str) -> Option<&'static JobSpec> {
    JOBS.iter().find(|job| job.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_has_twenty_jobs_in_three_tiers() {
        let count = |tier| JOBS.iter().filter(|job| job.tier == tier).count();
        assert_eq!((count(Tier::Configurable), count(Tier::Fixed), count(Tier::OneShot)), (8, 8, 4));
        let mut names: Vec<_> = JOBS.iter().map(|job| job.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 20, "names are unique");
        for job in &JOBS {
            let _ = job.schedule.schedule(); // every default pattern parses
            assert_eq!(find(job.name).map(|found| found.name), Some(job.name));
        }
        assert!(find("compact").is_none());
    }

    #[test]
    fn thresholds_follow_the_spec_table() {
        let deletions = find("run-deletions").unwrap();
        assert!(deletions.alert.any_failure && deletions.alert.severity == Severity::Critical);
        let abandoned = find("sweep-abandoned").unwrap();
        assert_eq!(abandoned.alert.max_duration, Some(minutes(2)));
        assert_eq!(abandoned.alert.consecutive_failures, Some(3));
        assert!(!find("judge-sessions").unwrap().enabled_by_default, "seeded disabled");
        assert_eq!(find("index-transcripts").unwrap().schedule, DefaultSchedule::Cron("30 3 * * *"));
        for job in &JOBS {
            for other in job.excludes {
                let other = find(other).expect("an excluded job exists");
                assert!(other.excludes.contains(&job.name), "{} and {} exclude each other", job.name, other.name);
            }
        }
    }
}

//! The registry of the 19 dispatchable jobs (docs/jobs.md), with the schedules, target
//! durations and alert thresholds of docs/jobs.md.
//!
//! Invariants: every job the spec names is here exactly once, by its spec name; a job
//! whose feature has not landed is `Unavailable` with the reason, and refuses to run (it
//! never records a success it did not earn); tier 3 jobs are never run over HTTP.

use std::time::Duration;

use super::context::{Done, JobContext, JobError};
use super::schedule::Schedule;
use super::work;
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
    /// The job's work (`super::work`), the same in the server and the command line.
    pub run: fn(&JobContext<'_>) -> Result<Done, JobError>,
    /// Whether it rewrites or removes partition files: the server runs such jobs one at
    /// a time, and never beside compaction (`super::in_server::PARTITION_REWRITES`).
    pub rewrites_partitions: bool,
}

const fn minutes(n: u64) -> Duration {
    Duration::from_secs(n * 60)
}

const fn slower_than(limit: Duration) -> Thresholds {
    Thresholds {
        max_duration: Some(limit),
        consecutive_failures: None,
        any_failure: false,
        missed_run: false,
        spend_cap: false,
        severity: Severity::Warning,
    }
}

const fn slower_than_or_failing(limit: Duration, failures: u32) -> Thresholds {
    Thresholds {
        max_duration: Some(limit),
        consecutive_failures: Some(failures),
        any_failure: false,
        missed_run: false,
        spend_cap: false,
        severity: Severity::Warning,
    }
}

const ANY_FAILURE: Thresholds = Thresholds {
    max_duration: None,
    consecutive_failures: None,
    any_failure: true,
    missed_run: false,
    spend_cap: false,
    severity: Severity::Warning,
};

/// Every job, tier 1 first, in the spec's order.
pub const JOBS: [JobSpec; 19] = [
    JobSpec {
        name: "sweep-retention",
        tier: Tier::Configurable,
        schedule: DefaultSchedule::Cron("0 2 * * *"),
        enabled_by_default: true,
        target: Some(minutes(10)),
        alert: Thresholds { any_failure: true, ..slower_than(minutes(30)) },
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "drops raw events past their retention (global, or the team's override)",
        run: work::deletions::sweep_retention,
        rewrites_partitions: true,
    },
    JobSpec {
        name: "index-transcripts",
        tier: Tier::Configurable,
        schedule: DefaultSchedule::Cron("30 3 * * *"),
        enabled_by_default: true,
        target: Some(minutes(30)),
        alert: slower_than(minutes(60)),
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "indexes stored transcripts that are not searchable yet",
        run: work::transcripts::index_transcripts,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "compute-effectiveness",
        tier: Tier::Configurable,
        schedule: DefaultSchedule::Cron("0 5 * * *"),
        enabled_by_default: true,
        target: Some(minutes(15)),
        alert: slower_than(minutes(45)),
        excludes: &["compute-trajectory-scores"],
        availability: Availability::Available,
        switch: None,
        what: "computes effectiveness scores",
        run: work::scoring::effectiveness,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "compute-trajectory-scores",
        tier: Tier::Configurable,
        schedule: DefaultSchedule::Cron("30 5 * * *"),
        enabled_by_default: true,
        target: Some(minutes(20)),
        alert: slower_than(minutes(60)),
        excludes: &["compute-effectiveness"],
        availability: Availability::Available,
        switch: None,
        what: "computes trajectory scores (never while compute-effectiveness runs)",
        run: work::scoring::trajectory_scores,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "compute-subject-scores",
        tier: Tier::Configurable,
        schedule: DefaultSchedule::Cron("0 6 * * *"),
        enabled_by_default: true,
        target: Some(minutes(10)),
        alert: slower_than(minutes(30)),
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "computes per-subject scores",
        run: work::scoring::subject_scores,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "evaluate-alerts",
        tier: Tier::Configurable,
        schedule: DefaultSchedule::Cron("0 1 * * *"),
        enabled_by_default: true,
        target: Some(minutes(5)),
        alert: Thresholds { missed_run: true, ..ANY_FAILURE },
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "evaluates the alert rules, opening and resolving alert events and notifying the channels",
        run: work::alerts::evaluate_alerts,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "judge-sessions",
        tier: Tier::Configurable,
        schedule: DefaultSchedule::Cron("30 6 * * *"),
        enabled_by_default: false,
        target: Some(minutes(30)),
        alert: Thresholds { spend_cap: true, ..ANY_FAILURE },
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "asks the LLM judge about sessions of owners who opted in (seeded disabled)",
        run: work::scoring::judge_sessions,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "sync-teams",
        tier: Tier::Fixed,
        schedule: DefaultSchedule::Every(minutes(60)),
        enabled_by_default: true,
        target: Some(Duration::from_secs(60)),
        alert: slower_than_or_failing(minutes(5), 2),
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "syncs teams from the code-hosting service",
        run: work::integrations::sync_teams,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "sync-jira",
        tier: Tier::Fixed,
        schedule: DefaultSchedule::Every(minutes(360)),
        enabled_by_default: true,
        target: Some(minutes(5)),
        alert: slower_than_or_failing(minutes(15), 2),
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "reads the Jira issues pull requests name, with their business value (when SIGHTLINE_JIRA_* are set)",
        run: work::integrations::sync_jira,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "sweep-abandoned",
        tier: Tier::Fixed,
        schedule: DefaultSchedule::Every(minutes(10)),
        enabled_by_default: true,
        target: Some(Duration::from_secs(30)),
        alert: slower_than_or_failing(minutes(2), 3),
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "closes sessions quiet for too long as abandoned",
        run: work::sweeps::sweep_abandoned,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "sweep-scratch",
        tier: Tier::Fixed,
        schedule: DefaultSchedule::Every(minutes(60)),
        enabled_by_default: true,
        target: Some(Duration::from_secs(30)),
        alert: slower_than_or_failing(minutes(5), 2),
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "removes stale upload chunks, expired device codes, refresh tokens and throttle entries",
        run: work::sweeps::sweep_scratch,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "run-deletions",
        tier: Tier::Fixed,
        schedule: DefaultSchedule::Every(minutes(360)),
        enabled_by_default: true,
        target: Some(minutes(2)),
        alert: Thresholds { severity: Severity::Critical, ..ANY_FAILURE },
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "carries out the open deletion requests",
        run: work::deletions::run_deletions,
        rewrites_partitions: true,
    },
    JobSpec {
        name: "backfill-redaction",
        tier: Tier::Fixed,
        schedule: DefaultSchedule::Triggered,
        enabled_by_default: true,
        target: None,
        alert: ANY_FAILURE,
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "re-redacts events and transcripts stored under older rules (drains the backlog)",
        run: work::transcripts::backfill_redaction,
        rewrites_partitions: true,
    },
    JobSpec {
        name: "reprice-events",
        tier: Tier::Fixed,
        schedule: DefaultSchedule::Triggered,
        enabled_by_default: true,
        target: Some(minutes(5)),
        alert: ANY_FAILURE,
        excludes: &["reprice-events-apply"],
        availability: Availability::Available,
        switch: None,
        what: "reports what the price tables in force would change (writes nothing)",
        run: work::pricing::reprice_report,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "reprice-events-apply",
        tier: Tier::Fixed,
        schedule: DefaultSchedule::Triggered,
        enabled_by_default: true,
        target: Some(minutes(30)),
        alert: ANY_FAILURE,
        excludes: &["reprice-events"],
        availability: Availability::Available,
        switch: None,
        what: "rewrites stored costs that differ under the price tables in force",
        run: work::pricing::reprice_apply,
        rewrites_partitions: true,
    },
    JobSpec {
        name: "compute-effectiveness-backfill",
        tier: Tier::OneShot,
        schedule: DefaultSchedule::Triggered,
        enabled_by_default: true,
        target: None,
        alert: ANY_FAILURE,
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "computes effectiveness over past history",
        run: work::scoring::effectiveness,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "rescore-effectiveness",
        tier: Tier::OneShot,
        schedule: DefaultSchedule::Triggered,
        enabled_by_default: true,
        target: None,
        alert: ANY_FAILURE,
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "re-scores effectiveness after a scorer version bump",
        run: work::scoring::rescore_effectiveness,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "rescore-trajectory",
        tier: Tier::OneShot,
        schedule: DefaultSchedule::Triggered,
        enabled_by_default: true,
        target: None,
        alert: ANY_FAILURE,
        excludes: &[],
        availability: Availability::Available,
        switch: None,
        what: "re-scores trajectories after a scorer version bump",
        run: work::scoring::rescore_trajectory,
        rewrites_partitions: false,
    },
    JobSpec {
        name: "reconcile-cost",
        tier: Tier::OneShot,
        schedule: DefaultSchedule::Cron("0 7 * * *"),
        enabled_by_default: true,
        target: Some(minutes(15)),
        alert: ANY_FAILURE,
        excludes: &[],
        availability: Availability::Available,
        switch: Some(billing_reconciliation_enabled),
        what: "compares recomputed cost with the vendors' billing per day and model (daily when SIGHTLINE_BILLING_RECONCILIATION_ENABLED=true)",
        run: work::integrations::reconcile_cost,
        rewrites_partitions: false,
    },
];

/// Whether the job's switch is on (true for a job without one).
pub fn switched_on(job: &JobSpec, config: &Config) -> bool {
    job.switch.is_none_or(|on| on(config))
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
    fn the_registry_has_the_specs_nineteen_jobs_in_three_tiers() {
        let count = |tier| JOBS.iter().filter(|job| job.tier == tier).count();
        assert_eq!((count(Tier::Configurable), count(Tier::Fixed), count(Tier::OneShot)), (7, 8, 4));
        let mut names: Vec<_> = JOBS.iter().map(|job| job.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 19, "names are unique");
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

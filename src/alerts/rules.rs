//! The alert rules (the spec's six, and job service-level breaches): what each measures at an evaluation time, from the aggregates,
//! and when that breaches its threshold (docs/alerts.md has the same table in prose).
//!
//! Invariants: a rule with too little to go on (no baseline, too few calls or events)
//! does not breach: an alert says something happened, never that data was thin; every
//! measurement says in words what it compared.

use rusqlite::Connection;

use crate::analytics::query::{Period, Subject, security, totals};
use crate::db::DbError;
use crate::model::usd;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;
/// Spend below this over a day never makes a spike (a cent that triples is not news).
pub const SPIKE_FLOOR_NUSD: i64 = 10_000_000_000;
/// Fewer tool calls than this in a day say nothing about an error rate.
pub const MIN_CALLS: i64 = 100;
/// Fewer events with a stated permission mode than this say nothing about autonomy.
pub const MIN_MODE_EVENTS: i64 = 100;

/// A rule, by its id in `alert_rules`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    SpendSpike,
    ErrorRate,
    UnknownModelSurge,
    AutonomySurge,
    BudgetThreshold,
    RoutingWaste,
    /// A job breached its service level (`slo::breaches`, written by `jobs::slo`).
    JobSlo,
    /// A service-level objective spent a share of its 30-day error budget (`slo`).
    SloBurn,
}

impl Rule {
    pub const ALL: [Rule; 8] = [
        Rule::SpendSpike,
        Rule::ErrorRate,
        Rule::UnknownModelSurge,
        Rule::AutonomySurge,
        Rule::BudgetThreshold,
        Rule::RoutingWaste,
        Rule::JobSlo,
        Rule::SloBurn,
    ];

    /// How urgent an open event of the rule is: money over budget and service levels
    /// failing are `critical`, the rest `warning` (the health page's order).
    pub fn severity(self) -> &'static str {
        match self {
            Rule::BudgetThreshold | Rule::JobSlo | Rule::SloBurn => "critical",
            _ => "warning",
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Rule::SpendSpike => "spend_spike",
            Rule::ErrorRate => "error_rate",
            Rule::UnknownModelSurge => "unknown_model_surge",
            Rule::AutonomySurge => "autonomy_surge",
            Rule::BudgetThreshold => "budget_threshold",
            Rule::RoutingWaste => "routing_waste",
            Rule::JobSlo => "job_slo",
            Rule::SloBurn => "slo_burn",
        }
    }

    pub fn parse(id: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|rule| rule.id() == id)
    }

    /// What the threshold means, for pages and docs.
    pub fn threshold_means(self) -> &'static str {
        match self {
            Rule::SpendSpike => "the last 24 hours' spend as a multiple of the 7 days before's daily mean",
            Rule::ErrorRate => "failed tool calls as a share of all, over the last 24 hours",
            Rule::UnknownModelSurge => {
                "events priced at nothing because their model is unknown, in sessions active in the last 24 hours"
            }
            Rule::AutonomySurge => {
                "the last day's share of events in bypass or auto mode, as a multiple of the 7 days before's"
            }
            Rule::BudgetThreshold => {
                "the organisation's monthly budget in dollars (notified at 75, 90 and 100 %); teams' and people's budgets are set below"
            }
            Rule::RoutingWaste => {
                "the share of the last 7 days' spend that went to sessions shaped as a question or a single edit"
            }
            Rule::JobSlo => "job runs that breached their service level (docs/alerts.md) in the last 24 hours",
            Rule::SloBurn => "the share of a service-level objective's 30-day error budget spent (0.5 = half)",
        }
    }
}

/// One rule measured at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub value: f64,
    pub breaching: bool,
    pub detail: String,
}

/// Interactive spend of `subject` in `[from_ms, to_ms)`, from the hourly aggregate.
fn spend(conn: &Connection, subject: &Subject, from_ms: i64, to_ms: i64) -> Result<i64, DbError> {
    Ok(totals(conn, subject, Period { from_ms, to_ms })?.cost_nusd)
}

/// Measures a rule of one subject against `threshold` at `now_ms` (`measure_subjects`
/// measures the rules of several).
fn measure(conn: &Connection, rule: Rule, threshold: f64, now_ms: i64) -> Result<Measured, DbError> {
    let hour_end = (now_ms.div_euclid(HOUR_MS) + 1) * HOUR_MS;
    let day_start = now_ms.div_euclid(DAY_MS) * DAY_MS;
    Ok(match rule {
        Rule::SpendSpike => {
            let last = spend(conn, &Subject::Organisation, hour_end - DAY_MS, hour_end)?;
            let before = spend(conn, &Subject::Organisation, hour_end - 8 * DAY_MS, hour_end - DAY_MS)?;
            let mean = before as f64 / 7.0;
            let value = if mean > 0.0 { last as f64 / mean } else { 0.0 };
            Measured {
                value,
                breaching: mean > 0.0 && last >= SPIKE_FLOOR_NUSD && value >= threshold,
                detail: format!(
                    "{} in the last 24 hours against a daily mean of {} over the 7 days before",
                    usd(last),
                    usd(mean as i64)
                ),
            }
        }
        Rule::ErrorRate => {
            let (calls, errors) = crate::analytics::tools::calls_and_errors(conn, day_start - DAY_MS, day_start)?;
            let value = if calls > 0 { errors as f64 / calls as f64 } else { 0.0 };
            Measured {
                value,
                breaching: calls >= MIN_CALLS && value >= threshold,
                detail: format!("{errors} of {calls} tool calls failed yesterday and today"),
            }
        }
        Rule::UnknownModelSurge => {
            let events = crate::sessions::measures::unknown_model_events_since(conn, now_ms - DAY_MS)?;
            Measured {
                value: events as f64,
                breaching: events as f64 >= threshold,
                detail: format!("{events} events of unknown models in sessions active in the last 24 hours"),
            }
        }
        Rule::AutonomySurge => {
            // Each person's day once, as the security page counts modes.
            let share = |from_ms: i64, to_ms: i64| -> Result<(i64, i64), DbError> {
                let modes = security::modes(conn, &Subject::Organisation, Period { from_ms, to_ms }, 0)?;
                let unattended = modes.events[3] + modes.events[5];
                Ok((unattended, modes.events.iter().sum()))
            };
            let (unattended, all) = share(day_start - DAY_MS, day_start + DAY_MS)?;
            let (unattended_before, all_before) = share(day_start - 8 * DAY_MS, day_start - DAY_MS)?;
            let now = if all > 0 { unattended as f64 / all as f64 } else { 0.0 };
            let before = if all_before > 0 { unattended_before as f64 / all_before as f64 } else { 0.0 };
            let value = if before > 0.0 { now / before } else { 0.0 };
            Measured {
                value,
                breaching: all >= MIN_MODE_EVENTS && before > 0.0 && value >= threshold,
                detail: format!(
                    "{:.1}% of events in bypass or auto mode yesterday and today, against {:.1}% the 7 days before",
                    now * 100.0,
                    before * 100.0
                ),
            }
        }
        Rule::BudgetThreshold | Rule::SloBurn => unreachable!("measured per subject by measure_subjects"),
        Rule::JobSlo => {
            let breaches = crate::slo::breaches::since(conn, now_ms - DAY_MS)?;
            let listed: Vec<String> = breaches
                .iter()
                .take(5)
                .map(|breach| format!("{} ({}): {}", breach.job, breach.severity, breach.reason))
                .collect();
            Measured {
                value: breaches.len() as f64,
                breaching: !breaches.is_empty() && breaches.len() as f64 >= threshold,
                detail: if breaches.is_empty() {
                    "no job breached its service level in the last 24 hours".into()
                } else {
                    format!("{} job-run breaches in the last 24 hours: {}", breaches.len(), listed.join("; "))
                },
            }
        }
        Rule::RoutingWaste => {
            let (small, all) = crate::sessions::measures::small_work_spend_since(conn, now_ms - 7 * DAY_MS)?;
            let value = if all > 0 { small as f64 / all as f64 } else { 0.0 };
            Measured {
                value,
                breaching: all > 0 && value >= threshold,
                detail: format!(
                    "{} of {} spent in the last 7 days went to questions and single edits",
                    usd(small),
                    usd(all)
                ),
            }
        }
    })
}

/// The first millisecond of the UTC month of `now_ms`.
fn month_start(now_ms: i64) -> i64 {
    crate::analytics::month::month_bounds(now_ms).0
}

/// Spend against a budget at one level (0.75 = 75 %). `private` names the budget of a
/// team or person, whose detail then gives the share alone, never amounts (its notice
/// may reach a chat channel that must not learn one person's spend); the
/// organisation's budget (`private` empty) gives the amounts.
fn budget_level(spent: i64, budget_nusd: f64, level: f64, private: &str) -> Measured {
    let value = if budget_nusd > 0.0 { spent as f64 / budget_nusd } else { 0.0 };
    let breaching = budget_nusd > 0.0 && value >= level;
    let detail = if private.is_empty() {
        format!(
            "{} spent this month of a {} budget ({:.0}%{})",
            usd(spent),
            usd(budget_nusd as i64),
            value * 100.0,
            if breaching { format!(", past the {:.0}% level", level * 100.0) } else { String::new() }
        )
    } else {
        format!("{private} is at {:.0}% of its monthly budget (level {:.0}%)", value * 100.0, level * 100.0)
    };
    Measured { value, breaching, detail }
}

/// One subject of a rule measured: what it is (`""` for a rule with one), the threshold
/// it was measured against, and the measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct SubjectMeasured {
    pub subject: String,
    pub threshold: f64,
    pub measured: Measured,
}

/// Every subject of `rule` at `now_ms`: one for most rules (none without a threshold);
/// each level of each budget for `budget_threshold`; each objective for `slo_burn`.
pub fn measure_subjects(
    conn: &Connection,
    rule: Rule,
    threshold: Option<f64>,
    now_ms: i64,
) -> Result<Vec<SubjectMeasured>, DbError> {
    let one = |subject: String, threshold: f64, measured: Measured| SubjectMeasured { subject, threshold, measured };
    match rule {
        Rule::BudgetThreshold => {
            let hour_end = (now_ms.div_euclid(HOUR_MS) + 1) * HOUR_MS;
            let from = month_start(now_ms);
            let mut measured = Vec::new();
            if let Some(budget) = threshold.filter(|budget| *budget > 0.0) {
                let spent = spend(conn, &Subject::Organisation, from, hour_end)?;
                for level in super::budgets::DEFAULT_LEVELS {
                    let level = f64::from(level) / 100.0;
                    let subject = format!("organisation@{:.0}", level * 100.0);
                    measured.push(one(subject, level, budget_level(spent, budget * 1e9, level, "")));
                }
            }
            for budget in super::budgets::list(conn)? {
                let subject = if budget.scope == "team" {
                    Subject::Team(budget.subject_id.clone())
                } else {
                    Subject::Person(budget.subject_id.clone())
                };
                let spent = spend(conn, &subject, from, hour_end)?;
                // Neither names a person nor gives amounts: a team of one would say as
                // much as a personal budget, and notices may reach a chat channel.
                let private = if budget.scope == "person" {
                    format!("personal budget {}", budget.id)
                } else {
                    format!("team {}", budget.label)
                };
                for level in &budget.levels {
                    let level = f64::from(*level) / 100.0;
                    // A person is named by the budget's id, never their address: the
                    // subject travels with the notice.
                    let who = if budget.scope == "person" { &budget.id } else { &budget.label };
                    let subject = format!("{}:{who}@{:.0}", budget.scope, level * 100.0);
                    measured.push(one(
                        subject,
                        level,
                        budget_level(spent, budget.monthly_nusd as f64, level, &private),
                    ));
                }
            }
            Ok(measured)
        }
        Rule::SloBurn => {
            let Some(threshold) = threshold else { return Ok(Vec::new()) };
            Ok(crate::slo::objectives::statuses(conn, now_ms)?
                .into_iter()
                .map(|status| {
                    let spent = if status.spent.is_finite() { status.spent } else { 1.0 };
                    one(
                        status.objective.id.to_string(),
                        threshold,
                        Measured {
                            value: spent,
                            breaching: status.total > 0 && spent >= threshold,
                            detail: format!(
                                "{} ({}): {:.0}% of the 30-day error budget spent; {}",
                                status.objective.what,
                                status.objective.service,
                                spent * 100.0,
                                status.policy.says()
                            ),
                        },
                    )
                })
                .collect())
        }
        _ => match threshold {
            Some(threshold) => Ok(vec![one(String::new(), threshold, measure(conn, rule, threshold, now_ms)?)]),
            None => Ok(Vec::new()),
        },
    }
}

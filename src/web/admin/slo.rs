//! `/admin/slo`: each service-level objective of docs/slo.md over the rolling 30 days, with
//! its error budget left, the burn of the last day and what the budget policy asks;
//! the budget spent per objective as a chart over the same rows; bad observations per
//! day; and the jobs' durations against their targets. The `slo_burn` alert rule fires
//! on the same figures.
//!
//! Invariant: read-only, from `sli_daily` (`slo::objectives`); an objective without
//! observations says so instead of a figure.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use super::{AdminPage, Flash, Row, Section};
use crate::charts::Bar;
use crate::http::errors::PageError;
use crate::http::extract::Query;
use crate::slo::objectives::{self, Policy, Status};
use crate::slo::{BOUNDS_MS, Tally};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

const PATH: &str = "/admin/slo";

fn percent(share: f64) -> String {
    if share.is_infinite() { "all (a 100 % target has no budget)".into() } else { format!("{:.1}%", share * 100.0) }
}

fn objective_row(status: &Status) -> Row {
    let o = status.objective;
    let no_data = status.policy == Policy::NoData;
    let attainment =
        if no_data { "—".into() } else { format!("{:.3}%", status.good as f64 * 100.0 / status.total as f64) };
    let left = if no_data { "—".into() } else { percent((1.0 - status.spent).max(0.0)) };
    Row::new(vec![
        Cell::text(o.service),
        Cell::text(o.what),
        Cell::text(format!("{}%", o.target * 100.0)),
        Cell::text(attainment),
        Cell::count(status.total),
        Cell::text(if no_data { "—".into() } else { percent(status.spent) }),
        Cell::text(left),
        Cell::text(if no_data { "—".into() } else { format!("{:.2}×", status.burn_rate) }),
        Cell::text(status.policy.says()),
    ])
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    let now_ms = state.clock.now_ms();
    let rows = state.read(move |conn| objectives::window_rows(conn, now_ms)).await?;
    let statuses = objectives::statuses_of(&rows, now_ms);
    Ok(AdminPage::new(PATH, "Service levels", "Measured by this server: every request, event write and aggregate-lag sample, every GitHub delivery and job run, kept per day for 12 months.", flash)
        .section(objectives_section(&statuses))
        .section(policy_section())
        .section(daily_section(&statuses))
        .section(job_section(&rows))
        .respond())
}

/// Each objective's standing, with the chart of budget spent.
fn objectives_section(statuses: &[objectives::Status]) -> Section {
    let mut objectives_section = Section::new("objectives", "Objectives over the last 30 days")
        .intro("Budget spent is the bad observations over those the target allows in the window; burn is the last day's bad share over the allowed share (1× spends the budget in exactly 30 days).")
        .columns(vec!["Service", "Objective", "Target", "Attained", "Observations", "Budget spent", "Budget left", "Burn (last day)", "Policy"]);
    objectives_section.rows = statuses.iter().map(objective_row).collect();
    let bars: Vec<Bar> = statuses
        .iter()
        .filter(|s| s.policy != Policy::NoData)
        .map(|s| {
            let spent = if s.spent.is_finite() { s.spent } else { 1.0 };
            Bar {
                label: s.objective.id.to_string(),
                hover: format!("{}: {}", s.objective.id, percent(s.spent)),
                value: spent * 100.0,
            }
        })
        .collect();
    objectives_section.chart =
        Some(crate::charts::bars("Error budget spent (%)", &bars, |v| format!("{v:.0}%"), 900, 220));
    objectives_section
}

fn policy_section() -> Section {
    Section::new("policy", "The error-budget policy (docs/slo.md)").intro(
        "More than 50 % of an objective's budget spent within the first 15 days of its window requires a platform review. A budget 100 % exhausted freezes non-critical deploys and requires a post-mortem within 3 business days. Objectives are reviewed quarterly, or after an incident that burns over 20 % of a budget. The slo_burn alert rule (on /admin/alerts) opens an event for an objective once the share of its budget set as the rule's threshold is spent.",
    )
}

/// Every day an objective had bad observations, newest first.
fn daily_section(statuses: &[objectives::Status]) -> Section {
    let mut daily = Section::new("daily", "Bad observations per day")
        .columns(vec!["Day", "Objective", "Observations", "Bad", "Good share"])
        .empty("Nothing was bad in the window.");
    for status in statuses {
        for (day, total, good) in status.days.iter().rev() {
            if total > good {
                daily.rows.push(Row::new(vec![
                    Cell::text(crate::model::rfc3339_ms(*day)[..10].to_string()),
                    Cell::text(status.objective.id),
                    Cell::count(*total),
                    Cell::count(total - good),
                    Cell::share(*good, *total),
                ]));
            }
        }
    }
    daily
}

/// Each job's runs in the window, with the bounds of its duration quantiles.
fn job_section(rows: &[crate::slo::store::DayRow]) -> Section {
    let mut jobs: std::collections::BTreeMap<String, Tally> = std::collections::BTreeMap::new();
    for row in rows.iter().filter(|row| row.indicator == "job") {
        jobs.entry(row.key.clone()).or_default().merge(&row.tally);
    }
    let mut job_section = Section::new("jobs", "Job durations over the last 30 days")
        .intro("A run is good when it succeeded within its target duration (docs/slo.md; docs/jobs.md).")
        .columns(vec!["Job", "Runs", "Good", "Good share", "p50 at most", "p95 at most"])
        .empty("No job run ended in the window.");
    let bound = |b: Option<i64>| {
        b.map_or(format!("over {} s", BOUNDS_MS[BOUNDS_MS.len() - 1] / 1000), |ms| {
            if ms >= 1000 { format!("{} s", ms / 1000) } else { format!("{ms} ms") }
        })
    };
    job_section.rows = jobs
        .into_iter()
        .map(|(job, tally)| {
            Row::new(vec![
                Cell::text(job),
                Cell::count(tally.total),
                Cell::count(tally.good),
                Cell::share(tally.good, tally.total),
                Cell::text(bound(tally.quantile_bound(0.5))),
                Cell::text(bound(tally.quantile_bound(0.95))),
            ])
        })
        .collect();
    job_section
}

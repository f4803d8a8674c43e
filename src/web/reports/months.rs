//! The Months report (`/org/months`, `/team/<slug>/months`), finance's page: calendar
//! months side by side (spend, active developers, cost per active developer, merged
//! pull requests with agent sessions and their cost per pull request, the budget and
//! how much of it went), every team's budget month to date with its forecast, and, at
//! organisation level, what the vendors billed per month beside what the server
//! recomputed.
//!
//! Invariants: a month's figures are shown only when at least the minimum group of the
//! subject's people were active in it (a monthly total of fewer is their spend), and
//! its pull-request figures only when at least that many authors merged; a team's
//! budget line likewise by its active people; the vendors' monthly totals are
//! organisation-wide sums, shown to every reader of `/org` under the same monthly rule
//! (the per-day, per-model drift stays on `/org/roi` for administrators).

use super::super::report::{Cell, Table};
use super::Ctx;
use crate::alerts::budgets;
use crate::analytics::month::{self, MonthFigures};
use crate::analytics::query::Subject;
use crate::analytics::query::delivery::MergedPulls;
use crate::db::DbError;
use crate::events::partitions::Day;
use crate::model::nusd_to_usd;

/// How many calendar months the page puts side by side.
pub const MONTHS: usize = 6;

const WITHHELD: &str = "withheld";

pub fn months(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let past = month::past_months(ctx.conn, &ctx.subject, ctx.now_ms, MONTHS)?;
    let budget_nusd = budget_of(ctx)?;
    let mut tables = vec![month_table(ctx, &past, budget_nusd)?];
    tables.push(budget_table(ctx)?);
    if matches!(ctx.subject, Subject::Organisation) {
        tables.push(reconciled_table(ctx, &past)?);
    }
    Ok((
        format!(
            "Calendar months in UTC, the current one to date. Interactive sessions only. A month's figures are withheld when fewer than {} people were active in it.",
            ctx.min_people
        ),
        tables,
    ))
}

/// The subject's monthly budget: the organisation's is the `budget_threshold` rule's
/// threshold, a team's its own (`/admin/alerts`).
fn budget_of(ctx: &Ctx<'_>) -> Result<Option<i64>, DbError> {
    Ok(match &ctx.subject {
        Subject::Organisation => crate::alerts::store::rule_settings(ctx.conn)?
            .into_iter()
            .find(|setting| setting.rule == crate::alerts::rules::Rule::BudgetThreshold && setting.enabled)
            .and_then(|setting| setting.threshold)
            .filter(|dollars| *dollars > 0.0)
            .map(|dollars| (dollars * 1e9).round() as i64),
        Subject::Team(team_id) => budgets::list(ctx.conn)?
            .into_iter()
            .find(|budget| budget.scope == "team" && &budget.subject_id == team_id)
            .map(|budget| budget.monthly_nusd),
        Subject::Person(_) => None,
    })
}

fn label(figures: &MonthFigures) -> String {
    if figures.to_date { format!("{} (to date)", figures.month) } else { figures.month.clone() }
}

fn per(total: i64, count: i64) -> Cell {
    if count > 0 { Cell::usd(total / count) } else { Cell::text("—") }
}

fn month_table(ctx: &Ctx<'_>, past: &[MonthFigures], budget_nusd: Option<i64>) -> Result<Table, DbError> {
    let mut table = Table::new(
        "months",
        "Month by month",
        vec![
            "Month",
            "Spend",
            "Active developers",
            "Per active developer",
            "Merged PRs with agent sessions",
            "Their cost",
            "Cost per merged PR",
            "Budget",
            "Budget used",
        ],
    );
    for figures in past {
        let mut cells = vec![Cell::text(label(figures))];
        if figures.active_people == 0 {
            cells.extend([Cell::usd(0), Cell::count(0)]);
            cells.extend((0..6).map(|_| Cell::text("—")));
            table.rows.push(cells);
            continue;
        }
        if figures.active_people < ctx.min_people {
            cells.extend((0..8).map(|_| Cell::text(WITHHELD)));
            table.rows.push(cells);
            continue;
        }
        cells.extend([
            Cell::usd(figures.spent_nusd),
            Cell::count(figures.active_people),
            per(figures.spent_nusd, figures.active_people),
        ]);
        let outcome = MergedPulls::read(ctx.conn, &ctx.subject, figures.period)?.outcome();
        if outcome.merged > 0 && outcome.authors < ctx.min_people {
            cells.extend((0..3).map(|_| Cell::text(WITHHELD)));
        } else {
            cells.extend([
                Cell::count(outcome.merged),
                Cell::usd(outcome.cost_nusd),
                per(outcome.cost_nusd, outcome.merged),
            ]);
        }
        match budget_nusd {
            Some(budget) => cells.extend([Cell::usd(budget), Cell::share(figures.spent_nusd, budget)]),
            None => cells.extend([Cell::text("none set"), Cell::text("—")]),
        }
        table.rows.push(cells);
    }
    Ok(table.note(format!(
        "Spend: the server's recomputed cost of interactive sessions. Active developers: people with interactive usage in the month. Merged PRs: pull requests of the subject's authors merged in the month with at least one linked interactive session; their cost is those sessions' spend; withheld when fewer than {} authors merged. The budget is {} (set on /admin/alerts).",
        ctx.min_people,
        if matches!(ctx.subject, Subject::Organisation) { "the organisation's" } else { "this team's" }
    )))
}

fn budget_table(ctx: &Ctx<'_>) -> Result<Table, DbError> {
    let mut table = Table::new(
        "budgets",
        "Team budgets this month",
        vec![
            "Team",
            "Monthly budget",
            "Spent to date",
            "Used",
            "Forecast (linear)",
            "Forecast (weekday)",
            "At this pace",
        ],
    );
    let team_budgets: Vec<_> = budgets::list(ctx.conn)?
        .into_iter()
        .filter(|budget| budget.scope == "team")
        .filter(|budget| match &ctx.subject {
            Subject::Team(team_id) => &budget.subject_id == team_id,
            _ => true,
        })
        .collect();
    for budget in team_budgets {
        let subject = Subject::Team(budget.subject_id.clone());
        let mtd = month::to_date(ctx.conn, &subject, ctx.now_ms)?;
        let mut cells = vec![
            Cell::text(&budget.label).link(format!("/team/{}/months", budget.label)),
            Cell::usd(budget.monthly_nusd),
        ];
        if (mtd.active_people as i64) < ctx.min_people {
            let more = ctx.min_people - mtd.active_people as i64;
            cells.extend((0..4).map(|_| Cell::text(WITHHELD)));
            cells.push(Cell::text(format!("withheld until {more} more active this month")));
        } else {
            let (_, high) = mtd.range_nusd();
            let pace = if high > budget.monthly_nusd {
                format!("past the budget by {}", usd_text(high - budget.monthly_nusd))
            } else {
                "within the budget".to_string()
            };
            cells.extend([
                Cell::usd(mtd.spent_nusd),
                Cell::share(mtd.spent_nusd, budget.monthly_nusd),
                Cell::usd(mtd.linear_nusd),
                Cell::usd(mtd.weekday_nusd),
                Cell::text(pace),
            ]);
        }
        table.rows.push(cells);
    }
    table.empty = "No team has a monthly budget.";
    let none = table.rows.is_empty();
    Ok(table.note(if none {
        "No team has a monthly budget: an administrator sets one on /admin/alerts (Budgets).".to_string()
    } else {
        format!(
            "Month to date against each team's monthly budget, with the forecast to the month's end (linear on the month so far; and each remaining day at its weekday's mean of the last 8 weeks). A team with fewer than {} people active this month is withheld.",
            ctx.min_people
        )
    }))
}

fn usd_text(nusd: i64) -> String {
    format!("${:.2}", nusd_to_usd(nusd))
}

fn reconciled_table(ctx: &Ctx<'_>, past: &[MonthFigures]) -> Result<Table, DbError> {
    let mut table = Table::new(
        "reconciled-months",
        "What the vendors billed, month by month",
        vec!["Month", "Vendor", "Days reconciled", "Recomputed", "Billed for tokens", "Billed besides tokens", "Drift"],
    );
    for figures in past {
        let (from_day, to_day) = (Day::of_ms(figures.period.from_ms).to_string(), month_end_day(figures));
        let totals = crate::billing::store::totals(ctx.conn, &from_day, &to_day)?;
        // The organisation's active people of the month, every run kind billed.
        let active = crate::analytics::query::active_people(ctx.conn, &Subject::Organisation, figures.period)?;
        for total in totals {
            let mut cells = vec![Cell::text(label(figures)), Cell::text(&total.vendor)];
            if active < ctx.min_people {
                cells.extend((0..5).map(|_| Cell::text(WITHHELD)));
            } else {
                let drift = total.billed_tokens_nusd - total.recomputed_nusd;
                cells.extend([
                    Cell::count(total.days),
                    Cell::usd(total.recomputed_nusd),
                    Cell::usd(total.billed_tokens_nusd),
                    Cell::usd(total.billed_other_nusd),
                    Cell::share(drift, total.billed_tokens_nusd),
                ]);
            }
            table.rows.push(cells);
        }
    }
    table.empty = "No vendor's bill covers these months.";
    let sources = crate::billing::store::sources(ctx.conn)?;
    Ok(table.note(if sources.is_empty() {
        "No vendor's billing has been reconciled yet: reconcile-cost runs daily once an administrator sets a vendor's admin key (docs/cost.md).".to_string()
    } else {
        "Organisation-wide monthly sums of the vendors' billing beside the server's recomputed cost of the same agents (every run kind, as billed). Drift: billed for tokens minus recomputed, as a share of the bill. The per-day, per-model detail is on the ROI page for administrators.".to_string()
    }))
}

/// The day after the month's last (exclusive), or tomorrow for the month to date.
fn month_end_day(figures: &MonthFigures) -> String {
    Day::of_ms(figures.period.to_ms + if figures.to_date { 86_400_000 } else { 0 }).to_string()
}

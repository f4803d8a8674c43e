//! The delivery reports: merged pull requests with agent sessions beside those without,
//! per repository and team, and the cost of the merged ones per pull request and per
//! changed line (`analytics::query::delivery`).

use super::super::report::{Cell, OTHER, Table};
use super::Ctx;
use crate::analytics::query::delivery::{Delivery, KINDS, MergedPulls, Return};
use crate::analytics::query::groups::GroupRow;
use crate::db::DbError;

/// A delivery table: per group, one row per kind (with agent sessions, CI agent runs
/// only, without), each with its merged count, median time to merge, check failures
/// per pull request and reverts. Kinds are rows rather than columns so the table reads
/// down a group at a glance and fits a laptop's screen.
pub fn delivery_table(id: &'static str, heading: &str, what: &'static str, rows: &[GroupRow<Delivery>]) -> Table {
    let columns =
        vec![what, "Authors", "Pull requests", "Merged", "Median to merge", "Check failures per PR", "Reverted"];
    let mut table = Table::new(id, heading, columns);
    for row in rows {
        let group = row.key.clone().unwrap_or_else(|| OTHER.into());
        for (kind, label) in row.figures.kinds.iter().zip(KINDS) {
            let mut cells = vec![Cell::text(group.clone()), Cell::count(row.people), Cell::text(label)];
            if kind.withheld {
                cells.extend((0..4).map(|_| Cell::text("withheld")));
                table.rows.push(cells);
                continue;
            }
            let per_pr = if kind.merged > 0 {
                let value = kind.check_failures as f64 / kind.merged as f64;
                Cell::shown(format!("{value:.2}"), format!("{value:.3}"))
            } else {
                Cell::text("—")
            };
            cells.extend([
                Cell::count(kind.merged),
                Cell::hours(kind.median_time_to_merge_ms),
                per_pr,
                Cell::count(kind.reverted),
            ]);
            table.rows.push(cells);
        }
    }
    table.note = "Pull requests merged in the period, three rows per group. “With agent sessions”: an interactive session is linked to it; “CI agent runs only”: only agent runs in CI are; “without”: none. A kind merged by fewer authors than the minimum in a group is withheld.".into();
    table
}

pub fn delivery(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let merged = MergedPulls::read(ctx.conn, &ctx.subject, ctx.period)?;
    let repos = merged.by_repository(ctx.min_people);
    let teams = merged.by_team(ctx.conn, &ctx.groups, ctx.min_people)?;
    Ok((
        "Pull-request throughput, time to merge, check failures and reverts: pull requests worked on with agents beside those without, CI runs apart.".into(),
        vec![
            delivery_table("repositories", "Per repository", "Repository", &repos),
            delivery_table("teams", "Per team (by author)", "Team", &teams),
        ],
    ))
}

fn return_table(id: &'static str, heading: &str, what: &'static str, rows: &[GroupRow<Return>]) -> Table {
    let mut table = Table::new(
        id,
        heading,
        vec![
            what,
            "Authors",
            "Merged pull requests",
            "Spend",
            "Changed lines",
            "Cost per merged PR",
            "Cost per changed line",
            "With business value",
            "Business value",
            "Cost per unit of value",
        ],
    );
    for row in rows {
        let r = &row.figures;
        table.rows.push(vec![
            Cell::text(row.key.clone().unwrap_or_else(|| OTHER.into())),
            Cell::count(row.people),
            Cell::count(r.merged),
            Cell::usd(r.cost_nusd),
            Cell::count(r.changed_lines),
            r.per_pull_request().map_or(Cell::text("—"), Cell::usd),
            r.per_changed_line().map_or(Cell::text("—"), usd_fine),
            if r.value_withheld { Cell::text("withheld") } else { Cell::count(r.valued) },
            if r.value_withheld {
                Cell::text("withheld")
            } else {
                let value = r.value_milli as f64 / 1000.0;
                Cell::shown(format!("{value:.1}"), format!("{value:.3}"))
            },
            match (r.value_withheld, r.per_unit_of_value()) {
                (true, _) => Cell::text("withheld"),
                (false, None) => Cell::text("—"),
                (false, Some(nusd)) => usd_fine(nusd),
            },
        ]);
    }
    table
}

pub fn roi(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let merged = MergedPulls::read(ctx.conn, &ctx.subject, ctx.period)?;
    let teams = merged.return_by_team(ctx.conn, &ctx.groups, ctx.min_people)?;
    let agents = merged.return_by_agent(ctx.min_people);
    let mut tables = vec![
        return_table("teams", "Per team (by author)", "Team", &teams).note(
            "Only pull requests with linked interactive sessions; changed lines are additions plus deletions; business value is the Jira issue's (sync-jira), cost per unit of value counts only the pull requests that have one, and both are withheld where fewer than the minimum number of authors have valued pull requests.",
        ),
        return_table("agents", "Per agent", "Agent", &agents)
            .note("A pull request worked on with two agents counts under both, with its whole cost."),
    ];
    if matches!(ctx.subject, crate::analytics::query::Subject::Organisation) {
        if ctx.reader_is_admin {
            tables.extend(reconciliation_tables(ctx)?);
        } else {
            tables.push(Table::new("reconciled", "Reconciled spend (vendors' billing)", vec!["Vendor"]).note(
                "The vendors' bills per day and model are shown to administrators only: on a quiet day one line can describe one person's spend. The organisation's monthly totals, billed beside recomputed, are on the Months page (/org/months).",
            ));
        }
        tables.push(projections_table(ctx)?);
    }
    Ok((
        "What merged work cost: the spend of the interactive agent sessions linked to each pull request merged in the period, the spend the server recomputed beside what the vendors billed, and the predicted savings graded. No lines-generated or share-of-AI-code figures: outcomes only.".into(),
        tables,
    ))
}

/// Dollars to four places (a cost per line or per unit of value is often under a cent).
fn usd_fine(nusd: i64) -> Cell {
    let usd = crate::model::nusd_to_usd(nusd);
    Cell::shown(format!("${usd:.4}"), format!("{usd:.6}"))
}

/// Dollars to two places with a sign (drift is either way).
fn usd_signed(nusd: i64) -> Cell {
    let usd = crate::model::nusd_to_usd(nusd);
    Cell::shown(if nusd < 0 { format!("−${:.2}", -usd) } else { format!("${usd:.2}") }, format!("{usd:.2}"))
}

/// Reconciled spend beside recomputed spend, per vendor, and the drift per day and model
/// (`reconcile-cost`): organisation-level figures, every run kind, as billed.
fn reconciliation_tables(ctx: &Ctx<'_>) -> Result<Vec<Table>, DbError> {
    use crate::events::partitions::Day;
    let (from_day, to_day) = (Day::of_ms(ctx.period.from_ms).to_string(), Day::of_ms(ctx.period.to_ms).to_string());
    let totals = crate::billing::store::totals(ctx.conn, &from_day, &to_day)?;
    let mut spend = Table::new(
        "reconciled",
        "Reconciled spend (vendors' billing)",
        vec![
            "Vendor",
            "Days reconciled",
            "Recomputed",
            "Billed for tokens",
            "Drift",
            "Drift share",
            "Billed besides tokens",
            "Pricing breaches",
            "Days × models uncaptured",
            "Unattributed",
        ],
    );
    for t in &totals {
        let drift = t.billed_tokens_nusd - t.recomputed_nusd;
        spend.rows.push(vec![
            Cell::text(t.vendor.clone()),
            Cell::count(t.days),
            Cell::usd(t.recomputed_nusd),
            Cell::usd(t.billed_tokens_nusd),
            usd_signed(drift),
            Cell::share(drift, t.billed_tokens_nusd),
            Cell::usd(t.billed_other_nusd),
            Cell::count(t.breaches),
            Cell::count(t.uncaptured),
            Cell::count(t.unattributed),
        ]);
    }
    let sources = crate::billing::store::sources(ctx.conn)?;
    spend = spend.note(if sources.is_empty() {
        "No vendor's billing has been reconciled: reconcile-cost runs daily once SIGHTLINE_BILLING_RECONCILIATION_ENABLED=true and a vendor's admin key is set; without credentials a vendor is the null source and nothing is claimed for it (docs/cost.md)."
            .to_string()
    } else {
        format!(
            "Recomputed: the server's price tables over every run kind of the agents billed through the vendor's keys. Drift: billed minus recomputed. Last reconciled: {}.",
            sources.iter().map(|(vendor, from, to, _)| format!("{vendor} {from} to {to} (exclusive)")).collect::<Vec<_>>().join("; ")
        )
    });
    let mut drift = Table::new(
        "drift",
        "Drift per day and model",
        vec!["Day", "Vendor", "Model", "Recomputed", "Billed", "Drift", "Status", "Agents without tokens"],
    );
    for row in crate::billing::store::drift_rows(ctx.conn, &from_day, &to_day)? {
        drift.rows.push(vec![
            Cell::text(row.day),
            Cell::text(row.vendor.as_str()),
            Cell::text(row.model),
            Cell::usd(row.recomputed_nusd),
            Cell::usd(row.billed_nusd),
            usd_signed(row.drift_nusd),
            Cell::text(row.status.as_str()),
            Cell::text(if row.uncaptured_agents.is_empty() { "—".to_string() } else { row.uncaptured_agents }),
        ]);
    }
    drift = drift.note("within: inside tolerance (5 % of the larger figure, at least $1, by default); uncaptured: an agent billed through the vendor sent events without tokens that day, so the drift is recorded and never counted as a pricing breach; unattributed: billed for a model none of the agents' priced events used; breach: prices or token counts disagree with the vendor's.");
    Ok(vec![spend, drift])
}

/// The projections, graded on what happened in their periods so far.
fn projections_table(ctx: &Ctx<'_>) -> Result<Table, DbError> {
    use crate::web::admin::projections::{COLUMNS, cells};
    let mut table = Table::new("projections", "Projections and their grades", COLUMNS.to_vec());
    for graded in crate::projections::measure::graded(ctx.conn, ctx.now_ms)? {
        table.rows.push(cells(&graded));
    }
    Ok(table.note("Recorded by an administrator (/admin/projections): a predicted saving over a period, graded against the baseline measured before it; flagged when the gain came with rising friction or reverts. Organisation-level figures."))
}

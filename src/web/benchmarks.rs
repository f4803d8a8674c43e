//! `/org/benchmarks`: the evaluation runs of the `results.db` named by
//! `analytics.results_db`, newest activity first, each linking into the eval dashboard
//! (`analytics.eval_dashboard_url`, where `sightline dashboard` answers for that file).
//!
//! Invariants: the file is opened read-only (`evals::db::open`), per request, so a
//! harness writing it meanwhile is never blocked; runs are about agents and models, not
//! people, so no minimum group size applies; a missing or foreign file is a notice
//! naming the setting and the path, never a 500.

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use super::report::{Cell, ReportPage, Table, respond};
use super::teams::ScopeParams;
use crate::evals::db::{self as evals_db, RunSummary};
use crate::http::errors::{AppError, PageError};
use crate::http::extract::Query;
use crate::state::AppState;
use crate::state::caller::PageCaller;

fn runs_table(runs: &[RunSummary], dashboard: &str, linked: &std::collections::HashMap<String, i64>) -> Table {
    let mut table = Table::new(
        "runs",
        "Evaluation runs",
        vec![
            "Run",
            "Cells",
            "Completed",
            "Passed",
            "Failed",
            "Mean success",
            "Cost",
            "Agent sessions",
            "Last activity",
        ],
    );
    for run in runs {
        let name = Cell::text(run.run_name.clone());
        let name = if dashboard.is_empty() {
            name
        } else {
            name.link(format!(
                "{}/run/{}",
                dashboard.trim_end_matches('/'),
                crate::model::percent_encode(&run.run_name)
            ))
        };
        table.rows.push(vec![
            name,
            Cell::count(run.total_cells),
            Cell::count(run.completed_cells),
            Cell::count(run.passed),
            Cell::count(run.failed),
            run.avg_success.map_or(Cell::text("—"), |rate| {
                Cell::shown(format!("{}%", crate::model::decimal::decimal(rate * 100.0, 1)), format!("{rate:.4}"))
            }),
            run.total_cost.map_or(Cell::text("—"), |usd| {
                Cell::shown(
                    format!(
                        "${}{}",
                        crate::model::decimal::decimal(usd, 2),
                        if run.costed_cells < run.completed_cells { " or more" } else { "" }
                    ),
                    format!("{usd:.4}"),
                )
            }),
            {
                let sessions = linked.get(&run.run_name).copied().unwrap_or(0);
                let count = Cell::count(sessions);
                if dashboard.is_empty() || sessions == 0 {
                    count
                } else {
                    count.link(format!(
                        "{}/run/{}#behaviour",
                        dashboard.trim_end_matches('/'),
                        crate::model::percent_encode(&run.run_name)
                    ))
                }
            },
            Cell::shown(
                crate::evals::shown::instant(&run.last_activity),
                run.last_activity.clone().unwrap_or_default(),
            ),
        ]);
    }
    table.note = "Cells are every cell of a run, with a result or only in the harness's live progress; completed cells have a result, of which passed and failed are exit classes pass and fail. Mean success counts a cell without a score as not succeeded; a cost marked “or more” is of the cells that recorded one. Agent sessions are the agents' sessions a harness linked to the run's cells (SIGHTLINE_EVAL_RUN), which eval engineers open from each cell of the eval dashboard.".into();
    table
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Query(params): Query<ScopeParams>,
) -> Result<Response, PageError> {
    let analytics = &state.config.analytics;
    let (path, dashboard) = (analytics.results_db.clone(), analytics.eval_dashboard_url.clone());
    let mut page = ReportPage::new(
        caller.role.as_str(),
        "Organisation: Benchmarks".into(),
        "/org/benchmarks".into(),
        None,
        super::org::org_tabs(),
    );
    if path.is_empty() {
        page.notice = Some(
            "No evaluation results are configured: set analytics.results_db (SIGHTLINE_ANALYTICS_RESULTS_DB) to a harness's results.db.".into(),
        );
        return respond(page, &params, "org-benchmarks");
    }
    // The server's file paths are the administrators' business: everyone else reads
    // what the file is, not where it lives.
    let is_admin = caller.role == crate::access::roles::OrgRole::Admin;
    let file = PathBuf::from(&path);
    let (path, cannot_read) = if is_admin {
        (path, None)
    } else {
        (
            "the organisation's evaluation results".to_string(),
            Some("The evaluation results cannot be read; an administrator sees why on this page."),
        )
    };
    let runs = tokio::task::spawn_blocking(move || evals_db::open(&file).and_then(|conn| evals_db::runs(&conn)))
        .await
        .map_err(|err| PageError(AppError::Internal(format!("benchmarks task failed: {err}"))))?;
    match runs {
        Ok(runs) => {
            page.intro = if dashboard.is_empty() {
                format!("The runs of {path}. Set analytics.eval_dashboard_url to link each into the eval dashboard.")
            } else {
                format!(
                    "The runs of {path}; each opens in the eval dashboard, which compares runs and shows every cell."
                )
            };
            let names: Vec<String> = runs.iter().map(|run| run.run_name.clone()).collect();
            let linked = state.read(move |conn| crate::sessions::eval_links::count_by_run(conn, &names)).await?;
            page.tables.push(runs_table(&runs, &dashboard, &linked));
        }
        Err(_) if cannot_read.is_some() => page.notice = cannot_read.map(str::to_string),
        Err(evals_db::EvalsError::Missing(_)) => {
            page.notice = Some(format!("analytics.results_db names {path}, which does not exist."));
        }
        Err(err) => page.notice = Some(format!("analytics.results_db: {err}")),
    }
    respond(page, &params, "org-benchmarks")
}

//! `/admin/projections`: the administrator records a predicted saving (a range in one
//! metric's unit over a period); the baseline is measured over the days before the
//! period when it is recorded, with the outcome guards and the price-table and scorer
//! versions in force; each projection is shown graded against what happened so far.
//! `/org/roi` shows the same grades ([`cells`]).
//!
//! Invariant: a projection is never edited (a new prediction is a new projection);
//! recording and removing are audited (`PROJECTION_RECORDED`, `PROJECTION_REMOVED`).

use std::sync::Arc;

use axum::extract::State;
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::{AdminPage, Field, Flash, Row, Section, done, required};
use crate::events::partitions::Day;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path, Query};
use crate::projections::Metric;
use crate::projections::measure::{Graded, graded};
use crate::projections::record::{self, Prediction};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

const PATH: &str = "/admin/projections";

/// The columns of a graded projection, here and on `/org/roi`.
pub const COLUMNS: [&str; 11] = [
    "Projection",
    "Unit",
    "Predicted saving",
    "Baseline",
    "Period",
    "Actual",
    "Saving",
    "Grade",
    "Friction (before → during)",
    "Reverted share (before → during)",
    "Recorded under",
];

fn figure(value: Option<f64>) -> String {
    value.map_or("—".into(), |v| format!("{v:.2}"))
}

fn share(value: Option<f64>) -> String {
    value.map_or("—".into(), |v| format!("{:.1}%", v * 100.0))
}

fn day(ms: i64) -> String {
    Day::of_ms(ms).to_string()
}

/// One graded projection as table cells.
pub fn cells(g: &Graded) -> Vec<Cell> {
    let p = &g.projection;
    let grade = if !g.complete && g.grade != crate::projections::Grade::Pending {
        format!("{} so far", g.grade.as_str())
    } else {
        g.grade.as_str().to_string()
    };
    let grade = if g.flags.is_empty() { grade } else { format!("{grade}; flagged: rising {}", g.flags.join(" and ")) };
    vec![
        Cell::text(p.title.clone()),
        Cell::text(p.metric.unit()),
        Cell::text(format!("{:.2} to {:.2}", p.saving_low, p.saving_high)),
        Cell::text(format!(
            "{} ({} to {})",
            figure(p.baseline.value),
            day(p.baseline_from_ms),
            day(p.baseline_to_ms - 1)
        )),
        Cell::text(format!("{} to {}", day(p.period_from_ms), day(p.period_to_ms - 1))),
        Cell::text(figure(g.actual.value)),
        Cell::text(figure(g.saving)),
        Cell::text(grade),
        Cell::text(format!("{} → {}", figure(p.baseline.friction), figure(g.actual.friction))),
        Cell::text(format!("{} → {}", share(p.baseline.revert_rate), share(g.actual.revert_rate))),
        Cell::text(format!("price tables: {}; scorers: {}", p.price_tables, p.scorers)),
    ]
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    let now_ms = state.clock.now_ms();
    let all = state.read(move |conn| graded(conn, now_ms)).await?;
    let mut section = Section::new("projections", "Projections, graded")
        .intro("Each saving is the baseline minus what happened (all three metrics are costs). A grade is provisional while its period runs; a gain is flagged when friction rose more than 10 % or the reverted share more than 2 points over the baseline's.")
        .columns(COLUMNS.to_vec())
        .empty("No projection recorded yet.");
    for g in &all {
        section.rows.push(
            Row::new(cells(g))
                .action(super::Form::new(format!("{PATH}/{}/remove", g.projection.id), "Remove").danger()),
        );
    }
    let today = day(now_ms);
    let metrics: Vec<&str> = Metric::ALL.iter().map(|m| m.as_str()).collect();
    let record = super::Form::new(PATH, "Record the projection")
        .field(Field::text("title", "What is predicted", ""))
        .field(Field::select("metric", "Metric", Metric::CostPerMergedPr.as_str(), &metrics))
        .field(Field::number("saving_low", "Saving at least (in the metric's unit)", ""))
        .field(Field::number("saving_high", "Saving at most", ""))
        .field(Field::text("period_from", "Period from (YYYY-MM-DD, UTC)", today.clone()))
        .field(Field::text("period_to", "Period to, inclusive", ""))
        .field(Field::number("baseline_days", "Baseline: days before the period", "30"));
    let recording = Section::new("record", "Record a projection")
        .intro("Units: cost_per_merged_pr is USD per merged pull request with agent sessions; spend_per_week is USD of interactive agent spend per week; cost_per_value_unit is USD per unit of Jira business value. The baseline is measured now, over the whole days before the period (ending yesterday at the latest), with its friction and reverted share, and the price tables and scorers in force are stamped on the projection.")
        .form(record);
    let page = AdminPage::new(PATH, "Projections", "Predicted savings, graded against what happened.", flash)
        .section(section)
        .section(recording);
    Ok(page.respond())
}

#[derive(Deserialize)]
pub struct RecordForm {
    title: Option<String>,
    metric: Option<String>,
    saving_low: Option<String>,
    saving_high: Option<String>,
    period_from: Option<String>,
    period_to: Option<String>,
    baseline_days: Option<String>,
}

fn number(field: &'static str, text: Option<String>) -> Result<f64, AppError> {
    let parse = |t: &str| t.parse::<f64>().ok().filter(|v| v.is_finite() && v.abs() < 1e12);
    required(field, text, parse, format!("{field} must be a number"))
}

fn date(field: &'static str, text: Option<String>) -> Result<Day, AppError> {
    required(field, text, Day::parse, format!("{field} must be a date as YYYY-MM-DD"))
}

/// `POST /admin/projections`.
pub async fn record(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Form(form): Form<RecordForm>,
) -> Result<Redirect, PageError> {
    let metric_names = Metric::ALL.map(Metric::as_str).join(", ");
    let days = |t: &str| t.parse::<i64>().ok();
    let prediction = Prediction {
        title: form.title.unwrap_or_default(),
        metric: required("metric", form.metric, Metric::parse, format!("metric must be one of {metric_names}"))?,
        saving_low: number("saving_low", form.saving_low)?,
        saving_high: number("saving_high", form.saving_high)?,
        period_from: date("period_from", form.period_from)?,
        period_to: date("period_to", form.period_to)?,
        baseline_days: required("baseline_days", form.baseline_days, days, "baseline_days must be 7 to 365")?,
    };
    let said = format!("the projection “{}” is recorded", prediction.title.trim());
    let (now_ms, price_tables, actor) = (state.clock.now_ms(), state.prices.provenance(), caller.user.id);
    let projection = state
        .read(move |conn| record::prepare(conn, prediction, price_tables, now_ms))
        .await?
        .map_err(|refusal| AppError::bad_request(refusal.field, refusal.message))?;
    state.write(move |tx| record::record(tx, &projection, &actor, now_ms)).await?;
    Ok(done(PATH, &said))
}

/// `POST /admin/projections/{id}/remove`.
pub async fn remove(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(id): Path<String>,
) -> Result<Redirect, PageError> {
    let (actor, now_ms) = (caller.user.id, state.clock.now_ms());
    if !state.write(move |tx| record::remove(tx, &id, &actor, now_ms)).await? {
        return Err(AppError::NotFound.into());
    }
    Ok(done(PATH, "the projection is removed"))
}

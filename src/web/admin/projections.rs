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

use super::{AdminPage, Field, Flash, Row, Section, change, done, required};
use crate::analytics::query::Period;
use crate::db;
use crate::events::partitions::Day;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path, Query};
use crate::projections::Metric;
use crate::projections::measure::{Graded, graded, measure};
use crate::projections::store::{self, Projection};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

const PATH: &str = "/admin/projections";
const DAY_MS: i64 = 86_400_000;

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
    let (pool, now_ms) = (state.readers.clone(), state.clock.now_ms());
    let all = db::blocking(move || graded(&*pool.get()?, now_ms)).await?;
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
    let title = form.title.unwrap_or_default().trim().to_string();
    if title.is_empty() || title.chars().count() > 200 {
        return Err(
            AppError::bad_request("title", "title must say what is predicted, in at most 200 characters").into()
        );
    }
    let metric_names = Metric::ALL.map(Metric::as_str).join(", ");
    let metric = required("metric", form.metric, Metric::parse, format!("metric must be one of {metric_names}"))?;
    let (low, high) = (number("saving_low", form.saving_low)?, number("saving_high", form.saving_high)?);
    if low > high {
        return Err(
            AppError::bad_request("saving_high", format!("saving_high ({high}) is below saving_low ({low})")).into()
        );
    }
    let (from, to) = (date("period_from", form.period_from)?, date("period_to", form.period_to)?);
    let (period_from_ms, period_to_ms) = (from.start_ms(), to.next().start_ms());
    if period_to_ms <= period_from_ms {
        return Err(AppError::bad_request("period_to", "period_to must be on or after period_from").into());
    }
    let days = |t: &str| t.parse::<i64>().ok().filter(|d| (7..=365).contains(d));
    let baseline_days = required("baseline_days", form.baseline_days, days, "baseline_days must be 7 to 365")?;
    let now_ms = state.clock.now_ms();
    // Whole days only: the baseline ends where the period starts, and yesterday at the latest.
    let baseline_to_ms = period_from_ms.min(Day::of_ms(now_ms).start_ms());
    let baseline = Period { from_ms: baseline_to_ms - baseline_days * DAY_MS, to_ms: baseline_to_ms };
    let price_tables = state
        .prices
        .tables()
        .map(|t| {
            format!("{} {} {}", t.agent().as_str(), t.revision(), t.etag().trim_matches('"').get(..8).unwrap_or(""))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let scorers = crate::scoring::registry::ALL
        .iter()
        .map(|s| format!("{}@{}", s.name, s.version))
        .collect::<Vec<_>>()
        .join(", ");
    // Measured on a reader, not inside the writer's transaction: the baseline is whole
    // past days, which no write changes meanwhile.
    let pool = state.readers.clone();
    let measured = db::blocking(move || measure(&*pool.get()?, metric, baseline)).await?;
    let actor = caller.user.id.clone();
    let id = uuid::Uuid::now_v7().to_string();
    let said = format!("the projection “{title}” is recorded");
    change(&state, move |tx| {
        let projection = Projection {
            id: id.clone(),
            title,
            metric,
            saving_low: low,
            saving_high: high,
            baseline_from_ms: baseline.from_ms,
            baseline_to_ms: baseline.to_ms,
            baseline: measured,
            period_from_ms,
            period_to_ms,
            price_tables,
            scorers,
            recorded_at_ms: now_ms,
        };
        store::insert(tx, &projection)?;
        let entry = crate::audit::Entry {
            actor_id: Some(&actor),
            action: crate::audit::Action::ProjectionRecorded,
            subject_user_id: None,
            target: Some(&id),
            detail: serde_json::json!({
                "metric": metric.as_str(), "saving_low": low, "saving_high": high,
                "baseline_value": measured.value, "period_from_ms": period_from_ms, "period_to_ms": period_to_ms,
            }),
        };
        crate::audit::record(tx, &entry, now_ms)?;
        Ok(Ok(()))
    })
    .await?;
    Ok(done(PATH, &said))
}

/// `POST /admin/projections/{id}/remove`.
pub async fn remove(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(id): Path<String>,
) -> Result<Redirect, PageError> {
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    change(&state, move |tx| {
        if !store::remove(tx, &id)? {
            return Ok(Err(AppError::NotFound));
        }
        let entry = crate::audit::Entry {
            actor_id: Some(&actor),
            action: crate::audit::Action::ProjectionRemoved,
            subject_user_id: None,
            target: Some(&id),
            detail: serde_json::json!({}),
        };
        crate::audit::record(tx, &entry, now_ms)?;
        Ok(Ok(()))
    })
    .await?;
    Ok(done(PATH, "the projection is removed"))
}

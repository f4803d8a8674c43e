//! `/admin/jobs` as a page: every job with the schedule it runs on, whether it is on,
//! its last and next run and any standing breach; a tier-1 job's schedule form
//! (`POST /admin/jobs/{name}/schedule`), a run-now button for every job the server runs,
//! and `/admin/jobs/{name}/runs`, a job's history. The same paths answer JSON to a
//! client that does not ask for HTML (`web::jobs`).
//!
//! Invariants: a schedule change is validated before anything is stored and commits with
//! its `JOB_CONFIGURED` audit row; only tier-1 jobs have the form.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::{AdminPage, Field, Flash, Row, Section, admin_only, change, done, when};
use crate::audit::{self, Action, Entry};
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path};
use crate::jobs::config::{self, ConfigError};
use crate::jobs::registry::{self, Availability, Tier};
use crate::jobs::runs;
use crate::jobs::schedule::Schedule;
use crate::jobs::status;
use crate::state::AppState;
use crate::state::caller::{Administrator, Caller};
use crate::web::report::Cell;

const PATH: &str = "/admin/jobs";

pub async fn page(state: &AppState, caller: &Caller, flash: Flash) -> Result<Response, PageError> {
    admin_only(caller)?;
    let (now_ms, config) = (state.clock.now_ms(), state.config.clone());
    let statuses = state.read(move |conn| status::all(conn, &config, now_ms)).await?;
    let mut jobs = Section::new("jobs", "Jobs").columns(vec![
        "Job",
        "What it does",
        "Schedule",
        "On",
        "Last run",
        "Outcome",
        "Next run",
        "Standing breach",
    ]);
    for status in statuses {
        let job = status.job;
        let cron = match &status.effective.schedule {
            Schedule::Cron { pattern, .. } => pattern.clone(),
            _ => String::new(),
        };
        let mut row = Row::new(vec![
            Cell::text(job.name).link(format!("{PATH}/{}/runs", job.name)),
            Cell::text(job.what),
            Cell::text(format!(
                "{}{}",
                status.effective.schedule.describe(),
                if status.effective.configured { " (set here)" } else { "" }
            )),
            Cell::text(if status.effective.enabled { "on" } else { "off" }),
            when(status.last.as_ref().map(|run| run.started_at_ms)),
            Cell::text(status.last.as_ref().map_or("never run", |run| run.outcome.as_str())),
            when(status.next_run_ms),
            Cell::text(status.breach.map_or("—".to_string(), |b| format!("{}: {}", b.severity, b.reason))),
        ]);
        if job.tier == Tier::Configurable {
            row = row.action(
                super::Form::new(format!("{PATH}/{}/schedule", job.name), "Save schedule")
                    .field(Field::text("cron", "Cron (UTC)", cron))
                    .field(Field::checkbox("enabled", "on", status.effective.enabled))
                    .field(Field::hidden("form", "schedule")),
            );
        }
        match (job.tier, job.availability) {
            (Tier::OneShot, _) => {}
            (_, Availability::Unavailable(_)) => {}
            _ => row = row.action(super::Form::new(format!("{PATH}/{}/run", job.name), "Run now")),
        }
        jobs.rows.push(row);
    }
    jobs.intro = "Tier-1 jobs (job_config) run on a schedule you set here; fixed jobs run on theirs; one-shot jobs run only on the server host (`sightline jobs run <job>`). A job this build cannot run says why in its history.".into();
    let page = AdminPage::new(PATH, "Jobs", "Every scheduled and triggered job of this server.", flash).section(jobs);
    Ok(page.respond())
}

pub async fn runs_page(state: &AppState, caller: &Caller, name: &str) -> Result<Response, PageError> {
    admin_only(caller)?;
    let job = registry::find(name).ok_or(PageError(AppError::NotFound))?;
    let history = state.read(move |conn| runs::history(conn, Some(job.name), 50)).await?;
    let mut section = Section::new("runs", format!("The latest runs of {}", job.name))
        .columns(vec!["Started", "Ended", "Trigger", "Outcome", "Rows", "What it did"])
        .empty("It has not run yet.");
    section.rows = history
        .into_iter()
        .map(|run| {
            Row::new(vec![
                when(Some(run.started_at_ms)),
                when(run.ended_at_ms),
                Cell::text(run.trigger),
                Cell::text(run.outcome.as_str()),
                run.rows_touched.map_or(Cell::text("—"), Cell::count),
                Cell::text(run.error.or(run.summary).unwrap_or_default()),
            ])
        })
        .collect();
    Ok(AdminPage::new(PATH, format!("Job {}", job.name), job.what, Flash::default()).section(section).respond())
}

#[derive(Deserialize)]
pub struct ScheduleForm {
    form: Option<String>,
    cron: Option<String>,
    enabled: Option<String>,
}

/// `POST /admin/jobs/{name}/schedule`: a tier-1 job's cron pattern and on/off switch.
pub async fn schedule(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(name): Path<String>,
    Form(form): Form<ScheduleForm>,
) -> Result<Redirect, PageError> {
    let job = registry::find(&name).ok_or(PageError(AppError::NotFound))?;
    if form.form.as_deref() != Some("schedule") {
        return Err(AppError::bad_request("form", "this form sets a job's schedule; send it from /admin/jobs").into());
    }
    let cron = form.cron.map(|c| c.trim().to_string()).filter(|c| !c.is_empty());
    let enabled = form.enabled.is_some();
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let effective = change(&state, move |tx| {
        let effective = match config::set(tx, job, cron.as_deref(), Some(enabled), now_ms) {
            Ok(effective) => effective,
            Err(ConfigError::Db(db)) => return Err(db),
            Err(ConfigError::BadCron(why)) => return Ok(Err(AppError::bad_request("cron", why))),
            Err(ConfigError::NotConfigurable(name)) => {
                let why = format!("{name} runs on a fixed schedule that cannot be changed");
                return Ok(Err(AppError::bad_request("job", why)));
            }
        };
        let detail = serde_json::json!({ "schedule": effective.schedule.describe(), "enabled": effective.enabled });
        let entry = Entry {
            actor_id: Some(&actor),
            action: Action::JobConfigured,
            subject_user_id: None,
            target: Some(job.name),
            detail,
        };
        audit::record(tx, &entry, now_ms)?;
        Ok(Ok(effective))
    })
    .await?;
    let switch = if effective.enabled { "on" } else { "off" };
    Ok(done(PATH, &format!("{} now runs {} and is {switch}", job.name, effective.schedule.describe())))
}

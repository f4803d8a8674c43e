//! The jobs over HTTP, for administrators: `GET /admin/jobs` (every job as it stands:
//! the schedule it runs on now, last and next run, standing breach), `GET /admin/jobs/{name}/runs` (its latest runs) and
//! `POST /admin/jobs/{name}/run` (start it now: 202 with the run id). A browser asking
//! for HTML gets the console's pages instead (`web::admin::jobs`).
//!
//! Invariants: only an administrator gets past the door (403 otherwise, 401 without
//! credentials); a one-shot job is never run over HTTP (403, naming the command that
//! runs it); a job this build cannot run is refused (501) and the refusal recorded; a
//! job with a run going answers 409 naming that run.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::admin::{self, Flash};
use crate::audit::{self, Action, Entry};
use crate::http::errors::PageError;
use crate::http::extract::{Json, Path, Query};

use crate::http::errors::AppError;
use crate::jobs::registry::{self, Availability, JobSpec, Tier};
use crate::jobs::runs::{self, Started, Trigger};
use crate::jobs::scheduler;
use crate::jobs::status::{self, JobStatus};
use crate::state::AppState;
use crate::state::caller::Caller;

fn job(name: &str) -> Result<&'static JobSpec, AppError> {
    registry::find(name).ok_or(AppError::NotFound)
}

fn describe(status: JobStatus) -> Value {
    let job = status.job;
    let (available, unavailable_reason) = match job.availability {
        Availability::Available => (true, None),
        Availability::Unavailable(why) => (false, Some(why)),
    };
    json!({
        "name": job.name,
        "tier": job.tier.as_str(),
        "schedule": status.effective.schedule.describe(),
        "schedule_set_by_operator": status.effective.configured,
        "enabled": status.effective.enabled,
        "target_secs": job.target.map(|t| t.as_secs()),
        "available": available,
        "unavailable_reason": unavailable_reason,
        "last_run": status.last,
        "next_run_ms": status.next_run_ms,
        "alert": status.breach.map(|breach| json!({
            "severity": breach.severity,
            "reason": breach.reason,
            "run_id": breach.run_id,
            "at_ms": breach.at_ms,
        })),
    })
}

/// `GET /admin/jobs`: the console page for a browser, the jobs as JSON otherwise.
pub async fn list(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    caller: Result<Caller, AppError>,
    Query(flash): Query<Flash>,
) -> Response {
    if admin::wants_html(&headers) {
        return match page_caller(caller, "/admin/jobs") {
            Ok(caller) => admin::jobs::page(&state, &caller, flash).await.into_response(),
            Err(response) => *response,
        };
    }
    let result = async {
        let caller = caller?;
        caller.require_admin()?;
        let (now_ms, config) = (state.clock.now_ms(), state.config.clone());
        let statuses = state.read(move |conn| status::all(conn, &config, now_ms)).await?;
        Ok::<_, AppError>(Json(json!({ "jobs": statuses.into_iter().map(describe).collect::<Vec<_>>() })))
    };
    result.await.into_response()
}

/// `GET /admin/jobs/{name}/runs`: the job's history, as a page or as JSON.
pub async fn history(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    caller: Result<Caller, AppError>,
    Path(name): Path<String>,
) -> Response {
    if admin::wants_html(&headers) {
        return match page_caller(caller, &format!("/admin/jobs/{name}/runs")) {
            Ok(caller) => admin::jobs::runs_page(&state, &caller, &name).await.into_response(),
            Err(response) => *response,
        };
    }
    let result = async {
        let caller = caller?;
        caller.require_admin()?;
        let job = job(&name)?;
        let runs = state.read(move |conn| runs::history(conn, Some(job.name), 50)).await?;
        Ok::<_, AppError>(Json(json!({ "job": job.name, "runs": runs })))
    };
    result.await.into_response()
}

/// The caller of a page, or the answer a browser gets without one (the login page).
fn page_caller(caller: Result<Caller, AppError>, path: &str) -> Result<Caller, Box<Response>> {
    match caller {
        Ok(caller) => Ok(caller),
        Err(AppError::Unauthorized) => Err(Box::new(crate::state::caller::login_redirect(path))),
        Err(other) => Err(Box::new(PageError(other).into_response())),
    }
}

/// `POST /admin/jobs/{name}/run`: 202 with the run id, or back to the console page
/// (303) when a browser's form asked. An administrator's request for a known job is
/// audited (`JOB_RUN_REQUESTED`) before anything starts, so no run goes unrecorded.
pub async fn trigger(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    caller: Caller,
    Path(name): Path<String>,
) -> Response {
    let from_page = admin::wants_html(&headers);
    let via = if from_page { "console" } else { "api" };
    match (start(&state, &caller, &name, via).await, from_page) {
        (Ok(run_id), false) => {
            (StatusCode::ACCEPTED, Json(json!({ "job": name, "run_id": run_id, "outcome": "running" }))).into_response()
        }
        (Ok(run_id), true) => admin::done("/admin/jobs", &format!("{name} started (run {run_id})")).into_response(),
        (Err(err), false) => err.into_response(),
        (Err(err), true) => PageError(err).into_response(),
    }
}

/// Starts `name` for an administrator; the request is audited (`JOB_RUN_REQUESTED`,
/// `via` the console or the API) before anything else is decided.
async fn start(state: &Arc<AppState>, caller: &Caller, name: &str, via: &'static str) -> Result<String, AppError> {
    caller.require_admin()?;
    let job = job(name)?;
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    state
        .write(move |tx| {
            let entry = Entry {
                actor_id: Some(&actor),
                action: Action::JobRunRequested,
                subject_user_id: None,
                target: Some(job.name),
                detail: json!({ "via": via }),
            };
            audit::record(tx, &entry, now_ms)
        })
        .await?;
    if job.tier == Tier::OneShot {
        let message = format!("{name} is a one-shot job: run it on the server host with `sightline jobs run {name}`");
        return Err(AppError::Forbidden(message));
    }
    if let Some(why) = refusal(job) {
        let now_ms = state.clock.now_ms();
        state.write(move |tx| runs::record_refused(tx, job.name, Trigger::Http, why, now_ms)).await?;
        state.metrics.job_refused(job.name);
        return Err(AppError::NotImplemented(format!("{name} cannot run in this build: {why}")));
    }
    match scheduler::start_run(state, job, Trigger::Http).await? {
        Started::Started(run_id) => {
            let (state, id) = (state.clone(), run_id.clone());
            tokio::spawn(async move { scheduler::finish_run(&state, job, id).await });
            Ok(run_id)
        }
        refused => Err(AppError::Conflict(refused.refusal(job.name).unwrap_or_default())),
    }
}

/// Why the server cannot run `job` now, if it cannot.
fn refusal(job: &JobSpec) -> Option<&'static str> {
    match job.availability {
        Availability::Unavailable(why) => Some(why),
        Availability::Available if !scheduler::runs_in_the_server(job) => {
            Some("the server does not run it yet; run it on the server host with `sightline jobs run`")
        }
        Availability::Available => None,
    }
}

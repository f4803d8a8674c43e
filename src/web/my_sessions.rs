//! `/me/sessions`: the caller's own sessions, filtered (agent, model, repository, branch,
//! dates, run kind, outcome, shape), sorted (friction among the keys), paged, and the whole filtered list as CSV
//! (`?format=csv`). CI and evaluation runs are here too, under their run kind, so a
//! developer sees "my CI runs" apart (`?run_kind=CI`, and `/me/runs`, their summary).
//!
//! Invariants: the list is the caller's own (`sessions::listing` puts the owner in every
//! query); a parameter that is not understood is a 400 naming it.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::login::render;
use crate::http::errors::{AppError, PageError};
use crate::http::query::StrictPageQuery;
use crate::sessions::listing::{self, Filter, OUTCOMES, RUN_KINDS, SHAPES, SORTS};
use crate::state::AppState;
use crate::state::caller::PageCaller;
use crate::web::session_name::{self, Named};
use crate::web::shown::filters;

const PAGE_ROWS: usize = 50;
/// Most rows one CSV holds.
const CSV_ROWS: usize = 100_000;

#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    #[serde(default)]
    agent: String,
    #[serde(default)]
    model: String,
    #[serde(default)]
    repo: String,
    #[serde(default)]
    branch: String,
    /// YYYY-MM-DD (UTC), inclusive.
    #[serde(default)]
    from: String,
    /// YYYY-MM-DD (UTC), inclusive.
    #[serde(default)]
    to: String,
    #[serde(default)]
    run_kind: String,
    #[serde(default)]
    outcome: String,
    #[serde(default)]
    shape: String,
    #[serde(default)]
    sort: String,
    #[serde(default)]
    order: String,
    #[serde(default)]
    page: String,
    #[serde(default)]
    format: String,
}

#[derive(Template)]
#[template(path = "web/me_sessions.html")]
struct SessionsPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    rows: Vec<Named>,
    /// Now, for "3 h ago".
    now_ms: i64,
    total: i64,
    params: ListParams,
    run_kinds: [&'static str; 3],
    outcomes: [&'static str; 3],
    shapes: [&'static str; 6],
    sorts: Vec<(&'static str, String)>,
    page: usize,
    pages: usize,
    previous: Option<String>,
    next: Option<String>,
    csv: String,
}

fn bad(field: &str, message: String) -> PageError {
    PageError(AppError::bad_request(field, message))
}

/// A `YYYY-MM-DD` date as the start of that UTC day; `end` gives the start of the next.
fn day_ms(field: &str, text: &str, end: bool) -> Result<Option<i64>, PageError> {
    if text.is_empty() {
        return Ok(None);
    }
    let day = crate::events::partitions::Day::parse(text)
        .ok_or_else(|| bad(field, format!("{field} must be a date YYYY-MM-DD, not {text:?}")))?;
    Ok(Some(if end { day.next().start_ms() } else { day.start_ms() }))
}

/// The query string of `params` with `changes` applied (for sort and page links).
fn link(params: &ListParams, changes: &[(&str, String)]) -> String {
    let mut pairs: Vec<(&str, String)> = [
        ("agent", &params.agent),
        ("model", &params.model),
        ("repo", &params.repo),
        ("branch", &params.branch),
        ("from", &params.from),
        ("to", &params.to),
        ("run_kind", &params.run_kind),
        ("outcome", &params.outcome),
        ("shape", &params.shape),
        ("sort", &params.sort),
        ("order", &params.order),
        ("page", &params.page),
    ]
    .into_iter()
    .map(|(key, value)| (key, value.clone()))
    .collect();
    for (key, value) in changes {
        match pairs.iter_mut().find(|(k, _)| k == key) {
            Some(pair) => pair.1 = value.clone(),
            None => pairs.push((key, value.clone())),
        }
    }
    let query: Vec<String> = pairs
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(key, value)| format!("{key}={}", crate::model::percent_encode(&value)))
        .collect();
    format!("/me/sessions?{}", query.join("&"))
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    StrictPageQuery(params): StrictPageQuery<ListParams>,
) -> Result<Response, PageError> {
    let filter = Filter {
        agent: params.agent.trim().to_string(),
        model: params.model.trim().to_string(),
        repo: params.repo.trim().to_string(),
        branch: params.branch.trim().to_string(),
        from_ms: day_ms("from", params.from.trim(), false)?,
        to_ms: day_ms("to", params.to.trim(), true)?,
        run_kind: params.run_kind.trim().to_string(),
        outcome: params.outcome.trim().to_string(),
        shape: params.shape.trim().to_string(),
    };
    let sort = if params.sort.is_empty() { "started".to_string() } else { params.sort.clone() };
    let descending = match params.order.as_str() {
        "" | "desc" => true,
        "asc" => false,
        other => return Err(bad("order", format!("order must be asc or desc, not {other:?}"))),
    };
    let csv = match params.format.as_str() {
        "" | "html" => false,
        "csv" => true,
        other => return Err(bad("format", format!("format must be html or csv, not {other:?}"))),
    };
    let page: usize = match params.page.as_str() {
        "" => 1,
        text => text
            .parse()
            .ok()
            .filter(|page| *page >= 1)
            .ok_or_else(|| bad("page", format!("page must be a number from 1, not {text:?}")))?,
    };
    let (limit, offset) = if csv { (CSV_ROWS, 0) } else { (PAGE_ROWS, (page - 1) * PAGE_ROWS) };
    let user_id = caller.user.id.clone();
    let sort_key = sort.clone();
    let (listed, titles) = state
        .read(move |conn| {
            let listed = listing::own_sessions(conn, &user_id, &filter, &sort_key, descending, limit, offset)?;
            // The caller's own sessions: their transcripts' titles name them.
            let titles = match &listed {
                Ok((rows, _)) => {
                    let ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
                    crate::transcripts::store::titles(conn, &user_id, &ids)?
                }
                Err(_) => Default::default(),
            };
            Ok((listed, titles))
        })
        .await?;
    let (rows, total) = listed.map_err(|refused| bad(refused.field, refused.message))?;
    let rows = session_name::titled(rows, &titles);
    if csv {
        return Ok(csv_response(&rows).into_response());
    }
    let pages = (total as usize).div_ceil(PAGE_ROWS).max(1);
    let sorts = SORTS
        .iter()
        .map(|(key, _)| {
            let flip = if *key == sort.as_str() && descending { "asc" } else { "desc" };
            (*key, link(&params, &[("sort", key.to_string()), ("order", flip.to_string()), ("page", String::new())]))
        })
        .collect();
    Ok(render(&SessionsPage {
        nav_role: caller.role.as_str(),
        rows,
        now_ms: state.clock.now_ms(),
        total,
        run_kinds: RUN_KINDS,
        outcomes: OUTCOMES,
        shapes: SHAPES,
        sorts,
        page,
        pages,
        previous: (page > 1).then(|| link(&params, &[("page", (page - 1).to_string())])),
        next: (page < pages).then(|| link(&params, &[("page", (page + 1).to_string())])),
        csv: link(&params, &[("format", "csv".into()), ("page", String::new())]),
        params,
    }))
}

fn csv_response(rows: &[Named]) -> Response {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let _ = writer.write_record(crate::model::csv_cells::record([
        "id",
        "name",
        "agent",
        "session",
        "run_kind",
        "started",
        "duration_ms",
        "events",
        "prompts",
        "tool_calls",
        "tool_errors",
        "cost_usd",
        "repo",
        "branch",
        "outcome",
    ]));
    for Named { row, name, .. } in rows {
        let _ = writer.write_record(crate::model::csv_cells::record([
            row.id.clone(),
            name.clone(),
            row.agent_type.clone(),
            row.agent_session_id.clone(),
            row.run_kind.clone(),
            row.started.clone(),
            row.duration_ms.to_string(),
            row.events.to_string(),
            row.prompts.to_string(),
            row.tool_calls.to_string(),
            row.tool_errors.to_string(),
            format!("{:.6}", crate::model::nusd_to_usd(row.cost_nusd)),
            row.repo.clone().unwrap_or_default(),
            row.branch.clone().unwrap_or_default(),
            row.outcome.clone(),
        ]));
    }
    super::report::csv_download("my-sessions.csv", writer.into_inner().unwrap_or_default())
}

#[derive(Template)]
#[template(path = "web/me_runs.html")]
struct RunsPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    kinds: Vec<listing::MachineRuns>,
}

/// `/me/runs`: my CI and evaluation runs of the last 30 days, apart from my own figures
/// (which never count them), each kind linked to its list.
pub async fn machine_runs(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
) -> Result<Response, PageError> {
    let from_ms = crate::analytics::query::Period::last_days(state.clock.now_ms(), 30).from_ms;
    let user_id = caller.user.id.clone();
    let kinds = state.read(move |conn| listing::machine_runs(conn, &user_id, from_ms)).await?;
    Ok(render(&RunsPage { nav_role: caller.role.as_str(), kinds }))
}

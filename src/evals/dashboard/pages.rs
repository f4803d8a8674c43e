//! Dashboard HTML pages (docs/evals-dashboard.md): run overview, run detail, cell detail, compare,
//! login and API docs. Handlers gather view data with one blocking query each and
//! render an askama template; askama escapes every value.

use std::collections::HashMap;
use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use super::params::{self, ResultsQuery, encode};
use super::{DashState, agents, auth, cache, diff};
use crate::evals::behaviour::Behaviour;
use crate::evals::compare::{self, Comparison, Selection};
use crate::evals::db::{self, EvalsError, Phase, Reconciliation, ResultRecord, RunSummary, StateCounts};
use crate::evals::records;
use crate::evals::text::{clean_output, one_line, strip_control};
use crate::http::errors::AppError;
use crate::http::extract::{Form, Path, Query};

/// A page failure: 404 for an unknown run or cell, 422 for a bad parameter.
/// A page's failure: the platform's error family, shown in the dashboard's own page.
pub struct PageError(pub AppError);

impl From<EvalsError> for PageError {
    fn from(err: EvalsError) -> Self {
        PageError(err.into())
    }
}

impl From<AppError> for PageError {
    fn from(err: AppError) -> Self {
        PageError(err)
    }
}

#[derive(Template)]
#[template(path = "dashboard/error.html")]
struct ErrorPage<'a> {
    message: &'a str,
    auth: bool,
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        self.0.page(|_, message| ErrorPage { message, auth: false }.render().unwrap_or_else(|_| message.to_string()))
    }
}

type PageResult = Result<Response, PageError>;

fn html(template: impl IntoResponse) -> PageResult {
    Ok(template.into_response())
}

#[derive(Template, WebTemplate)]
#[template(path = "dashboard/overview.html")]
struct Overview {
    runs: Vec<RunSummary>,
    auth: bool,
}

pub async fn overview(State(state): State<Arc<DashState>>) -> PageResult {
    let runs = state.query(db::runs).await?;
    html(Overview { runs, auth: state.auth.is_some() })
}

/// A table row of the run page, with its phases when it has any.
pub struct CellRow {
    pub record: ResultRecord,
    pub href: String,
    pub error: String,
    pub phases: Vec<Phase>,
}

pub struct SortLink {
    pub label: &'static str,
    pub href: String,
    pub arrow: &'static str,
    pub numeric: bool,
}

#[derive(Template, WebTemplate)]
#[template(path = "dashboard/run.html")]
struct RunPage {
    auth: bool,
    run_path: String,
    counts: StateCounts,
    aggregates: Arc<cache::RunAggregates>,
    query: ResultsQuery,
    min_success: String,
    rows: Vec<CellRow>,
    sort_links: Vec<SortLink>,
    total: i64,
    total_pages: i64,
    prev_href: Option<String>,
    next_href: Option<String>,
    export_query: String,
    /// The agents' behaviour per harness and model, from the platform: `None` without one.
    behaviour: Option<Result<Vec<crate::evals::behaviour::Behaviour>, String>>,
}

const SORTABLE: &[(&str, &str, bool)] = &[
    ("Harness", "harness", false),
    ("Model", "model", false),
    ("Task", "task_id", false),
    ("Track", "track", false),
    ("Exit", "exit_class", false),
    ("Success", "success", true),
    ("Tokens", "tokens", true),
    ("Cost", "total_cost", true),
    ("Time (s)", "latency_ms", true),
    ("Error class", "error_class", false),
];

pub async fn run_detail(
    State(state): State<Arc<DashState>>,
    Path(run): Path<String>,
    Query(raw): Query<HashMap<String, String>>,
) -> PageResult {
    let query = params::results_query(&raw)?;
    let (q, name, shared) = (query.clone(), run.clone(), state.clone());
    let (aggregates, counts, total, rows) = state.query(move |conn| run_page_data(conn, &shared, &name, &q)).await?;
    let run_path = format!("/run/{}", encode(&run));
    let total_pages = ((total + i64::from(query.per_page) - 1) / i64::from(query.per_page)).max(1);
    let page_href = |page: u32| format!("{run_path}?{}", params::link_query(&query, None, Some(page)));
    let prev_href = (query.page > 1).then(|| page_href(query.page - 1));
    let next_href = (i64::from(query.page) < total_pages).then(|| page_href(query.page + 1));
    let wanted = run.clone();
    let behaviour = state
        .ask_platform(move |platform| {
            platform.run(&wanted).map(|sessions| crate::evals::behaviour::by_harness_and_model(&sessions))
        })
        .await;
    html(RunPage {
        behaviour,
        auth: state.auth.is_some(),
        sort_links: sort_links(&query, &run_path),
        export_query: params::link_query(&query, None, Some(1)),
        min_success: query.filters.min_success.map(|v| v.to_string()).unwrap_or_default(),
        run_path,
        counts,
        aggregates,
        query,
        rows,
        total,
        total_pages,
        prev_href,
        next_href,
    })
}

type RunPageData = (Arc<cache::RunAggregates>, StateCounts, i64, Vec<CellRow>);

/// The run's aggregates, cell states, matching total and one page of cells.
fn run_page_data(
    conn: &rusqlite::Connection,
    state: &DashState,
    name: &str,
    q: &ResultsQuery,
) -> Result<RunPageData, EvalsError> {
    db::require_run(conn, name)?;
    let aggregates = cache::run_aggregates(&state.cache, conn, name)?;
    let counts = db::state_counts(conn, name)?;
    let total = cache::total(&state.cache, conn, name, &q.filters)?;
    let records = db::page_rows(conn, name, &q.filters, q.sort, q.page, q.per_page)?;
    let keys: Vec<(&str, Option<&serde_json::Value>)> =
        records.iter().map(|r| (r.cell_id.as_str(), r.harness_metadata.as_ref())).collect();
    let mut phases = db::phases_for(conn, name, &keys)?;
    let rows = records
        .into_iter()
        .map(|record| CellRow {
            href: format!("/run/{}/cell/{}", encode(name), encode(&record.cell_id)),
            error: one_line(&strip_control(record.error_message.as_deref().unwrap_or(""))),
            phases: phases.remove(&record.cell_id).unwrap_or_default(),
            record,
        })
        .collect::<Vec<_>>();
    Ok((aggregates, counts, total, rows))
}

/// The column headers' links: a click sorts by the column, a second click reverses it.
fn sort_links(query: &ResultsQuery, run_path: &str) -> Vec<SortLink> {
    SORTABLE
        .iter()
        .map(|(label, column, numeric)| {
            let active = query.sort.column == *column;
            let descending = if active { !query.sort.descending } else { *numeric };
            SortLink {
                label,
                href: format!("{run_path}?{}", params::link_query(query, Some((column, descending)), Some(1))),
                arrow: match (active, query.sort.descending) {
                    (false, _) => "",
                    (true, true) => " ▼",
                    (true, false) => " ▲",
                },
                numeric: *numeric,
            }
        })
        .collect()
}

/// Harness logs keep their last 50 KB on the cell page.
pub const OUTPUT_TAIL_BYTES: usize = 50 * 1024;

pub struct Output {
    pub text: String,
    pub cut: bool,
    pub bytes: usize,
}

fn output(text: Option<&str>) -> Option<Output> {
    let text = text.filter(|t| !t.is_empty())?;
    let (clean, cut) = clean_output(text, OUTPUT_TAIL_BYTES);
    Some(Output { text: clean, cut, bytes: text.len() })
}

/// The review model a harness recorded, and its metadata as shown (without the
/// phases, which the page shows as a table).
fn metadata_parts(metadata: Option<&serde_json::Value>) -> (Option<String>, String) {
    let review_model = metadata.and_then(|m| m.get("review_model")).and_then(|v| v.as_str()).map(str::to_string);
    let shown = metadata
        .map(|m| {
            let mut m = m.clone();
            if let Some(object) = m.as_object_mut() {
                object.remove("phases");
            }
            serde_json::to_string_pretty(&m).unwrap_or_default()
        })
        .unwrap_or_default();
    (review_model, shown)
}

#[derive(Template, WebTemplate)]
#[template(path = "dashboard/cell.html")]
struct CellPage {
    auth: bool,
    run_name: String,
    run_path: String,
    record: ResultRecord,
    error_message: String,
    diff_files: Vec<diff::FileDiff>,
    test_output: Option<Output>,
    stderr: Option<Output>,
    stdout: Option<Output>,
    phases: Vec<Phase>,
    review_model: Option<String>,
    reconciliation: Vec<Reconciliation>,
    metadata: String,
    /// The agent sessions the platform linked to the cell: `None` without a platform.
    agents: Option<Result<agents::AgentsView, String>>,
}

pub async fn cell(State(state): State<Arc<DashState>>, Path((run, cell_id)): Path<(String, String)>) -> PageResult {
    let name = run.clone();
    let found = state.query(move |conn| crate::evals::detail::cell_detail(conn, &name, &cell_id)).await?;
    let Some((mut record, phases, reconciliation)) = found else {
        return Err(PageError(AppError::Unknown("There is no such cell in this run.".into())));
    };
    // Moved out, not copied: the page renders the logs from here, never from the record.
    let bulk = record.bulk.take().unwrap_or_default();
    let (review_model, metadata) = metadata_parts(record.harness_metadata.as_ref());
    let (run_name, cell_id) = (run.clone(), record.cell_id.clone());
    let (harness_cost, for_phases) = (record.total_cost, phases.clone());
    let agents = state
        .ask_platform(move |platform| {
            let sessions = platform.cell(&run_name, &cell_id)?;
            Ok(agents::view(&sessions, platform, harness_cost, &for_phases))
        })
        .await;
    html(CellPage {
        agents,
        auth: state.auth.is_some(),
        run_path: format!("/run/{}", encode(&run)),
        run_name: run,
        error_message: strip_control(record.error_message.as_deref().unwrap_or("")),
        diff_files: bulk.diff.as_deref().map(diff::render).unwrap_or_default(),
        test_output: output(bulk.test_output.as_deref()),
        stderr: output(bulk.harness_stderr.as_deref()),
        stdout: output(bulk.harness_stdout.as_deref()),
        phases,
        review_model,
        reconciliation,
        metadata,
        record,
    })
}

#[derive(Template, WebTemplate)]
#[template(path = "dashboard/compare.html")]
struct ComparePage {
    auth: bool,
    runs: Vec<String>,
    selection: Option<Selection>,
    result: Option<Comparison>,
    /// Why there is no comparison for the selection (a name that matches nothing, no
    /// shared task), shown above the form.
    refusal: Option<String>,
    /// The harnesses and models of A's and B's runs (the first run before any choice).
    a_harnesses: Vec<String>,
    a_models: Vec<String>,
    b_harnesses: Vec<String>,
    b_models: Vec<String>,
    /// A's and B's agents' behaviour, from the platform: `None` without one or a selection.
    behaviour: Option<Result<(Behaviour, Behaviour), String>>,
}

pub async fn compare(State(state): State<Arc<DashState>>, Query(raw): Query<HashMap<String, String>>) -> PageResult {
    let selection = if raw.get("a").is_some_and(|a| !a.is_empty()) { Some(Selection::from_query(&raw)?) } else { None };
    let wanted = selection.clone();
    let (runs, result, names) = state
        .query(move |conn| {
            let runs: Vec<String> = db::runs(conn)?.into_iter().map(|r| r.run_name).collect();
            let first = runs.first().cloned().unwrap_or_default();
            let (a_run, b_run) = match &wanted {
                Some(s) => (s.a.run.clone(), s.b.run.clone()),
                None => (first.clone(), first),
            };
            let names_of = |run: &str| -> Result<(Vec<String>, Vec<String>), EvalsError> {
                if !runs.iter().any(|r| r == run) {
                    return Ok(Default::default());
                }
                Ok((records::distinct(conn, run, "harness")?, records::distinct(conn, run, "model")?))
            };
            let names = (names_of(&a_run)?, names_of(&b_run)?);
            let result = match wanted.map(|s| compare::compare(conn, &s)).transpose() {
                Ok(result) => Ok(result),
                Err(EvalsError::BadParameter { message, .. }) => Err(message),
                Err(EvalsError::UnknownRun(run)) => Err(format!("there is no run {run:?}")),
                Err(other) => return Err(other),
            };
            Ok((runs, result, names))
        })
        .await?;
    let ((a_harnesses, a_models), (b_harnesses, b_models)) = names;
    let (result, refusal) = match result {
        Ok(result) => (result, None),
        Err(message) => (None, Some(message)),
    };
    let behaviour = match (&selection, &result) {
        (Some(chosen), Some(_)) => {
            let chosen = chosen.clone();
            state
                .ask_platform(move |platform| {
                    use crate::evals::behaviour::of_selection;
                    let (a, b) = (&chosen.a, &chosen.b);
                    let a_sessions = platform.run(&a.run)?;
                    // Two sides of one run (two harnesses, say) read it once.
                    let b_sessions = if b.run == a.run { None } else { Some(platform.run(&b.run)?) };
                    let b_sessions = b_sessions.as_deref().unwrap_or(&a_sessions);
                    Ok((
                        of_selection(&a_sessions, a.model.as_deref(), a.harness.as_deref()),
                        of_selection(b_sessions, b.model.as_deref(), b.harness.as_deref()),
                    ))
                })
                .await
        }
        _ => None,
    };
    html(ComparePage {
        behaviour,
        auth: state.auth.is_some(),
        runs,
        selection,
        result,
        refusal,
        a_harnesses,
        a_models,
        b_harnesses,
        b_models,
    })
}

#[derive(Template, WebTemplate)]
#[template(path = "dashboard/login.html")]
struct LoginPage {
    auth: bool,
    next: String,
    error: Option<String>,
    enabled: bool,
}

pub async fn login_form(State(state): State<Arc<DashState>>, Query(raw): Query<HashMap<String, String>>) -> PageResult {
    html(LoginPage {
        auth: false,
        next: auth::safe_next(raw.get("next").map(String::as_str)),
        error: None,
        enabled: state.auth.is_some(),
    })
}

#[derive(serde::Deserialize)]
pub struct LoginForm {
    token: String,
    next: Option<String>,
}

/// Checks the token from the form (field `token`); on success sets the session
/// cookie and redirects (303) to `next`, a local path.
/// Wrong tokens are throttled per address (`auth::TokenAuth::try_token`): past the
/// limit the form answers 429 with `Retry-After`, whatever the token.
pub async fn login(
    State(state): State<Arc<DashState>>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let next = auth::safe_next(form.next.as_deref());
    let Some(token_auth) = &state.auth else { return Redirect::to(&next).into_response() };
    let error = match token_auth.try_token(&form.token, peer.ip(), auth::now_ms()) {
        Ok(true) => {
            let cookie = auth::set_cookie(&token_auth.session_cookie(auth::now_s()), &headers);
            return ([(header::SET_COOKIE, cookie)], Redirect::to(&next)).into_response();
        }
        Ok(false) => (StatusCode::UNAUTHORIZED, "That token is not valid.".to_string(), None),
        Err(secs) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!("Too many wrong tokens from this address. Try again in {} minutes.", secs.div_ceil(60)),
            Some(secs),
        ),
    };
    let (status, message, retry_after_secs) = error;
    let page = LoginPage { auth: false, next, error: Some(message), enabled: true };
    crate::http::errors::with_retry_after((status, page).into_response(), retry_after_secs)
}

pub async fn logout() -> Response {
    ([(header::SET_COOKIE, auth::clear_cookie())], Redirect::to("/login")).into_response()
}

#[derive(Template, WebTemplate)]
#[template(path = "dashboard/docs.html")]
struct DocsPage {
    auth: bool,
    paths: Vec<(String, String, String)>,
}

/// A readable listing of the OpenAPI document (no CDN-hosted Swagger UI: works offline).
pub async fn docs() -> PageResult {
    let spec: serde_json::Value = serde_json::from_str(super::OPENAPI).unwrap_or_default();
    let mut paths = Vec::new();
    if let Some(map) = spec.get("paths").and_then(|p| p.as_object()) {
        for (path, item) in map {
            if let Some(ops) = item.as_object() {
                for (method, op) in ops {
                    let summary = op.get("summary").and_then(|s| s.as_str()).unwrap_or("").to_string();
                    paths.push((method.to_uppercase(), path.clone(), summary));
                }
            }
        }
    }
    html(DocsPage { auth: false, paths })
}

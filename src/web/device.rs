//! `/device`: where a signed-in person enters the code `sightline login` printed and
//! approves (or denies) that terminal's sign-in (RFC 8628 §3.3). With a code (typed, or
//! from the link `sightline login` printed) the page shows who asked: the machine's
//! label, the address and user agent of the request, and when; approving gives that
//! machine a hook token, nothing more.
//!
//! Invariant: wrong codes are throttled per person and per address (RFC 8628 §5.1:
//! the 8-letter code is short enough to guess at speed), when looked up and when
//! decided alike; past the limit every attempt, right or wrong, is refused with 429 and
//! `Retry-After` until the window ends.

use std::net::IpAddr;
use std::sync::Arc;

use askama::Template;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::login::render;
use crate::auth::device;
use crate::http::errors::with_retry_after;
use crate::http::extract::{Form, Query};
use crate::state::AppState;
use crate::state::caller::{Caller, PageCaller};

#[derive(Template)]
#[template(path = "web/device.html")]
struct DevicePage<'a> {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    email: &'a str,
    user_code: &'a str,
    show_form: bool,
    /// Who asked for the code, when a live one was looked up.
    asked: Option<Asked>,
    message: Option<&'a str>,
    error: Option<&'a str>,
}

/// Who asked for a code, as the approval page says it.
struct Asked {
    label: String,
    address: String,
    user_agent: String,
    when: String,
    when_exact: String,
}

impl Asked {
    fn of(waiting: device::Waiting, now_ms: i64) -> Asked {
        let asker = waiting.asker;
        Asked {
            label: asker.label.unwrap_or_else(|| "a machine that gave no name".into()),
            address: asker.address,
            user_agent: asker.user_agent.unwrap_or_else(|| "not given".into()),
            when: crate::model::instants::relative(waiting.created_at_ms, now_ms),
            when_exact: crate::model::instants::exact_utc(waiting.created_at_ms),
        }
    }
}

#[derive(Deserialize)]
pub struct DeviceQuery {
    user_code: Option<String>,
}

pub async fn show(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    PageCaller(caller): PageCaller,
    Query(query): Query<DeviceQuery>,
) -> Response {
    let typed = query.user_code.unwrap_or_default();
    let normalised = device::normalise_user_code(&typed);
    let code = normalised.clone().unwrap_or(typed.clone());
    let looked_up = match normalised {
        Some(code) => Some(look_up(&state, &caller, &code, state.client_ip(&headers, peer)).await),
        None => None,
    };
    let (status, asked, error, retry_after_secs) = match looked_up {
        None => (StatusCode::OK, None, None, None),
        Some(Ok(asked)) => (StatusCode::OK, Some(asked), None, None),
        Some(Err(refusal)) => (refusal.status, None, Some(refusal.message), refusal.retry_after_secs),
    };
    let page = DevicePage {
        nav_role: caller.role.as_str(),
        email: &caller.user.email,
        user_code: &code,
        show_form: true,
        asked,
        message: None,
        error: error.as_deref(),
    };
    with_retry_after((status, render(&page)).into_response(), retry_after_secs)
}

/// Who asked for `code`, counted as a wrong code when no live one has it, so the page
/// cannot be used to find codes faster than deciding on them.
async fn look_up(state: &AppState, caller: &Caller, code: &str, address: IpAddr) -> Result<Asked, Refusal> {
    let (now_ms, account) = (state.clock.now_ms(), format!("device:{}", caller.user.id));
    throttled(state, &account, address, now_ms)?;
    let code = code.to_string();
    match state.read(move |conn| device::waiting(conn, &code, now_ms)).await {
        Ok(Some(waiting)) => Ok(Asked::of(waiting, now_ms)),
        Ok(None) => {
            state.device_throttle.failed(&account, address, now_ms);
            Err(Refusal::new(StatusCode::NOT_FOUND, NO_SUCH_CODE))
        }
        Err(err) => {
            let (status, message) = err.status_and_message();
            Err(Refusal::new(status, message))
        }
    }
}

const NO_SUCH_CODE: &str = "No waiting sign-in has that code; it may have expired. Run `sightline login` again.";

/// `Err` with 429 while this person or address is past the wrong codes allowed.
fn throttled(state: &AppState, account: &str, address: IpAddr, now_ms: i64) -> Result<(), Refusal> {
    state.device_throttle.check(account, address, now_ms).map_err(|retry_after_secs| Refusal {
        status: StatusCode::TOO_MANY_REQUESTS,
        message: format!("Too many wrong codes. Try again in {} minutes.", retry_after_secs.div_ceil(60)),
        retry_after_secs: Some(retry_after_secs),
    })
}

#[derive(Deserialize)]
pub struct DeviceForm {
    user_code: Option<String>,
    action: Option<String>,
}

pub async fn submit(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
    headers: HeaderMap,
    PageCaller(caller): PageCaller,
    Form(form): Form<DeviceForm>,
) -> Response {
    let answer = decide(&state, &caller, &form, state.client_ip(&headers, peer)).await;
    let (status, message, error, retry_after_secs) = match &answer {
        Ok(message) => (StatusCode::OK, Some(*message), None, None),
        Err(refusal) => (refusal.status, None, Some(refusal.message.as_str()), refusal.retry_after_secs),
    };
    let user_code = form.user_code.as_deref().unwrap_or_default();
    let page = DevicePage {
        nav_role: caller.role.as_str(),
        email: &caller.user.email,
        user_code,
        show_form: answer.is_err(),
        asked: None,
        message,
        error,
    };
    with_retry_after((status, render(&page)).into_response(), retry_after_secs)
}

/// Why a code was not approved or denied, shown on the page above the form again.
struct Refusal {
    status: StatusCode,
    message: String,
    retry_after_secs: Option<u64>,
}

impl Refusal {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Refusal { status, message: message.into(), retry_after_secs: None }
    }
}

/// Approves or denies the typed code for the caller; the page's message on success.
async fn decide(
    state: &AppState,
    caller: &Caller,
    form: &DeviceForm,
    address: IpAddr,
) -> Result<&'static str, Refusal> {
    let Some(code) = device::normalise_user_code(form.user_code.as_deref().unwrap_or_default()) else {
        return Err(Refusal::new(StatusCode::BAD_REQUEST, "That is not a code: it has 8 letters, like BCDF-GHJK."));
    };
    let approve = match form.action.as_deref() {
        Some("approve") => true,
        Some("deny") => false,
        _ => return Err(Refusal::new(StatusCode::BAD_REQUEST, "Choose Approve or Deny.")),
    };
    let (now_ms, account) = (state.clock.now_ms(), format!("device:{}", caller.user.id));
    throttled(state, &account, address, now_ms)?;
    let user_id = caller.user.id.clone();
    match state.write(move |tx| device::decide(tx, &code, &user_id, approve, now_ms)).await {
        // A right code does not clear the count: approving one's own code between
        // guesses would otherwise reset the limit.
        Ok(true) if approve => Ok(
            "Approved: that machine has a hook token for sending its agents' sessions. You can return to your terminal.",
        ),
        Ok(true) => Ok("Denied. That terminal will not be signed in."),
        Ok(false) => {
            state.device_throttle.failed(&account, address, now_ms);
            Err(Refusal::new(StatusCode::NOT_FOUND, NO_SUCH_CODE))
        }
        // A page answers with a page, also when storage fails.
        Err(err) => {
            let (status, message) = err.status_and_message();
            Err(Refusal::new(status, message))
        }
    }
}

//! `/device`: where a signed-in person enters the code `sightline login` printed and
//! approves (or denies) that terminal's sign-in (RFC 8628 §3.3).
//!
//! Invariant: wrong codes are throttled per person and per address (RFC 8628 §5.1:
//! the 8-letter code is short enough to guess at speed); past the limit every attempt,
//! right or wrong, is refused with 429 and `Retry-After` until the window ends.

use std::sync::Arc;

use askama::Template;
use axum::Form;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::login::render;
use crate::auth::device;
use crate::http::errors::AppError;
use crate::http::security::client_ip;
use crate::state::AppState;
use crate::state::caller::PageCaller;

#[derive(Template)]
#[template(path = "web/device.html")]
struct DevicePage<'a> {
    signed_in: bool,
    email: &'a str,
    user_code: &'a str,
    show_form: bool,
    message: Option<&'a str>,
    error: Option<&'a str>,
}

#[derive(Deserialize)]
pub struct DeviceQuery {
    user_code: Option<String>,
}

pub async fn show(PageCaller(caller): PageCaller, Query(query): Query<DeviceQuery>) -> Response {
    let typed = query.user_code.unwrap_or_default();
    let code = device::normalise_user_code(&typed).unwrap_or(typed);
    render(&DevicePage {
        signed_in: true,
        email: &caller.user.email,
        user_code: &code,
        show_form: true,
        message: None,
        error: None,
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
    let typed = form.user_code.unwrap_or_default();
    let page = |status: StatusCode, message: Option<&str>, error: Option<&str>, show_form: bool| {
        let body = render(&DevicePage {
            signed_in: true,
            email: &caller.user.email,
            user_code: &typed,
            show_form,
            message,
            error,
        });
        (status, body).into_response()
    };
    let Some(code) = device::normalise_user_code(&typed) else {
        return page(
            StatusCode::BAD_REQUEST,
            None,
            Some("That is not a code: it has 8 letters, like BCDF-GHJK."),
            true,
        );
    };
    let approve = match form.action.as_deref() {
        Some("approve") => true,
        Some("deny") => false,
        _ => return page(StatusCode::BAD_REQUEST, None, Some("Choose Approve or Deny."), true),
    };
    let now_ms = state.clock.now_ms();
    let (account, address) = (format!("device:{}", caller.user.id), client_ip(&headers, peer));
    if let Err(retry_after_secs) = state.device_throttle.check(&account, address, now_ms) {
        let message = format!("Too many wrong codes. Try again in {} minutes.", retry_after_secs.div_ceil(60));
        let mut response = page(StatusCode::TOO_MANY_REQUESTS, None, Some(&message), true);
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
        return response;
    }
    let user_id = caller.user.id.clone();
    let decided = state.writer.transact(move |tx| device::decide(tx, &code, &user_id, approve, now_ms)).await;
    match decided {
        Ok(true) => {
            // A right code does not clear the count: approving one's own code between
            // guesses would otherwise reset the limit.
            let message = if approve {
                "Approved. You can return to your terminal."
            } else {
                "Denied. That terminal will not be signed in."
            };
            page(StatusCode::OK, Some(message), None, false)
        }
        Ok(false) => {
            state.device_throttle.failed(&account, address, now_ms);
            page(
                StatusCode::NOT_FOUND,
                None,
                Some("No waiting sign-in has that code; it may have expired. Run `sightline login` again."),
                true,
            )
        }
        Err(err) => AppError::from(err).into_response(),
    }
}

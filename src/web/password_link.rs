//! `/password/<secret>`: where a person opens the one-time link an administrator made
//! for them (`auth::password_links`), chooses their password, and is signed in.
//!
//! Invariants: the page never says whose link a wrong, used or expired secret was;
//! the password is checked against the policy and typed twice before anything is
//! stored; setting it uses the link up, ends the person's other sign-ins and leaves an
//! audit row (`PASSWORD_SET_BY_LINK`) in the same transaction.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::audit::{self, Action, Entry};
use crate::auth::password_links;
use crate::auth::passwords;
use crate::auth::signins::Method;
use crate::http::errors::AppError;
use crate::http::extract::{Form, Path};
use crate::state::AppState;
use crate::web::login::{render, sign_in_response};

#[derive(Template)]
#[template(path = "web/password_link.html")]
struct PasswordLinkPage {
    nav_role: &'static str,
    /// The person the link is for; `None`: the link cannot be used.
    email: Option<String>,
    welcome: bool,
    action: String,
    error: Option<String>,
    min_chars: usize,
}

fn page(status: StatusCode, secret: &str, link: Option<password_links::OpenLink>, error: Option<String>) -> Response {
    let page = PasswordLinkPage {
        nav_role: "",
        welcome: link.as_ref().is_some_and(|link| link.purpose == "welcome"),
        email: link.map(|link| link.email),
        action: password_links::path_of(secret),
        error,
        min_chars: passwords::MIN_CHARS,
    };
    (status, render(&page)).into_response()
}

/// `GET /password/{secret}`.
pub async fn show(State(state): State<Arc<AppState>>, Path(secret): Path<String>) -> Result<Response, AppError> {
    let now_ms = state.clock.now_ms();
    let lookup = secret.clone();
    let link = state.read(move |conn| password_links::open(conn, &lookup, now_ms)).await?;
    let status = if link.is_some() { StatusCode::OK } else { StatusCode::NOT_FOUND };
    Ok(page(status, &secret, link, None))
}

#[derive(Deserialize)]
pub struct NewPassword {
    password: Option<String>,
    repeat: Option<String>,
}

/// `POST /password/{secret}`: sets the password, then signs the person in.
pub async fn submit(
    State(state): State<Arc<AppState>>,
    Path(secret): Path<String>,
    Form(form): Form<NewPassword>,
) -> Result<Response, AppError> {
    let now_ms = state.clock.now_ms();
    let lookup = secret.clone();
    let Some(link) = state.read(move |conn| password_links::open(conn, &lookup, now_ms)).await? else {
        return Ok(page(StatusCode::NOT_FOUND, &secret, None, None));
    };
    let password = form.password.unwrap_or_default();
    let refused = if password != form.repeat.unwrap_or_default() {
        Some("The two passwords differ: type the same password twice.".to_string())
    } else {
        passwords::check_policy(&password).err().map(|err| format!("{}.", capitalised(&err.to_string())))
    };
    if let Some(error) = refused {
        return Ok(page(StatusCode::BAD_REQUEST, &secret, Some(link), Some(error)));
    }
    let hash = passwords::hash_async(password).await.map_err(|err| AppError::Internal(err.to_string()))?;
    let used = state
        .write(move |tx| {
            let Some(link) = password_links::redeem(tx, &secret, &hash, now_ms)? else { return Ok(None) };
            let entry = Entry {
                actor_id: Some(&link.user_id),
                action: Action::PasswordSetByLink,
                subject_user_id: Some(&link.user_id),
                target: Some(&link.id),
                detail: serde_json::json!({ "purpose": link.purpose }),
            };
            audit::record(tx, &entry, now_ms)?;
            Ok(Some(link.user_id))
        })
        .await?;
    match used {
        Some(user_id) => Ok(sign_in_response(&state, &user_id, Method::Password, "/").await),
        // Used by another tab between the read and the write.
        None => Ok(page(StatusCode::NOT_FOUND, "", None, None)),
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

//! `/me/settings`: who I am (name, address, role), the four visibility flags in plain
//! words with a form to change them, my hook tokens and sign-ins (each revocable), where my
//! deletion request stands and a button to ask for one, and a link to who read my data.
//! The forms post to `/me/settings/…` and come back here (303), so the page works without
//! JavaScript; the same changes are in the JSON API (`/api/me/…`).
//!
//! Invariants: every change is the caller's own (no user id is read from the form); a
//! token or sign-in that is not the caller's is a 404, as a missing one is; the visibility
//! change is the same audited `policies::set_own` the API uses.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::login::render;
use crate::access::policies::{self, Visibility, VisibilityChange};
use crate::auth::signins::{self, SignInLine};
use crate::auth::tokens::{self, HookTokenLine};
use crate::db::DbError;
use crate::deletion::{self, DeletionRequest};
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path};
use crate::model::rfc3339_ms;
use crate::state::AppState;
use crate::state::caller::PageCaller;

/// One visibility flag, explained.
pub struct Flag {
    pub name: &'static str,
    pub on: bool,
    pub title: &'static str,
    pub explained: &'static str,
}

fn flags(visibility: &Visibility) -> Vec<Flag> {
    vec![
        Flag {
            name: "share_transcripts",
            on: visibility.share_transcripts,
            title: "Share my transcripts",
            explained: "Off: nobody but you reads your conversations: not your team lead, not an investigator or administrator even with a grant, and search finds them for no one else. On: whoever may open your sessions (your team lead, while you let them; someone holding a grant on your data, which you see under \"Grants on me\") may read their transcripts too and find them in search, and every such read is listed under \"Who read my data\". One session can be set apart on its own page.",
        },
        Flag {
            name: "team_drill_in",
            on: visibility.team_drill_in,
            title: "Let my team lead open my sessions",
            explained: "Your team lead may open your sessions' metadata (never transcripts unless shared). Every such read is recorded and listed under \"Who read my data\".",
        },
        Flag {
            name: "named_in_team_views",
            on: visibility.named_in_team_views,
            title: "Show my name in team views",
            explained: "Off: team pages count you, but show you without your name.",
        },
        Flag {
            name: "judge_opt_in",
            on: visibility.judge_opt_in,
            title: "Let the LLM judge score my sessions",
            explained: "On: when your organisation turns the judge on, it may read your sessions to score them. Off: it never does.",
        },
    ]
}

pub struct TokenRow {
    pub id: String,
    pub label: String,
    pub created: String,
    pub expires: String,
    pub last_used: String,
}

pub struct SignInRow {
    pub id: String,
    pub what: String,
    pub created: String,
    pub expires: String,
    pub this_one: bool,
}

#[derive(Template)]
#[template(path = "web/me_settings.html")]
struct SettingsPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    name: String,
    email: String,
    role: String,
    flags: Vec<Flag>,
    tokens: Vec<TokenRow>,
    sign_ins: Vec<SignInRow>,
    deletion: Option<String>,
}

struct Read {
    visibility: Visibility,
    tokens: Vec<HookTokenLine>,
    sign_ins: Vec<SignInLine>,
    deletion: Option<DeletionRequest>,
}

pub async fn page(State(state): State<Arc<AppState>>, PageCaller(caller): PageCaller) -> Result<Response, PageError> {
    let (user_id, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let read = state
        .read(move |conn| {
            Ok::<_, DbError>(Read {
                visibility: policies::get(conn, &user_id)?,
                tokens: tokens::live_hook_tokens(conn, &user_id, now_ms)?,
                sign_ins: signins::live_for_user(conn, &user_id, now_ms)?,
                deletion: deletion::by_user(conn, &user_id)?,
            })
        })
        .await?;
    let deletion = read.deletion.map(|request| match request.completed_at_ms {
        Some(at) => format!("Your data was deleted on {}.", rfc3339_ms(at)),
        None => format!(
            "You asked for your data to be deleted on {}; it is carried out within 6 hours.",
            rfc3339_ms(request.requested_at_ms)
        ),
    });
    Ok(render(&SettingsPage {
        nav_role: caller.role.as_str(),
        name: caller.user.name.clone(),
        email: caller.user.email.clone(),
        role: caller.user.org_role.clone(),
        flags: flags(&read.visibility),
        tokens: read
            .tokens
            .into_iter()
            .map(|t| TokenRow {
                id: t.id,
                label: match (t.label, t.kind.as_str()) {
                    (Some(label), _) => label,
                    (None, "otlp") => "(an OTLP token, no label)".into(),
                    (None, _) => "(no label)".into(),
                },
                created: rfc3339_ms(t.created_at_ms),
                expires: rfc3339_ms(t.expires_at_ms),
                last_used: t.last_used_at_ms.map_or("never".into(), rfc3339_ms),
            })
            .collect(),
        sign_ins: read
            .sign_ins
            .into_iter()
            .map(|s| SignInRow {
                this_one: s.id == caller.session_id,
                what: format!("{} ({})", if s.client == "web" { "browser" } else { "command line" }, s.method),
                id: s.id,
                created: rfc3339_ms(s.created_at_ms),
                expires: rfc3339_ms(s.expires_at_ms),
            })
            .collect(),
        deletion,
    }))
}

/// The visibility form: each checkbox present means on; the `form` field marks a
/// submitted form, so an all-unchecked form turns everything off.
#[derive(Deserialize)]
pub struct VisibilityForm {
    form: Option<String>,
    share_transcripts: Option<String>,
    team_drill_in: Option<String>,
    named_in_team_views: Option<String>,
    judge_opt_in: Option<String>,
}

pub async fn set_visibility(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Form(form): Form<VisibilityForm>,
) -> Result<Redirect, PageError> {
    if form.form.as_deref() != Some("visibility") {
        return Err(PageError(AppError::bad_request(
            "form",
            "this form sets the visibility flags; send it from /me/settings",
        )));
    }
    let change = VisibilityChange {
        share_transcripts: Some(form.share_transcripts.is_some()),
        team_drill_in: Some(form.team_drill_in.is_some()),
        named_in_team_views: Some(form.named_in_team_views.is_some()),
        judge_opt_in: Some(form.judge_opt_in.is_some()),
    };
    let (user_id, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    state
        .write(move |tx| {
            policies::set_own(tx, &user_id, change, now_ms)?;
            // The bot comments follow the person's choice.
            crate::github::pulls::mark_person_comments_due(tx, &user_id)
        })
        .await?;
    state.webhook_arrivals.notify_one();
    Ok(Redirect::to("/me/settings"))
}

pub async fn revoke_token(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(token_id): Path<String>,
) -> Result<Redirect, PageError> {
    let (user_id, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let revoked = state.write(move |tx| tokens::revoke_own_hook_token(tx, &user_id, &token_id, now_ms)).await?;
    if revoked { Ok(Redirect::to("/me/settings")) } else { Err(PageError(AppError::NotFound)) }
}

pub async fn revoke_sign_in(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(session_id): Path<String>,
) -> Result<Redirect, PageError> {
    let (user_id, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let this_one = session_id == caller.session_id;
    let revoked = state.write(move |tx| signins::revoke_own(tx, &user_id, &session_id, now_ms)).await?;
    match (revoked, this_one) {
        (false, _) => Err(PageError(AppError::NotFound)),
        // Ending the sign-in in use signs this browser out.
        (true, true) => Ok(Redirect::to("/login")),
        (true, false) => Ok(Redirect::to("/me/settings")),
    }
}

pub async fn request_deletion(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
) -> Result<Redirect, PageError> {
    let (user_id, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    state.write(move |tx| deletion::request(tx, &user_id, &user_id, now_ms)).await?;
    Ok(Redirect::to("/me/settings"))
}

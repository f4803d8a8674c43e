//! `/admin/people`: everyone with an account, their role, teams, state and
//! credentials, with a form per person to change their role, disable or enable them,
//! make a one-time password link, or revoke every sign-in and token; and forms to add
//! one person or many from a CSV.
//!
//! Invariants: every change commits with its audit row, the person as the subject (so
//! they see it on `/me/settings/audit`); the last enabled administrator can be neither
//! demoted nor disabled; a password link's secret is shown once, on the page that
//! answers the POST, and never travels in a URL the browser records (history, logs);
//! a CSV is all or nothing: one bad line is a 400 naming the line and its field, and
//! nobody is added.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

mod import;

pub use import::{Import, import};

use super::{AdminPage, Field, Flash, Form as PageForm, Row, Section, change, done, when};
use crate::access::teams;
use crate::audit::{self, Action, Entry};
use crate::auth::password_links::{self, Purpose};
use crate::auth::users::{self, ORG_ROLES, User, UserError};
use crate::auth::{otlp_identities, signins, tokens};
use crate::db::DbError;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path, Query};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

pub const PATH: &str = "/admin/people";
/// More lines than this in one CSV is refused: split the file.
const MOST_LINES: usize = 5_000;

/// `GET /admin/people`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    Ok(people_page(&state, flash, None).await?.respond())
}

/// A one-time link made by a POST, shown on the page that answers it.
struct MadeLinks {
    heading: &'static str,
    intro: String,
    links: Vec<(String, String, i64)>,
    /// On a reset, the person's live hook and OTLP tokens, for review: a password reset
    /// does not end them, and a reset because the account may be someone else's should.
    tokens: Option<Vec<tokens::HookTokenLine>>,
}

async fn people_page(state: &AppState, flash: Flash, made: Option<MadeLinks>) -> Result<AdminPage, PageError> {
    let now_ms = state.clock.now_ms();
    let (people, memberships, credentials, no_password, team_slugs) = state
        .read(move |conn| {
            let people = users::list(conn).map_err(user_db_error)?;
            let mut memberships: HashMap<String, Vec<String>> = HashMap::new();
            for m in teams::memberships_listed(conn)? {
                let role = if m.team_role == "lead" { " (lead)" } else { "" };
                memberships.entry(m.user_id).or_default().push(format!("{}{role}", m.team_slug));
            }
            let slugs: Vec<String> = teams::list(conn)?.into_iter().map(|(team, _)| team.slug).collect();
            Ok((
                people,
                memberships,
                signins::credentials_by_user(conn, now_ms)?,
                password_links::without_password(conn)?,
                slugs,
            ))
        })
        .await?;
    let mut page = AdminPage::new(
        PATH,
        "People",
        "Everyone with an account. A person added here gets a one-time link to choose their password (or signs in with GitHub when it is set up); people also arrive by signing in with GitHub or from `sightline user add`.",
        flash,
    );
    if let Some(made) = made {
        let mut section = Section::new("links", made.heading).intro(made.intro).columns(vec![
            "E-mail",
            "One-time link",
            "Works until",
        ]);
        section.rows = made
            .links
            .into_iter()
            .map(|(email, url, expires)| Row::new(vec![Cell::text(email), Cell::text(url), when(Some(expires))]))
            .collect();
        page = page.section(section);
        if let Some(live) = made.tokens {
            let mut review = Section::new("tokens-to-review", "Their hook and OTLP tokens")
                .intro(match live.is_empty() {
                    true => "They hold no live hook or OTLP token.".to_string(),
                    false => "These keep working after the password is reset. If the reset is because someone else may have had the account, revoke them (Revoke in the list below ends every sign-in and token; their agents report again once they sign in).".to_string(),
                })
                .columns(vec!["Kind", "Label", "Made", "Last used", "Works until"]);
            review.rows = live
                .into_iter()
                .map(|token| {
                    Row::new(vec![
                        Cell::text(token.kind),
                        Cell::text(token.label.unwrap_or_default()),
                        when(Some(token.created_at_ms)),
                        when(token.last_used_at_ms),
                        when(Some(token.expires_at_ms)),
                    ])
                })
                .collect();
            page = page.section(review);
        }
    }
    let mut team_options = vec!["".to_string()];
    team_options.extend(team_slugs);
    let team_options: Vec<&str> = team_options.iter().map(String::as_str).collect();
    page = page.section(
        Section::new("add", "Add a person")
            .intro("They get a one-time link, valid for 7 days, to choose their password; give it to them yourself (chat, e-mail). Nothing is sent from here.")
            .form(
                PageForm::new(PATH, "Add")
                    .field(Field::text("email", "E-mail", ""))
                    .field(Field::text("name", "Name", ""))
                    .field(Field::select("role", "Role", "MEMBER", ORG_ROLES))
                    .field(Field::select("team", "Team (optional)", "", &team_options)),
            ),
    );
    let mut list = Section::new("people", "People")
        .intro("ADMIN runs this console and decides access grants; INVESTIGATOR may ask for time-boxed access to a person's sessions; MEMBER sees their own data and their teams' aggregates; VIEWER_AGGREGATE sees aggregates only, never one person's sessions. Revoking ends every sign-in and hook or OTLP token the person holds: their agents stop reporting until they sign in again.")
        .columns(vec!["Name", "E-mail", "Role", "Teams", "State", "Live sign-ins", "Hook/OTLP tokens", "Last sign-in"]);
    list.rows = people
        .into_iter()
        .map(|user| {
            let held = credentials.get(&user.id).cloned().unwrap_or_default();
            let state = match (user.disabled_at_ms, no_password.contains(&user.id)) {
                (Some(_), _) => "disabled",
                (None, true) => "active, no password yet",
                (None, false) => "active",
            };
            let teams = memberships.get(&user.id).map(|teams| teams.join(", ")).unwrap_or_else(|| "—".into());
            person_row(user, state, teams, held)
        })
        .collect();
    page = page.section(list);
    page = page.section(
        Section::new("import", "Add people from a CSV")
            .intro(format!("Paste a CSV with a header line: email,name,role,team (role and team may be empty: MEMBER, no team). Everyone is added or nobody is: a bad line is named and nothing is stored. People whose e-mail is already here are left as they are and listed. At most {MOST_LINES} lines."))
            .form(
                PageForm::new(format!("{PATH}/import"), "Add everyone")
                    .field(Field::textarea("csv", "CSV", "email,name,role,team\n")),
            ),
    );
    Ok(page)
}

fn person_row(user: User, state: &str, teams: String, held: signins::Credentials) -> Row {
    let id = &user.id;
    let mut row = Row::new(vec![
        Cell::text(&user.name),
        Cell::text(&user.email),
        Cell::text(&user.org_role),
        Cell::text(teams),
        Cell::text(state),
        Cell::count(held.sign_ins),
        Cell::count(held.tokens),
        when(held.last_sign_in_ms),
    ])
    .action(PageForm::new(format!("{PATH}/{id}/role"), "Change role").field(Field::select(
        "role",
        "Role",
        user.org_role.clone(),
        ORG_ROLES,
    )));
    if user.disabled_at_ms.is_some() {
        return row.action(PageForm::new(format!("{PATH}/{id}/enable"), "Enable"));
    }
    row = row.action(PageForm::new(format!("{PATH}/{id}/password-link"), "Password link"));
    if held.sign_ins + held.tokens > 0 {
        row = row.action(PageForm::new(format!("{PATH}/{id}/revoke"), "Revoke sign-ins and tokens").danger());
    }
    row.action(PageForm::new(format!("{PATH}/{id}/disable"), "Disable").danger())
}

fn user_db_error(err: UserError) -> DbError {
    match err {
        UserError::Db(db) => db,
        other => DbError::Io { context: "listing people".into(), source: std::io::Error::other(other.to_string()) },
    }
}

/// A person's refusal as the page's error naming `field`; a storage failure stays one.
fn refusal(err: UserError, field: &str) -> Result<AppError, DbError> {
    match err {
        UserError::Db(db) => Err(db),
        other => Ok(AppError::bad_request(field, other.to_string())),
    }
}

#[derive(Deserialize)]
pub struct NewPerson {
    email: Option<String>,
    name: Option<String>,
    role: Option<String>,
    team: Option<String>,
}

/// One person to add, checked.
struct Addition {
    email: String,
    name: String,
    role: String,
    team: Option<String>,
}

/// Adds `person` with its audit row and team membership, and makes their welcome
/// link; `Ok(Err)` is a refusal naming `field_prefix`'s field.
fn add_person(
    tx: &rusqlite::Transaction<'_>,
    person: &Addition,
    actor: &str,
    field_prefix: &str,
    now_ms: i64,
) -> Result<Result<password_links::NewLink, AppError>, DbError> {
    let user = match users::add(tx, &person.email, &person.name, &person.role, now_ms) {
        Ok(user) => user,
        Err(err) => return Ok(Err(refusal(err, &format!("{field_prefix}email"))?)),
    };
    let entry = Entry {
        actor_id: Some(actor),
        action: Action::UserAdded,
        subject_user_id: Some(&user.id),
        target: Some(&user.id),
        detail: serde_json::json!({ "role": user.org_role, "team": person.team }),
    };
    audit::record(tx, &entry, now_ms)?;
    if let Some(slug) = &person.team {
        let team = match teams::by_slug(tx, slug) {
            Ok(team) => team,
            Err(err) => return Ok(Err(super::team_refusal(err, &format!("{field_prefix}team"))?)),
        };
        if let Err(err) = teams::add_member(tx, &team.id, &user.id, "member", now_ms) {
            return Ok(Err(super::team_refusal(err, &format!("{field_prefix}team"))?));
        }
    }
    Ok(Ok(password_links::create(tx, &user.id, Purpose::Welcome, Some(actor), now_ms)?))
}

fn link_url(state: &AppState, secret: &str) -> String {
    format!("{}{}", state.web_origin.trim_end_matches('/'), password_links::path_of(secret))
}

/// `POST /admin/people`: one person, answered with their link.
pub async fn add(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Form(form): Form<NewPerson>,
) -> Result<Response, PageError> {
    let person = Addition {
        email: form.email.unwrap_or_default().trim().to_string(),
        name: form.name.unwrap_or_default().trim().to_string(),
        role: users::parse_role(form.role.as_deref().unwrap_or("MEMBER"))
            .map_err(|err| AppError::bad_request("role", err.to_string()))?,
        team: form.team.map(|team| team.trim().to_string()).filter(|team| !team.is_empty()),
    };
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let email = person.email.clone();
    let link = change(&state, move |tx| add_person(tx, &person, &actor, "", now_ms)).await?;
    let made = MadeLinks {
        heading: "Person added",
        intro: format!(
            "Give {email} this link to choose their password. It is shown only now; if it is lost, make another with \"Password link\"."
        ),
        links: vec![(email, link_url(&state, &link.secret), link.expires_at_ms)],
        tokens: None,
    };
    Ok(people_page(&state, Flash::default(), Some(made)).await?.respond())
}

#[derive(Deserialize)]
pub struct RoleForm {
    role: Option<String>,
}

/// `POST /admin/people/{user}/role`.
pub async fn set_role(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(user_id): Path<String>,
    Form(form): Form<RoleForm>,
) -> Result<Redirect, PageError> {
    let role = users::parse_role(form.role.as_deref().unwrap_or(""))
        .map_err(|err| AppError::bad_request("role", err.to_string()))?;
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let (from, to) = change(&state, move |tx| {
        let Some(user) = users::by_id(tx, &user_id)? else { return Ok(Err(AppError::NotFound)) };
        match users::change_role(tx, &user, &role, Some(&actor), now_ms) {
            Ok(to) => Ok(Ok((user.org_role, to))),
            Err(refused) => Ok(Err(refusal(refused, "role")?)),
        }
    })
    .await?;
    // The flash travels in the URL: it names no one.
    Ok(done(PATH, &format!("the role is now {to} (was {from})")))
}

/// `POST /admin/people/{user}/{act}`: `disable`, `enable`, `revoke` or `password-link`.
pub async fn act(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path((user_id, act)): Path<(String, String)>,
) -> Result<Response, PageError> {
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    if act == "password-link" {
        let (email, link, live) = change(&state, move |tx| {
            let Some(user) = users::by_id(tx, &user_id)? else { return Ok(Err(AppError::NotFound)) };
            if user.disabled_at_ms.is_some() {
                return Ok(Err(AppError::bad_request(
                    "user",
                    format!("{} is disabled: enable them first", user.email),
                )));
            }
            let link = password_links::create(tx, &user.id, Purpose::Reset, Some(&actor), now_ms)?;
            audited(tx, &actor, Action::PasswordLinkMade, &user, serde_json::json!({ "purpose": "reset" }), now_ms)?;
            // A service account's token (a collector's, held by an administrator) is the
            // organisation's, not the person's: it is not theirs to review here.
            let mut live = Vec::new();
            for token in tokens::live_hook_tokens(tx, &user.id, now_ms)? {
                if !otlp_identities::is_service(tx, &token.id)? {
                    live.push(token);
                }
            }
            Ok(Ok((user.email, link, live)))
        })
        .await?;
        let made = MadeLinks {
            heading: "Password link made",
            intro: format!(
                "Give {email} this link; it works once, for 24 hours, and voids any older link. Their current password keeps working until they use it; using it signs them out everywhere."
            ),
            links: vec![(email, link_url(&state, &link.secret), link.expires_at_ms)],
            tokens: Some(live),
        };
        return Ok(people_page(&state, Flash::default(), Some(made)).await?.respond());
    }
    let said = change(&state, move |tx| {
        let Some(user) = users::by_id(tx, &user_id)? else { return Ok(Err(AppError::NotFound)) };
        let said = match act.as_str() {
            "disable" => {
                if let Err(refused) = users::disable(tx, &user.email, now_ms) {
                    return Ok(Err(refusal(refused, "user")?));
                }
                audited(tx, &actor, Action::UserDisabled, &user, serde_json::json!({}), now_ms)?;
                "a person is disabled; their sign-ins and tokens are revoked"
            }
            "enable" => {
                if !users::enable(tx, &user.id)? {
                    return Ok(Ok("that person was not disabled; nothing changed"));
                }
                audited(tx, &actor, Action::UserEnabled, &user, serde_json::json!({}), now_ms)?;
                "a person is enabled again; they sign in afresh"
            }
            "revoke" => {
                signins::revoke_all_for_user(tx, &user.id, "revoked by an administrator", now_ms)?;
                audited(tx, &actor, Action::TokensRevoked, &user, serde_json::json!({}), now_ms)?;
                "a person's sign-ins and tokens are revoked"
            }
            _ => return Ok(Err(AppError::NotFound)),
        };
        Ok(Ok(said))
    })
    .await?;
    Ok(done(PATH, said).into_response())
}

fn audited(
    tx: &rusqlite::Connection,
    actor: &str,
    action: Action,
    user: &User,
    detail: serde_json::Value,
    now_ms: i64,
) -> Result<(), DbError> {
    let entry =
        Entry { actor_id: Some(actor), action, subject_user_id: Some(&user.id), target: Some(&user.id), detail };
    audit::record(tx, &entry, now_ms).map(|_| ())
}

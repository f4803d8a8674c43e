//! `/admin/org-roles` (everyone's organisation role, each with a form to change it) and
//! `/admin/team-roles` (every team's direct members, lead or member, with a form to
//! change a role and one to add a person to a team).
//!
//! Invariants: every change commits with its audit row (`USER_ROLE_CHANGED`,
//! `TEAM_ROLE_CHANGED`, the person as the subject, so they see it in their own audit);
//! the last enabled administrator cannot be demoted, so the console cannot lock itself
//! out; an unknown role, person or team is a 400 or 404 and nothing changes.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::{AdminPage, Field, Flash, Row, Section, change, done, team_refusal};
use crate::access::teams;
use crate::audit::{self, Action, Entry};
use crate::auth::users::{self, ORG_ROLES, UserError};
use crate::db::DbError;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path, Query};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

const ORG_PATH: &str = "/admin/org-roles";
const TEAM_PATH: &str = "/admin/team-roles";

pub async fn org_roles(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    let people = state.read(move |conn| users::list(conn).map_err(user_db_error)).await?;
    let mut section = Section::new("people", "People and their organisation roles")
        .intro("ADMIN runs this console and decides access grants; INVESTIGATOR may ask for time-boxed access to a person's sessions; MEMBER sees their own data and their teams' aggregates; VIEWER_AGGREGATE sees aggregates only, never one person's sessions.")
        .columns(vec!["Name", "E-mail", "Role", "State"]);
    section.rows = people
        .into_iter()
        .map(|user| {
            let state = if user.disabled_at_ms.is_some() { "disabled" } else { "active" };
            Row::new(vec![
                Cell::text(&user.name),
                Cell::text(&user.email),
                Cell::text(&user.org_role),
                Cell::text(state),
            ])
            .action(
                super::Form::new(format!("{ORG_PATH}/{}", user.id), "Change role").field(Field::select(
                    "role",
                    "Role",
                    user.org_role.clone(),
                    ORG_ROLES,
                )),
            )
        })
        .collect();
    Ok(AdminPage::new(ORG_PATH, "Organisation roles", "Who may do what across the organisation. People are added with `sightline user add` or by signing in with GitHub.", flash)
        .section(section)
        .respond())
}

fn user_db_error(err: UserError) -> DbError {
    match err {
        UserError::Db(db) => db,
        other => DbError::Io { context: "listing people".into(), source: std::io::Error::other(other.to_string()) },
    }
}

#[derive(Deserialize)]
pub struct RoleForm {
    role: Option<String>,
}

/// `POST /admin/org-roles/{user}`.
pub async fn set_org_role(
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
            Err(users::UserError::Db(err)) => Err(err),
            Err(refused) => Ok(Err(AppError::bad_request("role", refused.to_string()))),
        }
    })
    .await?;
    // The flash travels in the URL: it names no one.
    Ok(done(ORG_PATH, &format!("the role is now {to} (was {from})")))
}

pub async fn team_roles(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    let (all_teams, members) =
        state.read(move |conn| Ok((teams::list(conn)?, teams::memberships_listed(conn)?))).await?;
    let mut page = AdminPage::new(
        TEAM_PATH,
        "Team roles",
        "A team lead sees the team's pages and may open a member's session metadata when the member allows it (every such read is audited). Teams come from `sightline team add` or the sync-teams job.",
        flash,
    );
    if all_teams.is_empty() {
        page = page.section(Section::new("teams", "Teams").intro("There is no team yet."));
    }
    for (team, _) in all_teams {
        let mut section = Section::new("team", format!("{} ({})", team.name, team.slug))
            .columns(vec!["Name", "E-mail", "Team role"])
            .empty("Nobody is in this team directly.");
        section.rows = members
            .iter()
            .filter(|m| m.team_slug == team.slug)
            .map(|m| {
                Row::new(vec![Cell::text(&m.name), Cell::text(&m.email), Cell::text(&m.team_role)]).action(
                    super::Form::new(format!("{TEAM_PATH}/{}/{}", team.slug, m.user_id), "Change")
                        .field(Field::select("role", "Role", m.team_role.clone(), &["lead", "member"])),
                )
            })
            .collect();
        section = section.form(
            super::Form::new(format!("{TEAM_PATH}/{}", team.slug), "Add to team")
                .field(Field::text("email", "E-mail", ""))
                .field(Field::select("role", "Role", "member", &["member", "lead"])),
        );
        page = page.section(section);
    }
    Ok(page.respond())
}

#[derive(Deserialize)]
pub struct AddForm {
    email: Option<String>,
    role: Option<String>,
}

/// `POST /admin/team-roles/{slug}/{user}`: a member's role.
pub async fn set_team_role(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path((slug, user_id)): Path<(String, String)>,
    Form(form): Form<RoleForm>,
) -> Result<Redirect, PageError> {
    let role = form.role.unwrap_or_default();
    change_team_role(&state, &caller.user.id, slug, Who::Id(user_id), role, false).await
}

/// `POST /admin/team-roles/{slug}`: a person added to a team by e-mail.
pub async fn add_to_team(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(slug): Path<String>,
    Form(form): Form<AddForm>,
) -> Result<Redirect, PageError> {
    let email = form.email.unwrap_or_default().trim().to_string();
    if email.is_empty() {
        return Err(AppError::bad_request("email", "say whom to add: their e-mail address").into());
    }
    change_team_role(&state, &caller.user.id, slug, Who::Email(email), form.role.unwrap_or_default(), true).await
}

enum Who {
    Id(String),
    Email(String),
}

async fn change_team_role(
    state: &AppState,
    actor: &str,
    slug: String,
    who: Who,
    role: String,
    adding: bool,
) -> Result<Redirect, PageError> {
    let role = role.trim().to_ascii_lowercase();
    if role != "lead" && role != "member" {
        return Err(
            AppError::bad_request("role", format!("team role {role:?} is not known; expected lead or member")).into()
        );
    }
    let (actor, now_ms) = (actor.to_string(), state.clock.now_ms());
    let message = change(state, move |tx| {
        let team = match teams::by_slug(tx, &slug) {
            Ok(team) => team,
            Err(err) => return Ok(Err(team_refusal(err, "role")?)),
        };
        let user = match &who {
            Who::Id(id) => users::by_id(tx, id)?,
            Who::Email(email) => users::find_by_email(tx, email)?,
        };
        let Some(user) = user else {
            let named = match who {
                Who::Id(id) => id,
                Who::Email(email) => email,
            };
            return Ok(Err(AppError::bad_request("email", format!("there is nobody {named:?}"))));
        };
        let before = teams::member_role(tx, &team.id, &user.id)?;
        if before.is_none() && !adding {
            return Ok(Err(AppError::NotFound));
        }
        if let Err(err) = teams::add_member(tx, &team.id, &user.id, &role, now_ms) {
            return Ok(Err(team_refusal(err, "role")?));
        }
        let detail = serde_json::json!({ "team": team.slug, "from": before, "to": role });
        let entry = Entry {
            actor_id: Some(&actor),
            action: Action::TeamRoleChanged,
            subject_user_id: Some(&user.id),
            target: Some(&team.id),
            detail,
        };
        audit::record(tx, &entry, now_ms)?;
        Ok(Ok(format!("a member is now {role} of {}", team.slug)))
    })
    .await?;
    Ok(done(TEAM_PATH, &message))
}

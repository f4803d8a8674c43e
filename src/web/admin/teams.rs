//! `/admin/teams`: every team in its tree, where its members come from (made here, or
//! kept by the GitHub team sync), its direct members with their team role, and the
//! forms that create a team, rename it, move it under another, add a member, change a
//! member's role or remove them.
//!
//! Invariants: every change commits with its audit row (`TEAM_CREATED`,
//! `TEAM_CHANGED`, `TEAM_ROLE_CHANGED`, `TEAM_MEMBER_REMOVED`; a member as the subject
//! of their own rows); a team cannot be placed under itself or a team below it; a team
//! the sync keeps refuses what the next sync would undo (its name, parent and members)
//! and says so, while its leads are ours to set (the sync keeps them); an unknown
//! team or person is a 404 or a 400 and nothing changes.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::{AdminPage, Field, Flash, Form as PageForm, Row, Section, change, done, team_refusal};
use crate::access::teams::{self, Team};
use crate::audit::{self, Action, Entry};
use crate::auth::users;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path, Query};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

pub const PATH: &str = "/admin/teams";
const TOP: &str = "(top level)";

/// Teams in tree order (each after its parent, siblings by name), with their depth.
fn tree(all: Vec<(Team, i64)>) -> Vec<(Team, usize)> {
    let mut children: HashMap<Option<String>, Vec<Team>> = HashMap::new();
    let ids: std::collections::HashSet<String> = all.iter().map(|(team, _)| team.id.clone()).collect();
    for (team, _) in all {
        // A parent that is gone (it cannot be, by the foreign key) would hide a team.
        let parent = team.parent_id.clone().filter(|parent| ids.contains(parent));
        children.entry(parent).or_default().push(team);
    }
    for siblings in children.values_mut() {
        siblings.sort_by(|a, b| a.name.to_lowercase().cmp(&b.name.to_lowercase()).then(a.slug.cmp(&b.slug)));
    }
    let mut ordered = Vec::new();
    let mut stack: Vec<(Team, usize)> =
        children.remove(&None).unwrap_or_default().into_iter().rev().map(|team| (team, 0)).collect();
    while let Some((team, depth)) = stack.pop() {
        if let Some(below) = children.remove(&Some(team.id.clone())) {
            stack.extend(below.into_iter().rev().map(|child| (child, depth + 1)));
        }
        ordered.push((team, depth));
    }
    ordered
}

/// `GET /admin/teams`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    let (all, members, synced) = state
        .read(move |conn| Ok((teams::list(conn)?, teams::memberships_listed(conn)?, teams::synced(conn)?)))
        .await?;
    let slugs_by_id: HashMap<String, String> = all.iter().map(|(t, _)| (t.id.clone(), t.slug.clone())).collect();
    let ordered = tree(all);
    let mut parent_options = vec![TOP.to_string()];
    parent_options.extend(ordered.iter().map(|(team, _)| team.slug.clone()));
    let parent_options: Vec<&str> = parent_options.iter().map(String::as_str).collect();

    let mut page = AdminPage::new(
        PATH,
        "Teams",
        "Teams nest: a lead sees the pages of their team and every team below it, and may open a member's session when the member allows it (every such read is audited). Teams the GitHub team sync keeps follow GitHub for their name, parent and members; their leads are set here.",
        flash,
    );
    page = page.section(
        Section::new("create", "Create a team")
            .intro("The slug is the team's address (/team/<slug>): lower-case letters, digits and dashes. It cannot change later; the name can.")
            .form(
                PageForm::new(PATH, "Create")
                    .field(Field::text("slug", "Slug", ""))
                    .field(Field::text("name", "Name", ""))
                    .field(Field::select("parent", "Under", TOP, &parent_options)),
            ),
    );
    let mut overview = Section::new("tree", "All teams")
        .columns(vec!["Team", "Slug", "Under", "Direct members", "Leads", "Source"])
        .empty("There is no team yet: create one above, or run the sync-teams job when the GitHub app is installed.");
    overview.rows = ordered
        .iter()
        .map(|(team, depth)| {
            let direct: Vec<_> = members.iter().filter(|m| m.team_slug == team.slug).collect();
            let leads: Vec<&str> = direct.iter().filter(|m| m.team_role == "lead").map(|m| m.name.as_str()).collect();
            let under = team.parent_id.as_ref().and_then(|id| slugs_by_id.get(id)).cloned().unwrap_or("—".into());
            Row::new(vec![
                Cell::text(format!("{}{}", "· ".repeat(*depth), team.name)).link(format!("#team-{}", team.slug)),
                Cell::text(&team.slug),
                Cell::text(under),
                Cell::count(direct.len() as i64),
                Cell::text(if leads.is_empty() { "none".to_string() } else { leads.join(", ") }),
                Cell::text(source(synced.get(&team.slug).copied())),
            ])
        })
        .collect();
    page = page.section(overview);

    for (team, _) in ordered {
        let kept_by_sync = synced.get(&team.slug).copied();
        let mut section = Section::new(format!("team-{}", team.slug), format!("{} ({})", team.name, team.slug))
            .intro(match kept_by_sync {
                Some(_) => format!("{}. Its name, parent and members follow GitHub; change them there. Leads are set here and kept by the sync.", source(kept_by_sync)),
                None => "Made here.".to_string(),
            })
            .columns(vec!["Name", "E-mail", "Team role"])
            .empty("Nobody is in this team directly.");
        section.rows = members
            .iter()
            .filter(|m| m.team_slug == team.slug)
            .map(|m| {
                let mut row = Row::new(vec![Cell::text(&m.name), Cell::text(&m.email), Cell::text(&m.team_role)])
                    .action(
                        PageForm::new(format!("{PATH}/{}/members/{}", team.slug, m.user_id), "Change")
                            .field(Field::select("role", "Role", m.team_role.clone(), &["lead", "member"])),
                    );
                if kept_by_sync.is_none() {
                    row = row.action(
                        PageForm::new(format!("{PATH}/{}/members/{}/remove", team.slug, m.user_id), "Remove").danger(),
                    );
                }
                row
            })
            .collect();
        if kept_by_sync.is_none() {
            let parent = team.parent_id.as_ref().and_then(|id| slugs_by_id.get(id)).cloned();
            section = section
                .form(
                    PageForm::new(format!("{PATH}/{}/members", team.slug), "Add to team")
                        .field(Field::text("email", "E-mail", ""))
                        .field(Field::select("role", "Role", "member", &["member", "lead"])),
                )
                .form(PageForm::new(format!("{PATH}/{}/rename", team.slug), "Rename").field(Field::text(
                    "name",
                    "Name",
                    team.name.clone(),
                )))
                .form(PageForm::new(format!("{PATH}/{}/parent", team.slug), "Move").field(Field::select(
                    "parent",
                    "Under",
                    parent.unwrap_or(TOP.to_string()),
                    &parent_options,
                )));
        }
        page = page.section(section);
    }
    Ok(page.respond())
}

fn source(synced_at_ms: Option<i64>) -> String {
    match synced_at_ms {
        Some(ms) => format!("GitHub team sync (last {})", crate::model::instants::exact_utc(ms)),
        None => "made here".to_string(),
    }
}

fn parent_of(text: Option<String>) -> Option<String> {
    text.map(|parent| parent.trim().to_string()).filter(|parent| !parent.is_empty() && parent != TOP)
}

#[derive(Deserialize)]
pub struct NewTeam {
    slug: Option<String>,
    name: Option<String>,
    parent: Option<String>,
}

/// `POST /admin/teams`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Form(form): Form<NewTeam>,
) -> Result<Redirect, PageError> {
    let slug = form.slug.unwrap_or_default().trim().to_string();
    let name = form.name.unwrap_or_default();
    let parent = parent_of(form.parent);
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let said = change(&state, move |tx| {
        let team = match teams::add(tx, &slug, &name, parent.as_deref(), None, now_ms) {
            Ok(team) => team,
            Err(err) => return Ok(Err(team_refusal(err, if parent.is_some() { "parent" } else { "slug" })?)),
        };
        let detail = serde_json::json!({ "slug": team.slug, "name": team.name, "parent": parent });
        team_audit(tx, &actor, Action::TeamCreated, &team.id, detail, now_ms)?;
        Ok(Ok(format!("team {} is created", team.slug)))
    })
    .await?;
    Ok(done(PATH, &said))
}

#[derive(Deserialize)]
pub struct Rename {
    name: Option<String>,
}

/// `POST /admin/teams/{slug}/rename`.
pub async fn rename(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(slug): Path<String>,
    Form(form): Form<Rename>,
) -> Result<Redirect, PageError> {
    let name = form.name.unwrap_or_default();
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let said = change(&state, move |tx| {
        let from = match teams::rename(tx, &slug, &name) {
            Ok(from) => from,
            Err(err) => return Ok(Err(team_refusal(err, "name")?)),
        };
        let team = teams::by_slug(tx, &slug).map_err(|err| crate::db::DbError::Io {
            context: "reading a renamed team".into(),
            source: std::io::Error::other(err.to_string()),
        })?;
        let detail = serde_json::json!({ "slug": slug, "from": from, "to": team.name });
        team_audit(tx, &actor, Action::TeamChanged, &team.id, detail, now_ms)?;
        Ok(Ok(format!("team {slug} is renamed")))
    })
    .await?;
    Ok(done(PATH, &said))
}

#[derive(Deserialize)]
pub struct Move {
    parent: Option<String>,
}

/// `POST /admin/teams/{slug}/parent`.
pub async fn move_under(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(slug): Path<String>,
    Form(form): Form<Move>,
) -> Result<Redirect, PageError> {
    let parent = parent_of(form.parent);
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let said = change(&state, move |tx| {
        let from = match teams::set_parent(tx, &slug, parent.as_deref()) {
            Ok(from) => from,
            Err(err) => return Ok(Err(team_refusal(err, "parent")?)),
        };
        let id: String = tx.query_row("SELECT id FROM teams WHERE slug = ?1", [&slug], |row| row.get(0))?;
        let detail = serde_json::json!({ "slug": slug, "parent_from": from, "parent_to": parent });
        team_audit(tx, &actor, Action::TeamChanged, &id, detail, now_ms)?;
        Ok(Ok(match parent {
            Some(parent) => format!("team {slug} is now under {parent}"),
            None => format!("team {slug} is now at the top level"),
        }))
    })
    .await?;
    Ok(done(PATH, &said))
}

fn team_audit(
    tx: &rusqlite::Connection,
    actor: &str,
    action: Action,
    team_id: &str,
    detail: serde_json::Value,
    now_ms: i64,
) -> Result<(), crate::db::DbError> {
    let entry = Entry { actor_id: Some(actor), action, subject_user_id: None, target: Some(team_id), detail };
    audit::record(tx, &entry, now_ms).map(|_| ())
}

#[derive(Deserialize)]
pub struct RoleForm {
    role: Option<String>,
}

#[derive(Deserialize)]
pub struct AddForm {
    email: Option<String>,
    role: Option<String>,
}

/// `POST /admin/teams/{slug}/members/{user}`: a member's role.
pub async fn set_member_role(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path((slug, user_id)): Path<(String, String)>,
    Form(form): Form<RoleForm>,
) -> Result<Redirect, PageError> {
    let role = form.role.unwrap_or_default();
    change_team_role(&state, &caller.user.id, slug, Who::Id(user_id), role, false).await
}

/// `POST /admin/teams/{slug}/members`: a person added to a team by e-mail.
pub async fn add_member(
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

/// `POST /admin/teams/{slug}/members/{user}/remove`.
pub async fn remove_member(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path((slug, user_id)): Path<(String, String)>,
) -> Result<Redirect, PageError> {
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let said = change(&state, move |tx| {
        let team = match teams::by_slug(tx, &slug) {
            Ok(team) => team,
            Err(err) => return Ok(Err(team_refusal(err, "team")?)),
        };
        if let Err(err) = teams::refuse_member_change_if_synced(tx, &team) {
            return Ok(Err(team_refusal(err, "team")?));
        }
        let Some(role) = teams::remove_member(tx, &team.id, &user_id)? else { return Ok(Err(AppError::NotFound)) };
        let entry = Entry {
            actor_id: Some(&actor),
            action: Action::TeamMemberRemoved,
            subject_user_id: Some(&user_id),
            target: Some(&team.id),
            detail: serde_json::json!({ "team": team.slug, "role": role }),
        };
        audit::record(tx, &entry, now_ms)?;
        Ok(Ok(format!("a member left {}", team.slug)))
    })
    .await?;
    Ok(done(PATH, &said))
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
        if before.is_none() {
            if !adding {
                return Ok(Err(AppError::NotFound));
            }
            if let Err(err) = teams::refuse_member_change_if_synced(tx, &team) {
                return Ok(Err(team_refusal(err, "email")?));
            }
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
    Ok(done(PATH, &message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team(slug: &str, name: &str, parent: Option<&str>) -> (Team, i64) {
        let team = Team {
            id: slug.to_string(),
            slug: slug.to_string(),
            name: name.to_string(),
            parent_id: parent.map(str::to_string),
            retention_days: None,
        };
        (team, 0)
    }

    #[test]
    fn the_tree_puts_each_team_after_its_parent_and_siblings_by_name() {
        let all = vec![
            team("web-ui", "Web UI", Some("web")),
            team("ops", "Operations", None),
            team("web", "Web", Some("eng")),
            team("eng", "Engineering", None),
            team("api", "API", Some("eng")),
        ];
        let order: Vec<(String, usize)> = tree(all).into_iter().map(|(t, depth)| (t.slug, depth)).collect();
        let expected = [("eng", 0), ("api", 1), ("web", 1), ("web-ui", 2), ("ops", 0)];
        assert_eq!(order, expected.map(|(slug, depth)| (slug.to_string(), depth)));
    }
}

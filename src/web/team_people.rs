//! The team pages about members one by one: `/team/<slug>/sessions` (the sessions'
//! metadata), `/team/<slug>/pulls` (pull requests: the team's aggregate per repository,
//! then those of members the caller may see) and `/team/<slug>/members/<user id>` (one
//! member's figures).
//!
//! Invariants: who may be seen one by one is `access::drill_in::visible_members` (the
//! caller, grant holders, team leads where the member allows drill-in; never
//! `VIEWER_AGGREGATE`); every other member whose data a page shows gets a `MEMBER_VIEWED`
//! audit row, committed before the page is sent; a member the caller may not see is a
//! 404, as is a team they may not see.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use super::report::{Cell, ReportPage, Table, respond};
use super::reports::delivery_table;
use super::scope;
use super::teams::{ScopeParams, read_team, team_tabs};
use crate::access::drill_in::{self, Basis, Visible};
use crate::analytics::query::groups::{self, Guarded};
use crate::analytics::query::{self, By, Subject, delivery};
use crate::audit::{self, Action, Entry};
use crate::db::DbError;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Path, Query};
use crate::sessions::listing::{self, SessionRow};
use crate::state::AppState;
use crate::state::caller::{Caller, PageCaller};
use crate::web::session_name;

const LIST_LIMIT: usize = 200;

/// How a member is named on these pages.
fn shown_name(visible: &Visible) -> String {
    match (&visible.name, visible.basis) {
        (_, Basis::Own) => "you".to_string(),
        (Some(name), _) => name.clone(),
        (None, _) => "a member who chose not to be named".to_string(),
    }
}

fn person_cell(slug: &str, visible: &Visible) -> Cell {
    Cell::text(shown_name(visible)).link(format!("/team/{slug}/members/{}", visible.user_id))
}

/// The sessions of the members the reader may see one by one. A session is named by its
/// transcript's title only when it is the reader's own (`titles`); others' by where they
/// worked (`web::session_name`).
fn sessions_table(
    slug: &str,
    rows: Vec<(String, SessionRow)>,
    titles: &HashMap<String, String>,
    people: &[Visible],
    now_ms: i64,
) -> Table {
    let mut table = Table::new(
        "sessions",
        "Sessions",
        vec![
            "Session",
            "Started",
            "Person",
            "Agent",
            "Duration",
            "Prompts",
            "Tool calls",
            "Tool errors",
            "Spend",
            "Repository",
            "Outcome",
        ],
    );
    let (owners, rows): (Vec<String>, Vec<SessionRow>) = rows.into_iter().unzip();
    for (owner, named) in owners.iter().zip(session_name::titled(rows, titles)) {
        let Some(person) = people.iter().find(|p| &p.user_id == owner) else { continue };
        let row = &named.row;
        let repository = Cell::text(named.repository.shown.clone());
        let repository = match &named.repository.href {
            Some(href) => repository.link(href.clone()),
            None => repository,
        };
        table.rows.push(vec![
            // Every row opens: the list shows only sessions the rules let this reader open
            // (their own, a member they lead who allows drill-in, a grant's subject), and
            // the session page audits a read that is not their own.
            Cell::text(named.name.clone()).link(format!("/sessions/{}", row.id)),
            Cell::when(row.started_ms, now_ms),
            person_cell(slug, person),
            Cell::text(row.agent_type.clone()),
            Cell::hours(Some(row.duration_ms)),
            Cell::count(row.prompts),
            Cell::count(row.tool_calls),
            Cell::count(row.tool_errors),
            Cell::usd(row.cost_nusd),
            repository,
            Cell::text(row.outcome.clone()),
        ]);
    }
    table.note = format!(
        "Interactive sessions only, the newest first (at most {LIST_LIMIT}); metadata, never content: \
         another person's session is named by its repository and branch, yours by its first prompt."
    );
    table
}

/// Records that `caller` was shown these members' data on `page`.
async fn audit_members(
    state: &AppState,
    caller: &Caller,
    members: Vec<(String, Basis)>,
    page: String,
) -> Result<(), PageError> {
    let others: Vec<(String, Basis)> = members.into_iter().filter(|(_, basis)| *basis != Basis::Own).collect();
    if others.is_empty() {
        return Ok(());
    }
    let (actor, now) = (caller.user.id.clone(), state.clock.now_ms());
    state
        .write(move |tx| {
            for (member, basis) in &others {
                audit::record(
                    tx,
                    &Entry {
                        actor_id: Some(&actor),
                        action: Action::MemberViewed,
                        subject_user_id: Some(member),
                        target: Some(&page),
                        detail: serde_json::json!({ "basis": basis.as_str() }),
                    },
                    now,
                )?;
            }
            Ok(())
        })
        .await?;
    Ok(())
}

fn base_page(caller: &Caller, title: String, path: String, slug: &str, days: i64) -> ReportPage {
    ReportPage::new(caller.role.as_str(), title, path, Some(days), team_tabs(slug))
}

const AGGREGATES_ONLY: &str =
    "Your role sees aggregates only: no one's sessions or pull requests are listed for it (docs/access.md).";

fn members_intro(visible: &[Visible], members: i64) -> String {
    let others = visible.iter().filter(|v| v.basis != Basis::Own).count();
    format!(
        "Of the {members} members, you may see {others} other{} one by one: by a grant you hold, or as their team lead where they allow drill-in. Each view is in their audit log.",
        if others == 1 { "" } else { "s" }
    )
}

fn member_count(conn: &rusqlite::Connection, team_id: &str) -> Result<i64, DbError> {
    Ok(crate::access::teams::roster(conn, team_id)?.len() as i64)
}

pub async fn sessions(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(slug): Path<String>,
    Query(params): Query<ScopeParams>,
) -> Result<Response, PageError> {
    let now = state.clock.now_ms();
    let (days, period) = scope::period_param(params.days.as_deref(), now)?;
    let (user_id, role) = (caller.user.id.clone(), caller.role);
    let (name, members, visible, rows) = read_team(&state, &caller, &slug, move |conn, team, _| {
        let visible = drill_in::visible_members(conn, &user_id, role, &team.id, now)?;
        let ids: Vec<String> = visible.iter().map(|v| v.user_id.clone()).collect();
        let rows = listing::sessions_of(conn, &ids, period.from_ms, period.to_ms, LIST_LIMIT)?;
        // Titles are transcript content: only the reader's own sessions get theirs.
        let ids: Vec<&str> = rows.iter().map(|(_, row)| row.id.as_str()).collect();
        let titles = crate::transcripts::store::titles(conn, &user_id, &ids)?;
        Ok((team.name.clone(), member_count(conn, &team.id)?, visible, (rows, titles)))
    })
    .await?;
    let (rows, titles) = rows;
    let path = format!("/team/{slug}/sessions");
    let mut page = base_page(&caller, format!("Team {name}: sessions"), path.clone(), &slug, days);
    if !caller.role.may_reach_individual_sessions() {
        page.notice = Some(AGGREGATES_ONLY.into());
        return respond(page, &params, &format!("team-{slug}-sessions"));
    }
    page.intro = members_intro(&visible, members);
    let shown: Vec<(String, Basis)> = visible
        .iter()
        .filter(|v| rows.iter().any(|(owner, _)| owner == &v.user_id))
        .map(|v| (v.user_id.clone(), v.basis))
        .collect();
    let mut people = Table::new("people", "Members you may see one by one", vec!["Person", "Because"]);
    for v in &visible {
        people.rows.push(vec![
            person_cell(&slug, v),
            Cell::text(match v.basis {
                Basis::Own => "it is you",
                Basis::Grant => "you hold an access grant",
                Basis::TeamLead => "you lead their team and they allow drill-in",
            }),
        ]);
    }
    page.tables = vec![sessions_table(&slug, rows, &titles, &visible, state.clock.now_ms()), people];
    if params.format.as_deref() != Some("csv") || params.table.as_deref() == Some("sessions") {
        audit_members(&state, &caller, shown, path).await?;
    }
    respond(page, &params, &format!("team-{slug}-sessions"))
}

fn pulls_table(lines: &[delivery::PullRequestLine], slug: &str, visible: &[Visible]) -> Table {
    let mut table = Table::new(
        "list",
        "Pull requests of members you may see",
        vec!["Repository", "Number", "Title", "Person", "State", "Updated", "Agent sessions", "Agent spend"],
    );
    for line in lines {
        let Some(person) = visible.iter().find(|v| v.user_id == line.author_user_id) else { continue };
        table.rows.push(vec![
            Cell::text(line.repo.clone()),
            // A pull request's number reads as GitHub writes it (`#1054`), never as a count.
            Cell::shown(format!("#{}", line.number), line.number.to_string()),
            Cell::text(line.title.clone()),
            person_cell(slug, person),
            Cell::text(line.state.clone()),
            Cell::text(crate::model::rfc3339_ms(line.updated_at_ms)[..10].to_string()),
            Cell::count(line.sessions),
            Cell::usd(line.cost_nusd),
        ]);
    }
    table.note = format!("Opened or updated in the period, the newest first (at most {LIST_LIMIT}).");
    table
}

pub async fn pulls(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(slug): Path<String>,
    Query(params): Query<ScopeParams>,
) -> Result<Response, PageError> {
    let now = state.clock.now_ms();
    let (days, period) = scope::period_param(params.days.as_deref(), now)?;
    let min_people = state.config.analytics.min_group_size;
    let (user_id, role) = (caller.user.id.clone(), caller.role);
    let (name, repos, visible, lines) = read_team(&state, &caller, &slug, move |conn, team, _| {
        let subject = Subject::Team(team.id.clone());
        let repos = groups::guarded(conn, &subject, period, min_people, |conn| {
            Ok(delivery::MergedPulls::read(conn, &subject, period)?.by_repository(min_people))
        })?;
        let visible = if role.may_reach_individual_sessions() {
            drill_in::visible_members(conn, &user_id, role, &team.id, now)?
        } else {
            Vec::new()
        };
        let ids: Vec<String> = visible.iter().map(|v| v.user_id.clone()).collect();
        let lines = delivery::pull_requests_of(conn, &ids, period, LIST_LIMIT as i64)?;
        Ok((team.name.clone(), repos, visible, lines))
    })
    .await?;
    let path = format!("/team/{slug}/pulls");
    let mut page = base_page(&caller, format!("Team {name}: pull requests"), path.clone(), &slug, days);
    match repos {
        Guarded::Shown(rows) => {
            page.tables.push(delivery_table("repositories", "Merged, per repository", "Repository", &rows))
        }
        refused => {
            page.notice = super::report::withheld_notice(&refused);
            page.organisation_href = Some(format!("/org/delivery?days={days}"));
        }
    }
    if caller.role.may_reach_individual_sessions() {
        page.tables.push(pulls_table(&lines, &slug, &visible));
        let shown: Vec<(String, Basis)> = visible
            .iter()
            .filter(|v| lines.iter().any(|l| l.author_user_id == v.user_id))
            .map(|v| (v.user_id.clone(), v.basis))
            .collect();
        if params.format.as_deref() != Some("csv") || params.table.as_deref() == Some("list") {
            audit_members(&state, &caller, shown, path).await?;
        }
    } else {
        page.intro = AGGREGATES_ONLY.into();
    }
    respond(page, &params, &format!("team-{slug}-pulls"))
}

pub async fn member(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path((slug, member_id)): Path<(String, String)>,
    Query(params): Query<ScopeParams>,
) -> Result<Response, PageError> {
    let now = state.clock.now_ms();
    let (days, period) = scope::period_param(params.days.as_deref(), now)?;
    let (user_id, role, id) = (caller.user.id.clone(), caller.role, member_id.clone());
    let found = read_team(&state, &caller, &slug, move |conn, team, _| {
        let visible = drill_in::visible_members(conn, &user_id, role, &team.id, now)?;
        let Some(person) = visible.into_iter().find(|v| v.user_id == id) else { return Ok(None) };
        let subject = Subject::Person(person.user_id.clone());
        let totals = query::totals(conn, &subject, period)?;
        let activity = query::activity(conn, &subject, period)?;
        let agents = query::breakdown(conn, &subject, period, By::Agent)?;
        let tools = query::top_tools(conn, &subject, period, 15)?;
        let sessions =
            listing::sessions_of(conn, std::slice::from_ref(&person.user_id), period.from_ms, period.to_ms, 50)?;
        // Titles are transcript content: only the reader's own sessions get theirs.
        let ids: Vec<&str> = sessions.iter().map(|(_, row)| row.id.as_str()).collect();
        let titles = crate::transcripts::store::titles(conn, &user_id, &ids)?;
        let sessions = (sessions, titles);
        let pulls = delivery::pull_requests_of(conn, std::slice::from_ref(&person.user_id), period, 50)?;
        Ok(Some((team.name.clone(), person, totals, activity, agents, tools, sessions, pulls)))
    })
    .await?;
    let Some((team_name, person, totals, activity, agents, tools, sessions, pulls)) = found else {
        return Err(PageError(AppError::NotFound));
    };
    let path = format!("/team/{slug}/members/{member_id}");
    let title = format!("Team {team_name}: {}", shown_name(&person));
    let mut page = base_page(&caller, title, path.clone(), &slug, days);
    page.intro = if person.basis == Basis::Own {
        "Your own figures, as your team lead would see them if you allow drill-in.".into()
    } else {
        "This view is recorded in their audit log (MEMBER_VIEWED), which they can read.".into()
    };
    let mut figures = Table::new("figures", "Figures", vec!["Figure", "Value"]);
    figures.rows = vec![
        vec![Cell::text("Spend"), Cell::usd(totals.cost_nusd)],
        vec![Cell::text("Sessions"), Cell::count(totals.sessions_started)],
        vec![Cell::text("Prompts"), Cell::count(totals.prompts)],
        vec![Cell::text("Tokens"), Cell::count(crate::web::shown::tokens(&totals))],
        vec![Cell::text("Active time"), Cell::hours(Some(activity.active_ms))],
        vec![Cell::text("Permission prompts"), Cell::count(activity.permission_prompts)],
    ];
    let mut by_agent = Table::new("agents", "Agents", vec!["Agent", "Spend", "Sessions", "Prompts"]);
    for (agent, f) in &agents {
        by_agent.rows.push(vec![
            Cell::text(agent.clone()),
            Cell::usd(f.cost_nusd),
            Cell::count(f.sessions_started),
            Cell::count(f.prompts),
        ]);
    }
    let mut by_tool = Table::new("tools", "Most used tools", vec!["Tool", "Server", "Calls", "Errors", "Denied"]);
    for t in &tools {
        by_tool.rows.push(vec![
            Cell::text(t.tool.clone()),
            Cell::text(t.tool_server.clone()),
            Cell::count(t.calls),
            Cell::count(t.errors),
            Cell::count(t.denials),
        ]);
    }
    let visible = [person.clone()];
    let (sessions, titles) = sessions;
    page.tables = vec![
        figures,
        by_agent,
        by_tool,
        sessions_table(&slug, sessions, &titles, &visible, state.clock.now_ms()),
        pulls_table(&pulls, &slug, &visible),
    ];
    audit_members(&state, &caller, vec![(person.user_id.clone(), person.basis)], path).await?;
    respond(page, &params, &format!("team-{slug}-member"))
}

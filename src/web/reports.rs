//! The team and organisation report pages past the overview: `/team/<slug>/<report>` and
//! `/org/<report>`, one handler each over the [`Report`]s, each page a list of tables
//! (`web::report`) over 7, 30 or 90 days with every table as CSV.
//!
//! Invariants: a team the caller may not see is a 404 (as in `web::teams`); a report is
//! read only when its subject had at least `analytics.min_group_size` active people in the
//! period (else a notice and no table, and its CSV is refused), and every figure inside
//! comes from `analytics::query`, whose functions fold or withhold groups below the
//! minimum; pages read aggregates and the GitHub tables, never raw events.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use super::report::{ReportPage, Table, respond};
use super::scope;
use super::teams::{ScopeParams, read_team, team_tabs};
use crate::access::teams::{self, Team};
use crate::analytics::query::groups::{self, Guarded, TeamGroup};
use crate::analytics::query::{Period, Subject};
use crate::db::DbError;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Path, Query};
use crate::state::AppState;
use crate::state::caller::PageCaller;

mod delivery;
mod months;
mod people;
mod usage;

pub use delivery::delivery_table;

/// A report page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    Adoption,
    Delivery,
    Teams,
    Tools,
    ToolServers,
    Skills,
    Agents,
    Models,
    Governance,
    Roi,
    Security,
    Knowledge,
    Months,
}

impl Report {
    /// The reports of a team's pages, in tab order (after Overview, Roster, Sessions and
    /// Pull requests, which `web::team_people` serves).
    pub const TEAM: [Report; 7] = [
        Report::Adoption,
        Report::Tools,
        Report::ToolServers,
        Report::Agents,
        Report::Models,
        Report::Skills,
        Report::Months,
    ];
    /// The reports of the organisation, in tab order.
    pub const ORG: [Report; 13] = [
        Report::Adoption,
        Report::Delivery,
        Report::Teams,
        Report::Tools,
        Report::ToolServers,
        Report::Skills,
        Report::Agents,
        Report::Models,
        Report::Governance,
        Report::Roi,
        Report::Security,
        Report::Knowledge,
        Report::Months,
    ];

    pub fn segment(self) -> &'static str {
        match self {
            Report::Adoption => "adoption",
            Report::Delivery => "delivery",
            Report::Teams => "teams",
            Report::Tools => "tools",
            Report::ToolServers => "tool-servers",
            Report::Skills => "skills",
            Report::Agents => "agents",
            Report::Models => "models",
            Report::Governance => "governance",
            Report::Roi => "roi",
            Report::Security => "security",
            Report::Knowledge => "knowledge",
            Report::Months => "months",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Report::Adoption => "Adoption",
            Report::Delivery => "Delivery",
            Report::Teams => "Teams",
            Report::Tools => "Tools",
            Report::ToolServers => "Tool servers",
            Report::Skills => "Skills",
            Report::Agents => "Agents",
            Report::Models => "Models",
            Report::Governance => "Governance",
            Report::Roi => "ROI",
            Report::Security => "Security",
            Report::Knowledge => "Knowledge",
            Report::Months => "Months",
        }
    }

    fn parse(segment: &str, among: &[Report]) -> Option<Report> {
        among.iter().copied().find(|report| report.segment() == segment)
    }

    /// Whether the report is about the organisation's processes rather than people's
    /// work, so it needs no minimum of active people (its counts of people are withheld
    /// one by one instead).
    fn unguarded(self) -> bool {
        // Months guards each month (and each team's budget) by its own active people.
        self == Report::Governance || self == Report::Months
    }
}

/// What a report is built from.
pub struct Ctx<'a> {
    pub conn: &'a rusqlite::Connection,
    pub subject: Subject,
    /// The groups below the subject: a team's sub-teams and direct members, or the
    /// organisation's top-level teams and the people in none.
    pub groups: Vec<TeamGroup>,
    pub period: Period,
    /// Now, on the server's clock (a projection's grade is of its period so far).
    pub now_ms: i64,
    /// Whether the reader is an administrator: reconciliation per day and model can
    /// describe one person's spend on a quiet day, so only they see it.
    pub reader_is_admin: bool,
    pub days: i64,
    pub min_people: i64,
    /// Every team (for the organisation's team list).
    pub all_teams: Vec<Team>,
}

fn build(report: Report, ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    match report {
        Report::Adoption => people::adoption(ctx),
        Report::Delivery => delivery::delivery(ctx),
        Report::Teams => usage::teams(ctx),
        Report::Tools => usage::tools(ctx),
        Report::ToolServers => usage::tool_servers(ctx),
        Report::Skills => usage::skills(ctx),
        Report::Agents => usage::agents(ctx),
        Report::Models => usage::models(ctx),
        Report::Governance => people::governance(ctx),
        Report::Roi => delivery::roi(ctx),
        Report::Security => people::security(ctx),
        Report::Knowledge => people::knowledge(ctx),
        Report::Months => months::months(ctx),
    }
}

/// Reads a report, or why it is not shown.
fn read(report: Report, ctx: &Ctx<'_>) -> Result<Guarded<(String, Vec<Table>)>, DbError> {
    if report.unguarded() {
        return Ok(Guarded::Shown(build(report, ctx)?));
    }
    groups::guarded(ctx.conn, &ctx.subject, ctx.period, ctx.min_people, |_| build(report, ctx))
}

/// The groups below a team: its sub-teams, and its direct members when it has any.
pub fn team_groups(team: &Team, children: Vec<Team>) -> Vec<TeamGroup> {
    let mut groups: Vec<TeamGroup> =
        children.into_iter().map(|t| TeamGroup::Team { id: t.id, label: t.slug }).collect();
    if !groups.is_empty() {
        groups
            .push(TeamGroup::Rest { team_id: Some(team.id.clone()), label: format!("{} (direct members)", team.slug) });
    }
    groups
}

/// The organisation's top-level teams and the people in none.
pub fn org_groups(all: &[Team]) -> Vec<TeamGroup> {
    let mut groups: Vec<TeamGroup> = all
        .iter()
        .filter(|team| team.parent_id.is_none())
        .map(|team| TeamGroup::Team { id: team.id.clone(), label: team.slug.clone() })
        .collect();
    groups.push(TeamGroup::Rest { team_id: None, label: "(in no team)".into() });
    groups
}

fn page(
    report: Report,
    nav_role: &'static str,
    title: String,
    path: String,
    days: i64,
    tabs: Vec<(String, &'static str)>,
    read: Guarded<(String, Vec<Table>)>,
) -> ReportPage {
    // Months are calendar months: no rolling period applies to them.
    let days = (report != Report::Months).then_some(days);
    let mut page = ReportPage::new(nav_role, title, path, days, tabs);
    match read {
        Guarded::Shown((intro, tables)) => (page.intro, page.tables) = (intro, tables),
        refused => page.notice = super::report::withheld_notice(&refused),
    }
    page
}

pub async fn team_report(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path((slug, segment)): Path<(String, String)>,
    Query(params): Query<ScopeParams>,
) -> Result<Response, PageError> {
    let Some(report) = Report::parse(&segment, &Report::TEAM) else { return Err(PageError(AppError::NotFound)) };
    let now_ms = state.clock.now_ms();
    let (days, period) = scope::period_param(params.days.as_deref(), now_ms)?;
    let min_people = state.config.analytics.min_group_size;
    let (team, read) = read_team(&state, &caller, &slug, move |conn, team, children| {
        let ctx = Ctx {
            conn,
            subject: Subject::Team(team.id.clone()),
            groups: team_groups(&team, children),
            period,
            now_ms,
            reader_is_admin: false,
            days,
            min_people,
            all_teams: Vec::new(),
        };
        let read = read(report, &ctx)?;
        Ok((team, read))
    })
    .await?;
    let path = format!("/team/{slug}/{segment}");
    let title = format!("Team {}: {}", team.name, report.label());
    let mut page = page(report, caller.role.as_str(), title, path, days, team_tabs(&slug), read);
    if page.notice.is_some() && Report::ORG.contains(&report) {
        page.organisation_href = Some(format!("/org/{segment}?days={days}"));
    }
    respond(page, &params, &format!("team-{slug}-{segment}"))
}

pub async fn org_report(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(segment): Path<String>,
    Query(params): Query<ScopeParams>,
) -> Result<Response, PageError> {
    let Some(report) = Report::parse(&segment, &Report::ORG) else { return Err(PageError(AppError::NotFound)) };
    let now_ms = state.clock.now_ms();
    let (days, period) = scope::period_param(params.days.as_deref(), now_ms)?;
    let min_people = state.config.analytics.min_group_size;
    let reader_is_admin = caller.role == crate::access::roles::OrgRole::Admin;
    let read = state
        .read(move |conn| {
            let all_teams: Vec<Team> = teams::list(conn)?.into_iter().map(|(team, _)| team).collect();
            let ctx = Ctx {
                conn,
                subject: Subject::Organisation,
                groups: org_groups(&all_teams),
                period,
                now_ms,
                reader_is_admin,
                days,
                min_people,
                all_teams,
            };
            read(report, &ctx)
        })
        .await?;
    let path = format!("/org/{segment}");
    let page = page(
        report,
        caller.role.as_str(),
        format!("Organisation: {}", report.label()),
        path,
        days,
        super::org::org_tabs(),
        read,
    );
    respond(page, &params, &format!("org-{segment}"))
}

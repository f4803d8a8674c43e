//! The usage reports: tools, tool servers, skills and slash commands, agents, models and
//! teams, each a table per breakdown of the aggregates (`analytics::query::groups`), the
//! groups of fewer than the minimum number of people in one "other" row.

use super::super::report::{Cell, OTHER, Table};
use super::Ctx;
use crate::analytics::query::disclosure::Disclosure;
use crate::analytics::query::groups::{self, GroupRow, TeamGroup, ToolKey};
use crate::analytics::query::knowledge;
use crate::analytics::query::{By, Figures, ToolFigures};
use crate::charts::{Bar, bars};
use crate::db::DbError;
use crate::web::shown::tokens;

const LIMIT: usize = 50;

fn name(key: &Option<String>, shown: &str) -> String {
    match key {
        None => OTHER.into(),
        Some(_) if shown.is_empty() => "(none)".into(),
        Some(_) => shown.into(),
    }
}

fn mean_ms(total: i64, count: i64) -> Cell {
    if count == 0 {
        return Cell::text("—");
    }
    let ms = total / count;
    Cell::shown(format!("{ms} ms"), ms.to_string())
}

/// A table of tool call groups: name (and server for tools), people, calls, errors,
/// error rate, denials, mean duration; with a chart of the most called.
fn tool_table(
    id: &'static str,
    heading: &str,
    what: &'static str,
    rows: &[GroupRow<ToolFigures>],
    with_server: bool,
) -> Table {
    let mut columns = vec![what];
    if with_server {
        columns.push("Server");
    }
    columns.extend(["People", "Calls", "Errors", "Error rate", "Denied", "Mean duration"]);
    let mut table = Table::new(id, heading, columns);
    for row in rows {
        let f = &row.figures;
        let mut cells = vec![Cell::text(name(&row.key, &f.tool))];
        if with_server {
            cells.push(Cell::text(if row.key.is_none() { String::new() } else { f.tool_server.clone() }));
        }
        cells.extend([
            Cell::count(row.people),
            Cell::count(f.calls),
            Cell::count(f.errors),
            Cell::share(f.errors, f.calls),
            Cell::count(f.denials),
            mean_ms(f.duration_ms, f.calls),
        ]);
        table.rows.push(cells);
    }
    let points: Vec<Bar> = rows
        .iter()
        .filter(|row| row.key.is_some())
        .take(12)
        .map(|row| Bar {
            // Whole: the chart turns or cuts labels that do not fit (charts::bars).
            label: row.figures.tool.clone(),
            hover: format!("{}: {} calls", row.figures.tool, row.figures.calls),
            value: row.figures.calls as f64,
        })
        .collect();
    if points.len() > 1 {
        table.chart = Some(bars(&format!("{heading}: calls"), &points, |v| format!("{v:.0}"), 900, 220));
    }
    table
}

pub fn tools(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let rows = groups::tool_groups(ctx.conn, &ctx.subject, ctx.period, ToolKey::Tool, LIMIT, ctx.min_people)?;
    let table = tool_table("tools", "Tools", "Tool", &rows, true)
        .note("The most called first (up to 50). Errors are failed calls; denied are calls the person refused.");
    Ok(("Every tool call of interactive sessions, by tool.".into(), vec![table]))
}

pub fn tool_servers(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let rows = groups::tool_groups(ctx.conn, &ctx.subject, ctx.period, ToolKey::Server, LIMIT, ctx.min_people)?;
    let mut tables = vec![
        tool_table("servers", "Tool servers", "Server", &rows, false)
            .note("Calls to tools of an MCP server, by server; built-in tools are not counted here."),
    ];
    if ctx.subject == crate::analytics::query::Subject::Organisation {
        tables.push(spread_table("portfolio", "Where each server is used", "Server", ctx, ToolKey::Server)?);
    }
    Ok(("The tool servers (MCP) agents called: how much, how reliably, and by how many people.".into(), tables))
}

pub fn skills(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let skills = groups::tool_groups(ctx.conn, &ctx.subject, ctx.period, ToolKey::Skill, LIMIT, ctx.min_people)?;
    let commands =
        groups::tool_groups(ctx.conn, &ctx.subject, ctx.period, ToolKey::SlashCommand, LIMIT, ctx.min_people)?;
    Ok((
        "Skills the agents loaded and the slash commands people ran, by the tool calls made under them.".into(),
        vec![
            tool_table("skills", "Skills", "Skill", &skills, false).note("Calls made while a skill was loaded."),
            tool_table("commands", "Slash commands", "Command", &commands, false)
                .note("Calls made under a slash command."),
        ],
    ))
}

fn usage_table(id: &'static str, heading: &str, what: &'static str, rows: &[GroupRow<Figures>], total: i64) -> Table {
    let mut table = Table::new(id, heading, vec![what, "People", "Spend", "Share", "Sessions", "Prompts", "Tokens"]);
    for row in rows {
        let f = &row.figures;
        table.rows.push(vec![
            Cell::text(match row.key.as_deref() {
                None => OTHER.to_string(),
                Some("") => "(none)".to_string(),
                Some(key) => key.replace('\t', " · "),
            }),
            Cell::count(row.people),
            Cell::usd(f.cost_nusd),
            Cell::share(f.cost_nusd, total),
            Cell::count(f.sessions_started),
            Cell::count(f.prompts),
            Cell::count(tokens(f)),
        ]);
    }
    table
}

pub fn agents(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let total = crate::analytics::query::totals(ctx.conn, &ctx.subject, ctx.period)?.cost_nusd;
    let usage = groups::breakdown(ctx.conn, &ctx.subject, ctx.period, By::Agent, ctx.min_people)?;
    let calls = groups::tool_groups(ctx.conn, &ctx.subject, ctx.period, ToolKey::Agent, LIMIT, ctx.min_people)?;
    Ok((
        "Which agents people use, what they cost and how their tool calls fare.".into(),
        vec![
            usage_table("agents", "Spend by agent", "Agent", &usage, total),
            tool_table("agent-tools", "Tool calls by agent", "Agent", &calls, false),
        ],
    ))
}

pub fn models(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let total = crate::analytics::query::totals(ctx.conn, &ctx.subject, ctx.period)?.cost_nusd;
    // The sessions behind the model rows, read once for the three tables.
    let sessions = crate::analytics::query::models::ModelSessions::read(ctx.conn, &ctx.subject, ctx.period)?;
    let breakdown = |by| groups::breakdown_with(ctx.conn, &ctx.subject, ctx.period, by, ctx.min_people, &sessions);
    let (models, pairs, snapshots) = (breakdown(By::Model)?, breakdown(By::AgentModel)?, breakdown(By::ModelSnapshot)?);
    let mut by_model = usage_table("models", "Spend by model", "Model", &models, total).note(
        "A model's row holds its dated snapshots and its alias (the exact ids are in the table below). Its sessions and prompts are those of the sessions that used it: a session that used two models counts under both.",
    );
    for (row, group) in by_model.rows.iter_mut().zip(&models) {
        if group.key.is_some() {
            let cell = std::mem::replace(&mut row[0], Cell::text(""));
            row[0] = cell.link("#model-snapshots");
        }
    }
    let points: Vec<Bar> = models
        .iter()
        .filter(|row| row.key.is_some())
        .take(12)
        .map(|row| Bar {
            label: row.key.clone().unwrap_or_default(),
            hover: format!("{}: {}", row.key.as_deref().unwrap_or(""), crate::model::usd(row.figures.cost_nusd)),
            value: crate::model::nusd_to_usd(row.figures.cost_nusd),
        })
        .collect();
    if points.len() > 1 {
        by_model.chart = Some(bars("Spend by model (USD)", &points, |v| format!("${v:.0}"), 900, 220));
    }
    Ok((
        "The models behind the agents, by spend; a model's price depends on the agent's price table.".into(),
        vec![
            by_model,
            usage_table("agent-models", "Spend by agent and model", "Agent · model", &pairs, total),
            usage_table("model-snapshots", "Exact model ids", "Model id", &snapshots, total)
                .note("Each exact id the agents reported, dated snapshots apart from their alias."),
        ],
    ))
}

/// What a team table says of the teams it leaves out (`analytics::query::disclosure`).
pub const WITHHELD_TEAMS: &str = "Teams too small to show are not listed, and neither is a team whose figures, taken from the others', would give a small one away.";

pub fn teams(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let total = crate::analytics::query::totals(ctx.conn, &ctx.subject, ctx.period)?.cost_nusd;
    // One decision for both tables (and the page's own total), as `analytics::query::disclosure` says.
    let disclosure = Disclosure::of_usage(ctx.conn, ctx.period, ctx.min_people)?;
    let top = groups::per_team(ctx.conn, &ctx.groups, ctx.period, &disclosure)?;
    let every: Vec<TeamGroup> =
        ctx.all_teams.iter().map(|team| TeamGroup::Team { id: team.id.clone(), label: team.slug.clone() }).collect();
    let all = groups::per_team(ctx.conn, &every, ctx.period, &disclosure)?;
    let mut each = usage_table("all-teams", "Every team (with the teams below it)", "Team", &all, total).note(format!(
        "A team includes its sub-teams, so these rows overlap and do not add up to the organisation. {WITHHELD_TEAMS}"
    ));
    for (row, group) in each.rows.iter_mut().zip(&all) {
        if let Some(slug) = &group.key {
            let cell = std::mem::replace(&mut row[0], Cell::text(""));
            row[0] = cell.link(format!("/team/{slug}"));
        }
    }
    Ok((
        "Usage per team. A person in several teams counts in each.".into(),
        vec![usage_table("teams", "Top-level teams", "Team", &top, total).note(WITHHELD_TEAMS), each],
    ))
}

/// The spread of skills, slash commands or tool servers across teams.
pub fn spread_table(
    id: &'static str,
    heading: &str,
    what: &'static str,
    ctx: &Ctx<'_>,
    key: ToolKey,
) -> Result<Table, DbError> {
    let spread = knowledge::spread(ctx.conn, key, ctx.period, ctx.min_people)?;
    let mut table = Table::new(id, heading, vec![what, "People", "Teams", "Calls", "First used", "First used in"]);
    for item in &spread.items {
        table.rows.push(vec![
            Cell::text(item.name.clone()),
            Cell::count(item.people),
            Cell::count(item.teams),
            Cell::count(item.calls),
            Cell::text(crate::model::rfc3339_ms(item.first_day_ms)[..10].to_string()),
            Cell::text(item.first_team.clone().unwrap_or_else(|| "a team too small to name".into())),
        ]);
    }
    table.note = format!(
        "The widest spread first. {} used by fewer than {} people {} not listed. “First used” is the first day in this period; the team is the one most of that day's users are in, named only when it has at least {} members.",
        spread.unlisted,
        ctx.min_people,
        if spread.unlisted == 1 { "is" } else { "are" },
        ctx.min_people
    );
    Ok(table)
}

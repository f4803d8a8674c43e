//! Tool-call breakdowns (tools, tool servers, skills, slash commands, agents) from the
//! daily tools aggregate, the most called first, each group of fewer than the minimum of
//! people folded into one "other" row (the groups do not overlap).

use std::collections::BTreeSet;

use hashbrown::HashMap;

use rusqlite::{Connection, params_from_iter};

use super::{GroupRow, PeopleBits, PersonIds, entry, fold, text};
use crate::analytics::query::{Period, Subject, ToolFigures, parameters, subject_filter};
use crate::db::DbError;

/// What tool calls are grouped by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolKey {
    /// Tool and tool server (the row's `tool` and `tool_server`).
    Tool,
    /// Tool server (MCP); calls to no server are left out.
    Server,
    /// Skill; calls that loaded none are left out.
    Skill,
    /// Slash command; calls under none are left out.
    SlashCommand,
    /// Agent.
    Agent,
}

impl ToolKey {
    /// The name column, the server column and the rows' filter.
    fn columns(self) -> (&'static str, &'static str, &'static str) {
        match self {
            ToolKey::Tool => ("tool_name", "tool_server", "1 = 1"),
            ToolKey::Server => ("tool_server", "''", "tool_server <> ''"),
            ToolKey::Skill => ("skill", "''", "skill <> ''"),
            ToolKey::SlashCommand => ("slash_command", "''", "slash_command <> ''"),
            ToolKey::Agent => ("agent_type", "''", "1 = 1"),
        }
    }

    /// Where the rows are read: a group kept for a minority of the calls (skills, slash
    /// commands, servers) reads its partial covering index, named because SQLite plans
    /// without statistics here and could as well read the whole period's calls.
    fn source(self) -> &'static str {
        match self {
            ToolKey::Tool | ToolKey::Agent => "agg_tools_daily",
            ToolKey::Server => "agg_tools_daily INDEXED BY agg_tools_daily_servers",
            ToolKey::Skill => "agg_tools_daily INDEXED BY agg_tools_daily_skills",
            ToolKey::SlashCommand => "agg_tools_daily INDEXED BY agg_tools_daily_commands",
        }
    }
}

/// The subject's most used tools (up to `limit` groups before folding), with every tool
/// used by fewer than `min_people` folded into the last row.
pub fn tools(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    limit: usize,
    min_people: i64,
) -> Result<Vec<GroupRow<ToolFigures>>, DbError> {
    tool_groups(conn, subject, period, ToolKey::Tool, limit, min_people)
}

/// The rows of `key`'s groups for a subject's `filter`, over a period (two parameters
/// after the filter's). Grouped by the caller rather than by SQL: `group_concat(DISTINCT
/// user_id)` over a quarter's rows costs more than the whole scan.
fn select_sql(key: ToolKey, filter: &str) -> String {
    let (name, server, only) = key.columns();
    format!(
        "SELECT {name}, {server}, user_id, calls, errors, denials, duration_ms
         FROM {source} WHERE {filter} AND {only} AND day_start_ms >= ? AND day_start_ms < ?",
        source = key.source()
    )
}

/// The subject's tool calls grouped by `key` (up to `limit` groups before folding), the
/// most called first, with every group of fewer than `min_people` folded into the last
/// row (whose `tool` and `tool_server` are empty).
pub fn tool_groups(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    key: ToolKey,
    limit: usize,
    min_people: i64,
) -> Result<Vec<GroupRow<ToolFigures>>, DbError> {
    let (filter, values) = subject_filter(subject);
    let sql = select_sql(key, filter);
    // By tool, then server, so a row's text is borrowed for the look-up and copied only
    // for a group's first row.
    let mut groups: HashMap<String, HashMap<String, (ToolFigures, PeopleBits)>> = HashMap::new();
    let mut people = PersonIds::default();
    let mut stmt = conn.prepare(&sql)?;
    let mut found = stmt.query(params_from_iter(parameters(values, period)))?;
    while let Some(row) = found.next()? {
        let person = people.of(text(row, 2)?);
        let (tool, tool_server) = (text(row, 0)?, text(row, 1)?);
        let servers = entry(&mut groups, tool, HashMap::new);
        let (figures, group_people) = entry(servers, tool_server, Default::default);
        figures.calls += row.get::<_, i64>(3)?;
        figures.errors += row.get::<_, i64>(4)?;
        figures.denials += row.get::<_, i64>(5)?;
        figures.duration_ms += row.get::<_, i64>(6)?;
        group_people.insert(person);
    }
    let mut rows: Vec<(String, ToolFigures, BTreeSet<u32>)> = groups
        .into_iter()
        .flat_map(|(tool, servers)| {
            servers.into_iter().map(move |(tool_server, (figures, people))| {
                (
                    format!("{tool}\t{tool_server}"),
                    ToolFigures { tool: tool.clone(), tool_server, ..figures },
                    people.to_set(),
                )
            })
        })
        .collect();
    rows.sort_by(|a, b| b.1.calls.cmp(&a.1.calls).then_with(|| a.0.cmp(&b.0)));
    let add = |into: &mut ToolFigures, more: &ToolFigures| {
        into.calls += more.calls;
        into.errors += more.errors;
        into.denials += more.denials;
        into.duration_ms += more.duration_ms;
    };
    let mut folded = fold(rows, min_people, add, |t| t.calls);
    // The most used first, "other" last; the shown rows beyond `limit` are left out (a top
    // list: the rows kept still each cover at least the minimum).
    if folded.len() > limit + 1 {
        let other_at = folded.iter().position(|r| r.key.is_none());
        let other = other_at.map(|at| folded.remove(at));
        folded.truncate(limit);
        folded.extend(other);
    }
    for row in &mut folded {
        if row.key.is_none() {
            row.figures.tool = String::new();
            row.figures.tool_server = String::new();
        }
    }
    Ok(folded)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The skills, commands and servers of a quarter are read from their partial
    /// indexes alone (covering: no look-up of the table's rows), for the organisation and
    /// for a team.
    #[test]
    fn a_minority_group_reads_only_its_partial_index() {
        let conn = crate::db::plans::main_db();
        for subject in [Subject::Organisation, Subject::Team("t".into())] {
            let (filter, values) = subject_filter(&subject);
            for (key, index) in [
                (ToolKey::Skill, "agg_tools_daily_skills"),
                (ToolKey::SlashCommand, "agg_tools_daily_commands"),
                (ToolKey::Server, "agg_tools_daily_servers"),
            ] {
                let period = Period { from_ms: 0, to_ms: 1 };
                let plan = crate::db::plans::plan(
                    &conn,
                    &select_sql(key, filter),
                    params_from_iter(parameters(values.clone(), period)),
                );
                assert!(
                    plan.iter().any(|step| step.contains(&format!("USING COVERING INDEX {index}"))),
                    "{key:?} {subject:?}: {plan:?}"
                );
            }
        }
    }
}

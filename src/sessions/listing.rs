//! A person's own sessions as a list (`/me/sessions`): filtered by agent, model,
//! repository, branch, dates, run kind and outcome, sorted, paged, and whole as CSV.
//!
//! Invariants: the owner is part of every query (`user_id = ?` first), so the list can
//! only ever hold the caller's own sessions; filters and sort keys are checked against
//! closed lists before any SQL is built, and values are always bound, never spliced.

use rusqlite::{Connection, ToSql, params_from_iter};
use serde::Serialize;

use crate::db::DbError;
use crate::model::rfc3339_ms;

/// What the list is narrowed to. Empty strings mean "any".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub agent: String,
    pub model: String,
    /// A substring of the repository remote.
    pub repo: String,
    pub branch: String,
    /// Sessions whose first event is at or after this time.
    pub from_ms: Option<i64>,
    /// Sessions whose first event is before this time.
    pub to_ms: Option<i64>,
    /// `INTERACTIVE`, `CI` or `EVAL`; empty for all.
    pub run_kind: String,
    /// `open`, `ended` or `abandoned`; empty for all.
    pub outcome: String,
    /// A shape label (`scoring::trajectory::Shape`); empty for all.
    pub shape: String,
}

/// The sort keys the list accepts, with their column.
pub const SORTS: [(&str, &str); 6] = [
    ("started", "first_event_ms"),
    ("cost", "cost_nusd"),
    ("duration", "last_event_ms - first_event_ms"),
    ("events", "event_count"),
    ("tools", "tool_call_count"),
    // Unscored sessions (NULL) sort below every scored one.
    ("friction", "friction_score"),
];

/// The run kinds and outcomes a filter may name.
pub const RUN_KINDS: [&str; 3] = ["INTERACTIVE", "CI", "EVAL"];
pub const OUTCOMES: [&str; 3] = ["open", "ended", "abandoned"];
/// The shape labels scoring writes on `sessions.shape_label` (a test keeps them equal to
/// `scoring::trajectory::Shape`).
pub const SHAPES: [&str; 6] = ["delegation", "debugging", "feature", "single_edit", "exploration", "question"];

/// One row of the list.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionRow {
    pub id: String,
    pub agent_type: String,
    pub agent_session_id: String,
    pub run_kind: String,
    pub started: String,
    pub started_ms: i64,
    pub duration_ms: i64,
    pub events: i64,
    pub prompts: i64,
    pub tool_calls: i64,
    pub tool_errors: i64,
    pub cost_nusd: i64,
    pub repo: Option<String>,
    pub branch: Option<String>,
    pub outcome: String,
}

/// Why a filter or sort was refused, naming the parameter.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused {
    pub field: &'static str,
    pub message: String,
}

fn where_clause(user_id: &str, filter: &Filter) -> Result<(String, Vec<Box<dyn ToSql>>), Refused> {
    let mut clauses = vec!["s.user_id = ?".to_string()];
    let mut values: Vec<Box<dyn ToSql>> = vec![Box::new(user_id.to_string())];
    let mut add = |clause: &str, value: Box<dyn ToSql>| {
        clauses.push(clause.to_string());
        values.push(value);
    };
    if !filter.agent.is_empty() {
        add("s.agent_type = ?", Box::new(filter.agent.clone()));
    }
    if !filter.model.is_empty() {
        add(
            "EXISTS (SELECT 1 FROM session_models m WHERE m.session_id = s.id AND m.model = ?)",
            Box::new(filter.model.clone()),
        );
    }
    if !filter.repo.is_empty() {
        add("instr(lower(coalesce(s.git_remote, '')), lower(?)) > 0", Box::new(filter.repo.clone()));
    }
    if !filter.branch.is_empty() {
        add("s.git_branch = ?", Box::new(filter.branch.clone()));
    }
    if let Some(from) = filter.from_ms {
        add("s.first_event_ms >= ?", Box::new(from));
    }
    if let Some(to) = filter.to_ms {
        add("s.first_event_ms < ?", Box::new(to));
    }
    if !filter.run_kind.is_empty() {
        if !RUN_KINDS.contains(&filter.run_kind.as_str()) {
            return Err(Refused {
                field: "run_kind",
                message: format!("run_kind must be one of {}, not {:?}", RUN_KINDS.join(", "), filter.run_kind),
            });
        }
        add("s.run_kind = ?", Box::new(filter.run_kind.clone()));
    }
    if !filter.shape.is_empty() {
        if !SHAPES.contains(&filter.shape.as_str()) {
            return Err(Refused {
                field: "shape",
                message: format!("shape must be one of {}, not {:?}", SHAPES.join(", "), filter.shape),
            });
        }
        add("s.shape_label = ?", Box::new(filter.shape.clone()));
    }
    match filter.outcome.as_str() {
        "" => {}
        "open" => clauses.push("s.ended_at_ms IS NULL".into()),
        "ended" | "abandoned" => add("s.end_reason = ?", Box::new(filter.outcome.clone())),
        other => {
            return Err(Refused {
                field: "outcome",
                message: format!("outcome must be one of {}, not {other:?}", OUTCOMES.join(", ")),
            });
        }
    }
    Ok((clauses.join(" AND "), values))
}

/// The column of a sort key, or why it is refused.
pub fn sort_column(key: &str) -> Result<&'static str, Refused> {
    SORTS.iter().find(|(name, _)| *name == key).map(|(_, column)| *column).ok_or_else(|| Refused {
        field: "sort",
        message: format!("sort must be one of {}, not {key:?}", SORTS.map(|(name, _)| name).join(", ")),
    })
}

/// A list row from the first fourteen columns of the list's `SELECT`.
fn session_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        id: row.get(0)?,
        agent_type: row.get(1)?,
        agent_session_id: row.get(2)?,
        run_kind: row.get(3)?,
        started: rfc3339_ms(row.get(4)?),
        started_ms: row.get(4)?,
        duration_ms: row.get(5)?,
        events: row.get(6)?,
        prompts: row.get(7)?,
        tool_calls: row.get(8)?,
        tool_errors: row.get(9)?,
        cost_nusd: row.get(10)?,
        repo: row.get(11)?,
        branch: row.get(12)?,
        outcome: row.get(13)?,
    })
}

/// The caller's sessions matching `filter`, sorted (`descending` or not), `limit` from
/// `offset`, and how many match in all.
pub fn own_sessions(
    conn: &Connection,
    user_id: &str,
    filter: &Filter,
    sort: &str,
    descending: bool,
    limit: usize,
    offset: usize,
) -> Result<Result<(Vec<SessionRow>, i64), Refused>, DbError> {
    let (clause, values) = match where_clause(user_id, filter) {
        Ok(built) => built,
        Err(refused) => return Ok(Err(refused)),
    };
    let column = match sort_column(sort) {
        Ok(column) => column,
        Err(refused) => return Ok(Err(refused)),
    };
    let total: i64 = conn.query_row(
        &format!("SELECT count(*) FROM sessions s WHERE {clause}"),
        params_from_iter(values.iter()),
        |r| r.get(0),
    )?;
    let direction = if descending { "DESC" } else { "ASC" };
    let sql = format!(
        "SELECT s.id, s.agent_type, s.agent_session_id, s.run_kind, s.first_event_ms, s.last_event_ms - s.first_event_ms,
                s.event_count, s.prompt_count, s.tool_call_count, s.tool_error_count, s.cost_nusd, s.git_remote,
                s.git_branch, CASE WHEN s.ended_at_ms IS NULL THEN 'open' ELSE coalesce(s.end_reason, 'ended') END
         FROM sessions s WHERE {clause}
         ORDER BY {column} {direction}, s.id {direction} LIMIT {limit} OFFSET {offset}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(values.iter()), session_row)?;
    Ok(Ok((rows.collect::<Result<_, _>>()?, total)))
}

/// The interactive sessions of these people started in `[from_ms, to_ms)`, the newest
/// first (at most `limit`), each with its owner's id: a team page's list. The caller
/// decides whose it may list (`access::drill_in`) and audits it.
pub fn sessions_of(
    conn: &Connection,
    people: &[String],
    from_ms: i64,
    to_ms: i64,
    limit: usize,
) -> Result<Vec<(String, SessionRow)>, DbError> {
    if people.is_empty() {
        return Ok(Vec::new());
    }
    let marks = vec!["?"; people.len()].join(", ");
    let sql = format!(
        "SELECT s.id, s.agent_type, s.agent_session_id, s.run_kind, s.first_event_ms, s.last_event_ms - s.first_event_ms,
                s.event_count, s.prompt_count, s.tool_call_count, s.tool_error_count, s.cost_nusd, s.git_remote,
                s.git_branch, CASE WHEN s.ended_at_ms IS NULL THEN 'open' ELSE coalesce(s.end_reason, 'ended') END,
                s.user_id
         FROM sessions s WHERE s.user_id IN ({marks}) AND s.run_kind = 'INTERACTIVE'
           AND s.first_event_ms >= ? AND s.first_event_ms < ?
         ORDER BY s.first_event_ms DESC, s.id DESC LIMIT {limit}"
    );
    let mut values: Vec<Box<dyn ToSql>> = people.iter().map(|p| Box::new(p.clone()) as Box<dyn ToSql>).collect();
    values.push(Box::new(from_ms));
    values.push(Box::new(to_ms));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(values.iter()), |row| Ok((row.get(14)?, session_row(row)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A person's machine runs of one kind (CI or EVAL) since a time: how many, what they cost,
/// their tool calls and errors. The named view that keeps machines apart from the
/// developer's own figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MachineRuns {
    pub run_kind: String,
    pub runs: i64,
    pub cost_nusd: i64,
    pub tool_calls: i64,
    pub tool_errors: i64,
}

/// The caller's CI and EVAL runs since `from_ms`, one line per kind (both always there).
pub fn machine_runs(conn: &Connection, user_id: &str, from_ms: i64) -> Result<Vec<MachineRuns>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT count(*), coalesce(sum(cost_nusd), 0), coalesce(sum(tool_call_count), 0), coalesce(sum(tool_error_count), 0)
         FROM sessions WHERE user_id = ?1 AND run_kind = ?2 AND first_event_ms >= ?3",
    )?;
    ["CI", "EVAL"]
        .into_iter()
        .map(|kind| {
            Ok(stmt.query_row(rusqlite::params![user_id, kind, from_ms], |row| {
                Ok(MachineRuns {
                    run_kind: kind.to_string(),
                    runs: row.get(0)?,
                    cost_nusd: row.get(1)?,
                    tool_calls: row.get(2)?,
                    tool_errors: row.get(3)?,
                })
            })?)
        })
        .collect()
}

#[cfg(test)]
mod tests;

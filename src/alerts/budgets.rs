//! Monthly budgets of teams and people (`alert_budgets`, owned here), measured by the
//! `budget_threshold` rule beside the organisation's (the rule's own threshold). Each
//! level of a budget (75, 90 and 100 % by default) is its own alert subject, so each
//! crossing notifies once a month.
//!
//! Invariants: one budget per team or person; an amount is positive; levels are 1 to
//! 5 whole percentages between 1 and 1000, kept sorted.

use rusqlite::{Connection, OptionalExtension, params};

use crate::db::DbError;

/// The levels a budget notifies at when none are given.
pub const DEFAULT_LEVELS: [u32; 3] = [75, 90, 100];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    pub id: String,
    /// `team` or `person`.
    pub scope: String,
    pub subject_id: String,
    /// The team's slug or the person's e-mail address.
    pub label: String,
    pub monthly_nusd: i64,
    pub levels: Vec<u32>,
}

/// `75,90,100` → the levels; a clear error otherwise.
pub fn parse_levels(text: &str) -> Result<Vec<u32>, String> {
    if text.trim().is_empty() {
        return Ok(DEFAULT_LEVELS.to_vec());
    }
    let mut levels = Vec::new();
    for part in text.split(',') {
        let part = part.trim().trim_end_matches('%');
        match part.parse::<u32>() {
            Ok(level) if (1..=1000).contains(&level) => levels.push(level),
            _ => {
                return Err(format!(
                    "levels must be whole percentages from 1 to 1000 separated by commas, not {part:?}"
                ));
            }
        }
    }
    levels.sort_unstable();
    levels.dedup();
    if levels.len() > 5 {
        return Err("a budget has at most 5 levels".into());
    }
    Ok(levels)
}

fn join_levels(levels: &[u32]) -> String {
    levels.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// Every budget, teams first.
pub fn list(conn: &Connection) -> Result<Vec<Budget>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT b.id, b.scope, b.subject_id, coalesce(t.slug, u.email, b.subject_id), b.monthly_nusd, b.levels
         FROM alert_budgets b
         LEFT JOIN teams t ON b.scope = 'team' AND t.id = b.subject_id
         LEFT JOIN users u ON b.scope = 'person' AND u.id = b.subject_id
         ORDER BY b.scope DESC, 4",
    )?;
    let rows = stmt.query_map([], |row| {
        let levels: String = row.get(5)?;
        Ok(Budget {
            id: row.get(0)?,
            scope: row.get(1)?,
            subject_id: row.get(2)?,
            label: row.get(3)?,
            monthly_nusd: row.get(4)?,
            levels: parse_levels(&levels).unwrap_or_else(|_| DEFAULT_LEVELS.to_vec()),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Sets the budget of a team or person (replacing theirs), with its audit row
/// (`ALERT_BUDGET_CHANGED`, the person as subject of a personal budget); returns its id.
pub fn set(
    conn: &Connection,
    scope: &str,
    subject_id: &str,
    monthly_nusd: i64,
    levels: &[u32],
    actor_id: &str,
    now_ms: i64,
) -> Result<String, DbError> {
    let id: String = conn.query_row(
        "INSERT INTO alert_budgets (id, scope, subject_id, monthly_nusd, levels, created_at_ms, created_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (scope, subject_id) DO UPDATE SET monthly_nusd = excluded.monthly_nusd,
             levels = excluded.levels, created_at_ms = excluded.created_at_ms, created_by = excluded.created_by
         RETURNING id",
        params![
            uuid::Uuid::now_v7().to_string(),
            scope,
            subject_id,
            monthly_nusd,
            join_levels(levels),
            now_ms,
            actor_id
        ],
        |row| row.get(0),
    )?;
    let detail =
        serde_json::json!({ "scope": scope, "monthly_usd": crate::model::nusd_to_usd(monthly_nusd), "levels": levels });
    audit_change(conn, actor_id, scope, subject_id, &id, detail, now_ms)?;
    Ok(id)
}

/// The audit row of a budget set or removed.
fn audit_change(
    conn: &Connection,
    actor_id: &str,
    scope: &str,
    subject_id: &str,
    id: &str,
    detail: serde_json::Value,
    now_ms: i64,
) -> Result<(), DbError> {
    let entry = crate::audit::Entry {
        actor_id: Some(actor_id),
        action: crate::audit::Action::AlertBudgetChanged,
        subject_user_id: (scope == "person").then_some(subject_id),
        target: Some(id),
        detail,
    };
    crate::audit::record(conn, &entry, now_ms)?;
    Ok(())
}

/// Removes a budget; its scope and subject, `None` when there is no such budget.
pub fn remove(conn: &Connection, id: &str, actor_id: &str, now_ms: i64) -> Result<Option<(String, String)>, DbError> {
    let removed: Option<(String, String)> = conn
        .query_row("DELETE FROM alert_budgets WHERE id = ?1 RETURNING scope, subject_id", [id], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()?;
    if let Some((scope, subject_id)) = &removed {
        let detail = serde_json::json!({ "scope": scope, "removed": true });
        audit_change(conn, actor_id, scope, subject_id, id, detail, now_ms)?;
    }
    Ok(removed)
}

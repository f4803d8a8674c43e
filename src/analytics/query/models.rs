//! What a model is on a page. A model row is a **family**: the snapshots of one model
//! (`claude-sonnet-4-5-20250929`) and its alias (`claude-sonnet-4-5`) are one row, the
//! exact ids a table of their own ([`By::ModelSnapshot`]). Events that never carry a model
//! (a session's start, a prompt, a tool call) make no "(no model)" row: spend and tokens
//! are on model requests, and a model row's **sessions** and **prompts** are those of the
//! sessions that used it (a session, with its prompts, counts under each model it used, so
//! model rows overlap), read from `sessions` and `session_models` for the sessions that
//! started in the period.
//!
//! Invariant: only interactive sessions are counted, as everywhere in `analytics::query`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rusqlite::{Connection, params_from_iter};

use super::{By, Figures, Period, Subject, parameters, subject_filter};
use crate::db::DbError;

/// A model id without its snapshot date (`-20250929`, `-2025-09-29`): its family.
pub fn family(model: &str) -> &str {
    let bytes = model.as_bytes();
    let compact =
        bytes.len() > 9 && bytes[bytes.len() - 9] == b'-' && bytes[bytes.len() - 8..].iter().all(u8::is_ascii_digit);
    if compact {
        return &model[..model.len() - 9];
    }
    let dashed = bytes.len() > 11
        && bytes[bytes.len() - 11] == b'-'
        && model[model.len() - 10..]
            .char_indices()
            .all(|(i, c)| if i == 4 || i == 7 { c == '-' } else { c.is_ascii_digit() });
    if dashed {
        return &model[..model.len() - 11];
    }
    model
}

/// Whether a breakdown is about models (its rows are keyed as this module says).
pub fn is_about_models(by: By) -> bool {
    matches!(by, By::Model | By::AgentModel | By::ModelSnapshot)
}

/// The row a breakdown's raw key (`model`, or `agent<TAB>model`) goes to; `None` for
/// events that carry no model.
pub fn row_key(by: By, raw: &str) -> Option<String> {
    match by {
        By::Model => (!raw.is_empty()).then(|| family(raw).to_string()),
        By::ModelSnapshot => (!raw.is_empty()).then(|| raw.to_string()),
        // Exact ids: a price (and what caching saved) is looked up per agent and model id.
        By::AgentModel => {
            let (_, model) = raw.split_once('\t').unwrap_or((raw, ""));
            (!model.is_empty()).then(|| raw.to_string())
        }
        By::Agent | By::Day => Some(raw.to_string()),
    }
}

/// The subject's interactive sessions that started in the period, with each model they
/// used: read once, then keyed for as many model breakdowns as a page shows.
#[derive(Debug, Default)]
pub struct ModelSessions {
    /// (session id, agent, model, the session's prompts).
    rows: Vec<(String, String, String, i64)>,
}

impl ModelSessions {
    pub fn read(conn: &Connection, subject: &Subject, period: Period) -> Result<ModelSessions, DbError> {
        let (filter, values) = subject_filter(subject);
        let sql = format!(
            "SELECT s.id, s.agent_type, m.model, s.prompt_count FROM sessions s JOIN session_models m ON m.session_id = s.id
             WHERE {filter} AND s.run_kind = 'INTERACTIVE' AND s.first_event_ms >= ? AND s.first_event_ms < ?"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params_from_iter(parameters(values, period)), |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?;
        Ok(ModelSessions { rows: rows.collect::<Result<_, _>>()? })
    }

    /// The sessions (with their prompts) under each row key of a breakdown by `by`.
    pub fn keyed(&self, by: By) -> KeyedSessions<'_> {
        let mut by_key: HashMap<String, BTreeMap<&str, i64>> = HashMap::new();
        for (session, agent, model, prompts) in &self.rows {
            let raw = if by == By::AgentModel { format!("{agent}\t{model}") } else { model.clone() };
            if let Some(key) = row_key(by, &raw) {
                by_key.entry(key).or_default().insert(session.as_str(), *prompts);
            }
        }
        KeyedSessions { by_key }
    }
}

/// The sessions behind each model row of one breakdown.
#[derive(Debug, Default)]
pub struct KeyedSessions<'a> {
    by_key: HashMap<String, BTreeMap<&'a str, i64>>,
}

impl KeyedSessions<'_> {
    /// Sets a row's sessions and prompts: those of its key, or for the folded "other" row
    /// (`None`), of every key not among `shown`, each session once.
    pub fn apply(&self, key: Option<&str>, shown: &BTreeSet<&str>, figures: &mut Figures) {
        let mut sessions: BTreeMap<&str, i64> = BTreeMap::new();
        for (row, of_row) in &self.by_key {
            let belongs = match key {
                Some(key) => row == key,
                None => !shown.contains(row.as_str()),
            };
            if belongs {
                sessions.extend(of_row.iter().map(|(id, prompts)| (*id, *prompts)));
            }
        }
        figures.sessions_started = sessions.len() as i64;
        figures.prompts = sessions.values().sum();
    }
}

/// Groups rows keyed by raw aggregate keys into model rows (summing their figures),
/// dropping rows of events without a model, then sets sessions and prompts.
pub fn model_rows(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    by: By,
    rows: Vec<(String, Figures)>,
) -> Result<Vec<(String, Figures)>, DbError> {
    let mut grouped: BTreeMap<String, Figures> = BTreeMap::new();
    for (raw, figures) in rows {
        if let Some(key) = row_key(by, &raw) {
            let into = grouped.entry(key).or_default();
            into.events += figures.events;
            into.usage.add(&figures.usage);
            into.cost_nusd += figures.cost_nusd;
        }
    }
    let read = ModelSessions::read(conn, subject, period)?;
    let sessions = read.keyed(by);
    let none = BTreeSet::new();
    let mut out: Vec<(String, Figures)> = grouped
        .into_iter()
        .map(|(key, mut figures)| {
            sessions.apply(Some(&key), &none, &mut figures);
            (key, figures)
        })
        .collect();
    out.sort_by(|a, b| b.1.cost_nusd.cmp(&a.1.cost_nusd).then_with(|| a.0.cmp(&b.0)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_and_their_alias_are_one_family() {
        assert_eq!(family("claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");
        assert_eq!(family("claude-sonnet-4-5"), "claude-sonnet-4-5");
        assert_eq!(family("gpt-4o-2024-08-06"), "gpt-4o");
        assert_eq!(family("gpt-5.1-codex"), "gpt-5.1-codex");
        assert_eq!(family("o3-mini"), "o3-mini");
        assert_eq!(family("20250929"), "20250929", "nothing before the date: kept");
        assert_eq!(row_key(By::Model, ""), None, "no (no model) row");
        assert_eq!(row_key(By::AgentModel, "codex\t"), None);
        assert_eq!(
            row_key(By::AgentModel, "claude_code\tclaude-opus-4-1-20250805").as_deref(),
            Some("claude_code\tclaude-opus-4-1-20250805"),
            "priced per exact id"
        );
        assert_eq!(row_key(By::ModelSnapshot, "claude-opus-4-1-20250805").as_deref(), Some("claude-opus-4-1-20250805"));
    }
}

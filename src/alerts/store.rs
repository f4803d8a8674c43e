//! The rules' settings and their events (`alert_rules`, `alert_events`): one evaluation
//! of every enabled rule, and an administrator's acknowledgement or silence.
//!
//! Invariants: an evaluation runs in one transaction, so a rule's event and its
//! measurement agree; acknowledge and silence are audited (`ALERT_ACKNOWLEDGED`,
//! `ALERT_SILENCED`) in the transaction that makes them; a silence has an expiry.

use rusqlite::{Connection, OptionalExtension, params};

use super::machine::{self, Open, Step};
use super::rules::{self, Measured, Rule, SubjectMeasured};
use crate::audit::{self, Action, Entry};
use crate::db::DbError;

/// What one evaluation did to a rule's subject.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub rule: Rule,
    /// What the event is about within the rule (`""` for a rule with one subject; a
    /// budget level such as `team:platform@90`; a service-level objective).
    pub subject: String,
    pub step: Step,
    pub event_id: Option<String>,
    pub value: f64,
    pub threshold: f64,
    pub detail: String,
}

struct OpenEvent {
    id: String,
    subject: String,
    state: Open,
    silenced_until_ms: Option<i64>,
    value: f64,
    threshold: f64,
    detail: String,
}

fn open_events(conn: &Connection, rule: Rule) -> Result<Vec<OpenEvent>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, subject, state, silenced_until_ms, value, threshold, detail FROM alert_events
         WHERE rule_id = ?1 AND state <> 'resolved'",
    )?;
    let rows = stmt.query_map([rule.id()], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
            row.get::<_, Option<i64>>(3)?,
            row.get::<_, f64>(4)?,
            row.get::<_, f64>(5)?,
            row.get::<_, String>(6)?,
        ))
    })?;
    let mut open = Vec::new();
    for row in rows {
        let (id, subject, state, silenced_until_ms, value, threshold, detail) = row?;
        if let Some(state) = Open::parse(&state) {
            open.push(OpenEvent { id, subject, state, silenced_until_ms, value, threshold, detail });
        }
    }
    Ok(open)
}

/// The latest silence set on the subject's events, for a new event opening under it.
fn subject_silenced_until(conn: &Connection, rule: Rule, subject: &str) -> Result<Option<i64>, DbError> {
    Ok(conn.query_row(
        "SELECT max(silenced_until_ms) FROM alert_events WHERE rule_id = ?1 AND subject = ?2",
        params![rule.id(), subject],
        |row| row.get(0),
    )?)
}

/// Evaluates every enabled rule at `now_ms` and applies the state machine to each of
/// its subjects; returns what changed or went on (quiet subjects are left out). An open
/// event whose subject is no longer measured (a budget removed, a rule left without a
/// threshold) is measured as not breaching, so it resolves.
pub fn evaluate(conn: &Connection, now_ms: i64) -> Result<Vec<Transition>, DbError> {
    let mut stmt = conn.prepare("SELECT id, threshold FROM alert_rules WHERE enabled = 1")?;
    let enabled: Vec<(String, Option<f64>)> =
        stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?.collect::<Result<_, _>>()?;
    let mut transitions = Vec::new();
    for (id, threshold) in enabled {
        let Some(rule) = Rule::parse(&id) else { continue };
        let mut measured = rules::measure_subjects(conn, rule, threshold, now_ms)?;
        let mut open = open_events(conn, rule)?;
        for event in &open {
            if !measured.iter().any(|m| m.subject == event.subject) {
                measured.push(SubjectMeasured {
                    subject: event.subject.clone(),
                    threshold: event.threshold,
                    measured: Measured { value: event.value, breaching: false, detail: event.detail.clone() },
                });
            }
        }
        for one in measured {
            let event = open.iter().position(|e| e.subject == one.subject).map(|at| open.swap_remove(at));
            if let Some(transition) = step(conn, rule, one, event, now_ms)? {
                transitions.push(transition);
            }
        }
    }
    transitions.extend(resolve_switched_off(conn, now_ms)?);
    Ok(transitions)
}

/// A rule switched off measures nothing: its unresolved events resolve, without a notice
/// (the operator chose not to hear from it), so switching it on again starts afresh.
fn resolve_switched_off(conn: &Connection, now_ms: i64) -> Result<Vec<Transition>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT e.id, e.rule_id, e.subject, e.value, e.threshold, e.detail FROM alert_events e
         JOIN alert_rules r ON r.id = e.rule_id WHERE r.enabled = 0 AND e.state <> 'resolved'",
    )?;
    let rows: Vec<(String, String, String, f64, f64, String)> = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?)))?
        .collect::<Result<_, _>>()?;
    let mut resolved = Vec::new();
    for (id, rule_id, subject, value, threshold, detail) in rows {
        conn.execute(
            "UPDATE alert_events SET state = 'resolved', resolved_at_ms = ?2, last_seen_ms = ?2 WHERE id = ?1",
            params![id, now_ms],
        )?;
        if let Some(rule) = Rule::parse(&rule_id) {
            let step = Step::Resolve { notify: false };
            resolved.push(Transition { rule, subject, step, event_id: Some(id), value, threshold, detail });
        }
    }
    Ok(resolved)
}

/// One subject through the state machine; `None` when it stays quiet.
fn step(
    conn: &Connection,
    rule: Rule,
    one: SubjectMeasured,
    open: Option<OpenEvent>,
    now_ms: i64,
) -> Result<Option<Transition>, DbError> {
    let SubjectMeasured { subject, threshold, measured } = one;
    // A silence matters to an open event, or to one about to open; a quiet subject
    // without an event needs no lookup.
    let silenced_until = match &open {
        Some(event) => event.silenced_until_ms,
        None if measured.breaching => subject_silenced_until(conn, rule, &subject)?,
        None => None,
    };
    let silenced = silenced_until.is_some_and(|until| until > now_ms);
    let step = machine::next(open.as_ref().map(|e| e.state), measured.breaching, silenced);
    let event_id = match (step, &open) {
        (Step::Quiet, _) => return Ok(None),
        (Step::Open { .. }, _) => {
            let id = uuid::Uuid::now_v7().to_string();
            conn.execute(
                "INSERT INTO alert_events (id, rule_id, subject, state, opened_at_ms, last_seen_ms, value, threshold, detail)
                 VALUES (?1, ?2, ?3, 'firing', ?4, ?4, ?5, ?6, ?7)",
                params![id, rule.id(), subject, now_ms, measured.value, threshold, measured.detail],
            )?;
            Some(id)
        }
        (Step::Continue, Some(event)) => {
            conn.execute(
                "UPDATE alert_events SET last_seen_ms = ?2, value = ?3, detail = ?4 WHERE id = ?1",
                params![event.id, now_ms, measured.value, measured.detail],
            )?;
            Some(event.id.clone())
        }
        (Step::Resolve { .. }, Some(event)) => {
            conn.execute(
                "UPDATE alert_events SET state = 'resolved', resolved_at_ms = ?2, last_seen_ms = ?2 WHERE id = ?1",
                params![event.id, now_ms],
            )?;
            Some(event.id.clone())
        }
        (Step::Continue | Step::Resolve { .. }, None) => None,
    };
    Ok(Some(Transition { rule, subject, step, event_id, value: measured.value, threshold, detail: measured.detail }))
}

/// One line on an evaluation, for the job's summary: what opened, went on and resolved.
pub fn describe(transitions: &[Transition]) -> String {
    if transitions.is_empty() {
        return "no alert rule is breaching".into();
    }
    let parts: Vec<String> = transitions
        .iter()
        .map(|t| {
            let what = match t.step {
                Step::Open { notify: true } => "opened",
                Step::Open { notify: false } => "opened (silenced)",
                Step::Continue => "still breaching",
                Step::Resolve { notify: true } => "resolved",
                Step::Resolve { notify: false } => "resolved (silenced)",
                Step::Quiet => "quiet",
            };
            let subject = if t.subject.is_empty() { String::new() } else { format!(" [{}]", t.subject) };
            format!("{}{subject} {what}: {}", t.rule.id(), t.detail)
        })
        .collect();
    parts.join("; ")
}

/// Why an administrator's act on an event was refused.
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    #[error("no unresolved alert event {0}")]
    NotOpen(String),
    #[error("silence_until must be in the future")]
    SilenceInPast,
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<rusqlite::Error> for ActError {
    fn from(err: rusqlite::Error) -> Self {
        ActError::Db(DbError::Sqlite(err))
    }
}

/// Acknowledges a firing event: no more reminders until it resolves. Audited.
pub fn acknowledge(conn: &Connection, actor_id: &str, event_id: &str, now_ms: i64) -> Result<(), ActError> {
    let changed = conn.execute(
        "UPDATE alert_events SET state = 'acknowledged', acknowledged_by = ?2, acknowledged_at_ms = ?3
         WHERE id = ?1 AND state = 'firing'",
        params![event_id, actor_id, now_ms],
    )?;
    if changed == 0 {
        return Err(ActError::NotOpen(event_id.to_string()));
    }
    let entry = Entry {
        actor_id: Some(actor_id),
        action: Action::AlertAcknowledged,
        subject_user_id: None,
        target: Some(event_id),
        detail: serde_json::json!({}),
    };
    audit::record(conn, &entry, now_ms)?;
    Ok(())
}

/// Mutes an unresolved event's notifications (and those of the rule's next event) until
/// `until_ms`. Audited.
pub fn silence(conn: &Connection, actor_id: &str, event_id: &str, until_ms: i64, now_ms: i64) -> Result<(), ActError> {
    if until_ms <= now_ms {
        return Err(ActError::SilenceInPast);
    }
    let changed = conn.execute(
        "UPDATE alert_events SET silenced_until_ms = ?2, silenced_by = ?3 WHERE id = ?1 AND state <> 'resolved'",
        params![event_id, until_ms, actor_id],
    )?;
    if changed == 0 {
        return Err(ActError::NotOpen(event_id.to_string()));
    }
    let entry = Entry {
        actor_id: Some(actor_id),
        action: Action::AlertSilenced,
        subject_user_id: None,
        target: Some(event_id),
        detail: serde_json::json!({ "until_ms": until_ms }),
    };
    audit::record(conn, &entry, now_ms)?;
    Ok(())
}

/// A rule's settings, as the console shows them.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleSetting {
    pub rule: Rule,
    pub threshold: Option<f64>,
    pub enabled: bool,
    pub updated_at_ms: i64,
}

pub fn rule_settings(conn: &Connection) -> Result<Vec<RuleSetting>, DbError> {
    let mut stmt = conn.prepare("SELECT id, threshold, enabled, updated_at_ms FROM alert_rules")?;
    let rows = stmt.query_map([], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, Option<f64>>(1)?, row.get::<_, bool>(2)?, row.get::<_, i64>(3)?))
    })?;
    let mut settings = Vec::new();
    for row in rows {
        let (id, threshold, enabled, updated_at_ms) = row?;
        if let Some(rule) = Rule::parse(&id) {
            settings.push(RuleSetting { rule, threshold, enabled, updated_at_ms });
        }
    }
    settings.sort_by_key(|setting| Rule::ALL.iter().position(|rule| *rule == setting.rule));
    Ok(settings)
}

/// Why a rule's change was refused.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("threshold must be a number above 0")]
    BadThreshold,
    #[error("{0} needs a threshold before it can be switched on")]
    NoThreshold(&'static str),
}

/// Sets a rule's threshold and switch, audited (`ALERT_RULE_CHANGED`). The budget rule
/// may be on without a threshold: then only teams' and people's budgets are measured.
pub fn set_rule(
    conn: &Connection,
    actor_id: &str,
    rule: Rule,
    threshold: Option<f64>,
    enabled: bool,
    now_ms: i64,
) -> Result<Result<(), RuleError>, DbError> {
    if threshold.is_some_and(|t| !t.is_finite() || t <= 0.0) {
        return Ok(Err(RuleError::BadThreshold));
    }
    if enabled && threshold.is_none() && rule != Rule::BudgetThreshold {
        return Ok(Err(RuleError::NoThreshold(rule.id())));
    }
    let before: Option<(Option<f64>, bool)> = conn
        .query_row("SELECT threshold, enabled FROM alert_rules WHERE id = ?1", [rule.id()], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()?;
    conn.execute(
        "UPDATE alert_rules SET threshold = ?2, enabled = ?3, updated_at_ms = ?4, updated_by = ?5 WHERE id = ?1",
        params![rule.id(), threshold, enabled, now_ms, actor_id],
    )?;
    let entry = Entry {
        actor_id: Some(actor_id),
        action: Action::AlertRuleChanged,
        subject_user_id: None,
        target: Some(rule.id()),
        detail: serde_json::json!({
            "from": before.map(|(threshold, enabled)| serde_json::json!({ "threshold": threshold, "enabled": enabled })),
            "to": { "threshold": threshold, "enabled": enabled },
        }),
    };
    audit::record(conn, &entry, now_ms)?;
    Ok(Ok(()))
}

/// An alert event, as the console lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct EventLine {
    pub id: String,
    pub rule_id: String,
    pub subject: String,
    pub state: String,
    pub opened_at_ms: i64,
    pub last_seen_ms: i64,
    pub resolved_at_ms: Option<i64>,
    pub value: f64,
    pub threshold: f64,
    pub detail: String,
    pub acknowledged_by: Option<String>,
    pub silenced_until_ms: Option<i64>,
}

/// The unresolved events, then the latest resolved ones (100 in all at most).
pub fn events(conn: &Connection) -> Result<Vec<EventLine>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT e.id, e.rule_id, e.subject, e.state, e.opened_at_ms, e.last_seen_ms, e.resolved_at_ms, e.value,
                e.threshold, e.detail, u.email, e.silenced_until_ms
         FROM alert_events e LEFT JOIN users u ON u.id = e.acknowledged_by
         ORDER BY e.state = 'resolved', e.last_seen_ms DESC LIMIT 100",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok(EventLine {
            id: row.get(0)?,
            rule_id: row.get(1)?,
            subject: row.get(2)?,
            state: row.get(3)?,
            opened_at_ms: row.get(4)?,
            last_seen_ms: row.get(5)?,
            resolved_at_ms: row.get(6)?,
            value: row.get(7)?,
            threshold: row.get(8)?,
            detail: row.get(9)?,
            acknowledged_by: row.get(10)?,
            silenced_until_ms: row.get(11)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests;

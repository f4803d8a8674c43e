//! The rules' settings and their events (`alert_rules`, `alert_events`): one evaluation
//! of every enabled rule, and an administrator's acknowledgement or silence.
//!
//! Invariants: an evaluation runs in one transaction, so a rule's event and its
//! measurement agree; acknowledge and silence are audited (`ALERT_ACKNOWLEDGED`,
//! `ALERT_SILENCED`) in the transaction that makes them; a silence has an expiry.

use rusqlite::{Connection, OptionalExtension, params};

use super::machine::{self, Open, Step};
use super::rules::{self, Rule};
use crate::audit::{self, Action, Entry};
use crate::db::DbError;

/// What one evaluation did to a rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub rule: Rule,
    pub step: Step,
    pub event_id: Option<String>,
    pub value: f64,
    pub threshold: f64,
    pub detail: String,
}

struct OpenEvent {
    id: String,
    state: Open,
    silenced_until_ms: Option<i64>,
}

fn open_event(conn: &Connection, rule: Rule) -> Result<Option<OpenEvent>, DbError> {
    let row = conn
        .query_row(
            "SELECT id, state, silenced_until_ms FROM alert_events WHERE rule_id = ?1 AND state <> 'resolved'",
            [rule.id()],
            |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, Option<i64>>(2)?)),
        )
        .optional()?;
    Ok(row.and_then(|(id, state, silenced_until_ms)| {
        Open::parse(&state).map(|state| OpenEvent { id, state, silenced_until_ms })
    }))
}

/// The latest silence set on the rule's events, for a new event opening under it.
fn rule_silenced_until(conn: &Connection, rule: Rule) -> Result<Option<i64>, DbError> {
    Ok(conn.query_row("SELECT max(silenced_until_ms) FROM alert_events WHERE rule_id = ?1", [rule.id()], |row| {
        row.get(0)
    })?)
}

/// Evaluates every enabled rule with a threshold at `now_ms` and applies the state
/// machine; returns what changed or went on (quiet rules are left out).
pub fn evaluate(conn: &Connection, now_ms: i64) -> Result<Vec<Transition>, DbError> {
    let mut stmt = conn.prepare("SELECT id, threshold FROM alert_rules WHERE enabled = 1 AND threshold IS NOT NULL")?;
    let enabled: Vec<(String, f64)> =
        stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?.collect::<Result<_, _>>()?;
    let mut transitions = Vec::new();
    for (id, threshold) in enabled {
        let Some(rule) = Rule::parse(&id) else { continue };
        let measured = rules::measure(conn, rule, threshold, now_ms)?;
        let open = open_event(conn, rule)?;
        let silenced_until = match &open {
            Some(event) => event.silenced_until_ms,
            None => rule_silenced_until(conn, rule)?,
        };
        let silenced = silenced_until.is_some_and(|until| until > now_ms);
        let step = machine::next(open.as_ref().map(|e| e.state), measured.breaching, silenced);
        let event_id = match (step, &open) {
            (Step::Quiet, _) => continue,
            (Step::Open { .. }, _) => {
                let id = uuid::Uuid::now_v7().to_string();
                conn.execute(
                    "INSERT INTO alert_events (id, rule_id, state, opened_at_ms, last_seen_ms, value, threshold, detail)
                     VALUES (?1, ?2, 'firing', ?3, ?3, ?4, ?5, ?6)",
                    params![id, rule.id(), now_ms, measured.value, threshold, measured.detail],
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
        transitions.push(Transition {
            rule,
            step,
            event_id,
            value: measured.value,
            threshold,
            detail: measured.detail,
        });
    }
    Ok(transitions)
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
            format!("{} {what}: {}", t.rule.id(), t.detail)
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

#[cfg(test)]
mod tests;

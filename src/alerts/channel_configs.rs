//! `alert_channel_configs` (owned here): whether each configured channel is used, and
//! its last test-send. The channels themselves, with their credentials, come from the
//! environment (docs/alerts.md, `channels::from_config`); a channel without a row is on.
//!
//! Invariants: switching a channel and sending a test are audited
//! (`ALERT_CHANNEL_CHANGED`, `ALERT_CHANNEL_TESTED`) in the transaction that records
//! them; a test notice is never written to `alert_delivery_log`, which holds real
//! alerts' deliveries only.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::channels::{self, Channel};
use crate::audit::{self, Action, Entry};
use crate::db::DbError;

/// The channels a deployment can have, by name.
pub const NAMES: [&str; 3] = ["chat_webhook", "webhook", "email"];

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelConfig {
    pub enabled: bool,
    pub last_test_at_ms: Option<i64>,
    pub last_test_outcome: Option<String>,
}

/// Every channel's row (a channel without one is on and untested).
pub fn all(conn: &Connection) -> Result<HashMap<String, ChannelConfig>, DbError> {
    let mut stmt =
        conn.prepare_cached("SELECT channel, enabled, last_test_at_ms, last_test_outcome FROM alert_channel_configs")?;
    let rows = stmt.query_map([], |row| {
        Ok((
            row.get::<_, String>(0)?,
            ChannelConfig { enabled: row.get(1)?, last_test_at_ms: row.get(2)?, last_test_outcome: row.get(3)? },
        ))
    })?;
    let mut found: HashMap<String, ChannelConfig> = rows.collect::<Result<_, _>>()?;
    for name in NAMES {
        found.entry(name.to_string()).or_insert(ChannelConfig { enabled: true, ..ChannelConfig::default() });
    }
    Ok(found)
}

/// The configured channels that are switched on: where `evaluate-alerts` delivers.
pub fn in_use(conn: &Connection, alerts: &crate::config::Alerts) -> Result<Result<Vec<Channel>, String>, DbError> {
    let configs = all(conn)?;
    Ok(channels::from_config(alerts).map(|found| {
        found.into_iter().filter(|channel| configs.get(channel.name()).is_none_or(|config| config.enabled)).collect()
    }))
}

fn audit_channel(
    conn: &Connection,
    actor_id: &str,
    action: Action,
    channel: &str,
    detail: serde_json::Value,
    now_ms: i64,
) -> Result<(), DbError> {
    let entry = Entry { actor_id: Some(actor_id), action, subject_user_id: None, target: Some(channel), detail };
    audit::record(conn, &entry, now_ms)?;
    Ok(())
}

/// Switches a channel on or off.
pub fn set_enabled(
    conn: &Connection,
    actor_id: &str,
    channel: &'static str,
    enabled: bool,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO alert_channel_configs (channel, enabled, updated_at_ms, updated_by) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (channel) DO UPDATE SET enabled = excluded.enabled, updated_at_ms = excluded.updated_at_ms,
             updated_by = excluded.updated_by",
        params![channel, enabled, now_ms, actor_id],
    )?;
    audit_channel(
        conn,
        actor_id,
        Action::AlertChannelChanged,
        channel,
        serde_json::json!({ "enabled": enabled }),
        now_ms,
    )
}

/// Records a test-send's outcome.
pub fn record_test(
    conn: &Connection,
    actor_id: &str,
    channel: &'static str,
    outcome: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO alert_channel_configs (channel, enabled, updated_at_ms, last_test_at_ms, last_test_outcome)
         VALUES (?1, 1, ?2, ?2, ?3)
         ON CONFLICT (channel) DO UPDATE SET last_test_at_ms = excluded.last_test_at_ms,
             last_test_outcome = excluded.last_test_outcome",
        params![channel, now_ms, outcome],
    )?;
    audit_channel(
        conn,
        actor_id,
        Action::AlertChannelTested,
        channel,
        serde_json::json!({ "outcome": outcome }),
        now_ms,
    )
}

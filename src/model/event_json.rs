//! Renders a stored event back in the wire contract's shape (hashes as hex, time as
//! RFC 3339, money in dollars) for the caller's own event listing. Absent values are
//! omitted, never rendered as null, so the output validates against the contract.

use serde_json::{Map, Value, json};

use super::wire::Event;
use super::{NotificationKind, PermissionMode, ToolStatus};

/// Inserts `value` unless it is null (absent values are omitted, not null).
fn put(map: &mut Map<String, Value>, key: &str, value: Value) {
    if !value.is_null() {
        map.insert(key.to_string(), value);
    }
}

pub fn event_to_json(event: &Event) -> Value {
    let mut out = Map::new();
    out.insert("event_id".into(), json!(event.event_id.to_string()));
    out.insert("type".into(), json!(event.event_type.as_str()));
    out.insert("ts".into(), json!(crate::model::rfc3339_ms(event.ts_ms)));
    out.insert("agent_type".into(), json!(event.agent_type.as_str()));
    out.insert("session_id".into(), json!(event.session_id));
    out.insert("run_kind".into(), json!(event.run_kind.as_str()));
    put(&mut out, "model", json!(event.model));
    put(&mut out, "permission_mode", json!(event.permission_mode.map(PermissionMode::as_str)));
    put(&mut out, "notification_kind", json!(event.notification_kind.map(NotificationKind::as_str)));
    if let Some(tool) = &event.tool {
        let mut t = Map::new();
        t.insert("name".into(), json!(tool.name));
        let digest = |d: &Option<[u8; 32]>| d.map(hex::encode);
        for (key, value) in [
            ("server", json!(tool.server)),
            ("skill", json!(tool.skill)),
            ("slash_command", json!(tool.slash_command)),
            ("use_id", json!(tool.use_id)),
            ("status", json!(tool.status.map(ToolStatus::as_str))),
            ("duration_ms", json!(tool.duration_ms)),
            ("input_sha256", json!(digest(&tool.input_sha256))),
            ("input_bytes", json!(tool.input_bytes)),
            ("output_sha256", json!(digest(&tool.output_sha256))),
            ("output_bytes", json!(tool.output_bytes)),
            ("target_hash", json!(digest(&tool.target_hash))),
            ("action", json!(tool.action)),
        ] {
            put(&mut t, key, value);
        }
        put(&mut out, "tool", Value::Object(t));
    }
    if !event.usage.is_zero() {
        put(&mut out, "usage", json!(event.usage));
    }
    put(&mut out, "cost_usd", json!(super::nusd_to_usd(event.cost_nusd)));
    put(&mut out, "client_cost_usd", json!(event.client_cost_nusd.map(super::nusd_to_usd)));
    put(&mut out, "response_ms", json!(event.response_ms));
    if let Some(git) = &event.git {
        put(
            &mut out,
            "git",
            json!({"branch": git.branch, "commit": git.commit, "remote": git.remote, "dirty": git.dirty}),
        );
    }
    if let Some(metadata) = &event.metadata {
        put(&mut out, "metadata", serde_json::from_str(metadata).unwrap_or(Value::Null));
    }
    Value::Object(out)
}

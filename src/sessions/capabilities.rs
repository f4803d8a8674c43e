//! What a person's agent has loaded, as the agent itself reports it: Claude Code's
//! inventory events (`plugin_loaded`, `mcp_server_connection`, `hook_registered`,
//! `skill_activated`), one row per person, agent, kind and name with what the latest
//! report said, the agent version, the session it came in and when it was first and
//! last seen. Owns `capability_sightings`; the capability ledger reads it.
//!
//! Invariants: a row is the person's own data (deleted with them, `forget`); `detail`
//! holds only the fields [`DETAIL_KEYS`] names, each clipped, never an error text or a
//! command line (where a credential could be); a person has at most
//! [`MAX_PER_PERSON`] rows, the longest unseen going first.

use rusqlite::{Connection, params};
use serde_json::Value;

use crate::db::DbError;
pub use crate::model::sightings::{CapabilityKind as Kind, DETAIL_KEYS, MAX_TEXT_CHARS, Sighting, clipped};

/// The most rows one person keeps.
pub const MAX_PER_PERSON: i64 = 500;

/// Stores `sightings` of `user_id`, the latest report's detail winning, and bounds
/// what the person keeps.
pub fn record(tx: &Connection, user_id: &str, sightings: &[Sighting], now_ms: i64) -> Result<(), DbError> {
    let mut upsert = tx.prepare_cached(
        "INSERT INTO capability_sightings (user_id, agent_type, kind, name, detail, agent_version, last_session_id,
                                           records, first_seen_ms, last_seen_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?8)
         ON CONFLICT (user_id, agent_type, kind, name) DO UPDATE SET
             detail = excluded.detail,
             agent_version = coalesce(excluded.agent_version, agent_version),
             last_session_id = excluded.last_session_id,
             records = records + 1,
             last_seen_ms = max(last_seen_ms, excluded.last_seen_ms)",
    )?;
    for sighting in sightings {
        upsert.execute(params![
            user_id,
            sighting.agent.as_str(),
            sighting.kind.as_str(),
            sighting.name,
            Value::Object(sighting.detail.clone()).to_string(),
            sighting.agent_version,
            sighting.session_id,
            now_ms
        ])?;
    }
    tx.execute(
        "DELETE FROM capability_sightings WHERE user_id = ?1 AND (agent_type, kind, name) IN (
             SELECT agent_type, kind, name FROM capability_sightings WHERE user_id = ?1
             ORDER BY last_seen_ms DESC LIMIT -1 OFFSET ?2)",
        params![user_id, MAX_PER_PERSON],
    )?;
    Ok(())
}

/// Removes everything `user_id`'s agents reported (the person's deletion).
pub fn forget(tx: &Connection, user_id: &str) -> Result<(), DbError> {
    tx.execute("DELETE FROM capability_sightings WHERE user_id = ?1", [user_id])?;
    Ok(())
}

/// One capability across the organisation, for administrators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapabilityLine {
    pub agent_type: String,
    pub kind: String,
    pub name: String,
    pub people: i64,
    pub records: i64,
    pub last_seen_ms: i64,
}

/// Every capability reported in the last 90 days, by how many people have it.
pub fn across_people(conn: &Connection, now_ms: i64) -> Result<Vec<CapabilityLine>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT agent_type, kind, name, count(DISTINCT user_id), sum(records), max(last_seen_ms)
         FROM capability_sightings WHERE last_seen_ms >= ?1
         GROUP BY agent_type, kind, name ORDER BY 4 DESC, 1, 2, 3 LIMIT 500",
    )?;
    let rows = stmt.query_map([now_ms - 90 * 86_400_000], |row| {
        Ok(CapabilityLine {
            agent_type: row.get(0)?,
            kind: row.get(1)?,
            name: row.get(2)?,
            people: row.get(3)?,
            records: row.get(4)?,
            last_seen_ms: row.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AgentType;
    use serde_json::Map;

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::db::migrations::migrate_by_ladder(&mut conn).unwrap();
        for id in ["u1", "u2"] {
            conn.execute(
                "INSERT INTO users (id, email, name, org_role, created_at_ms) VALUES (?1, ?1 || '@example.com', ?1, 'MEMBER', 0)",
                [id],
            )
            .unwrap();
        }
        conn
    }

    fn server(name: &str, status: &str) -> Sighting {
        let mut detail = Map::new();
        detail.insert("status".into(), Value::from(status));
        Sighting {
            agent: AgentType::ClaudeCode,
            kind: Kind::McpServer,
            name: name.into(),
            detail,
            agent_version: Some("2.1.332".into()),
            session_id: "s1".into(),
        }
    }

    #[test]
    fn a_capability_is_one_row_per_person_with_the_latest_report_and_goes_with_them() {
        let conn = db();
        record(&conn, "u1", &[server("github", "connected")], 10).unwrap();
        record(&conn, "u1", &[server("github", "failed")], 20).unwrap();
        record(&conn, "u2", &[server("github", "connected")], 30).unwrap();
        let lines = across_people(&conn, 40).unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!((lines[0].people, lines[0].records, lines[0].last_seen_ms), (2, 3, 30));
        let detail: String =
            conn.query_row("SELECT detail FROM capability_sightings WHERE user_id = 'u1'", [], |r| r.get(0)).unwrap();
        assert_eq!(detail, r#"{"status":"failed"}"#, "the latest report wins");
        forget(&conn, "u1").unwrap();
        assert_eq!(across_people(&conn, 40).unwrap()[0].people, 1);
    }

    #[test]
    fn a_person_keeps_a_bounded_number_of_rows() {
        let conn = db();
        let many: Vec<Sighting> = (0..MAX_PER_PERSON + 20).map(|i| server(&format!("s{i}"), "connected")).collect();
        record(&conn, "u1", &many, 10).unwrap();
        let rows: i64 = conn.query_row("SELECT count(*) FROM capability_sightings", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, MAX_PER_PERSON);
        assert_eq!(clipped(&"é".repeat(1_000)).chars().count(), MAX_TEXT_CHARS);
    }
}

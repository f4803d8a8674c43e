//! One tool call or model request seen by both the hook and the agent's own OTLP export
//! is stored once. The join key is the vendor's id both sides carry: a tool call's
//! `tool_use_id` (Codex: `call_id`), a model request's `request_id` (Claude Code; the
//! hook reads it from the transcript). The partition's `join_keys` table holds the keys
//! of the reports stored for sessions that sent OTLP, by source; an incoming event whose
//! key the *other* source already holds is a duplicate and only fills what that row
//! lacks (digests, git context). When a session first sends OTLP, the keys of its rows
//! already in the partition are recorded, so earlier hook reports are found too. What has
//! no shared id (a prompt, a session's start, a compaction, an ended subagent, a Gemini
//! tool call) is joined by time: the other source's unpaired report of the same kind
//! (and tool) within seconds, by the session index, then marked paired. A model request
//! without an id (Codex, Gemini CLI) is joined by its exact token counts, which both
//! sources report per response (its two reports may be minutes apart).
//!
//! Which hook events are looked at: only those of a session that has sent OTLP (kept
//! here, in memory and in `main.db`'s `otlp_sessions`, reloaded at start), so the hook's
//! path pays nothing for a session without OTLP. OTLP events are always looked at.
//!
//! Invariants: a row is never joined with a row of its own source (two reports of one
//! request's growing usage from the hook both count); the first report of a call or
//! request is the one counted, so the fold and the aggregates, which count inserted rows
//! only, count it once; what a later report fills is never a counted column.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use crate::db::DbError;
use crate::model::AgentType;
use crate::model::wire::Event;

/// How long a session that sent OTLP is remembered: past it, a late hook event of the
/// session is not joined (its OTLP twin is long stored, and the hook's has been too).
const REMEMBER_MS: i64 = 2 * 86_400_000;

/// A session by a hash of (person, agent, session id), so a hook event's look-up borrows
/// its fields instead of copying them (the writer's hot path). A collision only makes a
/// hook event look for a twin it will not find.
fn session_of(user_id: &str, agent: AgentType, session_id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (user_id, agent.as_str(), session_id).hash(&mut hasher);
    hasher.finish()
}

/// The sessions that sent OTLP lately, by when they last did.
#[derive(Debug, Default)]
pub(super) struct OtlpSessions {
    recent: HashMap<u64, i64>,
}

impl OtlpSessions {
    /// The sessions `main.db` remembers, forgetting those past [`REMEMBER_MS`].
    pub(super) fn load(main: &Connection, now_ms: i64) -> Result<OtlpSessions, DbError> {
        main.execute("DELETE FROM otlp_sessions WHERE last_seen_ms < ?1", [now_ms - REMEMBER_MS])?;
        let mut stmt = main.prepare("SELECT user_id, agent_type, session_id, last_seen_ms FROM otlp_sessions")?;
        let rows = stmt.query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?, row.get::<_, i64>(3)?))
        })?;
        let mut recent = HashMap::new();
        for row in rows {
            let (user, agent, session, seen) = row?;
            if let Some(agent) = AgentType::parse(&agent) {
                recent.insert(session_of(&user, agent, &session), seen);
            }
        }
        Ok(OtlpSessions { recent })
    }

    /// Whether this session has sent OTLP (so its events are joined).
    pub(super) fn contains(&self, user_id: &str, event: &Event) -> bool {
        !self.recent.is_empty() && self.recent.contains_key(&session_of(user_id, event.agent_type, &event.session_id))
    }

    /// Remembers the sessions of OTLP events just stored, in memory and in `main.db`
    /// (inside the writer's `main.db` transaction).
    pub(super) fn note(
        &mut self,
        tx: &Connection,
        user_id: &str,
        events: &[&Event],
        now_ms: i64,
    ) -> Result<(), DbError> {
        let mut upsert = tx.prepare_cached(
            "INSERT INTO otlp_sessions (user_id, agent_type, session_id, last_seen_ms) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (user_id, agent_type, session_id) DO UPDATE SET last_seen_ms = excluded.last_seen_ms",
        )?;
        for event in events {
            let key = session_of(user_id, event.agent_type, &event.session_id);
            if self.recent.insert(key, now_ms).is_none_or(|seen| now_ms - seen > 60_000) {
                upsert.execute(params![user_id, event.agent_type.as_str(), event.session_id, now_ms])?;
            }
        }
        if self.recent.len() > 200_000 {
            self.recent.retain(|_, seen| now_ms - *seen < REMEMBER_MS);
        }
        Ok(())
    }
}

/// Forgets a person's sessions (a deletion request).
pub fn forget_person(tx: &Connection, user_id: &str) -> Result<(), DbError> {
    tx.execute("DELETE FROM otlp_sessions WHERE user_id = ?1", [user_id])?;
    Ok(())
}

/// How an event may be joined with the other source's report of the same thing.
pub(super) enum Join {
    /// Not joinable (a notification, a session's end, a request without an id).
    None,
    /// By the vendor's id both sources carry (`partitions::join_key`).
    Key(String),
    /// By time: the other source's unpaired report of the same kind (and tool) this near.
    Near(i64),
}

impl Join {
    pub(super) fn of(event: &Event) -> Join {
        let key = crate::events::partitions::join_key(
            event.event_type,
            event.agent_type,
            event.tool.as_ref().and_then(|tool| tool.use_id.as_deref()),
            event.metadata.as_deref(),
            &event.usage,
        );
        match (key, crate::events::partitions::near_window_ms(event)) {
            (Some(key), _) => Join::Key(key),
            (None, Some(window_ms)) => Join::Near(window_ms),
            (None, None) => Join::None,
        }
    }
}

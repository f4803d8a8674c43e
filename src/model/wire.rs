//! Wire contract v1: the envelope a developer machine posts to `POST /v1/events`, and
//! the validation that turns one untrusted JSON event into an [`Event`].
//!
//! Invariants: validation is per event, so one bad event is reported with the field
//! that is wrong and never blocks its batch; unknown fields are ignored and never
//! stored (the contract carries only hashes and byte sizes of tool input and output,
//! never content); the user is the owner of the token, never a payload field.
//! `docs/wire-contract.md` and `assets/wire-contract.v1.schema.json` describe the same
//! rules for client authors.

use serde::Deserialize;
use serde_json::value::RawValue;
use uuid::Uuid;

use super::{AgentType, EventType, NUSD_PER_USD, NotificationKind, PermissionMode, RunKind, ToolStatus, Usage};

mod checks;
mod draft;
use checks::*;
pub use draft::{Draft, DraftEval, DraftGit, DraftTool, DraftUsage};

/// Bounds a single event must respect; set from configuration.
#[derive(Clone, Debug)]
pub struct EventLimits {
    pub max_metadata_bytes: usize,
    /// How far in the future an event timestamp may lie (clock skew on laptops).
    pub max_future_skew_ms: i64,
    /// How old an event may be (historical import reaches back this far).
    pub max_age_ms: i64,
}

impl Default for EventLimits {
    fn default() -> Self {
        EventLimits { max_metadata_bytes: 8 * 1024, max_future_skew_ms: 24 * 3_600_000, max_age_ms: 400 * 86_400_000 }
    }
}

const MAX_ID_CHARS: usize = 200;
const MAX_NAME_CHARS: usize = 200;
/// An agent's version (`2.1.332`, `0.171.0-alpha.3`): as long as the client block's.
const MAX_AGENT_VERSION_CHARS: usize = 64;

/// Whether `version` is an agent version the wire accepts (what `agent_version` is
/// checked against), so a source can leave out a strange one rather than lose its event.
pub fn is_agent_version(version: &str) -> bool {
    check_text("agent_version", version, 1, MAX_AGENT_VERSION_CHARS).is_ok()
}
const MAX_TOKENS_PER_KIND: i64 = 1_000_000_000;
const MAX_DURATION_MS: i64 = 7 * 86_400_000;
const MAX_METADATA_DEPTH: usize = 8;

/// The batch envelope. Events stay raw here so each is parsed on its own.
#[derive(Debug, Deserialize)]
pub struct Envelope<'a> {
    pub client: ClientInfo,
    #[serde(borrow, deserialize_with = "at_most_events")]
    pub events: Vec<&'a RawValue>,
}

/// The most events any batch may hold (`ingest.max_events_per_batch` is at most this):
/// the envelope's parse stops past it, so a body of millions of `{}` costs no more than
/// this many references.
pub const MAX_BATCH_EVENTS: usize = 100_000;

/// What the parse says of a batch past [`MAX_BATCH_EVENTS`] (the handler answers 413).
pub const TOO_MANY_EVENTS: &str = "the batch holds more than 100000 events";

fn at_most_events<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<&'de RawValue>, D::Error> {
    struct AtMost;
    impl<'de> serde::de::Visitor<'de> for AtMost {
        type Value = Vec<&'de RawValue>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an array of events")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut events = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
            while let Some(event) = seq.next_element()? {
                if events.len() == MAX_BATCH_EVENTS {
                    return Err(serde::de::Error::custom(TOO_MANY_EVENTS));
                }
                events.push(event);
            }
            Ok(events)
        }
    }
    deserializer.deserialize_seq(AtMost)
}

/// Who sent the batch: a machine, not a person (the person is the token's owner).
#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
pub struct ClientInfo {
    pub machine_id: String,
    pub cli_version: String,
    pub os: String,
}

impl ClientInfo {
    /// Checks the envelope's client block; a bad one makes the whole batch malformed.
    pub fn validate(&self) -> Result<(), Rejection> {
        check_text("client.machine_id", &self.machine_id, 1, 128)?;
        check_text("client.cli_version", &self.cli_version, 1, 64)?;
        check_text("client.os", &self.os, 1, 64)?;
        Ok(())
    }
}

/// Why one event was not accepted: the field (dotted path) and a sentence.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Rejection {
    pub field: String,
    pub reason: String,
}

impl Rejection {
    pub fn new(field: &str, reason: impl Into<String>) -> Self {
        Rejection { field: field.to_string(), reason: reason.into() }
    }
}

/// Tool fields of a validated event. Hashes are raw SHA-256 digests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolFields {
    pub name: String,
    pub server: Option<String>,
    pub skill: Option<String>,
    pub slash_command: Option<String>,
    pub use_id: Option<String>,
    pub status: Option<ToolStatus>,
    pub duration_ms: Option<i64>,
    pub input_sha256: Option<[u8; 32]>,
    pub input_bytes: Option<i64>,
    pub output_sha256: Option<[u8; 32]>,
    pub output_bytes: Option<i64>,
    pub target_hash: Option<[u8; 32]>,
    pub action: Option<String>,
}

/// Git context captured at session start (and at its end, what the session left); the remote has credentials stripped by the
/// hook and is redacted again by ingest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitContext {
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub remote: Option<String>,
    pub dirty: Option<bool>,
}

/// One validated event, as stored. `cost_nusd` is the server's own price (set by
/// ingest); `client_cost_nusd` is what the client claimed, kept but never trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub event_id: Uuid,
    pub event_type: EventType,
    pub ts_ms: i64,
    pub agent_type: AgentType,
    pub session_id: String,
    pub run_kind: RunKind,
    pub model: Option<String>,
    /// The agent's own version as it reports it (`2.1.332`), not the hook's.
    pub agent_version: Option<String>,
    pub permission_mode: Option<PermissionMode>,
    pub notification_kind: Option<NotificationKind>,
    pub tool: Option<ToolFields>,
    pub usage: Usage,
    pub cost_nusd: i64,
    pub client_cost_nusd: Option<i64>,
    pub response_ms: Option<i64>,
    pub git: Option<GitContext>,
    /// The evaluation cell this event's session was run for (an `EVAL` run only).
    pub eval: Option<super::eval_cell::EvalTag>,
    /// Redacted metadata as compact JSON text (an object), if any.
    pub metadata: Option<String>,
}

/// The start of the metadata of an event mapped from an agent's own OTLP export
/// (`otlp::logs` writes `source` first): how the store tells the two sources apart.
pub const OTLP_METADATA_PREFIX: &str = r#"{"source":"otlp""#;

impl Event {
    /// Whether this event came from an agent's OTLP export rather than the hook.
    pub fn is_otlp(&self) -> bool {
        self.metadata.as_deref().is_some_and(|metadata| metadata.starts_with(OTLP_METADATA_PREFIX))
    }
}

/// A validated event whose metadata has not been redacted yet. Kept apart from
/// [`Event::metadata`] so unredacted metadata has no path into storage.
#[derive(Debug)]
pub struct ParsedEvent {
    pub event: Event,
    pub unredacted_metadata: Option<serde_json::Value>,
}

/// Parses and validates one raw event. `now_ms` bounds the timestamp. Metadata is
/// checked for size and shape here; redaction and pricing are ingest's business.
pub fn parse_event(raw: &RawValue, limits: &EventLimits, now_ms: i64) -> Result<ParsedEvent, Rejection> {
    validate(decode_draft(raw)?, limits, now_ms)
}

/// One raw event as the draft it spells, or the field whose JSON type is wrong.
pub fn decode_draft(raw: &RawValue) -> Result<Draft, Rejection> {
    serde_json::from_str(raw.get()).map_err(|_| locate_type_error(raw))
}

/// Serde's fast path failed: parse again tracking the path, so the client learns
/// which field has the wrong JSON type.
fn locate_type_error(raw: &RawValue) -> Rejection {
    let mut deserializer = serde_json::Deserializer::from_str(raw.get());
    match serde_path_to_error::deserialize::<_, Draft>(&mut deserializer) {
        Ok(_) => Rejection::new("event", "event is not valid"),
        Err(err) => {
            let path = err.path().to_string();
            // The event itself has the wrong type (null, a list, a number): name it.
            let field = if path == "." || path.is_empty() { "event".to_string() } else { path };
            let inner = err.into_inner().to_string();
            let reason = match inner.find(" at line ") {
                Some(cut) => inner[..cut].to_string(),
                None => inner,
            };
            Rejection { field, reason }
        }
    }
}

/// Checks a draft against wire contract v1: the one door by which any source's event
/// (the hook's JSON, an OTLP mapping built in process) becomes an [`Event`].
pub fn validate(wire: Draft, limits: &EventLimits, now_ms: i64) -> Result<ParsedEvent, Rejection> {
    let event_id = required("event_id", wire.event_id.as_deref())?;
    let event_id =
        Uuid::parse_str(event_id).map_err(|_| Rejection::new("event_id", "must be a UUID (the hook mints UUIDv7)"))?;
    if event_id.is_nil() {
        return Err(Rejection::new("event_id", "must not be the nil UUID"));
    }
    let event_type = parse_enum("type", wire.event_type.as_deref(), EventType::parse, EventType::expected)?
        .ok_or_else(|| missing("type"))?;
    let ts_ms = parse_ts(required("ts", wire.ts.as_deref())?, limits, now_ms)?;
    let agent_type = parse_enum("agent_type", wire.agent_type.as_deref(), AgentType::parse, AgentType::expected)?
        .ok_or_else(|| missing("agent_type"))?;
    let session_id = required("session_id", wire.session_id.as_deref())?;
    check_text("session_id", session_id, 1, MAX_ID_CHARS)?;
    let run_kind = parse_enum("run_kind", wire.run_kind.as_deref(), RunKind::parse, RunKind::expected)?
        .unwrap_or(RunKind::Interactive);
    if let Some(model) = wire.model.as_deref() {
        check_text("model", model, 1, MAX_NAME_CHARS)?;
    }
    if let Some(version) = wire.agent_version.as_deref() {
        check_text("agent_version", version, 1, MAX_AGENT_VERSION_CHARS)?;
    }
    let permission_mode = parse_enum(
        "permission_mode",
        wire.permission_mode.as_deref(),
        PermissionMode::parse,
        PermissionMode::expected,
    )?;
    let mut notification_kind = parse_enum(
        "notification_kind",
        wire.notification_kind.as_deref(),
        NotificationKind::parse,
        NotificationKind::expected,
    )?;
    match (event_type, notification_kind) {
        (EventType::Notification, None) => notification_kind = Some(NotificationKind::Other),
        (EventType::Notification, Some(_)) | (_, None) => {}
        (_, Some(_)) => {
            return Err(Rejection::new("notification_kind", "is only allowed on notification events"));
        }
    }
    let tool = wire.tool.map(|tool| validate_tool(tool, agent_type)).transpose()?;
    if tool.is_none() && matches!(event_type, EventType::ToolStart | EventType::ToolEnd) {
        return Err(missing("tool"));
    }
    let usage = wire.usage.map(validate_usage).transpose()?.unwrap_or_default();
    let client_cost_nusd = wire.client_cost_usd.map(validate_client_cost).transpose()?;
    if let Some(response_ms) = wire.response_ms {
        check_range("response_ms", response_ms, 0, MAX_DURATION_MS)?;
    }
    let git = match wire.git {
        Some(_) if !matches!(event_type, EventType::SessionStart | EventType::SessionEnd) => {
            return Err(Rejection::new("git", "is only allowed on session_start and session_end events"));
        }
        Some(git) => Some(validate_git(git)?).filter(|git| *git != GitContext::default()),
        None => None,
    };
    let eval = wire.eval.map(validate_eval).transpose()?;
    // A session run for an evaluation cell is an evaluation run, whatever else it says,
    // so it never reaches a figure of developer behaviour.
    let run_kind = if eval.is_some() && run_kind == RunKind::Interactive { RunKind::Eval } else { run_kind };
    let metadata = wire.metadata.map(|map| validate_metadata(map, limits)).transpose()?;
    let event = Event {
        event_id,
        event_type,
        ts_ms,
        agent_type,
        session_id: session_id.to_string(),
        run_kind,
        model: wire.model,
        agent_version: wire.agent_version,
        permission_mode,
        notification_kind,
        tool,
        usage,
        cost_nusd: 0,
        client_cost_nusd,
        response_ms: wire.response_ms,
        git,
        eval,
        metadata: None,
    };
    Ok(ParsedEvent { event, unredacted_metadata: metadata })
}

fn validate_eval(wire: DraftEval) -> Result<super::eval_cell::EvalTag, Rejection> {
    use super::eval_cell::{self, MAX_PHASE_CHARS, MAX_RUN_NAME_CHARS};
    let cell_id = required("eval.cell_id", wire.cell_id.as_deref())?;
    eval_cell::parse_cell_id(cell_id).map_err(|reason| Rejection::new("eval.cell_id", reason))?;
    for (field, value, max) in
        [("eval.run_name", &wire.run_name, MAX_RUN_NAME_CHARS), ("eval.phase", &wire.phase, MAX_PHASE_CHARS)]
    {
        if let Some(value) = value {
            eval_cell::check_name(value, max).map_err(|reason| Rejection::new(field, reason))?;
        }
    }
    Ok(super::eval_cell::EvalTag { cell_id: cell_id.to_string(), run_name: wire.run_name, phase: wire.phase })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(eval: serde_json::Value, run_kind: Option<&str>) -> Result<ParsedEvent, Rejection> {
        let now = 1_790_000_000_000;
        let mut json = serde_json::json!({
            "event_id": Uuid::now_v7().to_string(), "type": "session_start", "ts": crate::model::rfc3339_ms(now),
            "agent_type": "claude_code", "session_id": "s1", "eval": eval,
        });
        if let Some(kind) = run_kind {
            json["run_kind"] = kind.into();
        }
        parse_event(&serde_json::value::to_raw_value(&json).unwrap(), &EventLimits::default(), now)
    }

    #[test]
    fn an_events_cell_is_checked_and_makes_its_run_an_evaluation() {
        let parsed = parse(serde_json::json!({"cell_id": "h__m__t__r3", "run_name": "nightly"}), None).unwrap();
        assert_eq!(parsed.event.run_kind, RunKind::Eval);
        let tag = parsed.event.eval.unwrap();
        assert_eq!((tag.cell_id.as_str(), tag.run_name.as_deref(), tag.phase), ("h__m__t__r3", Some("nightly"), None));
        // A CI runner's harness keeps its own kind.
        assert_eq!(
            parse(serde_json::json!({"cell_id": "h__m__t__r3"}), Some("CI")).unwrap().event.run_kind,
            RunKind::Ci
        );
        for (eval, field, says) in [
            (serde_json::json!({"cell_id": "task-7"}), "eval.cell_id", "shape"),
            (serde_json::json!({"run_name": "nightly"}), "eval.cell_id", "required"),
            (serde_json::json!({"cell_id": "h__m__t__r1", "phase": ""}), "eval.phase", "empty"),
            (serde_json::json!({"cell_id": 7}), "eval.cell_id", "string"),
        ] {
            let err = parse(eval.clone(), None).map(|_| ()).unwrap_err();
            assert_eq!(err.field, field, "{eval}: {err:?}");
            assert!(err.reason.contains(says), "{eval}: {err:?}");
        }
    }
}

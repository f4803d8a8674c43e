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
const MAX_TOKENS_PER_KIND: i64 = 1_000_000_000;
const MAX_DURATION_MS: i64 = 7 * 86_400_000;
const MAX_METADATA_DEPTH: usize = 8;

/// The batch envelope. Events stay raw here so each is parsed on its own.
#[derive(Debug, Deserialize)]
pub struct Envelope<'a> {
    pub client: ClientInfo,
    #[serde(borrow)]
    pub events: Vec<&'a RawValue>,
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
    pub permission_mode: Option<PermissionMode>,
    pub notification_kind: Option<NotificationKind>,
    pub tool: Option<ToolFields>,
    pub usage: Usage,
    pub cost_nusd: i64,
    pub client_cost_nusd: Option<i64>,
    pub response_ms: Option<i64>,
    pub git: Option<GitContext>,
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

#[derive(Deserialize)]
struct WireEvent {
    event_id: Option<String>,
    #[serde(rename = "type")]
    event_type: Option<String>,
    ts: Option<String>,
    agent_type: Option<String>,
    session_id: Option<String>,
    run_kind: Option<String>,
    model: Option<String>,
    permission_mode: Option<String>,
    notification_kind: Option<String>,
    tool: Option<WireTool>,
    usage: Option<WireUsage>,
    client_cost_usd: Option<f64>,
    response_ms: Option<i64>,
    git: Option<WireGit>,
    metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Deserialize)]
struct WireTool {
    name: Option<String>,
    server: Option<String>,
    skill: Option<String>,
    slash_command: Option<String>,
    use_id: Option<String>,
    status: Option<String>,
    duration_ms: Option<i64>,
    input_sha256: Option<String>,
    input_bytes: Option<i64>,
    output_sha256: Option<String>,
    output_bytes: Option<i64>,
    target_hash: Option<String>,
    action: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    cache_read_tokens: Option<i64>,
    cache_write_5m_tokens: Option<i64>,
    cache_write_1h_tokens: Option<i64>,
    reasoning_tokens: Option<i64>,
}

#[derive(Deserialize)]
struct WireGit {
    branch: Option<String>,
    commit: Option<String>,
    remote: Option<String>,
    dirty: Option<bool>,
}

/// Parses and validates one raw event. `now_ms` bounds the timestamp. Metadata is
/// checked for size and shape here; redaction and pricing are ingest's business.
pub fn parse_event(raw: &RawValue, limits: &EventLimits, now_ms: i64) -> Result<ParsedEvent, Rejection> {
    let wire: WireEvent = match serde_json::from_str(raw.get()) {
        Ok(wire) => wire,
        Err(_) => return Err(locate_type_error(raw)),
    };
    validate(wire, limits, now_ms)
}

/// Serde's fast path failed: parse again tracking the path, so the client learns
/// which field has the wrong JSON type.
fn locate_type_error(raw: &RawValue) -> Rejection {
    let mut deserializer = serde_json::Deserializer::from_str(raw.get());
    match serde_path_to_error::deserialize::<_, WireEvent>(&mut deserializer) {
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

fn validate(wire: WireEvent, limits: &EventLimits, now_ms: i64) -> Result<ParsedEvent, Rejection> {
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
    let metadata = wire.metadata.map(|map| validate_metadata(map, limits)).transpose()?;
    let event = Event {
        event_id,
        event_type,
        ts_ms,
        agent_type,
        session_id: session_id.to_string(),
        run_kind,
        model: wire.model,
        permission_mode,
        notification_kind,
        tool,
        usage,
        cost_nusd: 0,
        client_cost_nusd,
        response_ms: wire.response_ms,
        git,
        metadata: None,
    };
    Ok(ParsedEvent { event, unredacted_metadata: metadata })
}

fn missing(field: &str) -> Rejection {
    Rejection::new(field, "is required")
}

fn required<'a>(field: &str, value: Option<&'a str>) -> Result<&'a str, Rejection> {
    value.ok_or_else(|| missing(field))
}

fn parse_enum<T>(
    field: &str,
    value: Option<&str>,
    parse: fn(&str) -> Option<T>,
    expected: fn() -> String,
) -> Result<Option<T>, Rejection> {
    match value {
        None => Ok(None),
        Some(text) => parse(text)
            .map(Some)
            .ok_or_else(|| Rejection::new(field, format!("unknown value {text:?}; expected one of {}", expected()))),
    }
}

fn check_text(field: &str, value: &str, min_chars: usize, max_chars: usize) -> Result<(), Rejection> {
    let chars = value.chars().count();
    if chars < min_chars {
        let reason = if min_chars == 1 {
            "must not be empty".to_string()
        } else {
            format!("must be at least {min_chars} characters")
        };
        return Err(Rejection::new(field, reason));
    }
    if chars > max_chars {
        return Err(Rejection::new(field, format!("is longer than {max_chars} characters")));
    }
    if value.chars().any(char::is_control) {
        return Err(Rejection::new(field, "must not contain control characters"));
    }
    Ok(())
}

fn check_range(field: &str, value: i64, min: i64, max: i64) -> Result<(), Rejection> {
    if value < min || value > max {
        return Err(Rejection::new(field, format!("must be between {min} and {max}")));
    }
    Ok(())
}

fn parse_ts(text: &str, limits: &EventLimits, now_ms: i64) -> Result<i64, Rejection> {
    let ts_ms = super::parse_rfc3339_ms(text)
        .ok_or_else(|| Rejection::new("ts", "must be an RFC 3339 timestamp such as 2026-11-21T09:30:00.123Z"))?;
    if ts_ms > now_ms + limits.max_future_skew_ms {
        return Err(Rejection::new("ts", "is too far in the future (check the machine's clock)"));
    }
    if ts_ms < now_ms - limits.max_age_ms {
        return Err(Rejection::new("ts", "is older than the server accepts"));
    }
    Ok(ts_ms)
}

fn validate_tool(tool: WireTool, agent_type: AgentType) -> Result<ToolFields, Rejection> {
    let name = tool.name.ok_or_else(|| missing("tool.name"))?;
    check_text("tool.name", &name, 3, MAX_NAME_CHARS)?;
    match name.split_once(':') {
        Some((prefix, rest)) if prefix == agent_type.as_str() && !rest.is_empty() => {}
        _ => {
            return Err(Rejection::new(
                "tool.name",
                format!("must be <agent>:<tool> with the event's agent, e.g. {}:Bash", agent_type.as_str()),
            ));
        }
    }
    for (field, value) in [
        ("tool.server", &tool.server),
        ("tool.skill", &tool.skill),
        ("tool.slash_command", &tool.slash_command),
        ("tool.use_id", &tool.use_id),
    ] {
        if let Some(value) = value {
            check_text(field, value, 1, MAX_NAME_CHARS)?;
        }
    }
    let status = parse_enum("tool.status", tool.status.as_deref(), ToolStatus::parse, ToolStatus::expected)?;
    for (field, value) in [
        ("tool.duration_ms", tool.duration_ms),
        ("tool.input_bytes", tool.input_bytes),
        ("tool.output_bytes", tool.output_bytes),
    ] {
        if let Some(value) = value {
            let max = if field == "tool.duration_ms" { MAX_DURATION_MS } else { i64::from(u32::MAX) * 16 };
            check_range(field, value, 0, max)?;
        }
    }
    if let Some(action) = tool.action.as_deref()
        && (action.is_empty() || action.len() > 32 || !action.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
    {
        return Err(Rejection::new("tool.action", "must be 1-32 lowercase letters or underscores"));
    }
    Ok(ToolFields {
        name,
        server: tool.server,
        skill: tool.skill,
        slash_command: tool.slash_command,
        use_id: tool.use_id,
        status,
        duration_ms: tool.duration_ms,
        input_sha256: parse_digest("tool.input_sha256", tool.input_sha256.as_deref())?,
        input_bytes: tool.input_bytes,
        output_sha256: parse_digest("tool.output_sha256", tool.output_sha256.as_deref())?,
        output_bytes: tool.output_bytes,
        target_hash: parse_digest("tool.target_hash", tool.target_hash.as_deref())?,
        action: tool.action,
    })
}

fn parse_digest(field: &str, value: Option<&str>) -> Result<Option<[u8; 32]>, Rejection> {
    let Some(text) = value else { return Ok(None) };
    let mut digest = [0u8; 32];
    if text.len() != 64 || hex::decode_to_slice(text, &mut digest).is_err() {
        return Err(Rejection::new(field, "must be a SHA-256 digest: 64 hexadecimal characters"));
    }
    Ok(Some(digest))
}

fn validate_usage(usage: WireUsage) -> Result<Usage, Rejection> {
    let checked = |field: &str, value: Option<i64>| -> Result<i64, Rejection> {
        let value = value.unwrap_or(0);
        check_range(field, value, 0, MAX_TOKENS_PER_KIND)?;
        Ok(value)
    };
    Ok(Usage {
        input_tokens: checked("usage.input_tokens", usage.input_tokens)?,
        output_tokens: checked("usage.output_tokens", usage.output_tokens)?,
        cache_read_tokens: checked("usage.cache_read_tokens", usage.cache_read_tokens)?,
        cache_write_5m_tokens: checked("usage.cache_write_5m_tokens", usage.cache_write_5m_tokens)?,
        cache_write_1h_tokens: checked("usage.cache_write_1h_tokens", usage.cache_write_1h_tokens)?,
        reasoning_tokens: checked("usage.reasoning_tokens", usage.reasoning_tokens)?,
    })
}

fn validate_client_cost(usd: f64) -> Result<i64, Rejection> {
    if !usd.is_finite() || !(0.0..=1_000_000.0).contains(&usd) {
        return Err(Rejection::new("client_cost_usd", "must be a number between 0 and 1000000"));
    }
    Ok((usd * NUSD_PER_USD as f64).round() as i64)
}

fn validate_git(git: WireGit) -> Result<GitContext, Rejection> {
    if let Some(branch) = git.branch.as_deref() {
        check_text("git.branch", branch, 1, 255)?;
    }
    if let Some(commit) = git.commit.as_deref()
        && !(4..=64).contains(&commit.len()) | !commit.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Err(Rejection::new("git.commit", "must be a hexadecimal commit id"));
    }
    if let Some(remote) = git.remote.as_deref() {
        check_text("git.remote", remote, 1, 1024)?;
    }
    Ok(GitContext {
        branch: git.branch,
        commit: git.commit.map(|c| c.to_ascii_lowercase()),
        remote: git.remote,
        dirty: git.dirty,
    })
}

fn validate_metadata(
    map: serde_json::Map<String, serde_json::Value>,
    limits: &EventLimits,
) -> Result<serde_json::Value, Rejection> {
    let value = serde_json::Value::Object(map);
    if depth(&value) > MAX_METADATA_DEPTH {
        return Err(Rejection::new("metadata", format!("is nested deeper than {MAX_METADATA_DEPTH} levels")));
    }
    // serde_json's compact form is what is stored, so its length is the stored size.
    let size = serde_json::to_string(&value).map(|text| text.len()).unwrap_or(usize::MAX);
    if size > limits.max_metadata_bytes {
        return Err(Rejection::new(
            "metadata",
            format!("is {size} bytes; the limit is {} bytes", limits.max_metadata_bytes),
        ));
    }
    Ok(value)
}

fn depth(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        serde_json::Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

//! From an OTLP logs export to wire events: each log record is recognised by its
//! agent and event name, read by that agent's mapping into one event of wire contract
//! v1 (or skipped, or refused with a reason), and the events then take the hook's
//! path: validation, redaction, pricing, the writer.
//!
//! Invariants: the person is the credential's owner, never an exported attribute; a
//! record is never stored with more than its mapping takes (no prompt text, no tool
//! parameters or output: lengths and sizes only); an event's id is derived from the
//! person, agent, session, event name, record time and the vendor's own key for it
//! (request, tool call or sequence number), so an exporter's retry or replay is a
//! duplicate, not a second event; one bad record never blocks the others.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::logs::v1::LogRecord;

use super::attributes::Attributes;
use super::{claude_code, codex, gemini_cli};
use crate::model::sightings::Sighting;
use crate::model::sightings::{Unmapped, UnmappedKind as Kind};
use crate::model::wire::{Draft, DraftEval};
use crate::model::{AgentType, EventType, RunKind};

/// An agent's version as its resource names it (`service.version`), if it is one the
/// wire keeps (1–64 characters, none a control character): a strange version never
/// costs an event. Gemini CLI 0.61.0 (and Qwen Code, its fork) puts Node's version
/// there (`v20.20.2`), not its own, so theirs is not read ([`own_version`]).
fn agent_version(resource: &Attributes<'_>) -> Option<String> {
    resource.text("service.version").filter(|version| crate::model::wire::is_agent_version(version))
}

/// The resource's version, if `agent` puts its own version there.
fn own_version(agent: AgentType, version: Option<&str>) -> Option<&str> {
    version.filter(|_| !matches!(agent, AgentType::GeminiCli | AgentType::QwenCode))
}

/// The names one export's mapped records never read, counted: per agent, resource
/// (its version) and event, the unread attribute keys, borrowed from the export.
#[derive(Default)]
struct Unread<'a> {
    skipped: Vec<(AgentType, usize, String, u64)>,
    attributes: Vec<(AgentType, usize, String, std::collections::HashMap<&'a str, u64>)>,
}

impl<'a> Unread<'a> {
    fn skipped(&mut self, record: &Record<'_>, resource: usize) {
        match self
            .skipped
            .iter_mut()
            .find(|(agent, at, name, _)| *agent == record.agent && *at == resource && *name == record.name)
        {
            Some((.., count)) => *count += 1,
            None => self.skipped.push((record.agent, resource, record.name.clone(), 1)),
        }
    }

    fn attributes(&mut self, record: &Record<'a>, resource: usize) {
        let position = self
            .attributes
            .iter()
            .position(|(agent, at, name, _)| *agent == record.agent && *at == resource && *name == record.name);
        let keys = match position {
            Some(index) => &mut self.attributes[index].3,
            None => {
                self.attributes.push((record.agent, resource, record.name.clone(), Default::default()));
                &mut self.attributes.last_mut().expect("just pushed").3
            }
        };
        for key in record.attributes.unread() {
            *keys.entry(key).or_insert(0) += 1;
        }
    }

    fn into_sightings(self, versions: &[Option<String>]) -> Vec<(Unmapped, u64)> {
        let version = |at: usize| versions.get(at).and_then(|v| v.as_deref());
        let version = move |agent: AgentType, at: usize| own_version(agent, version(at));
        let events = self.skipped.into_iter().map(|(agent, at, name, count)| {
            (Unmapped::new(agent, version(agent, at), Kind::Event, &name, &name), count)
        });
        let attributes = self.attributes.into_iter().flat_map(|(agent, at, event, keys)| {
            keys.into_iter().map(move |(key, count)| {
                (Unmapped::new(agent, version(agent, at), Kind::Attribute, &event, key), count)
            })
        });
        events.chain(attributes).collect()
    }
}

/// What a mapping makes of one record.
// Unboxed: an outcome lives only until it is matched, and most are events, so a box
// would cost an allocation per event to save stack on the others.
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    Event(Draft),
    /// A record the product does not use (counted, not an error).
    Skipped,
    /// A record that names an event we map but cannot be read; the reason is returned
    /// to the exporter in `partial_success`.
    Refused(String),
}

/// One log record, recognised: its agent, bare event name and attributes.
pub struct Record<'a> {
    pub agent: AgentType,
    pub name: String,
    pub attributes: Attributes<'a>,
    user_id: &'a str,
    pub(super) session_id: String,
    time_ms: i64,
    time_nanos: u64,
    run_kind: &'static str,
    /// The evaluation cell the resource names (`sightline.eval.cell`, …), as the wire's
    /// `eval` object.
    eval: Option<DraftEval>,
}

impl<'a> Record<'a> {
    /// A record made from something other than a log record (a span), with the same
    /// identity rules: `name` is its bare event name, `time_ms` the time it describes.
    pub(super) fn from_parts(
        agent: AgentType,
        name: String,
        attributes: Attributes<'a>,
        user_id: &'a str,
        session_id: String,
        time_nanos: u64,
    ) -> Record<'a> {
        let (run_kind, eval) = (run_kind(agent, &attributes), eval_tag(&attributes));
        Record {
            agent,
            name,
            attributes,
            user_id,
            session_id,
            time_ms: (time_nanos / 1_000_000) as i64,
            time_nanos,
            run_kind,
            eval,
        }
    }

    /// A wire event of `kind` for this record. `key` is the vendor's id of what the
    /// event describes (a request, a tool call); without one the record's time and
    /// sequence number tell its replays apart from other records.
    pub fn event(&self, kind: EventType, key: Option<&str>) -> Draft {
        let sequence = self.attributes.text("event.sequence").unwrap_or_default();
        let identity = match key {
            Some(key) => format!("{}\u{1f}{key}", self.name),
            None => format!("{}\u{1f}{}\u{1f}{sequence}", self.name, self.time_nanos),
        };
        let id = derived_id(self.user_id, self.agent, &self.session_id, &identity, self.time_ms);
        let mut event = Draft::new(id, kind, self.time_ms, self.agent, self.session_id.clone());
        event.run_kind = Some(self.run_kind.to_string());
        // `source` first: how the store tells an OTLP event from the hook's
        // (`wire::OTLP_METADATA_PREFIX`).
        event.note("source", "otlp");
        event.note("otlp_event", self.name.clone());
        event.eval = self.eval.clone();
        event
    }
}

impl Record<'_> {
    /// A prompt: its length, never its text.
    pub fn prompt(&self) -> Draft {
        let mut event = self.event(EventType::PromptSubmit, None);
        if let Some(length) = self.attributes.count("prompt_length") {
            event.note("prompt_length", length);
        }
        event
    }

    /// A session's start, with its model.
    pub fn start(&self) -> Draft {
        let mut event = self.event(EventType::SessionStart, None);
        if let Some(model) = self.attributes.text("model") {
            event.model = Some(model);
        }
        event
    }
}

/// A deterministic id laid out as a UUIDv7 (the record's time in its first 48 bits, so
/// a partition's inserts stay in time order) with the rest from a digest of what the
/// event is.
fn derived_id(user_id: &str, agent: AgentType, session_id: &str, identity: &str, time_ms: i64) -> uuid::Uuid {
    let material = format!("{user_id}\u{1f}{}\u{1f}{session_id}\u{1f}{identity}", agent.as_str());
    let digest = crate::model::sha256(material.as_bytes());
    let mut random = [0u8; 10];
    random.copy_from_slice(&digest[..10]);
    uuid::Builder::from_unix_timestamp_millis(time_ms.max(0) as u64, &random).into_uuid()
}

/// The events of one export, and what became of the other records.
#[derive(Debug, Default)]
pub struct Mapped {
    pub events: Vec<Draft>,
    pub skipped: u64,
    /// Records refused, with the first few reasons for the exporter's log.
    pub refused: u64,
    pub reasons: Vec<String>,
    /// What no mapping used, with how many records had it (`sessions::drift`).
    pub unmapped: Vec<(Unmapped, u64)>,
    /// The agents' inventory reports (`sessions::capabilities`).
    pub capabilities: Vec<Sighting>,
}

impl Mapped {
    pub(super) fn refuse(&mut self, reason: String) {
        self.refused += 1;
        if self.reasons.len() < 5 && !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }
}

/// Maps every record of `request` for the person `user_id`.
pub fn map(request: &ExportLogsServiceRequest, user_id: &str) -> Mapped {
    let mut mapped = Mapped::default();
    // Sessions one of whose records, mapped or not, is a run nobody sits at (Claude Code
    // says so only on its `api_request`), and those whose kind is set explicitly.
    let mut automated: std::collections::HashSet<(AgentType, String)> = Default::default();
    let mut explicit: std::collections::HashSet<(AgentType, String)> = Default::default();
    let mut unread = Unread::default();
    let mut versions = Vec::with_capacity(request.resource_logs.len());
    for (at, resource_logs) in request.resource_logs.iter().enumerate() {
        let resource = resource_logs.resource.as_ref().map(|r| r.attributes.as_slice()).unwrap_or_default();
        versions.push(agent_version(&Attributes::of(resource, &[])));
        let resource_version = versions[at].as_deref();
        for scope_logs in &resource_logs.scope_logs {
            let scope = scope_logs.scope.as_ref().map(|s| s.name.as_str()).unwrap_or_default();
            for log in &scope_logs.log_records {
                let attributes = Attributes::of(resource, &log.attributes);
                match recognise(log, attributes, scope, user_id) {
                    Err(Some(reason)) => mapped.refuse(reason),
                    Err(None) => mapped.skipped += 1,
                    Ok(record) => {
                        let session = (record.agent, record.session_id.clone());
                        if record.attributes.text("sightline.run_kind").is_some() {
                            explicit.insert(session.clone());
                        }
                        if record.run_kind == "CI" {
                            automated.insert(session);
                        }
                        let version = own_version(record.agent, resource_version);
                        let outcome = match record.agent {
                            AgentType::ClaudeCode => claude_code::map(&record),
                            AgentType::Codex => codex::map(&record),
                            // Qwen Code is a fork of Gemini CLI: the same events and fields.
                            _ => gemini_cli::map(&record),
                        };
                        match outcome {
                            Outcome::Event(mut event) => {
                                if let Some(version) = version {
                                    event.agent_version = Some(version.to_string());
                                }
                                unread.attributes(&record, at);
                                mapped.events.push(event);
                            }
                            Outcome::Skipped => {
                                mapped.skipped += 1;
                                let inventory = match record.agent {
                                    AgentType::ClaudeCode => claude_code::inventory(&record, version),
                                    _ => None,
                                };
                                match inventory {
                                    Some(sighting) => mapped.capabilities.push(sighting),
                                    None => unread.skipped(&record, at),
                                }
                            }
                            Outcome::Refused(reason) => mapped.refuse(format!("{}: {reason}", full_name(&record))),
                        }
                    }
                }
            }
        }
    }
    mapped.unmapped = unread.into_sightings(&versions);
    // One kind per session of an export: a sign of automation on any of its records is
    // the whole run's.
    for event in &mut mapped.events {
        let agent = event.agent_type.as_deref().and_then(AgentType::parse);
        let session = event.session_id.clone().unwrap_or_default();
        if let Some(agent) = agent
            && event.run_kind() == Some(RunKind::Interactive)
            && automated.contains(&(agent, session.clone()))
            && !explicit.contains(&(agent, session))
        {
            event.set_run_kind(RunKind::Ci);
        }
    }
    mapped
}

fn full_name(record: &Record<'_>) -> String {
    let prefix = match record.agent {
        AgentType::ClaudeCode => "claude_code",
        AgentType::Codex => "codex",
        AgentType::QwenCode => "qwen-code",
        _ => "gemini_cli",
    };
    format!("{prefix}.{}", record.name)
}

/// The agent and event a record is: `Err(None)` for a record of no agent we map (skipped),
/// `Err(Some(reason))` for one of ours that lacks its session or time.
fn recognise<'a>(
    log: &'a LogRecord,
    attributes: Attributes<'a>,
    scope: &str,
    user_id: &'a str,
) -> Result<Record<'a>, Option<String>> {
    let body = match log.body.as_ref().and_then(|body| body.value.as_ref()) {
        Some(AnyValue::StringValue(text)) => text.as_str(),
        _ => "",
    };
    let attribute_name = attributes.text("event.name").unwrap_or_default();
    let service = attributes.text("service.name").unwrap_or_default();
    let candidates = [body, attribute_name.as_str(), log.event_name.as_str()];
    let (agent, name) = match candidates.iter().find_map(|text| prefixed(text)) {
        Some((agent, name)) => (agent, name.to_string()),
        // Claude Code's `event.name` is the bare name; its service or scope says whose.
        None if !attribute_name.is_empty()
            && (service.starts_with("claude-code") || scope.starts_with("com.anthropic.claude_code")) =>
        {
            (AgentType::ClaudeCode, attribute_name.clone())
        }
        None => return Err(None),
    };
    let full = |reason: &str| Some(format!("{name}: {reason}"));
    let session_keys: &[&str] = match agent {
        AgentType::Codex => &["conversation.id", "session.id"],
        AgentType::QwenCode => &["session.id", "sessionId"],
        _ => &["session.id"],
    };
    let session_id = attributes.first_text(session_keys).ok_or_else(|| full("session.id is missing"))?;
    let time_nanos = [log.time_unix_nano, log.observed_time_unix_nano].into_iter().find(|nanos| *nanos > 0);
    let time_ms = match time_nanos {
        Some(nanos) => (nanos / 1_000_000) as i64,
        None => attributes
            .text("event.timestamp")
            .and_then(|text| crate::model::parse_rfc3339_ms(&text))
            .ok_or_else(|| full("the record has no time (timeUnixNano or event.timestamp)"))?,
    };
    let (run_kind, eval) = (run_kind(agent, &attributes), eval_tag(&attributes));
    Ok(Record {
        agent,
        name,
        attributes,
        user_id,
        session_id,
        time_ms,
        time_nanos: time_nanos.unwrap_or(time_ms as u64 * 1_000_000),
        run_kind,
        eval,
    })
}

/// The evaluation cell a harness named in `OTEL_RESOURCE_ATTRIBUTES`
/// (`sightline.eval.cell`, `sightline.eval.run`, `sightline.eval.phase`), as the wire's
/// `eval` object. A cell id of another shape, or a run or phase name that is not one, is
/// left out rather than sent, so the records are kept (as an evaluation run) unlinked.
fn eval_tag(attributes: &Attributes<'_>) -> Option<DraftEval> {
    use crate::model::eval_cell::{MAX_PHASE_CHARS, MAX_RUN_NAME_CHARS, check_name, parse_cell_id};
    let cell = attributes.text("sightline.eval.cell")?;
    parse_cell_id(&cell).ok()?;
    let named = |attribute: &str, max: usize| attributes.text(attribute).filter(|value| check_name(value, max).is_ok());
    Some(DraftEval {
        cell_id: Some(cell),
        run_name: named("sightline.eval.run", MAX_RUN_NAME_CHARS),
        phase: named("sightline.eval.phase", MAX_PHASE_CHARS),
    })
}

/// `claude_code.x`, `codex.x`, `gemini_cli.x`, `qwen-code.x` → the agent and `x`.
fn prefixed(text: &str) -> Option<(AgentType, &str)> {
    let (prefix, name) = text.trim().split_once('.')?;
    let agent = match prefix {
        "claude_code" => AgentType::ClaudeCode,
        "codex" => AgentType::Codex,
        "gemini_cli" => AgentType::GeminiCli,
        "qwen-code" => AgentType::QwenCode,
        _ => return None,
    };
    (!name.is_empty() && !name.contains(' ')).then_some((agent, name))
}

/// Whether a person drove the session. An explicit `sightline.run_kind` (set through
/// `OTEL_RESOURCE_ATTRIBUTES` by a CI or eval runner) wins; otherwise the agents'
/// own signs of a run nobody sits at: Claude Code's SDK entry points and `terminal.type`
/// `non-interactive` (`claude -p`), `codex exec`,
/// Gemini CLI's `interactive=false`. CI and EVAL never reach developer figures, so a
/// sign of automation counts for more than its absence.
fn run_kind(agent: AgentType, attributes: &Attributes<'_>) -> &'static str {
    if let Some(kind) = attributes.text("sightline.run_kind") {
        match kind.to_ascii_uppercase().as_str() {
            "CI" => return "CI",
            "EVAL" => return "EVAL",
            "INTERACTIVE" => return "INTERACTIVE",
            _ => {}
        }
    }
    // A harness that names a cell runs an evaluation.
    if attributes.text("sightline.eval.cell").is_some() {
        return "EVAL";
    }
    let automated = match agent {
        // `claude -p`: an SDK entry point (2.1.332 sends it only when asked to), no
        // terminal (`terminal.type` follows TERM), or an `api_request` the SDK made
        // (`query_source` = `sdk`, which 2.1.332 sends from a terminal too).
        AgentType::ClaudeCode => {
            attributes.text("app.entrypoint").is_some_and(|entry| entry.starts_with("sdk-"))
                || attributes.text("terminal.type").as_deref() == Some("non-interactive")
                || attributes.text("query_source").as_deref() == Some("sdk")
        }
        AgentType::Codex => attributes.text("originator").is_some_and(|origin| origin == "codex_exec"),
        _ => attributes.flag("interactive") == Some(false),
    };
    if automated { "CI" } else { "INTERACTIVE" }
}

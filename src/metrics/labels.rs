//! The label sets of every family and their fixed values: the ingest outcomes
//! ([`BatchOutcome`]), the OTLP signals, agents and outcomes, and the event fields a
//! refusal names. Whatever a client sends maps onto these lists (or `other`), so no
//! request can make a new series.

use prometheus_client::encoding::EncodeLabelSet;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub listener: &'static str,
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobLabels {
    /// `job_name`, not `job`: Prometheus gives every scraped series its target's `job`.
    pub job_name: &'static str,
    /// The severity a breach of this job has (`critical` for `run-deletions`).
    pub severity: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobRunLabels {
    pub job_name: &'static str,
    /// `succeeded`, `failed` or `refused`.
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobNameLabels {
    pub job_name: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StepLabels {
    /// A step of the writer's commit of a group: `partition_rows`, `partition_commit`,
    /// `fold_<name>` per fold, `main_commit`, `wal_cap`.
    pub step: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FieldLabels {
    pub field: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OtlpLabels {
    pub signal: &'static str,
    pub agent: &'static str,
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OtlpExportLabels {
    pub signal: &'static str,
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BuildLabels {
    pub version: &'static str,
    pub commit: &'static str,
}

/// How a batch (`POST /v1/events`) or an OTLP export ended: taken, or refused and why.
/// A fixed list: the label's values are these names and no others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchOutcome {
    Accepted,
    /// The body is not a batch (400, 422): bad JSON, a bad envelope, an unknown name.
    Malformed,
    /// No credential, or one that is not valid (401).
    Unauthorized,
    /// A valid credential that may not do this (403).
    Forbidden,
    /// Past a size limit: body, decoded body, events or records (413).
    TooLarge,
    /// The body did not arrive in time (408).
    TimedOut,
    /// A Content-Encoding or Content-Type we do not read (415).
    UnsupportedEncoding,
    /// Storage cannot take writes (503): the batch was not stored, the client retries.
    StorageUnavailable,
    /// Any other failure of ours (500).
    Internal,
}

impl BatchOutcome {
    pub const ALL: [BatchOutcome; 9] = [
        BatchOutcome::Accepted,
        BatchOutcome::Malformed,
        BatchOutcome::Unauthorized,
        BatchOutcome::Forbidden,
        BatchOutcome::TooLarge,
        BatchOutcome::TimedOut,
        BatchOutcome::UnsupportedEncoding,
        BatchOutcome::StorageUnavailable,
        BatchOutcome::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BatchOutcome::Accepted => "accepted",
            BatchOutcome::Malformed => "malformed",
            BatchOutcome::Unauthorized => "unauthorized",
            BatchOutcome::Forbidden => "forbidden",
            BatchOutcome::TooLarge => "too_large",
            BatchOutcome::TimedOut => "timed_out",
            BatchOutcome::UnsupportedEncoding => "unsupported_encoding",
            BatchOutcome::StorageUnavailable => "storage_unavailable",
            BatchOutcome::Internal => "internal",
        }
    }

    /// The outcome an answer's HTTP status says.
    pub fn of_http_status(status: u16) -> BatchOutcome {
        match status {
            200..=299 => BatchOutcome::Accepted,
            400 | 404 | 409 | 422 => BatchOutcome::Malformed,
            401 => BatchOutcome::Unauthorized,
            403 => BatchOutcome::Forbidden,
            408 => BatchOutcome::TimedOut,
            413 => BatchOutcome::TooLarge,
            415 => BatchOutcome::UnsupportedEncoding,
            503 => BatchOutcome::StorageUnavailable,
            _ => BatchOutcome::Internal,
        }
    }
}

/// The OTLP signals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    Logs,
    Traces,
    Metrics,
}

impl Signal {
    pub const ALL: [Signal; 3] = [Signal::Logs, Signal::Traces, Signal::Metrics];

    pub fn as_str(self) -> &'static str {
        match self {
            Signal::Logs => "logs",
            Signal::Traces => "traces",
            Signal::Metrics => "metrics",
        }
    }
}

/// The `agent` label of OTLP records: the agents whose telemetry Sightline maps, by the
/// `service.name` their exporters set, and `other` for any other name (a client picks
/// its `service.name`; it never makes a series of its own).
pub const OTLP_AGENTS: [&str; 7] = ["claude_code", "codex", "gemini_cli", "qwen_code", "copilot", "opencode", "other"];

/// The `agent` label for an exporter's `service.name`.
pub fn otlp_agent(service_name: &str) -> &'static str {
    let name = service_name.to_ascii_lowercase();
    let name = name.as_str();
    if name.starts_with("claude-code") || name.starts_with("claude_code") {
        "claude_code"
    } else if name.starts_with("codex") {
        "codex"
    } else if name.starts_with("gemini-cli") || name.starts_with("gemini_cli") || name.starts_with("gemini-code") {
        "gemini_cli"
    } else if name.starts_with("qwen-code") || name.starts_with("qwen_code") {
        "qwen_code"
    } else if name == "github-copilot" || name == "copilot-chat" || name.starts_with("copilot") {
        "copilot"
    } else if name.starts_with("opencode") {
        "opencode"
    } else {
        "other"
    }
}

/// What became of OTLP records (log records, spans, data points).
pub const OTLP_OUTCOMES: [&str; 3] = ["accepted", "skipped", "refused"];

/// The top-level fields of an event (docs/wire-contract.md) a rejection may name; a
/// rejection that names another (a client's JSON path) counts under `other`.
pub const EVENT_FIELDS: [&str; 18] = [
    "event",
    "event_id",
    "type",
    "ts",
    "agent_type",
    "session_id",
    "run_kind",
    "model",
    "permission_mode",
    "notification_kind",
    "tool",
    "usage",
    "client_cost_usd",
    "response_ms",
    "git",
    "eval",
    "metadata",
    "other",
];

/// The `field` label of a rejected event: its field's first segment, if it is one of
/// [`EVENT_FIELDS`].
pub fn event_field(path: &str) -> usize {
    let head = path.split(['.', '[']).next().unwrap_or_default();
    EVENT_FIELDS.iter().position(|field| *field == head).unwrap_or(EVENT_FIELDS.len() - 1)
}

//! Native telemetry: the agents' own OpenTelemetry export (OTLP/HTTP logs, metrics and
//! traces), received beside the hook's `/v1/events` and turned into the same events.
//!
//! `wire` reads and answers OTLP/HTTP's framing (protobuf or JSON), `grpc` OTLP/gRPC's;
//! `bounds` walks an export before it is decoded, within what one may hold; `attributes` reads
//! attribute values the way agents send them (numbers as text, booleans as text);
//! `logs` recognises each log record's agent and event and hands it to that agent's
//! mapping (`claude_code`, `codex`, `gemini_cli`), which makes one wire event of it
//! or skips it. The handler (`ingest::otlp`) sends the events down the hook's path:
//! validation, redaction, pricing from tokens, the writer. `docs/otel.md` is the
//! field-by-field reference.
//!
//! Invariants: the person is the owner of the credential; content (prompt text, tool
//! parameters, output) never becomes event data, only lengths and sizes; replays are
//! duplicates (derived event ids); metrics and traces are accepted and not stored yet.

pub mod attributes;
pub mod bounds;
mod claude_code;
mod codex;
mod gemini_cli;
pub mod grpc;
pub mod identity;
pub mod logs;
pub mod metrics;
pub mod traces;
pub mod wire;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;

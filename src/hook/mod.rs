//! The developer-machine side: the commands an agent's hooks call (`hook`), the local
//! durable queue, and the flusher that ships queued events to the server; a CI job or an
//! evaluation harness marks its runs through [`run_kind`].
//!
//! Invariants: `hook` never blocks or fails the agent — every error goes to the local
//! log file and the exit code is 0 — and it does no network I/O; the flusher, not the
//! hook, does the durable work; an event leaves the queue only after the server
//! acknowledged it (accepted or duplicate), and events the server rejects are moved
//! aside with the reason, never retried forever. State lives under the XDG
//! directories (`$XDG_DATA_HOME/sightline`, `$XDG_CONFIG_HOME/sightline`).

pub mod adapters;
pub mod eval_tag;
pub mod flusher;
pub mod import;
pub mod install;
pub mod local;
pub mod login;
pub mod pause;
pub mod queue;
pub mod run_kind;
pub mod shipper;
pub mod usage;

//! Sightline: self-hosted observability for AI coding agents and a viewer for
//! agent-evaluation results, as one binary.
//!
//! The library holds everything; `main.rs` only parses arguments and maps errors to
//! exit codes, so integration tests and benchmarks drive the same code the binary runs.
#![deny(unsafe_code)] // one exception, `memory::return_freed_memory`

pub mod access;
pub mod agents;
pub mod alerts;
pub mod analytics;
pub mod app;
pub mod audit;
pub mod auth;
pub mod backup;
pub mod bench;
pub mod billing;
pub mod charts;
pub mod cli;
pub mod clock;
pub mod config;
pub mod db;
pub mod deletion;
pub mod demo;
pub mod evals;
pub mod events;
pub mod github;
pub mod hook;
pub mod hook_binaries;
pub mod http;
pub mod ingest;
pub mod jira;
pub mod jobs;
pub mod logging;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod otlp;
pub mod pricing;
pub mod projections;
pub mod redact;
pub mod scoring;
pub mod sessions;
pub mod slo;
pub mod state;
pub mod transcripts;
pub mod web;

//! Every integration test in one test binary, so a change links once (`cargo test`
//! builds one executable instead of one per file). Each file of `tests/` is a module
//! here; run one with `cargo test --test it <module>::`.

mod common;

mod access_matrix;
mod admin_console;
mod alerts;
mod analytics;
mod architecture;
mod auth_web;
mod backup;
mod billing;
mod cli;
mod clock_jump;
mod closed_pipes;
mod crash;
mod deletion;
mod demo;
mod device_login;
mod evals_any_results_db;
mod evals_browser;
mod evals_cli;
mod evals_counts;
mod evals_dashboard;
mod evals_failed_streams;
mod github_app;
mod github_oauth;
mod hook_binary;
mod hook_cli;
mod hook_durability;
mod hook_import;
mod hook_install;
mod hook_shipper;
mod ingest_api;
mod jira;
mod jobs;
mod judge;
mod me_pages;
mod otlp;
mod otlp_identities;
mod otlp_joins;
mod otlp_metrics;
mod otlp_traces;
mod prices;
mod projections;
mod redaction_corpus;
mod schema;
mod scoring;
mod session_events;
mod storage_failure;
mod team_org_pages;
mod transcripts_search;
mod transcripts_upload;
mod upgrade;
mod web_browser;
mod webhook_payloads;

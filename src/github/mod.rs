//! The GitHub App: the webhook receiver on its own listener (`POST /github/webhooks`),
//! the delivery log and its worker, the pull requests those deliveries describe, the
//! links between sessions and pull requests, the rollup of a merged pull request, the
//! bot comment, and the team sync.
//!
//! Invariants: a delivery is verified (HMAC) and stored before it is acknowledged, and
//! applied once; a session is linked to a pull request only on exact evidence (branch,
//! commit, or named), never by time alone; developer figures on a pull request count
//! interactive sessions only (CI apart, EVAL never), and the bot comment shows none
//! about a person who keeps them out of shared views.

pub mod app_client;
pub mod apply;
pub mod comment;
pub mod deliveries;
pub mod links;
pub mod payload;
pub mod pulls;
pub mod receiver;
pub mod rollups;
pub mod signature;
pub mod teams;
pub mod worker;

//! HTTP plumbing shared by the platform's listeners and the eval dashboard: the
//! error family (`errors`) and the extractors that answer through it (`extract`),
//! credentials in requests (`cookies`: bearer tokens and cookies), conditional requests
//! (`conditional`), strict query strings (`query`), serving a router with connection
//! limits and timeouts (`serve`), the deadline of a request's body (`body_deadline`),
//! request ids (`request_id`), security headers and the CSRF decision (`security`), and
//! safe redirect targets (`redirect`).
//!
//! Invariant: this module knows no feature. It decides nothing about who may do what;
//! it only reads and writes HTTP one way, so the web app and the dashboard cannot
//! drift apart again.

pub mod assets;
pub mod body_deadline;
pub mod conditional;
pub mod cookies;
pub mod errors;
pub mod extract;
pub mod query;
pub mod redirect;
pub mod request_id;
pub mod security;
pub mod serve;
pub mod tls;

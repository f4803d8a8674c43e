//! Who is calling: users, the credentials we issue, and the extractors that turn
//! a request's credentials into a user.
//!
//! For now: operator-created users and opaque hook tokens (365 days, ingest routes
//! only). The identity issue adds passwords, JWT access tokens, refresh tokens,
//! device flow and GitHub sign-in on the same `users` and `auth_tokens` tables.

pub mod extract;
pub mod tokens;
pub mod users;

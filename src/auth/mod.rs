//! Who is calling, as a service with no handler: users, passwords, the credentials we
//! issue (access JWTs, refresh and hook tokens), sign-ins, throttling and the device
//! flow. The sign-in handlers are `web::{login, oauth, github}`; the extractors that turn
//! a request's credentials into a user are `state::caller`.
//!
//! Token kinds are never interchangeable: access tokens (EdDSA JWT, 8 h) for the web
//! and API, refresh tokens (opaque, 90 d, rotated) only at `/oauth/token`, hook tokens
//! (opaque, 365 d) only on ingest routes.

pub mod code_throttle;
pub mod device;
pub mod jwt;
pub mod otlp_identities;
pub mod password_links;
pub mod passwords;
pub mod signins;
pub mod throttle;
pub mod tokens;
pub mod users;

use rusqlite::Connection;

use crate::db::DbError;

/// Removes credentials that can never be used again (`sweep-scratch`): device
/// authorisations expired for a day and refresh tokens expired for a week; returns how
/// many.
pub fn delete_expired(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    Ok(device::delete_expired(conn, now_ms)? + tokens::delete_expired_refresh(conn, now_ms)?)
}

//! Request extractors for credentials. [`HookUser`] accepts only a live hook token
//! in `Authorization: Bearer`; nothing else (no query string, no cookie).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use super::tokens::{self, TokenKind};
use crate::db;
use crate::error::AppError;
use crate::server::AppState;

/// The user who owns the request's hook token.
#[derive(Clone, Debug)]
pub struct HookUser {
    pub user_id: String,
}

fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

impl FromRequestParts<Arc<AppState>> for HookUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<AppState>) -> Result<Self, Self::Rejection> {
        let secret = bearer(parts).ok_or(AppError::Unauthorized)?.to_string();
        let pool = state.readers.clone();
        let owner = db::blocking(move || {
            let conn = pool.get()?;
            tokens::verify(&conn, &secret, TokenKind::Hook, db::now_ms())
        })
        .await?;
        owner.map(|owner| HookUser { user_id: owner.user_id }).ok_or(AppError::Unauthorized)
    }
}

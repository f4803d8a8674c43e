//! Sign-ins (`auth_sessions`) and their refresh tokens. A web sign-in is a cookie
//! holding an access token, 8 hours; a CLI sign-in adds a refresh token, 90 days,
//! rotated on every use.
//!
//! Invariants: every function here runs inside the caller's write transaction;
//! presenting a refresh token that was already rotated is reuse — the whole family
//! (the sign-in and every token in it) is revoked and the reuse is audited, so of
//! two parallel refreshes with one token exactly one succeeds; an access token is
//! honoured only while its sign-in is live and its user is enabled.

use rusqlite::{Connection, OptionalExtension, params};

use super::jwt::ACCESS_TOKEN_LIFETIME_MS;
use super::tokens::{self, NewToken, TokenKind};
use super::users::{self, User};
use crate::audit::{self, Action, Entry};
use crate::db::DbError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    Web,
    Cli,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Password,
    Github,
    Device,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Password => "password",
            Method::Github => "github",
            Method::Device => "device",
        }
    }
}

/// A new sign-in: its id (the access token's `sid`) and, for the CLI, a refresh token.
#[derive(Debug)]
pub struct Started {
    pub session_id: String,
    pub refresh: Option<NewToken>,
}

pub fn start(
    conn: &Connection,
    user_id: &str,
    client: Client,
    method: Method,
    now_ms: i64,
) -> Result<Started, DbError> {
    let session_id = uuid::Uuid::now_v7().to_string();
    let (client_name, lifetime) = match client {
        Client::Web => ("web", ACCESS_TOKEN_LIFETIME_MS),
        Client::Cli => ("cli", TokenKind::Refresh.lifetime_ms()),
    };
    conn.execute(
        "INSERT INTO auth_sessions (id, user_id, client, method, created_at_ms, expires_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![session_id, user_id, client_name, method.as_str(), now_ms, now_ms + lifetime],
    )?;
    let refresh = match client {
        Client::Web => None,
        Client::Cli => {
            Some(tokens::create_in_family(conn, user_id, TokenKind::Refresh, None, Some(&session_id), now_ms)?)
        }
    };
    Ok(Started { session_id, refresh })
}

/// What presenting a refresh token led to.
#[derive(Debug)]
pub enum Refreshed {
    /// The token was live: here is its successor.
    Rotated { user_id: String, session_id: String, refresh: NewToken },
    /// The token was already rotated: its family is now revoked.
    Reused,
    /// Unknown, expired, revoked, or its user disabled.
    Invalid,
}

pub fn rotate(conn: &Connection, secret: &str, now_ms: i64) -> Result<Refreshed, DbError> {
    if !secret.starts_with("slh_refresh_") || secret.len() > 128 {
        return Ok(Refreshed::Invalid);
    }
    let found = conn
        .query_row(
            "SELECT t.id, t.user_id, t.family_id, t.expires_at_ms, t.revoked_at_ms, t.revoked_reason,
                    s.revoked_at_ms IS NULL AND s.expires_at_ms > ?2 AND u.disabled_at_ms IS NULL
             FROM auth_tokens t JOIN auth_sessions s ON s.id = t.family_id JOIN users u ON u.id = t.user_id
             WHERE t.token_sha256 = ?1 AND t.kind = 'refresh'",
            params![tokens::digest(secret).as_slice(), now_ms],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, i64>(3)?,
                    row.get::<_, Option<i64>>(4)?,
                    row.get::<_, Option<String>>(5)?,
                    row.get::<_, bool>(6)?,
                ))
            },
        )
        .optional()?;
    let Some((token_id, user_id, session_id, expires_at_ms, revoked_at_ms, revoked_reason, session_live)) = found
    else {
        return Ok(Refreshed::Invalid);
    };
    if revoked_at_ms.is_some() {
        if revoked_reason.as_deref() == Some("rotated") && session_live {
            revoke(conn, &session_id, "refresh token reused", now_ms)?;
            audit::record(
                conn,
                &Entry {
                    actor_id: Some(&user_id),
                    action: Action::RefreshTokenReused,
                    subject_user_id: Some(&user_id),
                    target: Some(&session_id),
                    detail: serde_json::json!({ "token_id": token_id }),
                },
                now_ms,
            )?;
            return Ok(Refreshed::Reused);
        }
        return Ok(Refreshed::Invalid);
    }
    if expires_at_ms <= now_ms || !session_live {
        return Ok(Refreshed::Invalid);
    }
    conn.execute(
        "UPDATE auth_tokens SET revoked_at_ms = ?2, revoked_reason = 'rotated', last_used_at_ms = ?2
         WHERE id = ?1 AND revoked_at_ms IS NULL",
        params![token_id, now_ms],
    )?;
    let refresh = tokens::create_in_family(conn, &user_id, TokenKind::Refresh, None, Some(&session_id), now_ms)?;
    conn.execute(
        "UPDATE auth_sessions SET expires_at_ms = max(expires_at_ms, ?2) WHERE id = ?1",
        params![session_id, refresh.expires_at_ms],
    )?;
    Ok(Refreshed::Rotated { user_id, session_id, refresh })
}

/// Ends a sign-in and every refresh token in it.
pub fn revoke(conn: &Connection, session_id: &str, reason: &str, now_ms: i64) -> Result<(), DbError> {
    conn.execute(
        "UPDATE auth_sessions SET revoked_at_ms = ?2, revoked_reason = ?3 WHERE id = ?1 AND revoked_at_ms IS NULL",
        params![session_id, now_ms, reason],
    )?;
    conn.execute(
        "UPDATE auth_tokens SET revoked_at_ms = ?2, revoked_reason = ?3 WHERE family_id = ?1 AND revoked_at_ms IS NULL",
        params![session_id, now_ms, reason],
    )?;
    Ok(())
}

/// A live sign-in as its owner sees it in their settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignInLine {
    pub id: String,
    /// `web` or `cli`.
    pub client: String,
    /// `password`, `github` or `device`.
    pub method: String,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

/// A user's live sign-ins, newest first.
pub fn live_for_user(conn: &Connection, user_id: &str, now_ms: i64) -> Result<Vec<SignInLine>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, client, method, created_at_ms, expires_at_ms FROM auth_sessions
         WHERE user_id = ?1 AND revoked_at_ms IS NULL AND expires_at_ms > ?2 ORDER BY created_at_ms DESC, id",
    )?;
    let rows = stmt.query_map(params![user_id, now_ms], |row| {
        Ok(SignInLine {
            id: row.get(0)?,
            client: row.get(1)?,
            method: row.get(2)?,
            created_at_ms: row.get(3)?,
            expires_at_ms: row.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Ends one of the user's own sign-ins (and its refresh tokens); whether it was theirs
/// and live.
pub fn revoke_own(conn: &Connection, user_id: &str, session_id: &str, now_ms: i64) -> Result<bool, DbError> {
    let theirs: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM auth_sessions WHERE id = ?1 AND user_id = ?2 AND revoked_at_ms IS NULL)",
        params![session_id, user_id],
        |row| row.get(0),
    )?;
    if theirs {
        revoke(conn, session_id, "revoked by its owner", now_ms)?;
    }
    Ok(theirs)
}

/// What credentials a person holds now, as the administrator's people page lists it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Credentials {
    /// Live sign-ins (web and CLI).
    pub sign_ins: i64,
    /// Live hook and OTLP tokens.
    pub tokens: i64,
    /// When they last signed in (live or not).
    pub last_sign_in_ms: Option<i64>,
}

/// Every person's [`Credentials`], by user id (people with none are absent).
pub fn credentials_by_user(
    conn: &Connection,
    now_ms: i64,
) -> Result<std::collections::HashMap<String, Credentials>, DbError> {
    let mut by_user: std::collections::HashMap<String, Credentials> = std::collections::HashMap::new();
    let mut stmt = conn.prepare(
        "SELECT user_id, sum(revoked_at_ms IS NULL AND expires_at_ms > ?1), max(created_at_ms)
         FROM auth_sessions GROUP BY user_id",
    )?;
    for row in stmt.query_map([now_ms], |row| Ok((row.get::<_, String>(0)?, row.get(1)?, row.get(2)?)))? {
        let (user, live, last) = row?;
        let entry = by_user.entry(user).or_default();
        entry.sign_ins = live;
        entry.last_sign_in_ms = last;
    }
    let mut stmt = conn.prepare(
        "SELECT user_id, count(*) FROM auth_tokens
         WHERE kind IN ('hook', 'otlp') AND revoked_at_ms IS NULL AND expires_at_ms > ?1 GROUP BY user_id",
    )?;
    for row in stmt.query_map([now_ms], |row| Ok((row.get::<_, String>(0)?, row.get(1)?)))? {
        let (user, tokens) = row?;
        by_user.entry(user).or_default().tokens = tokens;
    }
    Ok(by_user)
}

/// Ends every sign-in and token of a user (disabling an account).
pub fn revoke_all_for_user(conn: &Connection, user_id: &str, reason: &str, now_ms: i64) -> Result<(), DbError> {
    conn.execute(
        "UPDATE auth_sessions SET revoked_at_ms = ?2, revoked_reason = ?3 WHERE user_id = ?1 AND revoked_at_ms IS NULL",
        params![user_id, now_ms, reason],
    )?;
    tokens::revoke_all_for_user(conn, user_id, reason, now_ms)?;
    Ok(())
}

/// The user of a live sign-in, or `None` if the sign-in is revoked or expired or the
/// user disabled.
pub fn live_user(conn: &Connection, session_id: &str, user_id: &str, now_ms: i64) -> Result<Option<User>, DbError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM auth_sessions s JOIN users u ON u.id = s.user_id
         WHERE s.id = ?1 AND s.user_id = ?2 AND s.revoked_at_ms IS NULL AND s.expires_at_ms > ?3
           AND u.disabled_at_ms IS NULL",
        users::COLUMNS_OF_U
    ))?;
    Ok(stmt.query_row(params![session_id, user_id, now_ms], users::read_user).optional()?)
}

/// The sign-in cookie's name: `__Host-` prefixed when served over HTTPS, so it is
/// bound to this host and path `/` and cannot be set by a sibling subdomain.
pub fn cookie_name(https: bool) -> &'static str {
    if https { "__Host-sightline" } else { "sightline" }
}

/// The `Set-Cookie` value of the sign-in cookie holding `value` for `max_age_secs`
/// (0 clears it).
///
/// `Secure` only over HTTPS: a browser drops a `Secure` cookie set over plain HTTP on any
/// host but the loopback one, so a trial on `http://sightline.internal` could never sign in.
pub fn sign_in_cookie(https: bool, value: &str, max_age_secs: i64) -> String {
    let secure = if https { "; Secure" } else { "" };
    format!("{}={value}; Path=/; HttpOnly{secure}; SameSite=Lax; Max-Age={max_age_secs}", cookie_name(https))
}

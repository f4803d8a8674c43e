//! Opaque tokens: hook tokens (365 days, ingest routes only) and refresh tokens
//! (90 days, rotated on every use; `auth::signins` owns their rotation). A token is `slh_<kind>_` + 43 characters of base64url
//! (256 random bits from the OS through `ring`).
//!
//! Invariants: the secret is shown once at creation and never stored — the table
//! holds its SHA-256 (a fast hash suffices for 256-bit random secrets, and lookup by
//! digest leaks nothing about other tokens); a token of one kind is never accepted as
//! another; expired, revoked and disabled users' tokens are refused.

use ring::rand::{SecureRandom, SystemRandom};
use rusqlite::{Connection, OptionalExtension, params};

use crate::db::DbError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Hook,
    Refresh,
    /// An agent's OpenTelemetry exporter: the OTLP routes only.
    Otlp,
    /// The eval dashboard's reads of the sessions linked to evaluation cells: the
    /// `/api/evals` routes only, for an `EVAL_ENGINEER`.
    Eval,
}

impl TokenKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Hook => "hook",
            TokenKind::Refresh => "refresh",
            TokenKind::Otlp => "otlp",
            TokenKind::Eval => "eval",
        }
    }

    pub fn parse(text: &str) -> Option<TokenKind> {
        match text {
            "hook" => Some(TokenKind::Hook),
            "refresh" => Some(TokenKind::Refresh),
            "otlp" => Some(TokenKind::Otlp),
            "eval" => Some(TokenKind::Eval),
            _ => None,
        }
    }

    pub fn lifetime_ms(self) -> i64 {
        match self {
            TokenKind::Hook | TokenKind::Otlp | TokenKind::Eval => 365 * 86_400_000,
            TokenKind::Refresh => 90 * 86_400_000,
        }
    }
}

/// A newly created token. `secret` exists only in this value.
pub struct NewToken {
    pub id: String,
    pub secret: String,
    pub expires_at_ms: i64,
}

impl std::fmt::Debug for NewToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewToken").field("id", &self.id).field("secret", &"<hidden>").finish()
    }
}

/// The owner of a verified token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenOwner {
    pub user_id: String,
    pub token_id: String,
    /// The run kind this token fixes for everything sent with it (an evaluation
    /// harness's or a CI runner's hook token), if it fixes one.
    pub run_kind: Option<crate::model::RunKind>,
}

pub fn digest(secret: &str) -> [u8; 32] {
    crate::model::sha256(secret.as_bytes())
}

pub(crate) fn random_secret(kind: TokenKind) -> Result<String, DbError> {
    let mut bytes = [0u8; 32];
    SystemRandom::new().fill(&mut bytes).map_err(|_| DbError::Io {
        context: "operating system randomness".into(),
        source: std::io::Error::other("unavailable"),
    })?;
    Ok(format!("slh_{}_{}", kind.as_str(), base64url(&bytes)))
}

/// Unpadded base64url, enough for token text.
pub(crate) fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 2);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

pub fn create(
    conn: &Connection,
    user_id: &str,
    kind: TokenKind,
    label: Option<&str>,
    now_ms: i64,
) -> Result<NewToken, DbError> {
    create_in_family(conn, user_id, kind, label, None, now_ms)
}

/// [`create`], naming the sign-in (`auth_sessions.id`) a refresh token belongs to.
pub fn create_in_family(
    conn: &Connection,
    user_id: &str,
    kind: TokenKind,
    label: Option<&str>,
    family_id: Option<&str>,
    now_ms: i64,
) -> Result<NewToken, DbError> {
    let secret = random_secret(kind)?;
    let token = NewToken { id: uuid::Uuid::now_v7().to_string(), expires_at_ms: now_ms + kind.lifetime_ms(), secret };
    conn.execute(
        "INSERT INTO auth_tokens (id, user_id, kind, token_sha256, family_id, label, created_at_ms, expires_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            token.id,
            user_id,
            kind.as_str(),
            digest(&token.secret).as_slice(),
            family_id,
            label,
            now_ms,
            token.expires_at_ms
        ],
    )?;
    Ok(token)
}

/// The sign-in family a refresh token belongs to, if the secret is one.
pub fn refresh_family(conn: &Connection, secret: &str) -> Result<Option<String>, DbError> {
    let family: Option<Option<String>> = conn
        .query_row(
            "SELECT family_id FROM auth_tokens WHERE token_sha256 = ?1 AND kind = 'refresh'",
            [digest(secret).as_slice()],
            |row| row.get(0),
        )
        .optional()?;
    Ok(family.flatten())
}

/// Revokes every live token of a user (logout everywhere, a disabled account).
pub fn revoke_all_for_user(conn: &Connection, user_id: &str, reason: &str, now_ms: i64) -> Result<usize, DbError> {
    Ok(conn.execute(
        "UPDATE auth_tokens SET revoked_at_ms = ?2, revoked_reason = ?3 WHERE user_id = ?1 AND revoked_at_ms IS NULL",
        params![user_id, now_ms, reason],
    )?)
}

/// A token's label as given by its client: control characters dropped, at most 200
/// characters, `None` when nothing is left.
pub fn clean_label(text: &str) -> Option<String> {
    let kept: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
    let kept = kept.trim();
    (!kept.is_empty()).then(|| kept.to_string())
}

/// A hook or OTLP token as its owner sees it in their settings (never its secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookTokenLine {
    pub id: String,
    /// `hook` or `otlp`.
    pub kind: String,
    pub label: Option<String>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub last_used_at_ms: Option<i64>,
}

/// A user's live hook and OTLP tokens, newest first.
pub fn live_hook_tokens(conn: &Connection, user_id: &str, now_ms: i64) -> Result<Vec<HookTokenLine>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, label, created_at_ms, expires_at_ms, last_used_at_ms, kind FROM auth_tokens
         WHERE user_id = ?1 AND kind IN ('hook', 'otlp') AND revoked_at_ms IS NULL AND expires_at_ms > ?2
         ORDER BY created_at_ms DESC, id",
    )?;
    let rows = stmt.query_map(params![user_id, now_ms], |row| {
        Ok(HookTokenLine {
            id: row.get(0)?,
            label: row.get(1)?,
            created_at_ms: row.get(2)?,
            expires_at_ms: row.get(3)?,
            last_used_at_ms: row.get(4)?,
            kind: row.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Revokes one of the user's own hook or OTLP tokens; whether there was such a live token.
pub fn revoke_own_hook_token(conn: &Connection, user_id: &str, token_id: &str, now_ms: i64) -> Result<bool, DbError> {
    Ok(conn.execute(
        "UPDATE auth_tokens SET revoked_at_ms = ?3, revoked_reason = 'revoked by its owner'
         WHERE id = ?2 AND user_id = ?1 AND kind IN ('hook', 'otlp') AND revoked_at_ms IS NULL",
        params![user_id, token_id, now_ms],
    )? == 1)
}

/// Makes a hook token fix the run kind of everything sent with it (`CI` or `EVAL`).
pub fn fix_run_kind(conn: &Connection, token_id: &str, kind: crate::model::RunKind) -> Result<(), DbError> {
    conn.execute(
        "UPDATE auth_tokens SET run_kind = ?2 WHERE id = ?1 AND kind = 'hook'",
        params![token_id, kind.as_str()],
    )?;
    Ok(())
}

/// Finds the live token of `kind` with this secret, or `None` (unknown, wrong kind,
/// expired, revoked, or its user disabled).
pub fn verify(conn: &Connection, secret: &str, kind: TokenKind, now_ms: i64) -> Result<Option<TokenOwner>, DbError> {
    let expected_prefix = format!("slh_{}_", kind.as_str());
    if !secret.starts_with(&expected_prefix) || secret.len() > 128 {
        return Ok(None);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, t.user_id, t.run_kind FROM auth_tokens t JOIN users u ON u.id = t.user_id
         WHERE t.token_sha256 = ?1 AND t.kind = ?2 AND t.expires_at_ms > ?3
           AND t.revoked_at_ms IS NULL AND u.disabled_at_ms IS NULL",
    )?;
    Ok(stmt
        .query_row(params![digest(secret).as_slice(), kind.as_str(), now_ms], |row| {
            let run_kind: Option<String> = row.get(2)?;
            Ok(TokenOwner {
                token_id: row.get(0)?,
                user_id: row.get(1)?,
                run_kind: run_kind.as_deref().and_then(crate::model::RunKind::parse),
            })
        })
        .optional()?)
}

/// Removes refresh tokens that expired more than a week ago (`sweep-scratch`): they can
/// never be used again, and a week keeps a late reuse of a rotated one recognisable;
/// returns how many.
pub fn delete_expired_refresh(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    Ok(conn
        .execute("DELETE FROM auth_tokens WHERE kind = 'refresh' AND expires_at_ms < ?1", [now_ms - 7 * 86_400_000])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_matches_the_rfc_4648_vectors() {
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn secrets_are_long_random_and_kind_prefixed() {
        let a = random_secret(TokenKind::Hook).unwrap();
        let b = random_secret(TokenKind::Hook).unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with("slh_hook_"));
        assert_eq!(a.len(), "slh_hook_".len() + 43);
    }
}

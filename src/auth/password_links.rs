//! One-time links to set a password: an administrator makes one for a person just
//! added (`welcome`, valid 7 days) or for someone who forgot theirs (`reset`, valid
//! 24 hours), hands it over out of band, and the person chooses their password at
//! `/password/<secret>` without ever telling it to anyone.
//!
//! Invariants: only a SHA-256 of the secret is stored, and the secret exists only in
//! the [`NewLink`] returned once; a link works once, before it expires, for an
//! enabled person; making a new link for a person voids their older unused ones;
//! using a link ends every sign-in the person had (a reset is often made because
//! someone else may know the old password).

use rusqlite::{Connection, OptionalExtension, params};

use super::tokens::{base64url, digest};
use crate::db::DbError;

/// What a link is for; decides how long it lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A person's first password.
    Welcome,
    /// A forgotten or possibly known password replaced.
    Reset,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Welcome => "welcome",
            Purpose::Reset => "reset",
        }
    }

    pub fn lifetime_ms(self) -> i64 {
        match self {
            Purpose::Welcome => 7 * 86_400_000,
            Purpose::Reset => 86_400_000,
        }
    }
}

/// A link just made. `secret` exists only here.
pub struct NewLink {
    pub secret: String,
    pub expires_at_ms: i64,
}

impl std::fmt::Debug for NewLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewLink").field("secret", &"<hidden>").field("expires_at_ms", &self.expires_at_ms).finish()
    }
}

/// The path a link's secret is opened at, on the web listener.
pub fn path_of(secret: &str) -> String {
    format!("/password/{secret}")
}

/// Makes a link for `user_id`, voiding their older unused links.
pub fn create(
    conn: &Connection,
    user_id: &str,
    purpose: Purpose,
    created_by: Option<&str>,
    now_ms: i64,
) -> Result<NewLink, DbError> {
    let mut bytes = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).map_err(|_| DbError::Io {
        context: "operating system randomness".into(),
        source: std::io::Error::other("unavailable"),
    })?;
    let secret = base64url(&bytes);
    conn.execute(
        "UPDATE password_links SET expires_at_ms = ?2 WHERE user_id = ?1 AND used_at_ms IS NULL AND expires_at_ms > ?2",
        params![user_id, now_ms],
    )?;
    let expires_at_ms = now_ms + purpose.lifetime_ms();
    conn.execute(
        "INSERT INTO password_links (id, secret_sha256, user_id, purpose, created_by, created_at_ms, expires_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            uuid::Uuid::now_v7().to_string(),
            digest(&secret).as_slice(),
            user_id,
            purpose.as_str(),
            created_by,
            now_ms,
            expires_at_ms
        ],
    )?;
    Ok(NewLink { secret, expires_at_ms })
}

/// A link that may still be used, as its page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenLink {
    pub id: String,
    pub user_id: String,
    pub email: String,
    pub purpose: String,
}

/// The link behind `secret` when it is unused, unexpired and its person enabled.
pub fn open(conn: &Connection, secret: &str, now_ms: i64) -> Result<Option<OpenLink>, DbError> {
    Ok(conn
        .query_row(
            "SELECT l.id, l.user_id, u.email, l.purpose FROM password_links l JOIN users u ON u.id = l.user_id
             WHERE l.secret_sha256 = ?1 AND l.used_at_ms IS NULL AND l.expires_at_ms > ?2 AND u.disabled_at_ms IS NULL",
            params![digest(secret).as_slice(), now_ms],
            |row| Ok(OpenLink { id: row.get(0)?, user_id: row.get(1)?, email: row.get(2)?, purpose: row.get(3)? }),
        )
        .optional()?)
}

/// Uses the link behind `secret`: stores `password_hash` as the person's password,
/// marks the link used and ends their sign-ins, in the caller's transaction. `None`
/// (nothing changed) when the link cannot be used any more.
pub fn redeem(conn: &Connection, secret: &str, password_hash: &str, now_ms: i64) -> Result<Option<OpenLink>, DbError> {
    let Some(link) = open(conn, secret, now_ms)? else { return Ok(None) };
    conn.execute("UPDATE password_links SET used_at_ms = ?2 WHERE id = ?1", params![link.id, now_ms])?;
    conn.execute("UPDATE users SET password_hash = ?2 WHERE id = ?1", params![link.user_id, password_hash])?;
    conn.execute(
        "UPDATE auth_sessions SET revoked_at_ms = ?2, revoked_reason = 'password set by link'
         WHERE user_id = ?1 AND revoked_at_ms IS NULL",
        params![link.user_id, now_ms],
    )?;
    Ok(Some(link))
}

/// Voids every unused link of `user_id` (they expire now), in the caller's transaction:
/// disabling a person ends their links for good, so enabling them again does not revive
/// a welcome or reset link sent before (L10 of issue 52); they get a new one. Returns
/// how many.
pub fn void_for_user(conn: &Connection, user_id: &str, now_ms: i64) -> Result<usize, DbError> {
    Ok(conn.execute(
        "UPDATE password_links SET expires_at_ms = min(expires_at_ms, ?2) WHERE user_id = ?1 AND used_at_ms IS NULL",
        params![user_id, now_ms],
    )?)
}

/// Whether each person has a password (people added by the console have none until
/// they use their link; people who only sign in with GitHub never do), by id.
pub fn without_password(conn: &Connection) -> Result<std::collections::HashSet<String>, DbError> {
    let mut stmt = conn.prepare("SELECT id FROM users WHERE password_hash IS NULL")?;
    let ids = stmt.query_map([], |row| row.get(0))?;
    Ok(ids.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn_with_person() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::db::migrations::SCHEMA_SQL).unwrap();
        crate::auth::users::add(&conn, "ada@example.com", "Ada", "MEMBER", 0).unwrap();
        conn
    }

    fn user_id(conn: &Connection) -> String {
        conn.query_row("SELECT id FROM users", [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_link_works_once_and_keeps_only_a_digest() {
        let conn = conn_with_person();
        let user = user_id(&conn);
        let link = create(&conn, &user, Purpose::Reset, None, 1_000).unwrap();
        let stored: Vec<u8> = conn.query_row("SELECT secret_sha256 FROM password_links", [], |r| r.get(0)).unwrap();
        assert_eq!(stored, digest(&link.secret).to_vec());
        assert_eq!(open(&conn, &link.secret, 2_000).unwrap().unwrap().email, "ada@example.com");
        assert!(redeem(&conn, &link.secret, "hash-1", 2_000).unwrap().is_some());
        let hash: String = conn.query_row("SELECT password_hash FROM users", [], |r| r.get(0)).unwrap();
        assert_eq!(hash, "hash-1");
        assert!(redeem(&conn, &link.secret, "hash-2", 3_000).unwrap().is_none(), "a link works once");
        assert!(open(&conn, "not-a-link", 2_000).unwrap().is_none());
    }

    #[test]
    fn a_link_expires_and_a_newer_one_voids_it() {
        let conn = conn_with_person();
        let user = user_id(&conn);
        let old = create(&conn, &user, Purpose::Welcome, None, 0).unwrap();
        assert!(open(&conn, &old.secret, Purpose::Welcome.lifetime_ms()).unwrap().is_none(), "expired");
        let first = create(&conn, &user, Purpose::Reset, None, 10).unwrap();
        let second = create(&conn, &user, Purpose::Reset, None, 20).unwrap();
        assert!(open(&conn, &first.secret, 30).unwrap().is_none(), "voided by the newer link");
        assert!(open(&conn, &second.secret, 30).unwrap().is_some());
        conn.execute("UPDATE users SET disabled_at_ms = 25", []).unwrap();
        assert!(open(&conn, &second.secret, 30).unwrap().is_none(), "a disabled person's link does not open");
    }
}

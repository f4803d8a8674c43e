//! The `users` table: operator-created accounts, keyed by UUIDv7, unique by e-mail
//! (case-insensitive).
//!
//! Invariants: e-mail and name are validated before any write; a disabled user's
//! tokens stop working at once (token checks join on `disabled_at_ms`).

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::db::DbError;

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct User {
    pub id: String,
    pub email: String,
    pub name: String,
    pub org_role: String,
    pub created_at_ms: i64,
    pub disabled_at_ms: Option<i64>,
}

#[derive(Debug, thiserror::Error)]
pub enum UserError {
    #[error("e-mail address {0:?} is not valid")]
    BadEmail(String),
    #[error("name must be 1 to 200 characters without control characters")]
    BadName,
    #[error("org role {0:?} is not known; expected one of {expected}", expected = ORG_ROLES.join(", "))]
    BadRole(String),
    #[error("a user with e-mail {0} already exists")]
    Exists(String),
    #[error("no user with e-mail {0}")]
    NotFound(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<rusqlite::Error> for UserError {
    fn from(err: rusqlite::Error) -> Self {
        UserError::Db(DbError::Sqlite(err))
    }
}

/// Org roles; the identity issue documents what each may do.
pub const ORG_ROLES: &[&str] = &["ADMIN", "MEMBER", "INVESTIGATOR", "VIEWER_AGGREGATE"];

/// A plain, strict check: one `@`, a non-empty local part, a dotted domain, no
/// spaces or control characters. Deliverability is not our business here.
pub fn validate_email(email: &str) -> Result<String, UserError> {
    let email = email.trim();
    let bad = || UserError::BadEmail(email.to_string());
    let (local, domain) = email.split_once('@').ok_or_else(bad)?;
    let domain_ok = domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    if local.is_empty()
        || email.len() > 254
        || domain.contains('@')
        || !domain_ok
        || email.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(bad());
    }
    Ok(email.to_string())
}

pub fn add(conn: &Connection, email: &str, name: &str, org_role: &str, now_ms: i64) -> Result<User, UserError> {
    let email = validate_email(email)?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(UserError::BadName);
    }
    let role = org_role.trim().to_ascii_uppercase();
    if !ORG_ROLES.contains(&role.as_str()) {
        return Err(UserError::BadRole(org_role.to_string()));
    }
    let user = User {
        id: uuid::Uuid::now_v7().to_string(),
        email: email.clone(),
        name: name.to_string(),
        org_role: role,
        created_at_ms: now_ms,
        disabled_at_ms: None,
    };
    let inserted = conn.execute(
        "INSERT INTO users (id, email, name, org_role, created_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (email) DO NOTHING",
        params![user.id, user.email, user.name, user.org_role, user.created_at_ms],
    )?;
    if inserted == 0 {
        return Err(UserError::Exists(email));
    }
    Ok(user)
}

/// Reads a row selected as `id, email, name, org_role, created_at_ms, disabled_at_ms`.
fn read_user(row: &rusqlite::Row<'_>) -> rusqlite::Result<User> {
    Ok(User {
        id: row.get(0)?,
        email: row.get(1)?,
        name: row.get(2)?,
        org_role: row.get(3)?,
        created_at_ms: row.get(4)?,
        disabled_at_ms: row.get(5)?,
    })
}

pub fn by_email(conn: &Connection, email: &str) -> Result<User, UserError> {
    conn.query_row(
        "SELECT id, email, name, org_role, created_at_ms, disabled_at_ms FROM users WHERE email = ?1",
        [email.trim()],
        read_user,
    )
    .optional()?
    .ok_or_else(|| UserError::NotFound(email.trim().to_string()))
}

pub fn list(conn: &Connection) -> Result<Vec<User>, UserError> {
    let mut stmt =
        conn.prepare("SELECT id, email, name, org_role, created_at_ms, disabled_at_ms FROM users ORDER BY email")?;
    let rows = stmt.query_map([], read_user)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_validation_accepts_ordinary_and_rejects_broken_addresses() {
        assert!(validate_email("ada@example.com").is_ok());
        assert!(validate_email(" ada.l+x@eng.example.co.uk ").is_ok());
        for bad in [
            "",
            "ada",
            "ada@",
            "@example.com",
            "ada@example",
            "a b@example.com",
            "ada@@example.com",
            "ada@exa_mple.com",
        ] {
            assert!(validate_email(bad).is_err(), "{bad:?} accepted");
        }
    }
}

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
    #[error("{0} is the only active administrator: make someone else ADMIN first")]
    LastAdministrator(String),
    #[error(transparent)]
    Password(#[from] super::passwords::PasswordError),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<rusqlite::Error> for UserError {
    fn from(err: rusqlite::Error) -> Self {
        UserError::Db(DbError::Sqlite(err))
    }
}

/// Org roles; `docs/access.md` says what each may do (and `access::roles` decides it).
pub const ORG_ROLES: &[&str] = &["ADMIN", "MEMBER", "INVESTIGATOR", "VIEWER_AGGREGATE", "EVAL_ENGINEER"];

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
    let role = parse_role(org_role)?;
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

/// The columns [`read_user`] expects, qualified by the alias `u`.
pub const COLUMNS_OF_U: &str = "u.id, u.email, u.name, u.org_role, u.created_at_ms, u.disabled_at_ms";

/// Reads a row selected as `id, email, name, org_role, created_at_ms, disabled_at_ms`.
pub fn read_user(row: &rusqlite::Row<'_>) -> rusqlite::Result<User> {
    Ok(User {
        id: row.get(0)?,
        email: row.get(1)?,
        name: row.get(2)?,
        org_role: row.get(3)?,
        created_at_ms: row.get(4)?,
        disabled_at_ms: row.get(5)?,
    })
}

/// The user with this e-mail (case-insensitive), or [`UserError::NotFound`].
pub fn by_email(conn: &Connection, email: &str) -> Result<User, UserError> {
    find_by_email(conn, email)?.ok_or_else(|| UserError::NotFound(email.trim().to_string()))
}

/// The user with this e-mail, if any. Lookups fail only on storage, hence `DbError`.
pub fn find_by_email(conn: &Connection, email: &str) -> Result<Option<User>, DbError> {
    Ok(conn
        .query_row(&format!("SELECT {COLUMNS_OF_U} FROM users u WHERE u.email = ?1"), [email.trim()], read_user)
        .optional()?)
}

pub fn by_id(conn: &Connection, id: &str) -> Result<Option<User>, DbError> {
    Ok(conn.query_row(&format!("SELECT {COLUMNS_OF_U} FROM users u WHERE u.id = ?1"), [id], read_user).optional()?)
}

/// The stored password hash of an enabled user, found by e-mail, for sign-in.
pub fn password_hash_of(conn: &Connection, email: &str) -> Result<Option<(User, Option<String>)>, DbError> {
    Ok(conn
        .query_row(
            &format!(
                "SELECT {COLUMNS_OF_U}, u.password_hash FROM users u WHERE u.email = ?1 AND u.disabled_at_ms IS NULL"
            ),
            [email.trim()],
            |row| Ok((read_user(row)?, row.get(6)?)),
        )
        .optional()?)
}

/// Stores an already-hashed password (hash on a blocking thread first).
pub fn set_password_hash(conn: &Connection, email: &str, hash: &str) -> Result<User, UserError> {
    let user = by_email(conn, email)?;
    conn.execute("UPDATE users SET password_hash = ?2 WHERE id = ?1", params![user.id, hash])?;
    Ok(user)
}

/// The e-mail addresses of the users among `ids` (unknown ids are left out).
pub fn emails_by_id(conn: &Connection, ids: &[String]) -> Result<std::collections::HashMap<String, String>, DbError> {
    let wanted = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
    let mut stmt = conn.prepare_cached("SELECT id, email FROM users WHERE id IN (SELECT value FROM json_each(?1))")?;
    let rows = stmt.query_map([wanted], |row| Ok((row.get(0)?, row.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Normalises and checks an org role name.
pub fn parse_role(org_role: &str) -> Result<String, UserError> {
    let role = org_role.trim().to_ascii_uppercase();
    if ORG_ROLES.contains(&role.as_str()) { Ok(role) } else { Err(UserError::BadRole(org_role.to_string())) }
}

/// Changes `user`'s org role, with its audit row (`actor_id` None: the operator's
/// command on the host), and answers the role it now has. The one place a role
/// changes: the organisation always keeps an active administrator, so demoting the
/// last one is refused.
pub fn change_role(
    conn: &Connection,
    user: &User,
    org_role: &str,
    actor_id: Option<&str>,
    now_ms: i64,
) -> Result<String, UserError> {
    let role = parse_role(org_role)?;
    if user.org_role == "ADMIN" && role != "ADMIN" && user.disabled_at_ms.is_none() && active_admins(conn)? <= 1 {
        return Err(UserError::LastAdministrator(user.email.clone()));
    }
    conn.execute("UPDATE users SET org_role = ?2 WHERE id = ?1", params![user.id, role])?;
    let entry = crate::audit::Entry {
        actor_id,
        action: crate::audit::Action::UserRoleChanged,
        subject_user_id: Some(&user.id),
        target: Some(&user.id),
        detail: serde_json::json!({ "from": user.org_role, "to": role }),
    };
    crate::audit::record(conn, &entry, now_ms)?;
    Ok(role)
}

/// Disables a user, revokes every sign-in and token they hold and voids their unused
/// password links, in one transaction of the caller's. Idempotent.
pub fn disable(conn: &Connection, email: &str, now_ms: i64) -> Result<User, UserError> {
    let user = by_email(conn, email)?;
    if user.org_role == "ADMIN" && user.disabled_at_ms.is_none() && active_admins(conn)? <= 1 {
        return Err(UserError::LastAdministrator(user.email));
    }
    conn.execute(
        "UPDATE users SET disabled_at_ms = ?2 WHERE id = ?1 AND disabled_at_ms IS NULL",
        params![user.id, now_ms],
    )?;
    super::signins::revoke_all_for_user(conn, &user.id, "user disabled", now_ms)?;
    super::password_links::void_for_user(conn, &user.id, now_ms)?;
    Ok(user)
}

/// Enables a disabled user again (their old sign-ins and tokens stay revoked: they
/// sign in afresh). Returns whether anything changed.
pub fn enable(conn: &Connection, user_id: &str) -> Result<bool, DbError> {
    Ok(conn
        .execute("UPDATE users SET disabled_at_ms = NULL WHERE id = ?1 AND disabled_at_ms IS NOT NULL", [user_id])?
        == 1)
}

/// Whether `user_id` names a person who is not disabled.
pub fn is_enabled(conn: &Connection, user_id: &str) -> Result<bool, DbError> {
    Ok(conn
        .query_row("SELECT disabled_at_ms IS NULL FROM users WHERE id = ?1", [user_id], |row| row.get(0))
        .optional()?
        .unwrap_or(false))
}

/// The user linked to a GitHub account id, if any.
pub fn by_github_id(conn: &Connection, github_id: i64) -> Result<Option<User>, DbError> {
    Ok(conn
        .query_row(&format!("SELECT {COLUMNS_OF_U} FROM users u WHERE u.github_id = ?1"), [github_id], read_user)
        .optional()?)
}

/// Links a GitHub account to a user (first GitHub sign-in by a known e-mail), or
/// refreshes the stored login of an existing link (GitHub logins can be renamed).
/// Returns false, changing nothing, when the user is linked to another GitHub account:
/// a link is never silently moved.
pub fn link_github(conn: &Connection, user_id: &str, github_id: i64, login: &str) -> Result<bool, DbError> {
    let changed = conn.execute(
        "UPDATE users SET github_id = ?2, github_login = ?3 WHERE id = ?1 AND (github_id IS NULL OR github_id = ?2)",
        params![user_id, github_id, login],
    )?;
    Ok(changed == 1)
}

pub fn list(conn: &Connection) -> Result<Vec<User>, UserError> {
    let mut stmt =
        conn.prepare("SELECT id, email, name, org_role, created_at_ms, disabled_at_ms FROM users ORDER BY email")?;
    let rows = stmt.query_map([], read_user)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every person's id.
pub fn ids(conn: &Connection) -> Result<Vec<String>, DbError> {
    let mut stmt = conn.prepare("SELECT id FROM users")?;
    let rows = stmt.query_map([], |row| row.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// How many enabled administrators there are (the console never removes the last).
pub fn active_admins(conn: &Connection) -> Result<i64, DbError> {
    Ok(conn.query_row("SELECT count(*) FROM users WHERE org_role = 'ADMIN' AND disabled_at_ms IS NULL", [], |row| {
        row.get(0)
    })?)
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

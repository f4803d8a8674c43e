//! Service-account OTLP tokens and the identities they carry. A collector that forwards
//! many people's exports holds one token; each record then names its person by the
//! attributes the agents export (`user.email`, `user.account_uuid`, `user.id`), and an
//! administrator maps each such identity to a person, explicitly. Owns
//! `otlp_service_tokens`, `otlp_identities` and `otlp_unknown_identities`.
//!
//! Invariants: an identity is never matched by guess (no address is compared with a
//! person's own, no case folded but the e-mail's); a record whose identities are all
//! unmapped is not stored, and its identity is counted for administrators with when it
//! was last seen; mapping an identity clears its count. Only the mapping's attribute
//! names are accepted. The unknown count is bounded: a value is kept to
//! [`MAX_VALUE_CHARS`] (no mapping can hold more) and the table to [`MAX_UNKNOWN`] rows,
//! the longest unseen going first, so a collector cannot grow it without end (L6 of
//! issue 52). A mapping to a disabled person stores nothing (`person_of` says so).

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::db::DbError;

/// The exported attributes that may name a person, in the order they are tried.
pub const ATTRIBUTES: [&str; 3] = ["user.email", "user.account_uuid", "user.id"];
/// The longest identity value a mapping holds (and an unknown one is kept to).
pub const MAX_VALUE_CHARS: usize = 320;
/// The most unknown identities kept.
pub const MAX_UNKNOWN: i64 = 1_000;

/// An identity's value as stored and compared: trimmed, an e-mail address lower-cased
/// (addresses are not case-sensitive in practice, and agents send them as typed).
pub fn normalised(attribute: &str, value: &str) -> String {
    let value = value.trim();
    if attribute == "user.email" { value.to_ascii_lowercase() } else { value.to_string() }
}

/// A service account's name as given, or why it cannot be one.
pub fn service_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    match name.chars().count() {
        1..=100 if !name.chars().any(char::is_control) => Ok(name.to_string()),
        _ => Err(format!("a service account's name is 1 to 100 characters without control characters, not {text:?}")),
    }
}

/// Makes an OTLP token for the service account `name`, held by the administrator
/// `admin_id`, and audits it (`OTLP_SERVICE_TOKEN_CREATED`). The caller has checked
/// the name ([`service_name`]) and that `admin_id` is an administrator.
pub fn create_service_token(
    tx: &Connection,
    admin_id: &str,
    name: &str,
    now_ms: i64,
) -> Result<super::tokens::NewToken, DbError> {
    let label = format!("service account {name}");
    let token = super::tokens::create(tx, admin_id, super::tokens::TokenKind::Otlp, Some(&label), now_ms)?;
    tx.execute(
        "INSERT INTO otlp_service_tokens (token_id, name, created_by, created_at_ms) VALUES (?1, ?2, ?3, ?4)",
        params![token.id, name, admin_id, now_ms],
    )?;
    let entry = crate::audit::Entry {
        actor_id: Some(admin_id),
        action: crate::audit::Action::OtlpServiceTokenCreated,
        subject_user_id: None,
        target: Some(&token.id),
        detail: serde_json::json!({ "name": name }),
    };
    crate::audit::record(tx, &entry, now_ms)?;
    Ok(token)
}

/// Whether `token_id` is a service account's.
pub fn is_service(conn: &Connection, token_id: &str) -> Result<bool, DbError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM otlp_service_tokens WHERE token_id = ?1")?
        .query_row([token_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Maps `attribute` = `value` to the person `user_id` (replacing an earlier mapping of
/// it), clears its unknown count, and audits it (`OTLP_IDENTITY_MAPPED`, by `actor_id`).
/// `attribute` must be one of [`ATTRIBUTES`].
pub fn map(
    tx: &Transaction<'_>,
    attribute: &str,
    value: &str,
    user_id: &str,
    actor_id: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    let value = normalised(attribute, value);
    tx.execute(
        "INSERT INTO otlp_identities (attribute, value, user_id, created_by, created_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (attribute, value) DO UPDATE SET user_id = excluded.user_id,
             created_by = excluded.created_by, created_at_ms = excluded.created_at_ms",
        params![attribute, value, user_id, actor_id, now_ms],
    )?;
    tx.execute("DELETE FROM otlp_unknown_identities WHERE attribute = ?1 AND value = ?2", params![attribute, value])?;
    audit_change(tx, crate::audit::Action::OtlpIdentityMapped, actor_id, user_id, attribute, &value, now_ms)
}

/// Removes a mapping and audits it (`OTLP_IDENTITY_UNMAPPED`); answers the person it
/// named, or `None` (nothing removed, nothing audited) if there was none.
pub fn unmap(
    tx: &Transaction<'_>,
    attribute: &str,
    value: &str,
    actor_id: &str,
    now_ms: i64,
) -> Result<Option<String>, DbError> {
    let value = normalised(attribute, value);
    let person: Option<String> = tx
        .query_row(
            "DELETE FROM otlp_identities WHERE attribute = ?1 AND value = ?2 RETURNING user_id",
            params![attribute, value],
            |row| row.get(0),
        )
        .optional()?;
    if let Some(person) = &person {
        audit_change(tx, crate::audit::Action::OtlpIdentityUnmapped, actor_id, person, attribute, &value, now_ms)?;
    }
    Ok(person)
}

fn audit_change(
    tx: &Connection,
    action: crate::audit::Action,
    actor_id: &str,
    person: &str,
    attribute: &str,
    value: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    let entry = crate::audit::Entry {
        actor_id: Some(actor_id),
        action,
        subject_user_id: Some(person),
        target: None,
        detail: serde_json::json!({ "attribute": attribute, "value": value }),
    };
    crate::audit::record(tx, &entry, now_ms)?;
    Ok(())
}

/// Whom an identity names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named {
    /// An enabled person.
    Person(String),
    /// A person who is disabled: their records are refused, not stored (L7 of issue 52).
    Disabled(String),
}

/// The person an identity is mapped to, and whether they are enabled.
pub fn person_of(conn: &Connection, attribute: &str, value: &str) -> Result<Option<Named>, DbError> {
    Ok(conn
        .prepare_cached(
            "SELECT i.user_id, u.disabled_at_ms IS NULL FROM otlp_identities i JOIN users u ON u.id = i.user_id
             WHERE i.attribute = ?1 AND i.value = ?2",
        )?
        .query_row(params![attribute, normalised(attribute, value)], |row| {
            let (user_id, enabled): (String, bool) = (row.get(0)?, row.get(1)?);
            Ok(if enabled { Named::Person(user_id) } else { Named::Disabled(user_id) })
        })
        .optional()?)
}

/// `value` cut to [`MAX_VALUE_CHARS`] characters, marked with `…` when cut.
fn kept(value: &str) -> String {
    match value.char_indices().nth(MAX_VALUE_CHARS) {
        None => value.to_string(),
        Some((end, _)) => format!("{}…", &value[..end]),
    }
}

/// Drops the unknown identities seen longest ago beyond [`MAX_UNKNOWN`]; how many.
pub fn bound_unknown(tx: &Connection) -> Result<usize, DbError> {
    let count: i64 = tx.query_row("SELECT count(*) FROM otlp_unknown_identities", [], |row| row.get(0))?;
    if count <= MAX_UNKNOWN {
        return Ok(0);
    }
    Ok(tx.execute(
        "DELETE FROM otlp_unknown_identities WHERE (attribute, value) IN (
             SELECT attribute, value FROM otlp_unknown_identities ORDER BY last_seen_ms DESC LIMIT -1 OFFSET ?1)",
        [MAX_UNKNOWN],
    )?)
}

/// Counts `records` from an identity no mapping names, seen through `token_id`.
pub fn count_unknown(
    tx: &Connection,
    attribute: &str,
    value: &str,
    records: u64,
    token_id: &str,
    now_ms: i64,
) -> Result<(), DbError> {
    tx.prepare_cached(
        "INSERT INTO otlp_unknown_identities (attribute, value, records, first_seen_ms, last_seen_ms, token_id)
         VALUES (?1, ?2, ?3, ?4, ?4, ?5)
         ON CONFLICT (attribute, value) DO UPDATE SET records = records + excluded.records,
             last_seen_ms = excluded.last_seen_ms, token_id = excluded.token_id",
    )?
    .execute(params![kept(attribute), kept(&normalised(attribute, value)), records as i64, now_ms, token_id])?;
    Ok(())
}

/// An identity seen without a mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unknown {
    pub attribute: String,
    pub value: String,
    pub records: i64,
    pub first_seen_ms: i64,
    pub last_seen_ms: i64,
    /// The service account whose token carried it.
    pub service: String,
}

/// The identities seen without a mapping, most recent first (at most 200).
pub fn unknown(conn: &Connection) -> Result<Vec<Unknown>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT u.attribute, u.value, u.records, u.first_seen_ms, u.last_seen_ms, coalesce(s.name, u.token_id)
         FROM otlp_unknown_identities u LEFT JOIN otlp_service_tokens s ON s.token_id = u.token_id
         ORDER BY u.last_seen_ms DESC LIMIT 200",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok(Unknown {
            attribute: row.get(0)?,
            value: row.get(1)?,
            records: row.get(2)?,
            first_seen_ms: row.get(3)?,
            last_seen_ms: row.get(4)?,
            service: row.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One mapping, with the person's e-mail address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub attribute: String,
    pub value: String,
    pub email: String,
    pub created_at_ms: i64,
}

/// Every mapping, by person then identity (at most 1,000).
pub fn mappings(conn: &Connection) -> Result<Vec<Mapping>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT i.attribute, i.value, u.email, i.created_at_ms FROM otlp_identities i JOIN users u ON u.id = i.user_id
         ORDER BY u.email, i.attribute, i.value LIMIT 1000",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok(Mapping { attribute: row.get(0)?, value: row.get(1)?, email: row.get(2)?, created_at_ms: row.get(3)? })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The service accounts' tokens that are still valid: name, token id, expiry.
pub fn services(conn: &Connection, now_ms: i64) -> Result<Vec<(String, String, i64)>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT s.name, t.id, t.expires_at_ms FROM otlp_service_tokens s JOIN auth_tokens t ON t.id = s.token_id
         WHERE t.revoked_at_ms IS NULL AND t.expires_at_ms > ?1 ORDER BY s.name",
    )?;
    let rows = stmt.query_map([now_ms], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_clears_the_count_and_an_address_is_matched_whatever_its_case() {
        let mut conn = crate::db::plans::main_db();
        conn.execute(
            "INSERT INTO users (id, email, name, created_at_ms) VALUES ('u1', 'ada@example.com', 'Ada', 0)",
            [],
        )
        .unwrap();
        let tx = conn.transaction().unwrap();
        count_unknown(&tx, "user.email", " Ada@Corp.example ", 3, "t1", 10).unwrap();
        count_unknown(&tx, "user.email", "ada@corp.example", 2, "t1", 20).unwrap();
        let seen = unknown(&tx).unwrap();
        assert_eq!((seen.len(), seen[0].records, seen[0].first_seen_ms, seen[0].last_seen_ms), (1, 5, 10, 20));
        assert_eq!(person_of(&tx, "user.email", "ada@corp.example").unwrap(), None, "never guessed");
        map(&tx, "user.email", "ADA@corp.example", "u1", "admin", 30).unwrap();
        assert_eq!(person_of(&tx, "user.email", "ada@CORP.example").unwrap(), Some(Named::Person("u1".into())));
        tx.execute("UPDATE users SET disabled_at_ms = 35 WHERE id = 'u1'", []).unwrap();
        assert_eq!(person_of(&tx, "user.email", "ada@corp.example").unwrap(), Some(Named::Disabled("u1".into())));
        assert!(unknown(&tx).unwrap().is_empty());
        assert_eq!(person_of(&tx, "user.id", "ada@corp.example").unwrap(), None, "per attribute");
        assert_eq!(unmap(&tx, "user.email", "ada@corp.example", "admin", 40).unwrap().as_deref(), Some("u1"));
        assert_eq!(person_of(&tx, "user.email", "ada@corp.example").unwrap(), None);
    }

    #[test]
    fn unknown_identities_are_bounded_in_length_and_number() {
        let mut conn = crate::db::plans::main_db();
        let tx = conn.transaction().unwrap();
        count_unknown(&tx, "user.id", &"x".repeat(1 << 20), 1, "t1", 1).unwrap();
        let seen = unknown(&tx).unwrap();
        assert_eq!(seen[0].value.chars().count(), MAX_VALUE_CHARS + 1, "cut, with its mark");
        for i in 0..MAX_UNKNOWN + 50 {
            count_unknown(&tx, "user.id", &format!("id-{i}"), 1, "t1", 10 + i).unwrap();
        }
        assert_eq!(bound_unknown(&tx).unwrap(), 51);
        let left: i64 = tx.query_row("SELECT count(*) FROM otlp_unknown_identities", [], |r| r.get(0)).unwrap();
        assert_eq!(left, MAX_UNKNOWN);
        let oldest: i64 =
            tx.query_row("SELECT min(last_seen_ms) FROM otlp_unknown_identities", [], |r| r.get(0)).unwrap();
        assert_eq!(oldest, 60, "the longest unseen went first");
    }
}

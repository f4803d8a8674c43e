//! The device authorisation grant (RFC 8628) behind `sightline login`: the CLI gets a
//! device code and a user code, the person enters the user code at `/device` while
//! signed in, and the CLI's polling turns into tokens.
//!
//! Invariants: user codes are 8 characters from the 20 consonants `BCDFGHJKLMNPQRSTVWXZ`
//! (RFC 8628 §6.1: no vowels, so no words; no digits to confuse with letters), shown as
//! `XXXX-XXXX` and accepted with any case, spaces or dash; only a SHA-256 of the device
//! code is stored; a code lives 10 minutes and is exchanged at most once; a poll sooner
//! than the interval answers `slow_down` and adds 5 seconds to the interval; an approved
//! code yields a hook token for the machine (ingest only, labelled as the machine asked),
//! never a web sign-in (L9 of issue 52); the approval page shows who asked (the address,
//! the user agent, the label) and when; at most [`MAX_PENDING`] codes wait at once.

use ring::rand::{SecureRandom, SystemRandom};
use rusqlite::{Connection, OptionalExtension, params};

use super::tokens;
use crate::db::DbError;

pub const USER_CODE_ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";
pub const LIFETIME_MS: i64 = 10 * 60_000;
pub const INTERVAL_SECS: i64 = 5;
/// Codes waiting at once, organisation-wide: past it, new ones are refused until some
/// expire (creation is unauthenticated; each address is also throttled by the handler).
pub const MAX_PENDING: i64 = 1_000;

/// Who asked for a code, as its request said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Asker {
    /// The client's address.
    pub address: String,
    pub user_agent: Option<String>,
    /// The hook token's label the machine asked for (`<host> (sightline login)`).
    pub label: Option<String>,
}

/// A new authorisation as the CLI receives it.
#[derive(Debug)]
pub struct NewAuthorization {
    pub device_code: String,
    /// `XXXX-XXXX`.
    pub user_code: String,
    pub expires_in_secs: i64,
    pub interval_secs: i64,
}

fn random_bytes<const N: usize>() -> Result<[u8; N], DbError> {
    let mut bytes = [0u8; N];
    SystemRandom::new().fill(&mut bytes).map_err(|_| DbError::Io {
        context: "operating system randomness".into(),
        source: std::io::Error::other("unavailable"),
    })?;
    Ok(bytes)
}

/// Eight letters from the alphabet, without modulo bias (rejection sampling: 240 is
/// the largest multiple of 20 below 256).
fn user_code() -> Result<String, DbError> {
    let mut code = String::with_capacity(9);
    while code.len() < 9 {
        for byte in random_bytes::<16>()? {
            if byte < 240 && code.len() < 9 {
                if code.len() == 4 {
                    code.push('-');
                }
                code.push(USER_CODE_ALPHABET[(byte % 20) as usize] as char);
            }
        }
    }
    Ok(code)
}

/// Normalises what a person typed: upper case, alphabet letters only; `None` unless
/// exactly eight remain.
pub fn normalise_user_code(typed: &str) -> Option<String> {
    let letters: String =
        typed.chars().filter(|c| !c.is_whitespace() && *c != '-').map(|c| c.to_ascii_uppercase()).collect();
    if letters.len() != 8 || !letters.bytes().all(|b| USER_CODE_ALPHABET.contains(&b)) {
        return None;
    }
    Some(format!("{}-{}", &letters[..4], &letters[4..]))
}

/// A new code for `asker`, or `None` when [`MAX_PENDING`] codes already wait.
pub fn create(
    conn: &Connection,
    client_id: &str,
    asker: &Asker,
    now_ms: i64,
) -> Result<Option<NewAuthorization>, DbError> {
    conn.execute("DELETE FROM device_authorizations WHERE expires_at_ms <= ?1", [now_ms])?;
    let waiting: i64 =
        conn.query_row("SELECT count(*) FROM device_authorizations WHERE status = 'PENDING'", [], |row| row.get(0))?;
    if waiting >= MAX_PENDING {
        return Ok(None);
    }
    let kept = |text: &Option<String>| text.as_deref().and_then(tokens::clean_label);
    let (user_agent, label) = (kept(&asker.user_agent), kept(&asker.label));
    let device_code = format!("slh_device_{}", tokens::base64url(&random_bytes::<32>()?));
    // A clash of user codes among live authorisations is astronomically rare, but the
    // column is unique, so try again rather than fail.
    for _ in 0..5 {
        let code = user_code()?;
        let inserted = conn.execute(
            "INSERT INTO device_authorizations (device_code_sha256, user_code, client_id, created_at_ms, expires_at_ms,
                 interval_secs, requested_from, user_agent, label)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (user_code) DO NOTHING",
            params![
                tokens::digest(&device_code).as_slice(),
                code,
                client_id,
                now_ms,
                now_ms + LIFETIME_MS,
                INTERVAL_SECS,
                asker.address,
                user_agent,
                label
            ],
        )?;
        if inserted == 1 {
            return Ok(Some(NewAuthorization {
                device_code,
                user_code: code,
                expires_in_secs: LIFETIME_MS / 1000,
                interval_secs: INTERVAL_SECS,
            }));
        }
    }
    Err(DbError::Io { context: "no free user code".into(), source: std::io::Error::other("user code clash") })
}

/// What a poll of the token endpoint finds (RFC 8628 §3.5).
#[derive(Debug, PartialEq, Eq)]
pub enum Poll {
    Pending,
    SlowDown,
    Denied,
    Expired,
    /// Unknown, already exchanged, or for another client.
    Invalid,
    /// Approved by this user; the authorisation is now used up. `label` is the hook
    /// token's, as the machine asked.
    Approved {
        user_id: String,
        label: Option<String>,
    },
}

pub fn poll(conn: &Connection, device_code: &str, client_id: &str, now_ms: i64) -> Result<Poll, DbError> {
    let digest = tokens::digest(device_code);
    let row = conn
        .query_row(
            "SELECT client_id, expires_at_ms, interval_secs, last_polled_at_ms, status, user_id, label
             FROM device_authorizations WHERE device_code_sha256 = ?1",
            [digest.as_slice()],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, Option<i64>>(3)?,
                    row.get::<_, String>(4)?,
                    row.get::<_, Option<String>>(5)?,
                    row.get::<_, Option<String>>(6)?,
                ))
            },
        )
        .optional()?;
    let Some((stored_client, expires_at_ms, interval_secs, last_polled, status, user_id, label)) = row else {
        return Ok(Poll::Invalid);
    };
    if stored_client != client_id || status == "USED" {
        return Ok(Poll::Invalid);
    }
    if now_ms >= expires_at_ms {
        return Ok(Poll::Expired);
    }
    if last_polled.is_some_and(|last| now_ms - last < interval_secs * 1000) {
        conn.execute(
            "UPDATE device_authorizations SET interval_secs = interval_secs + 5, last_polled_at_ms = ?2
             WHERE device_code_sha256 = ?1",
            params![digest.as_slice(), now_ms],
        )?;
        return Ok(Poll::SlowDown);
    }
    conn.execute(
        "UPDATE device_authorizations SET last_polled_at_ms = ?2 WHERE device_code_sha256 = ?1",
        params![digest.as_slice(), now_ms],
    )?;
    Ok(match (status.as_str(), user_id) {
        // A person disabled since approving gets no token (enabling them again later
        // must not find one made meanwhile).
        ("APPROVED", Some(user_id)) if !super::users::is_enabled(conn, &user_id)? => {
            conn.execute(
                "UPDATE device_authorizations SET status = 'DENIED' WHERE device_code_sha256 = ?1",
                [digest.as_slice()],
            )?;
            Poll::Denied
        }
        ("APPROVED", Some(user_id)) => {
            conn.execute(
                "UPDATE device_authorizations SET status = 'USED' WHERE device_code_sha256 = ?1",
                [digest.as_slice()],
            )?;
            Poll::Approved { user_id, label }
        }
        ("DENIED", _) => Poll::Denied,
        _ => Poll::Pending,
    })
}

/// The person at `/device` approves or denies a code. `false` if no live, pending
/// authorisation has that code.
pub fn decide(conn: &Connection, user_code: &str, user_id: &str, approve: bool, now_ms: i64) -> Result<bool, DbError> {
    let changed = conn.execute(
        "UPDATE device_authorizations SET status = ?3, user_id = ?2
         WHERE user_code = ?1 AND status = 'PENDING' AND expires_at_ms > ?4",
        params![user_code, user_id, if approve { "APPROVED" } else { "DENIED" }, now_ms],
    )?;
    Ok(changed == 1)
}

/// A code waiting for its approval, as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub asker: Asker,
    pub created_at_ms: i64,
}

/// The live, pending authorisation with this code, if any (the page shows who asked
/// before the person approves).
pub fn waiting(conn: &Connection, user_code: &str, now_ms: i64) -> Result<Option<Waiting>, DbError> {
    Ok(conn
        .query_row(
            "SELECT coalesce(requested_from, ''), user_agent, label, created_at_ms FROM device_authorizations
             WHERE user_code = ?1 AND status = 'PENDING' AND expires_at_ms > ?2",
            params![user_code, now_ms],
            |row| {
                Ok(Waiting {
                    asker: Asker { address: row.get(0)?, user_agent: row.get(1)?, label: row.get(2)? },
                    created_at_ms: row.get(3)?,
                })
            },
        )
        .optional()?)
}

/// Removes device authorisations that expired more than a day ago, whatever their
/// status (`sweep-scratch`); returns how many.
pub fn delete_expired(conn: &Connection, now_ms: i64) -> Result<usize, DbError> {
    Ok(conn.execute("DELETE FROM device_authorizations WHERE expires_at_ms < ?1", [now_ms - 86_400_000])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_codes_are_eight_consonants_with_a_dash() {
        for _ in 0..200 {
            let code = user_code().unwrap();
            assert_eq!(code.len(), 9);
            assert_eq!(&code[4..5], "-");
            assert!(code.bytes().filter(|b| *b != b'-').all(|b| USER_CODE_ALPHABET.contains(&b)), "{code}");
        }
    }

    #[test]
    fn typed_codes_are_normalised() {
        assert_eq!(normalise_user_code(" bcdf-ghjk "), Some("BCDF-GHJK".into()));
        assert_eq!(normalise_user_code("BCDFGHJK"), Some("BCDF-GHJK".into()));
        assert_eq!(normalise_user_code("BCDF GHJ"), None);
        assert_eq!(normalise_user_code("ABCD-EFGH"), None, "vowels are not in the alphabet");
    }
}

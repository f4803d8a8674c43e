//! Passwords: the policy (8 to 128 characters, not one of the most common passwords)
//! and scrypt hashing at N=2^17, r=8, p=1 in PHC string form (`$scrypt$ln=17,r=8,p=1$…`).
//!
//! Invariants: a hash costs 128 MiB and about a third of a second, so at most
//! [`CONCURRENT_HASHES`] run at once (a login flood queues instead of exhausting
//! memory); verification reads the parameters from the stored string, so hashes made
//! under older parameters keep working; plain passwords are never logged or stored.

use scrypt::Scrypt;
use scrypt::password_hash::phc::PasswordHash;
use scrypt::password_hash::{PasswordHasher, PasswordVerifier};
use tokio::sync::Semaphore;

pub const MIN_CHARS: usize = 8;
pub const MAX_CHARS: usize = 128;
/// Hashes that may run at once (each holds 128 MiB).
pub const CONCURRENT_HASHES: usize = 2;

static HASHING: Semaphore = Semaphore::const_new(CONCURRENT_HASHES);

/// The most common passwords of at least 8 characters, lower-cased, from the
/// zxcvbn-ts frequency list (MIT; `assets/common-passwords.LICENSE.txt`).
const COMMON: &str = include_str!("../../assets/common-passwords.txt");

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PasswordError {
    #[error("password must be at least {MIN_CHARS} characters")]
    TooShort,
    #[error("password must be at most {MAX_CHARS} characters")]
    TooLong,
    #[error("password is one of the most commonly used passwords; choose another")]
    Common,
    #[error("password hashing failed: {0}")]
    Hashing(String),
}

/// Checks a new password against the policy.
pub fn check_policy(password: &str) -> Result<(), PasswordError> {
    let chars = password.chars().count();
    if chars < MIN_CHARS {
        return Err(PasswordError::TooShort);
    }
    if chars > MAX_CHARS {
        return Err(PasswordError::TooLong);
    }
    let lowered = password.to_lowercase();
    if COMMON.lines().any(|common| common == lowered) {
        return Err(PasswordError::Common);
    }
    Ok(())
}

/// Checks the policy and hashes. Blocking (about a third of a second); call from a
/// blocking thread or [`hash_async`].
pub fn hash(password: &str) -> Result<String, PasswordError> {
    check_policy(password)?;
    let hashed =
        Scrypt::new().hash_password(password.as_bytes()).map_err(|err| PasswordError::Hashing(err.to_string()))?;
    Ok(hashed.to_string())
}

/// True if `password` matches the stored PHC string. An unparsable stored string
/// never matches. Blocking, like [`hash`].
pub fn verify(password: &str, stored: &str) -> bool {
    if password.chars().count() > MAX_CHARS {
        return false;
    }
    match PasswordHash::new(stored) {
        Ok(parsed) => Scrypt::new().verify_password(password.as_bytes(), &parsed).is_ok(),
        Err(_) => false,
    }
}

/// A stored hash to verify against when the account does not exist, so an unknown
/// e-mail costs the same time as a wrong password (no account enumeration by timing).
pub const DUMMY_HASH: &str = "$scrypt$ln=17,r=8,p=1$c2lnaHRsaW5lLWR1bW15$Yp2o0mH7hQ8yO7d1c8sJm9tqv8m2W1jv0mC1oQ3o0nM";

/// [`hash`] on a blocking thread, bounded by the hashing semaphore.
pub async fn hash_async(password: String) -> Result<String, PasswordError> {
    let _permit = HASHING.acquire().await.map_err(|err| PasswordError::Hashing(err.to_string()))?;
    tokio::task::spawn_blocking(move || hash(&password)).await.map_err(|err| PasswordError::Hashing(err.to_string()))?
}

/// [`verify`] on a blocking thread, bounded by the hashing semaphore.
pub async fn verify_async(password: String, stored: String) -> bool {
    let Ok(_permit) = HASHING.acquire().await else { return false };
    tokio::task::spawn_blocking(move || verify(&password, &stored)).await.unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_rejects_short_long_and_common_passwords() {
        assert_eq!(check_policy("short7!"), Err(PasswordError::TooShort));
        assert_eq!(check_policy(&"x".repeat(129)), Err(PasswordError::TooLong));
        assert_eq!(check_policy("password"), Err(PasswordError::Common));
        assert_eq!(check_policy("PassWord1"), Err(PasswordError::Common), "case does not dodge the list");
        assert_eq!(check_policy("qwertyuiop"), Err(PasswordError::Common));
        assert!(check_policy("correct horse battery staple").is_ok());
        assert!(check_policy(&"é".repeat(8)).is_ok(), "characters, not bytes, are counted");
    }

    #[test]
    fn hashes_are_scrypt_2_17_8_1_and_verify() {
        let stored = hash("tangerine-bicycle-42").unwrap();
        assert!(stored.starts_with("$scrypt$ln=17,r=8,p=1$"), "{stored}");
        assert!(verify("tangerine-bicycle-42", &stored));
        assert!(!verify("tangerine-bicycle-43", &stored));
        assert!(!verify("tangerine-bicycle-42", "not a hash"));
        assert_ne!(stored, hash("tangerine-bicycle-42").unwrap(), "each hash has its own salt");
    }

    #[test]
    fn the_dummy_hash_parses_and_matches_nothing_ordinary() {
        assert!(PasswordHash::new(DUMMY_HASH).is_ok());
        assert!(!verify("password", DUMMY_HASH));
    }
}

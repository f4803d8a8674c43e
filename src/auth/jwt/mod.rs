//! Access tokens: EdDSA (Ed25519) JWTs valid for 8 hours, signed with a key generated
//! on first start under `<data_dir>/keys/`.
//!
//! Invariants: verification pins the algorithm to EdDSA and checks, in order, the
//! header (`typ` = `at+jwt` per RFC 9068, `kid` = this installation's key), the
//! signature, `iss`, `aud`, then `exp` and `nbf` against the caller's clock (no
//! leeway: the server is the only issuer and the only verifier); an access token says
//! who (`sub`) and which sign-in (`sid`), so revoking the sign-in ends it before `exp`.
//! The private key file is created with mode 0600 and is never logged. jsonwebtoken's
//! cryptography is ring's ([`ring_provider`]), installed by [`SigningKeys::from_pkcs8`].

pub mod ring_provider;

use std::path::{Path, PathBuf};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use ring::rand::SystemRandom;
use ring::signature::{Ed25519KeyPair, KeyPair};
use serde::{Deserialize, Serialize};

pub const ACCESS_TOKEN_LIFETIME_MS: i64 = 8 * 3_600_000;
pub const TOKEN_TYPE: &str = "at+jwt";
pub const AUDIENCE: &str = "sightline";
const KEY_FILE: &str = "access-token-ed25519.pk8";

/// The claims of an access token.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct AccessClaims {
    pub iss: String,
    pub aud: String,
    /// The user id.
    pub sub: String,
    /// The sign-in (`auth_sessions.id`) this token belongs to.
    pub sid: String,
    pub iat: i64,
    pub nbf: i64,
    pub exp: i64,
    pub jti: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JwtError {
    #[error("not an access token: {0}")]
    Rejected(&'static str),
    #[error("signing key: {0}")]
    Key(String),
}

/// The installation's signing key and the expected issuer.
pub struct SigningKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    kid: String,
    issuer: String,
}

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKeys").field("kid", &self.kid).field("issuer", &self.issuer).finish()
    }
}

pub fn keys_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("keys")
}

impl SigningKeys {
    /// Loads the key from `<data_dir>/keys/`, generating it on first start.
    pub fn load_or_create(data_dir: &Path, issuer: &str) -> Result<SigningKeys, JwtError> {
        let dir = keys_dir(data_dir);
        let path = dir.join(KEY_FILE);
        let pkcs8 = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => create_key_file(&dir, &path)?,
            Err(err) => return Err(JwtError::Key(format!("cannot read {}: {err}", path.display()))),
        };
        SigningKeys::from_pkcs8(&pkcs8, issuer)
    }

    pub fn from_pkcs8(pkcs8: &[u8], issuer: &str) -> Result<SigningKeys, JwtError> {
        // Every SigningKeys is built here, before its first encode or decode.
        ring_provider::install();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8).map_err(|err| JwtError::Key(format!("bad key: {err}")))?;
        let public = pair.public_key().as_ref().to_vec();
        let digest = ring::digest::digest(&ring::digest::SHA256, &public);
        Ok(SigningKeys {
            encoding: EncodingKey::from_ed_der(pkcs8),
            decoding: DecodingKey::from_ed_der(&public),
            kid: hex::encode(&digest.as_ref()[..8]),
            issuer: issuer.to_string(),
        })
    }

    /// A fresh in-memory key (tests, benchmarks).
    pub fn generate(issuer: &str) -> Result<SigningKeys, JwtError> {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new())
            .map_err(|_| JwtError::Key("cannot generate a key".into()))?;
        SigningKeys::from_pkcs8(pkcs8.as_ref(), issuer)
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Signs an access token for `user_id` in sign-in `sid`, valid from `now_ms`.
    pub fn issue(&self, user_id: &str, sid: &str, now_ms: i64) -> Result<String, JwtError> {
        let now = now_ms / 1000;
        let claims = AccessClaims {
            iss: self.issuer.clone(),
            aud: AUDIENCE.to_string(),
            sub: user_id.to_string(),
            sid: sid.to_string(),
            iat: now,
            nbf: now,
            exp: now + ACCESS_TOKEN_LIFETIME_MS / 1000,
            jti: uuid::Uuid::now_v7().to_string(),
        };
        self.sign(&claims)
    }

    /// Signs arbitrary claims with this key's header (tests build bad tokens with it).
    pub fn sign(&self, claims: &AccessClaims) -> Result<String, JwtError> {
        let mut header = Header::new(Algorithm::EdDSA);
        header.typ = Some(TOKEN_TYPE.to_string());
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).map_err(|err| JwtError::Key(err.to_string()))
    }

    /// Verifies an access token at `now_ms`; any failure is a rejection.
    pub fn verify(&self, token: &str, now_ms: i64) -> Result<AccessClaims, JwtError> {
        if token.len() > 4096 || token.starts_with("slh_") {
            return Err(JwtError::Rejected("opaque tokens are not access tokens"));
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| JwtError::Rejected("malformed header"))?;
        if header.alg != Algorithm::EdDSA {
            return Err(JwtError::Rejected("algorithm must be EdDSA"));
        }
        if header.typ.as_deref() != Some(TOKEN_TYPE) {
            return Err(JwtError::Rejected("typ must be at+jwt"));
        }
        if header.kid.as_deref() != Some(self.kid.as_str()) {
            return Err(JwtError::Rejected("unknown signing key"));
        }
        // RFC 7515 §4.1.11: a `crit` parameter lists extensions the recipient must
        // understand or reject the token. We understand none (we never set one).
        if header.crit.is_some() {
            return Err(JwtError::Rejected("unsupported critical header"));
        }
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.set_audience(&[AUDIENCE]);
        validation.set_issuer(&[self.issuer.as_str()]);
        validation.set_required_spec_claims(&["exp", "nbf", "iss", "aud", "sub"]);
        // Time is checked below against the server's clock, without leeway.
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.leeway = 0;
        let data = jsonwebtoken::decode::<AccessClaims>(token, &self.decoding, &validation).map_err(|err| {
            use jsonwebtoken::errors::ErrorKind;
            JwtError::Rejected(match err.kind() {
                ErrorKind::InvalidAudience => "wrong audience",
                ErrorKind::InvalidIssuer => "wrong issuer",
                ErrorKind::InvalidSignature => "bad signature",
                _ => "malformed token",
            })
        })?;
        let now = now_ms.div_euclid(1000);
        let claims = data.claims;
        if now >= claims.exp {
            return Err(JwtError::Rejected("expired"));
        }
        if now < claims.nbf {
            return Err(JwtError::Rejected("not yet valid"));
        }
        Ok(claims)
    }
}

fn create_key_file(dir: &Path, path: &Path) -> Result<Vec<u8>, JwtError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let io = |what: &str, err: std::io::Error| JwtError::Key(format!("cannot {what} {}: {err}", path.display()));
    std::fs::create_dir_all(dir).map_err(|err| io("create the directory of", err))?;
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new())
        .map_err(|_| JwtError::Key("cannot generate a key".into()))?;
    // Written under a temporary name and renamed, so a crash never leaves half a key;
    // `create_new` on the final name would race two first starts, the rename does not.
    let temp = dir.join(format!("{KEY_FILE}.{}.tmp", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .map_err(|err| io("create", err))?;
    file.write_all(pkcs8.as_ref()).and_then(|()| file.sync_all()).map_err(|err| io("write", err))?;
    if path.exists() {
        // Another process won the race; use its key.
        let _ = std::fs::remove_file(&temp);
        return std::fs::read(path).map_err(|err| io("read", err));
    }
    std::fs::rename(&temp, path).map_err(|err| io("rename to", err))?;
    tracing::info!(path = %path.display(), "generated the access-token signing key");
    Ok(pkcs8.as_ref().to_vec())
}

#[cfg(test)]
mod tests;

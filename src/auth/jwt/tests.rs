//! The JWT negative suite: every forged, stale or misdirected token is rejected.

use super::*;
use crate::auth::tokens::base64url;

const ISSUER: &str = "https://sightline.example.com";
const NOW_MS: i64 = 1_800_000_000_000;

fn keys() -> SigningKeys {
    SigningKeys::generate(ISSUER).unwrap()
}

fn claims(keys: &SigningKeys) -> AccessClaims {
    let token = keys.issue("user-1", "sid-1", NOW_MS).unwrap();
    keys.verify(&token, NOW_MS).unwrap()
}

/// Builds `header.payload.signature` by hand from JSON parts.
fn compact(header: &serde_json::Value, payload: &serde_json::Value, signature: &[u8]) -> String {
    format!(
        "{}.{}.{}",
        base64url(header.to_string().as_bytes()),
        base64url(payload.to_string().as_bytes()),
        base64url(signature)
    )
}

fn rejected(keys: &SigningKeys, token: &str) -> &'static str {
    match keys.verify(token, NOW_MS) {
        Err(JwtError::Rejected(why)) => why,
        other => panic!("accepted or wrong error: {other:?}"),
    }
}

#[test]
fn a_fresh_token_verifies_with_its_claims() {
    let keys = keys();
    let token = keys.issue("user-1", "sid-1", NOW_MS).unwrap();
    let claims = keys.verify(&token, NOW_MS).unwrap();
    assert_eq!((claims.sub.as_str(), claims.sid.as_str(), claims.iss.as_str()), ("user-1", "sid-1", ISSUER));
    assert_eq!(claims.exp - claims.iat, 8 * 3600);
    let header = jsonwebtoken::decode_header(&token).unwrap();
    assert_eq!(header.alg, Algorithm::EdDSA);
    assert_eq!(header.typ.as_deref(), Some("at+jwt"));
    assert!(keys.verify(&token, NOW_MS + ACCESS_TOKEN_LIFETIME_MS - 1000).is_ok());
}

#[test]
fn alg_none_is_rejected() {
    let keys = keys();
    let header = serde_json::json!({"alg": "none", "typ": "at+jwt", "kid": keys.kid()});
    let token = compact(&header, &serde_json::to_value(claims(&keys)).unwrap(), b"");
    rejected(&keys, &token);
    rejected(&keys, token.trim_end_matches('.'));
}

#[test]
fn hs256_signed_with_the_public_key_is_rejected() {
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let keys = SigningKeys::from_pkcs8(pkcs8.as_ref(), ISSUER).unwrap();
    let header = serde_json::json!({"alg": "HS256", "typ": "at+jwt", "kid": keys.kid()});
    let payload = serde_json::to_value(claims(&keys)).unwrap();
    let signing_input =
        format!("{}.{}", base64url(header.to_string().as_bytes()), base64url(payload.to_string().as_bytes()));
    let mac_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, pair.public_key().as_ref());
    let tag = ring::hmac::sign(&mac_key, signing_input.as_bytes());
    let token = format!("{signing_input}.{}", base64url(tag.as_ref()));
    assert_eq!(rejected(&keys, &token), "algorithm must be EdDSA");
}

#[test]
fn unknown_kid_is_rejected() {
    let keys = keys();
    let mut header = Header::new(Algorithm::EdDSA);
    header.typ = Some(TOKEN_TYPE.into());
    header.kid = Some("0000000000000000".into());
    let token = jsonwebtoken::encode(&header, &claims(&keys), &keys.encoding).unwrap();
    assert_eq!(rejected(&keys, &token), "unknown signing key");
    header.kid = None;
    let token = jsonwebtoken::encode(&header, &claims(&keys), &keys.encoding).unwrap();
    assert_eq!(rejected(&keys, &token), "unknown signing key");
}

#[test]
fn expired_and_not_yet_valid_tokens_are_rejected() {
    let keys = keys();
    let token = keys.issue("user-1", "sid-1", NOW_MS).unwrap();
    assert_eq!(keys.verify(&token, NOW_MS + ACCESS_TOKEN_LIFETIME_MS).unwrap_err(), JwtError::Rejected("expired"));
    let mut future = claims(&keys);
    future.nbf += 600;
    assert_eq!(rejected(&keys, &keys.sign(&future).unwrap()), "not yet valid");
    assert_eq!(keys.verify(&token, NOW_MS - 1000).unwrap_err(), JwtError::Rejected("not yet valid"));
}

#[test]
fn wrong_audience_issuer_and_type_are_rejected() {
    let keys = keys();
    let mut wrong_aud = claims(&keys);
    wrong_aud.aud = "another-service".into();
    assert_eq!(rejected(&keys, &keys.sign(&wrong_aud).unwrap()), "wrong audience");
    let mut wrong_iss = claims(&keys);
    wrong_iss.iss = "https://evil.example.com".into();
    assert_eq!(rejected(&keys, &keys.sign(&wrong_iss).unwrap()), "wrong issuer");
    for typ in [Some("JWT"), None, Some("refresh+jwt")] {
        let mut header = Header::new(Algorithm::EdDSA);
        header.typ = typ.map(str::to_string);
        header.kid = Some(keys.kid().to_string());
        let token = jsonwebtoken::encode(&header, &claims(&keys), &keys.encoding).unwrap();
        assert_eq!(rejected(&keys, &token), "typ must be at+jwt", "typ {typ:?}");
    }
}

#[test]
fn an_unknown_critical_header_is_rejected() {
    let keys = keys();
    for crit in [vec!["exp".to_string()], vec!["b64".to_string()], Vec::new()] {
        let mut header = Header::new(Algorithm::EdDSA);
        header.typ = Some(TOKEN_TYPE.into());
        header.kid = Some(keys.kid().to_string());
        header.crit = Some(crit.clone());
        let token = jsonwebtoken::encode(&header, &claims(&keys), &keys.encoding).unwrap();
        assert_eq!(rejected(&keys, &token), "unsupported critical header", "crit {crit:?}");
    }
}

#[test]
fn refresh_and_hook_tokens_are_not_access_tokens() {
    let keys = keys();
    for opaque in [format!("slh_refresh_{}", "A".repeat(43)), format!("slh_hook_{}", "B".repeat(43))] {
        rejected(&keys, &opaque);
    }
}

#[test]
fn truncated_signatures_and_altered_payloads_are_rejected() {
    let keys = keys();
    let token = keys.issue("user-1", "sid-1", NOW_MS).unwrap();
    rejected(&keys, &token[..token.len() - 4]);
    let (signing_input, signature) = token.rsplit_once('.').unwrap();
    rejected(&keys, &format!("{signing_input}."));
    let header = signing_input.split('.').next().unwrap();
    let mut altered = claims(&keys);
    altered.sub = "admin-user".into();
    let payload = base64url(serde_json::to_string(&altered).unwrap().as_bytes());
    assert_eq!(rejected(&keys, &format!("{header}.{payload}.{signature}")), "bad signature");
}

#[test]
fn a_key_from_another_installation_is_rejected() {
    let ours = keys();
    let theirs = keys();
    let token = theirs.issue("user-1", "sid-1", NOW_MS).unwrap();
    assert_eq!(rejected(&ours, &token), "unknown signing key");
    // Even claiming our kid, their signature does not verify under our key.
    let mut header = Header::new(Algorithm::EdDSA);
    header.typ = Some(TOKEN_TYPE.into());
    header.kid = Some(ours.kid().to_string());
    let forged = jsonwebtoken::encode(&header, &claims(&ours), &theirs.encoding).unwrap();
    assert_eq!(rejected(&ours, &forged), "bad signature");
}

#[test]
fn the_key_is_created_once_with_mode_0600_and_reloaded() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let first = SigningKeys::load_or_create(dir.path(), ISSUER).unwrap();
    let path = keys_dir(dir.path()).join(KEY_FILE);
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let again = SigningKeys::load_or_create(dir.path(), ISSUER).unwrap();
    assert_eq!(first.kid(), again.kid());
    let token = first.issue("u", "s", NOW_MS).unwrap();
    assert!(again.verify(&token, NOW_MS).is_ok());
}

//! The webhook signature: `X-Hub-Signature-256: sha256=<hex>`, an HMAC-SHA256 of the raw
//! body keyed with the App's webhook secret (GitHub's "Validating webhook deliveries").
//!
//! Invariant: the comparison is constant-time, and anything but a well-formed, matching
//! signature is refused before the body is read as JSON.

use ring::hmac;
use subtle::ConstantTimeEq;

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("X-Hub-Signature-256 is missing")]
    Missing,
    #[error("X-Hub-Signature-256 is not sha256=<64 hexadecimal digits>")]
    Malformed,
    #[error("X-Hub-Signature-256 does not match the body")]
    Mismatch,
}

/// The header value GitHub would send for `body`.
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    format!("sha256={}", hex::encode(hmac::sign(&key, body).as_ref()))
}

/// Checks `header` against `body`.
pub fn verify(secret: &[u8], body: &[u8], header: Option<&str>) -> Result<(), SignatureError> {
    let header = header.ok_or(SignatureError::Missing)?;
    let given = header
        .strip_prefix("sha256=")
        .filter(|hex| hex.len() == 64)
        .and_then(|digits| hex::decode(digits).ok())
        .ok_or(SignatureError::Malformed)?;
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    let expected = hmac::sign(&key, body);
    match bool::from(expected.as_ref().ct_eq(&given)) {
        true => Ok(()),
        false => Err(SignatureError::Mismatch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GitHub's published example: secret "It's a Secret to Everybody", payload
    /// "Hello, World!".
    #[test]
    fn github_documented_known_answer() {
        let header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert_eq!(sign(b"It's a Secret to Everybody", b"Hello, World!"), header);
        assert_eq!(verify(b"It's a Secret to Everybody", b"Hello, World!", Some(header)), Ok(()));
    }

    #[test]
    fn anything_else_is_refused() {
        let secret = b"s3cret";
        let good = sign(secret, b"{}");
        assert_eq!(verify(secret, b"{}", None), Err(SignatureError::Missing));
        assert_eq!(verify(secret, b"{}", Some(&good.replace("sha256=", "sha1="))), Err(SignatureError::Malformed));
        assert_eq!(verify(secret, b"{}", Some(&good[..good.len() - 2])), Err(SignatureError::Malformed));
        assert_eq!(verify(secret, b"{}", Some(&good.to_uppercase().replace("SHA256=", "sha256="))), Ok(()));
        assert_eq!(verify(secret, b"{ }", Some(&good)), Err(SignatureError::Mismatch));
        assert_eq!(verify(b"other", b"{}", Some(&good)), Err(SignatureError::Mismatch));
    }
}

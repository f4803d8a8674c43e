//! jsonwebtoken's cryptography on *ring*, the crypto library the server already uses for
//! TLS and its access-token keys, installed as the process's `CryptoProvider` in place
//! of jsonwebtoken's RustCrypto one, whose `rsa` crate is not constant-time
//! (RUSTSEC-2023-0071, the Marvin attack) on the one RSA operation we do with a private
//! key: signing the GitHub App's JWT. What it does, and nothing more: EdDSA (Ed25519)
//! signs and verifies (our access tokens, `auth::jwt`); RS256 signs (the GitHub App's
//! JWT, `github::app_client`, with a PKCS#1 or PKCS#8 key); RS256, RS384, RS512 and
//! PS256 verify from a DER key or a JWK's `n`/`e`, ES256 and ES384 from an uncompressed
//! point (a PEM, a DER or a JWK's `x`/`y`), which is how OpenID Connect providers sign
//! ID tokens.
//!
//! Invariants: every other algorithm (HMAC above all, and signing with anything but EdDSA
//! and RS256) is refused with jsonwebtoken's `UnsupportedAlgorithm`, never served by a
//! fallback; a key of another family than the algorithm's is refused with
//! `InvalidKeyFormat` before any signature is looked at; RSA verification takes 2048- to
//! 8192-bit moduli only (ring's bounds). jsonwebtoken keeps one provider per process and,
//! having none of its own here, panics on a JWT made before one is installed: [`install`]
//! is called by every constructor whose value leads to jsonwebtoken's `encode` or
//! `decode` (`SigningKeys::from_pkcs8`, `AppClient::from_config`), so the server, every
//! command and the tests get it; it is idempotent and cheap.

use std::sync::Once;

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{ErrorKind, Result};
use jsonwebtoken::jwk::{EllipticCurve, ThumbprintHash};
// jsonwebtoken re-exports the `signature` crate its traits are written against, so this
// is always the very version it uses.
use jsonwebtoken::signature::{self, Signer, Verifier};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::rand::SystemRandom;
use ring::signature::{self as ring_sig, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};

/// The provider; use it through [`install`].
pub static RING_PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: new_signer,
    verifier_factory: new_verifier,
    key_utils: KeyUtils {
        rsa_pub_components_from_private_key: rsa_components_from_private_key,
        rsa_pub_components_from_public_key: rsa_components_from_public_key,
        ec_pub_components_from_private_key: ec_components_from_private_key,
        ed_pub_components_from_private_key: ed_component_from_private_key,
        compute_digest,
    },
};

/// Makes [`RING_PROVIDER`] jsonwebtoken's provider for this process (once; later calls
/// return at once).
///
/// Panics if jsonwebtoken already has another provider: nothing else here installs
/// one, so that means a JWT was made before this call, a bug that would otherwise
/// surface as jsonwebtoken's own panic on that JWT.
pub fn install() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        if RING_PROVIDER.install_default().is_err() {
            panic!("jsonwebtoken was used before auth::jwt::ring_provider::install()");
        }
    });
}

fn expect_family(actual: AlgorithmFamily, expected: AlgorithmFamily) -> Result<()> {
    if actual == expected { Ok(()) } else { Err(ErrorKind::InvalidKeyFormat.into()) }
}

enum SigningKey {
    Ed25519(Ed25519KeyPair),
    /// Signs RS256 (PKCS#1 v1.5 with SHA-256) only.
    Rs256(RsaKeyPair),
}

struct RingSigner {
    algorithm: Algorithm,
    key: SigningKey,
}

fn new_signer(algorithm: &Algorithm, key: &EncodingKey) -> Result<Box<dyn JwtSigner>> {
    let signing_key = match algorithm {
        Algorithm::EdDSA => {
            expect_family(key.family(), AlgorithmFamily::Ed)?;
            // PKCS#8 v2 (ring's own, public key checked against the private one) or v1
            // (no public key, as openssl writes it).
            let pair =
                Ed25519KeyPair::from_pkcs8_maybe_unchecked(key.as_bytes()).map_err(|_| ErrorKind::InvalidEddsaKey)?;
            SigningKey::Ed25519(pair)
        }
        Algorithm::RS256 => {
            expect_family(key.family(), AlgorithmFamily::Rsa)?;
            // jsonwebtoken hands over PKCS#1 RSAPrivateKey DER whether the PEM was PKCS#1
            // (GitHub's App keys) or PKCS#8: it unwraps the latter.
            let pair = RsaKeyPair::from_der(key.as_bytes()).map_err(|err| ErrorKind::InvalidRsaKey(err.to_string()))?;
            SigningKey::Rs256(pair)
        }
        _ => return Err(ErrorKind::UnsupportedAlgorithm.into()),
    };
    Ok(Box::new(RingSigner { algorithm: *algorithm, key: signing_key }))
}

impl Signer<Vec<u8>> for RingSigner {
    fn try_sign(&self, message: &[u8]) -> std::result::Result<Vec<u8>, signature::Error> {
        match &self.key {
            SigningKey::Ed25519(pair) => Ok(pair.sign(message).as_ref().to_vec()),
            SigningKey::Rs256(pair) => {
                let mut signature = vec![0; pair.public().modulus_len()];
                // PKCS#1 v1.5 padding is deterministic; ring takes a generator for every
                // padding all the same (PSS would use it).
                pair.sign(&ring_sig::RSA_PKCS1_SHA256, &SystemRandom::new(), message, &mut signature)
                    .map_err(|_| signature::Error::new())?;
                Ok(signature)
            }
        }
    }
}

impl JwtSigner for RingSigner {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

enum PublicKey {
    /// Parsed by ring as it verifies: an RSAPublicKey DER (what jsonwebtoken keeps of an
    /// RSA PEM or DER), an uncompressed EC point (`04 || x || y`), or Ed25519's 32 bytes.
    Encoded(ring_sig::UnparsedPublicKey<Vec<u8>>),
    /// A JWK's RSA modulus and exponent.
    RsaComponents(&'static ring_sig::RsaParameters, ring_sig::RsaPublicKeyComponents<Vec<u8>>),
}

struct RingVerifier {
    algorithm: Algorithm,
    key: PublicKey,
}

fn new_verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>> {
    let public = match algorithm {
        Algorithm::EdDSA => encoded(key, AlgorithmFamily::Ed, &ring_sig::ED25519)?,
        // JWS carries ECDSA signatures as fixed-width r || s (RFC 7518 §3.4), not ASN.1.
        Algorithm::ES256 => encoded(key, AlgorithmFamily::Ec, &ring_sig::ECDSA_P256_SHA256_FIXED)?,
        Algorithm::ES384 => encoded(key, AlgorithmFamily::Ec, &ring_sig::ECDSA_P384_SHA384_FIXED)?,
        Algorithm::RS256 => rsa(key, &ring_sig::RSA_PKCS1_2048_8192_SHA256)?,
        Algorithm::RS384 => rsa(key, &ring_sig::RSA_PKCS1_2048_8192_SHA384)?,
        Algorithm::RS512 => rsa(key, &ring_sig::RSA_PKCS1_2048_8192_SHA512)?,
        Algorithm::PS256 => rsa(key, &ring_sig::RSA_PSS_2048_8192_SHA256)?,
        _ => return Err(ErrorKind::UnsupportedAlgorithm.into()),
    };
    Ok(Box::new(RingVerifier { algorithm: *algorithm, key: public }))
}

fn encoded(
    key: &DecodingKey,
    family: AlgorithmFamily,
    algorithm: &'static dyn ring_sig::VerificationAlgorithm,
) -> Result<PublicKey> {
    expect_family(key.family(), family)?;
    Ok(PublicKey::Encoded(ring_sig::UnparsedPublicKey::new(algorithm, key.try_get_as_bytes()?.to_vec())))
}

fn rsa(key: &DecodingKey, parameters: &'static ring_sig::RsaParameters) -> Result<PublicKey> {
    expect_family(key.family(), AlgorithmFamily::Rsa)?;
    Ok(match key.kind() {
        DecodingKeyKind::SecretOrDer(der) => {
            PublicKey::Encoded(ring_sig::UnparsedPublicKey::new(parameters, der.clone()))
        }
        // RFC 7518 §6.3.1.1 forbids a leading zero octet in `n`, yet some libraries write
        // one; ring refuses it, so it is dropped (the same integer either way).
        DecodingKeyKind::RsaModulusExponent { n, e } => PublicKey::RsaComponents(
            parameters,
            ring_sig::RsaPublicKeyComponents { n: without_leading_zeros(n), e: without_leading_zeros(e) },
        ),
    })
}

fn without_leading_zeros(bytes: &[u8]) -> Vec<u8> {
    let first = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    bytes[first..].to_vec()
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, message: &[u8], signature: &Vec<u8>) -> std::result::Result<(), signature::Error> {
        let verified = match &self.key {
            PublicKey::Encoded(key) => key.verify(message, signature),
            PublicKey::RsaComponents(parameters, key) => key.verify(parameters, message, signature),
        };
        verified.map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

// JWK helpers (jsonwebtoken's `Jwk::from_encoding_key`, `from_decoding_key`, `thumbprint`).

fn rsa_components_from_private_key(der: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let pair = RsaKeyPair::from_der(der).map_err(|err| ErrorKind::InvalidRsaKey(err.to_string()))?;
    let components: ring::rsa::PublicKeyComponents<Vec<u8>> = pair.public().into();
    Ok((components.n, components.e))
}

/// ring verifies with an RSAPublicKey DER but has no parser that hands back its
/// components; a JWK's own `n` and `e` need none.
fn rsa_components_from_public_key(_der: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    Err(ErrorKind::Provider("the ring provider cannot take an RSA public key apart; use the JWK's n and e".into())
        .into())
}

fn ec_components_from_private_key(pkcs8: &[u8], algorithm: Algorithm) -> Result<(EllipticCurve, Vec<u8>, Vec<u8>)> {
    let (signing, curve, coordinate_len) = match algorithm {
        Algorithm::ES256 => (&ring_sig::ECDSA_P256_SHA256_FIXED_SIGNING, EllipticCurve::P256, 32),
        Algorithm::ES384 => (&ring_sig::ECDSA_P384_SHA384_FIXED_SIGNING, EllipticCurve::P384, 48),
        _ => return Err(ErrorKind::InvalidEcdsaKey.into()),
    };
    let pair =
        EcdsaKeyPair::from_pkcs8(signing, pkcs8, &SystemRandom::new()).map_err(|_| ErrorKind::InvalidEcdsaKey)?;
    // ring's public key is the uncompressed point, 04 || x || y.
    let point = pair.public_key().as_ref();
    let (x, y) = point[1..].split_at(coordinate_len);
    Ok((curve, x.to_vec(), y.to_vec()))
}

fn ed_component_from_private_key(pkcs8: &[u8], curve: &EllipticCurve) -> Result<Vec<u8>> {
    match curve {
        EllipticCurve::Ed25519 => Ok(Ed25519KeyPair::from_pkcs8_maybe_unchecked(pkcs8)
            .map_err(|_| ErrorKind::InvalidEddsaKey)?
            .public_key()
            .as_ref()
            .to_vec()),
        _ => Err(ErrorKind::InvalidAlgorithm.into()),
    }
}

fn compute_digest(data: &[u8], hash: ThumbprintHash) -> Result<Vec<u8>> {
    let algorithm = match hash {
        ThumbprintHash::SHA256 => &ring::digest::SHA256,
        ThumbprintHash::SHA384 => &ring::digest::SHA384,
        ThumbprintHash::SHA512 => &ring::digest::SHA512,
        _ => return Err(ErrorKind::UnsupportedAlgorithm.into()),
    };
    Ok(ring::digest::digest(algorithm, data).as_ref().to_vec())
}

#[cfg(test)]
mod tests;

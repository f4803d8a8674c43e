//! The ring provider against the JOSE RFCs' published examples (RFC 7515 A.2 RS256 and
//! A.3 ES256, RFC 8037 A.4 EdDSA, keys in `tests/fixtures/jwt/`) and fresh ring keys:
//! each supported algorithm signs and verifies, another key, another algorithm, a
//! changed message and every algorithm it does not serve are refused.

use jsonwebtoken::crypto::{sign, verify};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use jsonwebtoken::{Header, Validation, decode, encode};
use ring::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, EcdsaSigningAlgorithm, RSA_PKCS1_SHA384,
    RSA_PKCS1_SHA512, RSA_PSS_SHA256, RsaEncoding,
};
use serde::{Deserialize, Serialize};

use super::*;
use crate::auth::tokens::base64url;

/// RFC 7515 A.2: the JWS Signing Input of `{"alg":"RS256"}` and its payload, the
/// signature, and the key's public modulus and exponent.
const A2_SIGNING_INPUT: &str = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ";
const A2_SIGNATURE: &str = "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw";
const A2_N: &str = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ";
const A2_E: &str = "AQAB";

/// RFC 7515 A.3: the Signing Input of `{"alg":"ES256"}` and the same payload, the
/// signature (r || s), and the P-256 public key's coordinates.
const A3_SIGNING_INPUT: &str = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ";
const A3_SIGNATURE: &str = "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q";
const A3_X: &str = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
const A3_Y: &str = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";

/// RFC 8037 A.4: the Signing Input of `{"alg":"EdDSA"}` and "Example of Ed25519
/// signing", its signature; A.1 the public key; A.3 the key's SHA-256 JWK thumbprint.
const RFC8037_SIGNING_INPUT: &str = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc";
const RFC8037_SIGNATURE: &str =
    "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg";
const RFC8037_X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
const RFC8037_THUMBPRINT: &str = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

fn a2_private() -> EncodingKey {
    install();
    EncodingKey::from_rsa_pem(&fixture("jwt/rfc7515-a2-rsa-private.pem")).unwrap()
}

fn a2_public() -> DecodingKey {
    install();
    DecodingKey::from_rsa_components(A2_N, A2_E).unwrap()
}

/// The signing input with one character changed.
fn altered(input: &str) -> String {
    let mut bytes = input.as_bytes().to_vec();
    let last = bytes.len() - 1;
    bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Claims {
    sub: String,
    exp: i64,
}

fn claims() -> Claims {
    // 2100-01-01: `decode` checks `exp` against the real clock.
    Claims { sub: "someone".into(), exp: 4_102_444_800 }
}

/// A token with header `{"alg": alg}` and [`claims`], signed by `sign_input`.
fn token_signed_by(alg: &str, sign_input: impl FnOnce(&[u8]) -> Vec<u8>) -> (String, String, String) {
    let header = base64url(serde_json::json!({"alg": alg, "typ": "JWT"}).to_string().as_bytes());
    let payload = base64url(serde_json::to_string(&claims()).unwrap().as_bytes());
    let input = format!("{header}.{payload}");
    let signature = base64url(&sign_input(input.as_bytes()));
    (format!("{input}.{signature}"), input, signature)
}

fn decoded(token: &str, key: &DecodingKey, alg: Algorithm) -> std::result::Result<Claims, ErrorKind> {
    decode::<Claims>(token, key, &Validation::new(alg)).map(|data| data.claims).map_err(|err| err.into_kind())
}

fn rsa_pair() -> RsaKeyPair {
    RsaKeyPair::from_der(a2_private().as_bytes()).unwrap()
}

fn rsa_signed(pair: &RsaKeyPair, padding: &'static dyn RsaEncoding, input: &[u8]) -> Vec<u8> {
    let mut signature = vec![0; pair.public().modulus_len()];
    pair.sign(padding, &SystemRandom::new(), input, &mut signature).unwrap();
    signature
}

fn ec_pair(signing: &'static EcdsaSigningAlgorithm) -> (EcdsaKeyPair, DecodingKey) {
    install();
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(signing, &rng).unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(signing, pkcs8.as_ref(), &rng).unwrap();
    let point = pair.public_key().as_ref();
    let (x, y) = point[1..].split_at((point.len() - 1) / 2);
    let public = DecodingKey::from_ec_components(&base64url(x), &base64url(y)).unwrap();
    (pair, public)
}

fn ed_pair() -> (EncodingKey, DecodingKey) {
    install();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let public = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap().public_key().as_ref().to_vec();
    (EncodingKey::from_ed_der(pkcs8.as_ref()), DecodingKey::from_ed_der(&public))
}

#[test]
fn the_rfc_8037_ed25519_example_is_signed_and_verified() {
    install();
    let private = EncodingKey::from_ed_pem(&fixture("jwt/rfc8037-a1-ed25519-private.pem")).unwrap();
    // Ed25519 is deterministic: the RFC's exact signature.
    assert_eq!(sign(RFC8037_SIGNING_INPUT.as_bytes(), &private, Algorithm::EdDSA).unwrap(), RFC8037_SIGNATURE);
    let from_jwk = DecodingKey::from_ed_components(RFC8037_X).unwrap();
    let from_pem = DecodingKey::from_ed_pem(&fixture("jwt/rfc8037-a1-ed25519-public.pem")).unwrap();
    for public in [from_jwk, from_pem] {
        assert!(verify(RFC8037_SIGNATURE, RFC8037_SIGNING_INPUT.as_bytes(), &public, Algorithm::EdDSA).unwrap());
        let changed = altered(RFC8037_SIGNING_INPUT);
        assert!(!verify(RFC8037_SIGNATURE, changed.as_bytes(), &public, Algorithm::EdDSA).unwrap());
    }
}

#[test]
fn the_rfc_7515_rs256_example_is_signed_from_pkcs1_and_pkcs8_and_verified() {
    install();
    for private in ["jwt/rfc7515-a2-rsa-private.pem", "jwt/rfc7515-a2-rsa-private-pkcs8.pem"] {
        let key = EncodingKey::from_rsa_pem(&fixture(private)).unwrap();
        // PKCS#1 v1.5 is deterministic: the RFC's exact signature.
        assert_eq!(sign(A2_SIGNING_INPUT.as_bytes(), &key, Algorithm::RS256).unwrap(), A2_SIGNATURE, "{private}");
    }
    let from_pem = DecodingKey::from_rsa_pem(&fixture("jwt/rfc7515-a2-rsa-public.pem")).unwrap();
    for public in [a2_public(), from_pem] {
        assert!(verify(A2_SIGNATURE, A2_SIGNING_INPUT.as_bytes(), &public, Algorithm::RS256).unwrap());
        assert!(!verify(A2_SIGNATURE, altered(A2_SIGNING_INPUT).as_bytes(), &public, Algorithm::RS256).unwrap());
    }
}

#[test]
fn a_jwk_modulus_with_a_leading_zero_octet_still_verifies() {
    install();
    let mut modulus = vec![0u8];
    modulus.extend(base64url_decode(A2_N));
    let public = DecodingKey::from_rsa_raw_components(&modulus, &base64url_decode(A2_E));
    assert!(verify(A2_SIGNATURE, A2_SIGNING_INPUT.as_bytes(), &public, Algorithm::RS256).unwrap());
}

fn base64url_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).unwrap()
}

#[test]
fn the_rfc_7515_es256_example_verifies_from_the_jwk_and_the_pem() {
    install();
    let from_jwk = DecodingKey::from_ec_components(A3_X, A3_Y).unwrap();
    let from_pem = DecodingKey::from_ec_pem(&fixture("jwt/rfc7515-a3-p256-public.pem")).unwrap();
    for public in [from_jwk, from_pem] {
        assert!(verify(A3_SIGNATURE, A3_SIGNING_INPUT.as_bytes(), &public, Algorithm::ES256).unwrap());
        assert!(!verify(A3_SIGNATURE, altered(A3_SIGNING_INPUT).as_bytes(), &public, Algorithm::ES256).unwrap());
    }
}

#[test]
fn eddsa_and_rs256_tokens_round_trip_through_encode_and_decode() {
    let (private, public) = ed_pair();
    let token = encode(&Header::new(Algorithm::EdDSA), &claims(), &private).unwrap();
    assert_eq!(decoded(&token, &public, Algorithm::EdDSA), Ok(claims()));
    let token = encode(&Header::new(Algorithm::RS256), &claims(), &a2_private()).unwrap();
    assert_eq!(decoded(&token, &a2_public(), Algorithm::RS256), Ok(claims()));
}

#[test]
fn rs384_rs512_and_ps256_verify_from_n_and_e_and_only_as_themselves() {
    let pair = rsa_pair();
    let public = a2_public();
    let rsa_algorithms = [Algorithm::RS256, Algorithm::RS384, Algorithm::RS512, Algorithm::PS256];
    let cases: [(Algorithm, &str, &'static dyn RsaEncoding); 3] = [
        (Algorithm::RS384, "RS384", &RSA_PKCS1_SHA384),
        (Algorithm::RS512, "RS512", &RSA_PKCS1_SHA512),
        (Algorithm::PS256, "PS256", &RSA_PSS_SHA256),
    ];
    for (alg, name, padding) in cases {
        let (token, input, signature) = token_signed_by(name, |input| rsa_signed(&pair, padding, input));
        assert_eq!(decoded(&token, &public, alg), Ok(claims()), "{name}");
        // The same signature read as any other RSA algorithm does not verify.
        for other in rsa_algorithms.iter().filter(|&&other| other != alg) {
            assert!(!verify(&signature, input.as_bytes(), &public, *other).unwrap(), "{name} as {other:?}");
        }
    }
}

#[test]
fn es256_and_es384_verify_fresh_tokens_from_x_and_y() {
    for (alg, name, signing) in [
        (Algorithm::ES256, "ES256", &ECDSA_P256_SHA256_FIXED_SIGNING),
        (Algorithm::ES384, "ES384", &ECDSA_P384_SHA384_FIXED_SIGNING),
    ] {
        let (pair, public) = ec_pair(signing);
        let (token, input, signature) =
            token_signed_by(name, |input| pair.sign(&SystemRandom::new(), input).unwrap().as_ref().to_vec());
        assert_eq!(decoded(&token, &public, alg), Ok(claims()), "{name}");
        let other = if alg == Algorithm::ES256 { Algorithm::ES384 } else { Algorithm::ES256 };
        assert!(!verify(&signature, input.as_bytes(), &public, other).unwrap(), "{name} as {other:?}");
        let (_, stranger) = ec_pair(signing);
        assert_eq!(decoded(&token, &stranger, alg), Err(ErrorKind::InvalidSignature), "{name}");
    }
}

#[test]
fn a_token_signed_with_another_key_is_rejected() {
    let (ours, _) = ed_pair();
    let (_, theirs) = ed_pair();
    let token = encode(&Header::new(Algorithm::EdDSA), &claims(), &ours).unwrap();
    assert_eq!(decoded(&token, &theirs, Algorithm::EdDSA), Err(ErrorKind::InvalidSignature));

    // The RFC's RSA key signs; the GitHub App fixture's public key must not accept it.
    let token = encode(&Header::new(Algorithm::RS256), &claims(), &a2_private()).unwrap();
    let other_rsa = DecodingKey::from_rsa_pem(&fixture("github-app/public-key.pem")).unwrap();
    assert_eq!(decoded(&token, &other_rsa, Algorithm::RS256), Err(ErrorKind::InvalidSignature));

    let (_, other_p256) = ec_pair(&ECDSA_P256_SHA256_FIXED_SIGNING);
    assert!(!verify(A3_SIGNATURE, A3_SIGNING_INPUT.as_bytes(), &other_p256, Algorithm::ES256).unwrap());
}

#[test]
fn a_key_of_another_family_is_refused_before_any_signature() {
    let (ed_private, ed_public) = ed_pair();
    let rsa_public = a2_public();
    let p256_public = DecodingKey::from_ec_components(A3_X, A3_Y).unwrap();
    let refused = |signature: &str, input: &str, key: &DecodingKey, alg| {
        verify(signature, input.as_bytes(), key, alg).map_err(|err| err.into_kind())
    };
    // An RSA signature checked against an Ed25519 or EC key, and the other way round.
    assert_eq!(refused(A2_SIGNATURE, A2_SIGNING_INPUT, &ed_public, Algorithm::RS256), Err(ErrorKind::InvalidKeyFormat));
    assert_eq!(
        refused(A2_SIGNATURE, A2_SIGNING_INPUT, &p256_public, Algorithm::RS256),
        Err(ErrorKind::InvalidKeyFormat)
    );
    assert_eq!(
        refused(A3_SIGNATURE, A3_SIGNING_INPUT, &rsa_public, Algorithm::ES256),
        Err(ErrorKind::InvalidKeyFormat)
    );
    assert_eq!(
        refused(RFC8037_SIGNATURE, RFC8037_SIGNING_INPUT, &rsa_public, Algorithm::EdDSA),
        Err(ErrorKind::InvalidKeyFormat)
    );
    // Signing goes through the same check (jsonwebtoken's `encode` also checks, first).
    let as_rsa = sign(b"x.y", &ed_private, Algorithm::RS256).map_err(|err| err.into_kind());
    assert_eq!(as_rsa, Err(ErrorKind::InvalidKeyFormat));
    let as_ed = sign(b"x.y", &a2_private(), Algorithm::EdDSA).map_err(|err| err.into_kind());
    assert_eq!(as_ed, Err(ErrorKind::InvalidKeyFormat));
}

#[test]
fn hmac_and_every_algorithm_not_served_are_refused() {
    install();
    let secret = EncodingKey::from_secret(b"a shared secret");
    for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
        let signed = encode(&Header::new(alg), &claims(), &secret).map_err(|err| err.into_kind());
        assert_eq!(signed, Err(ErrorKind::UnsupportedAlgorithm), "{alg:?}");
    }
    // The classic confusion: an HS256 token whose secret is the RSA public key.
    let public_pem = fixture("jwt/rfc7515-a2-rsa-public.pem");
    let mac_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &public_pem);
    let (token, _, _) = token_signed_by("HS256", |input| ring::hmac::sign(&mac_key, input).as_ref().to_vec());
    let as_secret = DecodingKey::from_secret(&public_pem);
    assert_eq!(decoded(&token, &as_secret, Algorithm::HS256), Err(ErrorKind::UnsupportedAlgorithm));
    assert_eq!(decoded(&token, &a2_public(), Algorithm::HS256), Err(ErrorKind::UnsupportedAlgorithm));

    // Signing: EdDSA and RS256 only.
    let p256_private = EncodingKey::from_ec_pem(&fixture("jwt/rfc7515-a3-p256-private.pem")).unwrap();
    let unserved_signing = [
        (&p256_private, Algorithm::ES256),
        (&p256_private, Algorithm::ES384),
        (&a2_private(), Algorithm::RS384),
        (&a2_private(), Algorithm::RS512),
        (&a2_private(), Algorithm::PS256),
        (&a2_private(), Algorithm::PS512),
    ];
    for (key, alg) in unserved_signing {
        let signed = sign(b"x.y", key, alg).map_err(|err| err.into_kind());
        assert_eq!(signed, Err(ErrorKind::UnsupportedAlgorithm), "{alg:?}");
    }
    // Verifying: PS384 and PS512 are not among the listed ones.
    for alg in [Algorithm::PS384, Algorithm::PS512] {
        let checked = verify(A2_SIGNATURE, A2_SIGNING_INPUT.as_bytes(), &a2_public(), alg);
        assert_eq!(checked.map_err(|err| err.into_kind()), Err(ErrorKind::UnsupportedAlgorithm), "{alg:?}");
    }
}

#[test]
fn jwks_made_from_the_rfc_keys_carry_the_rfc_values() {
    let rsa = Jwk::from_encoding_key(&a2_private(), Algorithm::RS256).unwrap();
    let AlgorithmParameters::RSA(rsa) = rsa.algorithm else { panic!("not an RSA JWK: {rsa:?}") };
    assert_eq!((rsa.n.as_str(), rsa.e.as_str()), (A2_N, A2_E));

    let p256_private = EncodingKey::from_ec_pem(&fixture("jwt/rfc7515-a3-p256-private.pem")).unwrap();
    let ec = Jwk::from_encoding_key(&p256_private, Algorithm::ES256).unwrap();
    let AlgorithmParameters::EllipticCurve(ec) = ec.algorithm else { panic!("not an EC JWK: {ec:?}") };
    assert_eq!((ec.curve, ec.x.as_str(), ec.y.as_str()), (EllipticCurve::P256, A3_X, A3_Y));

    let ed_private = EncodingKey::from_ed_pem(&fixture("jwt/rfc8037-a1-ed25519-private.pem")).unwrap();
    let ed = Jwk::from_encoding_key(&ed_private, Algorithm::EdDSA).unwrap();
    assert_eq!(ed.thumbprint(ThumbprintHash::SHA256).unwrap(), RFC8037_THUMBPRINT);
    let AlgorithmParameters::OctetKeyPair(ed) = ed.algorithm else { panic!("not an OKP JWK: {ed:?}") };
    assert_eq!(ed.x, RFC8037_X);

    // ring cannot take an RSA public key's DER apart: an error, not jsonwebtoken's panic.
    let from_pem = DecodingKey::from_rsa_pem(&fixture("jwt/rfc7515-a2-rsa-public.pem")).unwrap();
    let jwk = Jwk::from_decoding_key(&from_pem, Some(Algorithm::RS256)).map_err(|err| err.into_kind());
    assert!(matches!(jwk, Err(ErrorKind::Provider(_))), "{jwk:?}");
}

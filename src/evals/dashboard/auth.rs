//! Dashboard authentication and request hygiene (docs/evals-dashboard.md, plus DNS-rebinding and
//! framing defences).
//!
//! Invariants: the token is compared as SHA-256 digests in constant time, so neither
//! timing nor length leaks; it is accepted only in `Authorization: Bearer` or as the
//! login form's field, never in a query string; a browser session is an HttpOnly,
//! SameSite=Strict cookie holding an expiry signed with HMAC-SHA256 under a key derived
//! from the token (changing the token ends every session); without a token on a
//! loopback bind, requests must name a loopback Host and Origin (DNS rebinding); a token
//! is at least [`MIN_TOKEN_CHARS`] characters, and wrong tokens are throttled per client
//! address ([`FAILURES_PER_WINDOW`] in [`FAILURE_WINDOW_MS`], then 429 with `Retry-After`
//! for every token from that address, right or wrong, until the window ends).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use ring::hmac;
use subtle::ConstantTimeEq;

use super::DashState;
use crate::http::cookies::{bearer, cookie_value};
use crate::http::security::set_security_headers;
use crate::model::sha256;

pub const COOKIE: &str = "sightline_dashboard";
/// Browser sessions last 12 hours.
pub const SESSION_SECS: i64 = 12 * 3600;

/// The shortest token the dashboard accepts: a one-character token is guessed at once.
pub const MIN_TOKEN_CHARS: usize = 16;
/// Wrong tokens one client address may present per window.
pub const FAILURES_PER_WINDOW: u32 = 10;
pub const FAILURE_WINDOW_MS: i64 = 15 * 60_000;
/// Addresses remembered at most; past it, ended windows are dropped (then the oldest).
const MAX_ADDRESSES: usize = 10_000;

/// Whether `token` may be the dashboard's: at least [`MIN_TOKEN_CHARS`] characters.
pub fn check_token(token: &str) -> Result<(), String> {
    let chars = token.chars().count();
    if chars < MIN_TOKEN_CHARS {
        return Err(format!(
            "the dashboard token has {chars} characters; use at least {MIN_TOKEN_CHARS} \
             (for example the output of `openssl rand -hex 24`)"
        ));
    }
    Ok(())
}

/// The configured token, kept only as what is needed to check it, and the wrong
/// tokens each address presented lately.
pub struct TokenAuth {
    digest: [u8; 32],
    session_key: hmac::Key,
    /// Per address: when its window started and the wrong tokens in it.
    failures: Mutex<HashMap<IpAddr, (i64, u32)>>,
}

impl TokenAuth {
    pub fn new(token: &str) -> TokenAuth {
        TokenAuth {
            digest: sha256(token.as_bytes()),
            session_key: hmac::Key::new(
                hmac::HMAC_SHA256,
                &sha256(format!("sightline-dashboard-session\0{token}").as_bytes()),
            ),
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// `Err(seconds)` while `address` is past its wrong tokens for the window.
    pub fn throttled(&self, address: IpAddr, now_ms: i64) -> Result<(), u64> {
        let Ok(failures) = self.failures.lock() else { return Ok(()) };
        match failures.get(&address) {
            Some(&(started_ms, count)) if now_ms - started_ms < FAILURE_WINDOW_MS && count >= FAILURES_PER_WINDOW => {
                Err(((started_ms + FAILURE_WINDOW_MS - now_ms) as u64).div_ceil(1000))
            }
            _ => Ok(()),
        }
    }

    /// Counts a wrong token from `address`.
    pub fn failed(&self, address: IpAddr, now_ms: i64) {
        let Ok(mut failures) = self.failures.lock() else { return };
        if failures.len() >= MAX_ADDRESSES && !failures.contains_key(&address) {
            failures.retain(|_, (started_ms, _)| now_ms - *started_ms < FAILURE_WINDOW_MS);
            if failures.len() >= MAX_ADDRESSES
                && let Some(oldest) = failures.iter().min_by_key(|(_, (started_ms, _))| *started_ms).map(|(a, _)| *a)
            {
                failures.remove(&oldest);
            }
        }
        let window = failures.entry(address).or_insert((now_ms, 0));
        if now_ms - window.0 >= FAILURE_WINDOW_MS {
            *window = (now_ms, 0);
        }
        window.1 += 1;
    }

    /// Checks a presented token under the throttle: `Err(seconds)` while its address
    /// must wait (the token is not even compared), else whether it matches (a wrong one
    /// is counted).
    pub fn try_token(&self, candidate: &str, address: IpAddr, now_ms: i64) -> Result<bool, u64> {
        self.throttled(address, now_ms)?;
        let matches = self.token_matches(candidate);
        if !matches {
            self.failed(address, now_ms);
        }
        Ok(matches)
    }

    /// Constant-time check of a presented token: both sides hashed first.
    pub fn token_matches(&self, candidate: &str) -> bool {
        bool::from(sha256(candidate.as_bytes()).ct_eq(&self.digest))
    }

    /// A cookie value `v1.<expiry>.<hex hmac>`.
    pub fn session_cookie(&self, now_s: i64) -> String {
        let expiry = now_s + SESSION_SECS;
        let tag = hmac::sign(&self.session_key, format!("v1.{expiry}").as_bytes());
        format!("v1.{expiry}.{}", hex::encode(tag.as_ref()))
    }

    pub fn session_valid(&self, value: &str, now_s: i64) -> bool {
        let mut parts = value.splitn(3, '.');
        let (Some("v1"), Some(expiry), Some(tag)) = (parts.next(), parts.next(), parts.next()) else { return false };
        let Ok(expiry_s) = expiry.parse::<i64>() else { return false };
        let Ok(tag) = hex::decode(tag) else { return false };
        expiry_s > now_s && hmac::verify(&self.session_key, format!("v1.{expiry}").as_bytes(), &tag).is_ok()
    }
}

pub fn now_s() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

pub fn now_ms() -> i64 {
    (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

/// Whether the request carries valid credentials (always true without a token), or
/// `Err(seconds)` when its bearer token comes from an address that must wait.
pub fn authenticated(state: &DashState, headers: &HeaderMap, address: IpAddr) -> Result<bool, u64> {
    let Some(auth) = &state.auth else { return Ok(true) };
    if let Some(token) = bearer(headers) {
        return auth.try_token(token, address, now_ms());
    }
    Ok(cookie_value(headers, COOKIE).is_some_and(|v| auth.session_valid(v, now_s())))
}

/// The client's address (the listener records it on every request).
pub fn peer_of(request: &Request) -> IpAddr {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip())
        .unwrap_or(IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED))
}

/// 429 with `Retry-After`: this address presented too many wrong tokens.
pub fn too_many(retry_after_secs: u64) -> Response {
    let response = (
        StatusCode::TOO_MANY_REQUESTS,
        axum::Json(serde_json::json!({"error": {"code": "too_many_requests", "message": format!(
            "too many wrong tokens from this address; retry in {retry_after_secs} seconds"
        )}})),
    )
        .into_response();
    crate::http::errors::with_retry_after(response, Some(retry_after_secs))
}

/// A Host (or Origin authority) naming this machine literally: `localhost`, a
/// 127.0.0.0/8 address or `[::1]`, with an optional port. Any other name, however it
/// starts (`127.attacker.example`, `127.0.0.1.nip.io`), is a DNS name an attacker
/// may point at 127.0.0.1.
fn is_loopback_host(host: &str) -> bool {
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((address, after)) => (address, after.strip_prefix(':')),
            None => return false,
        },
        None => match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        },
    };
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit()));
    let name_ok = name.eq_ignore_ascii_case("localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
            && (host.starts_with('[') || !name.contains(':'));
    port_ok && name_ok
}

/// Refuses requests whose Host (or Origin) is not loopback while the dashboard is
/// bound to loopback without a token: a DNS-rebinding page would otherwise read it.
fn rebinding_refused(state: &DashState, headers: &HeaderMap) -> bool {
    if !state.check_loopback_host {
        return false;
    }
    let host_ok = headers.get(header::HOST).and_then(|h| h.to_str().ok()).is_some_and(is_loopback_host);
    let origin_ok = match headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
        None => true,
        Some(origin) => origin.split_once("://").is_some_and(|(_, rest)| is_loopback_host(rest)),
    };
    !(host_ok && origin_ok)
}

/// Paths reachable without credentials.
fn is_public(path: &str) -> bool {
    matches!(path, "/login" | "/health") || path.starts_with("/static/")
}

/// Host check, authentication, security headers and (without a token) access log.
pub async fn guard(State(state): State<Arc<DashState>>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let authentication = match is_public(&path) {
        true => Ok(true),
        false => authenticated(&state, request.headers(), peer_of(&request)),
    };
    let mut response = if rebinding_refused(&state, request.headers()) {
        (StatusCode::MISDIRECTED_REQUEST, "this dashboard answers only to localhost, 127.0.0.1 or [::1]\n")
            .into_response()
    } else if let Err(retry_after_secs) = authentication {
        too_many(retry_after_secs)
    } else if authentication == Ok(true) {
        let method = request.method().clone();
        let started = std::time::Instant::now();
        let response = next.run(request).await;
        // With a token the access log stays off: URLs could carry secrets.
        if state.auth.is_none() {
            tracing::info!(%method, %path, status = response.status().as_u16(), ms = started.elapsed().as_millis() as u64, "request");
        }
        response
    } else if path.starts_with("/api/") || path.contains("/export/") || bearer(request.headers()).is_some() {
        let mut response = (
            StatusCode::UNAUTHORIZED,
            axum::Json(serde_json::json!({"error": {"code": "unauthorized", "message": "send Authorization: Bearer <token>, or sign in at /login"}})),
        )
            .into_response();
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        response
    } else {
        let target = request.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_else(|| "/".into());
        Redirect::to(&format!("/login?next={}", super::params::encode(&target))).into_response()
    };
    set_security_headers(response.headers_mut(), false);
    response
}

/// Only local paths may be redirect targets after login
/// ([`crate::http::redirect::local_redirect_target`], shared with the web app's sign-in).
pub fn safe_next(next: Option<&str>) -> String {
    crate::http::redirect::safe_next(next, "/")
}

/// The Set-Cookie value for a new session; `Secure` when the request came over HTTPS
/// (directly or through a proxy that says so).
pub fn set_cookie(value: &str, headers: &HeaderMap) -> String {
    let secure = headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()) == Some("https");
    format!(
        "{COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={SESSION_SECS}{}",
        if secure { "; Secure" } else { "" }
    )
}

pub fn clear_cookie() -> String {
    format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_by_digest() {
        let auth = TokenAuth::new("s3cret-token");
        assert!(auth.token_matches("s3cret-token"));
        assert!(!auth.token_matches("s3cret-toke"));
        assert!(!auth.token_matches(""));
    }

    #[test]
    fn short_tokens_are_refused_and_wrong_ones_throttled_per_address() {
        assert!(check_token("x").unwrap_err().contains("has 1 characters"));
        assert!(check_token("0123456789abcdef").is_ok());
        let auth = TokenAuth::new("0123456789abcdef");
        let (guesser, other): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        for _ in 0..FAILURES_PER_WINDOW {
            assert_eq!(auth.try_token("guess", guesser, 0), Ok(false));
        }
        assert_eq!(auth.try_token("0123456789abcdef", guesser, 1_000), Err(899), "even the right one waits");
        assert_eq!(auth.try_token("0123456789abcdef", other, 1_000), Ok(true), "another address is not held up");
        assert_eq!(auth.try_token("0123456789abcdef", guesser, FAILURE_WINDOW_MS), Ok(true), "the window ends");
    }

    #[test]
    fn session_cookies_expire_and_resist_tampering() {
        let auth = TokenAuth::new("t");
        let cookie = auth.session_cookie(1000);
        assert!(auth.session_valid(&cookie, 1001));
        assert!(!auth.session_valid(&cookie, 1000 + SESSION_SECS));
        let forged = cookie.replacen(&format!("{}", 1000 + SESSION_SECS), &format!("{}", 9_000_000_000i64), 1);
        assert!(!auth.session_valid(&forged, 1001));
        assert!(!TokenAuth::new("other").session_valid(&cookie, 1001), "another token's sessions are invalid");
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for ok in ["localhost", "localhost:8700", "127.0.0.1:1", "[::1]:8700", "127.5.0.1"] {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8700",
            "localhost.evil.example",
            "10.0.0.1",
            "127.attacker.example",
            "127.0.0.1.nip.io",
            "127.0.0.1.nip.io:8700",
            "127.0.0.1:80x",
            "[::1",
            "::1",
            "",
        ] {
            assert!(!is_loopback_host(bad), "{bad}");
        }
    }

    #[test]
    fn redirects_stay_local() {
        assert_eq!(safe_next(Some("/run/x?page=2")), "/run/x?page=2");
        for bad in ["//evil.example", "https://evil.example", "\\\\evil", "javascript:alert(1)", "/\t/evil.example"] {
            assert_eq!(safe_next(Some(bad)), "/", "{bad}");
        }
    }
}

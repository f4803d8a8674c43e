//! Credentials in requests: the bearer token of `Authorization`, and cookies from
//! every `Cookie` header (HTTP/2 sends one per cookie). One reading for the web app's
//! sign-in, its CSRF guard and the eval dashboard.

use axum::http::HeaderMap;
use axum::http::header::{AUTHORIZATION, COOKIE, SET_COOKIE};
use axum::response::Response;

/// The token of `Authorization: Bearer <token>` (scheme case-insensitive), if present
/// and not empty.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// The value of cookie `name` from every `Cookie` header of the request; an empty
/// value counts as absent.
pub fn cookie_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
        .filter(|value| !value.is_empty())
}

/// Adds a `Set-Cookie` header to a response (alongside any already there).
pub fn with_cookie(mut response: Response, cookie: &str) -> Response {
    if let Ok(value) = axum::http::HeaderValue::from_str(cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn cookies_are_read_from_every_header_and_empty_ones_are_absent() {
        let mut headers = HeaderMap::new();
        headers.append(COOKIE, HeaderValue::from_static("a=1; empty="));
        headers.append(COOKIE, HeaderValue::from_static("b=2"));
        assert_eq!(cookie_value(&headers, "a"), Some("1"));
        assert_eq!(cookie_value(&headers, "b"), Some("2"));
        assert_eq!(cookie_value(&headers, "empty"), None);
        assert_eq!(cookie_value(&headers, "c"), None);
    }

    #[test]
    fn bearer_needs_the_scheme_and_a_token() {
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, HeaderValue::from_static(value));
            headers
        };
        assert_eq!(bearer(&with("Bearer abc")), Some("abc"));
        assert_eq!(bearer(&with("bearer  abc ")), Some("abc"));
        assert_eq!(bearer(&with("Bearer ")), None);
        assert_eq!(bearer(&with("Basic abc")), None);
    }
}

/// Whether the request's `Host` names this machine's loopback (`localhost`, `127.x`,
/// `[::1]`), where plain HTTP never leaves the machine. No `Host` counts as not.
pub fn host_is_loopback(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(axum::http::header::HOST).and_then(|host| host.to_str().ok()) else { return false };
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|address| address.is_loopback())
}

#[cfg(test)]
mod loopback_tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_told_from_the_network() {
        let with = |host: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(axum::http::header::HOST, host.parse().unwrap());
            host_is_loopback(&headers)
        };
        for host in ["localhost", "localhost:8080", "127.0.0.1:3000", "127.1.2.3", "[::1]:8080", "LOCALHOST"] {
            assert!(with(host), "{host}");
        }
        for host in
            ["sightline.internal", "sightline.internal:80", "10.0.0.5:8080", "[2001:db8::1]:80", "localhost.evil"]
        {
            assert!(!with(host), "{host}");
        }
        assert!(!host_is_loopback(&HeaderMap::new()));
    }
}

//! Security headers for every response of every listener, the CSRF decision for
//! state-changing requests, and the client address behind a local proxy.
//!
//! CSRF (ASVS 5.0 3.5.1): a request that is not GET, HEAD or OPTIONS is refused with
//! 403 unless the browser says it comes from our own pages — `Sec-Fetch-Site` of
//! `same-origin` or `none` (typed by the user), or, from browsers without fetch
//! metadata, an `Origin` equal to our public origin or to the request's own host. A
//! request with neither header is not from a modern browser; it is allowed only when
//! it carries no sign-in cookie (API clients use `Authorization: Bearer`, which a
//! cross-site page cannot send).

use std::net::{IpAddr, SocketAddr};

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The one Content-Security-Policy: no script, style or frame from anywhere else, and
/// no inline style (the one stylesheet is `http::assets`).
pub const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; \
                       frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

fn header_text<'a>(headers: &'a HeaderMap, name: &header::HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// Whether a state-changing request may proceed.
pub fn csrf_allows(headers: &HeaderMap, public_origin: &str, has_cookie: bool) -> bool {
    if let Some(site) = header_text(headers, &header::HeaderName::from_static("sec-fetch-site")) {
        return site == "same-origin" || site == "none";
    }
    if let Some(origin) = header_text(headers, &header::ORIGIN) {
        let own_host = header_text(headers, &header::HOST)
            .is_some_and(|host| origin.split_once("://").is_some_and(|(_, authority)| authority == host));
        return origin == public_origin || own_host;
    }
    !has_cookie
}

/// The answer to a request [`csrf_allows`] refused.
pub fn csrf_refusal() -> Response {
    (
        StatusCode::FORBIDDEN,
        axum::Json(serde_json::json!({"error": {
            "code": "cross_site_request",
            "message": "cross-site request refused: the Origin / Sec-Fetch-Site headers do not name this site",
        }})),
    )
        .into_response()
}

/// Sets the security headers of a response; HSTS only when served over HTTPS. A
/// response without its own `Cache-Control` gets `no-store`: pages and API answers
/// carry personal data and must never reach a shared cache.
pub fn set_security_headers(headers: &mut HeaderMap, https: bool) {
    let cacheable = headers.contains_key(header::CACHE_CONTROL);
    let mut set = |name: &'static str, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set("content-security-policy", CSP);
    set("x-frame-options", "DENY");
    set("x-content-type-options", "nosniff");
    set("referrer-policy", "same-origin");
    set("cross-origin-opener-policy", "same-origin");
    set("cross-origin-resource-policy", "same-origin");
    set("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=()");
    if https {
        set("strict-transport-security", "max-age=63072000; includeSubDomains");
    }
    if !cacheable {
        set("cache-control", "no-store");
    }
}

/// The client's address for throttling: the TCP peer, or — when the peer is one of the
/// configured trusted proxies (`listen.trusted_proxies`) — the last address it appended
/// to `X-Forwarded-For`. From anyone else the header is ignored: a client could name any
/// address there.
///
/// The proxy's entry is the last of the last `X-Forwarded-For` line: a proxy that adds
/// its own header line (HAProxy's `option forwardfor`) leaves a client's forged line
/// first, so the first line is the client's to choose.
pub fn client_ip(headers: &HeaderMap, peer: SocketAddr, trusted_proxies: &[IpAddr]) -> IpAddr {
    if trusted_proxies.contains(&peer.ip())
        && let Some(forwarded) = headers.get_all("x-forwarded-for").iter().next_back()
        && let Ok(forwarded) = forwarded.to_str()
        && let Some(last) = forwarded.rsplit(',').next()
        && let Ok(ip) = last.trim().parse::<IpAddr>()
    {
        return ip;
    }
    peer.ip()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    const ORIGIN: &str = "https://sightline.example.com";

    #[test]
    fn fetch_metadata_decides_when_present() {
        assert!(csrf_allows(&headers(&[("sec-fetch-site", "same-origin")]), ORIGIN, true));
        assert!(csrf_allows(&headers(&[("sec-fetch-site", "none")]), ORIGIN, true));
        assert!(!csrf_allows(&headers(&[("sec-fetch-site", "cross-site")]), ORIGIN, true));
        assert!(!csrf_allows(&headers(&[("sec-fetch-site", "same-site")]), ORIGIN, false));
        assert!(
            !csrf_allows(&headers(&[("sec-fetch-site", "cross-site"), ("origin", ORIGIN)]), ORIGIN, true),
            "fetch metadata wins over a matching Origin"
        );
    }

    #[test]
    fn origin_must_be_ours_or_the_requests_own_host() {
        assert!(csrf_allows(&headers(&[("origin", ORIGIN)]), ORIGIN, true));
        assert!(csrf_allows(
            &headers(&[("origin", "http://127.0.0.1:3000"), ("host", "127.0.0.1:3000")]),
            ORIGIN,
            true
        ));
        assert!(!csrf_allows(
            &headers(&[("origin", "https://evil.example"), ("host", "sightline.example.com")]),
            ORIGIN,
            true
        ));
        assert!(!csrf_allows(&headers(&[("origin", "null")]), ORIGIN, false));
    }

    #[test]
    fn without_browser_headers_only_cookieless_requests_pass() {
        assert!(csrf_allows(&headers(&[]), ORIGIN, false));
        assert!(!csrf_allows(&headers(&[]), ORIGIN, true));
    }

    /// A client's own `X-Forwarded-For` line, before the proxy's, names no address.
    #[test]
    fn client_ip_reads_the_proxys_own_line_when_there_are_two() {
        let mut two = HeaderMap::new();
        two.append("x-forwarded-for", HeaderValue::from_static("10.0.0.1"));
        two.append("x-forwarded-for", HeaderValue::from_static("203.0.113.9"));
        let proxy: IpAddr = "127.0.0.1".parse().unwrap();
        let ip = client_ip(&two, SocketAddr::new(proxy, 5000), &[proxy]);
        assert_eq!(ip, "203.0.113.9".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn client_ip_trusts_forwarded_for_only_from_a_configured_proxy() {
        let forwarded = headers(&[("x-forwarded-for", "203.0.113.9, 198.51.100.7")]);
        let proxy: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(client_ip(&forwarded, "127.0.0.1:5000".parse().unwrap(), &[proxy]).to_string(), "198.51.100.7");
        assert_eq!(client_ip(&forwarded, "127.0.0.1:5000".parse().unwrap(), &[]).to_string(), "127.0.0.1");
        assert_eq!(client_ip(&forwarded, "192.0.2.1:5000".parse().unwrap(), &[proxy]).to_string(), "192.0.2.1");
    }
}

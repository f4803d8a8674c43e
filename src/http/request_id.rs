//! One id per request, so an operator can follow one slow or failed request: it is the
//! `request` span's `id` (every log line the request writes carries it), the answer's
//! `X-Request-Id` header, and the "request id" an error page and an error's JSON show a
//! person to quote. A trusted proxy's own `X-Request-Id` is kept, so the proxy's log
//! and ours name the request alike.
//!
//! Invariant: the id is 16 lower-case hex digits of our own, or a proxy's id of at most
//! 64 characters of `[A-Za-z0-9._-]` (anything else a client sends is ignored), so it is
//! safe in a header, a log line and a page.

use std::net::IpAddr;

use axum::http::{HeaderMap, HeaderValue};

pub const HEADER: &str = "x-request-id";

tokio::task_local! {
    static CURRENT: RequestId;
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestId(String);

impl RequestId {
    /// The id of a request from `peer`: a trusted proxy's, or a new one.
    pub fn of(headers: &HeaderMap, peer: IpAddr, trusted_proxies: &[IpAddr]) -> RequestId {
        let forwarded = trusted_proxies
            .contains(&peer)
            .then(|| headers.get(HEADER).and_then(|value| value.to_str().ok()))
            .flatten()
            .filter(|id| is_safe(id));
        match forwarded {
            Some(id) => RequestId(id.to_string()),
            None => RequestId(format!("{:016x}", fastrand::u64(..))),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn header_value(&self) -> HeaderValue {
        HeaderValue::from_str(&self.0).expect("a request id is header-safe")
    }

    /// Runs `future` with this id as the current request's.
    pub async fn scope<F: std::future::Future>(self, future: F) -> F::Output {
        CURRENT.scope(self, future).await
    }
}

fn is_safe(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// The id of the request being answered, where there is one (not in a job or a command).
pub fn current() -> Option<String> {
    CURRENT.try_with(|id| id.0.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxys_id_is_kept_only_from_a_trusted_proxy_and_only_when_safe() {
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(HEADER, HeaderValue::from_static("edge-42.a_b"));
        assert_eq!(RequestId::of(&headers, proxy, &[proxy]).as_str(), "edge-42.a_b");
        let other = RequestId::of(&headers, "10.0.0.2".parse().unwrap(), &[proxy]);
        assert_eq!(other.as_str().len(), 16, "{other:?}");
        headers.insert(HEADER, HeaderValue::from_static("a b<script>"));
        assert_ne!(RequestId::of(&headers, proxy, &[proxy]).as_str(), "a b<script>");
    }

    #[tokio::test]
    async fn the_current_id_is_the_scopes() {
        assert_eq!(current(), None);
        let id = RequestId("0123456789abcdef".into());
        assert_eq!(id.clone().scope(async { current() }).await.as_deref(), Some("0123456789abcdef"));
    }
}

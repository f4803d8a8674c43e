//! Conditional requests (RFC 9110 §13): whether a client's cached copy is current.

use axum::http::{HeaderMap, header};

/// Whether `If-None-Match` names `etag` (or `*`). The weak comparison applies
/// (RFC 9110 §13.1.2), so a `W/` prefix is ignored.
pub fn none_match_hits(headers: &HeaderMap, etag: &str) -> bool {
    headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(',').map(|tag| tag.trim().trim_start_matches("W/")).any(|tag| tag == etag || tag == "*")
    })
}

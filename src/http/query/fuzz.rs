//! Generated query strings and credential headers (`fuzz_*`, see `model::arbitrary`):
//! any bytes, percent-encoded or not, in a page's query, an `Authorization` or a
//! `Cookie` header. A query is read or refused with a 400 that names a parameter; a
//! credential is found or absent, and what is found is part of what was sent.

use axum::http::{HeaderMap, HeaderValue, Request};
use proptest::prelude::*;
use serde::Deserialize;

use super::read;
use crate::http::cookies::{bearer, cookie_value};
use crate::http::errors::AppError;

/// The parameters of a typical page (a period, a sort, a page number, a search).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct PageParams {
    days: Option<u32>,
    sort: Option<String>,
    page: Option<u64>,
    q: Option<String>,
    from: Option<i64>,
}

fn query_text() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        Just("days=".to_string()),
        Just("sort=".to_string()),
        Just("page=".to_string()),
        Just("q=".to_string()),
        Just("from=".to_string()),
        Just("&".to_string()),
        Just("=".to_string()),
        Just("%".to_string()),
        Just("%FF%FE".to_string()),
        Just("%00".to_string()),
        Just("+".to_string()),
        Just("days[]=1".to_string()),
        "[0-9]{0,25}",
        "-[0-9]{1,5}",
        "[a-z_]{1,8}",
        "[ -~]{0,12}",
    ];
    prop::collection::vec(part, 0..10).prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn fuzz_query_strings(query in query_text()) {
        let encoded: String = query
            .bytes()
            .map(|b| if b.is_ascii_graphic() && b != b'#' { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect();
        let Ok(request) = Request::builder().uri(format!("/me?{encoded}")).body(()) else { return Ok(()) };
        let (parts, ()) = request.into_parts();
        match read::<PageParams>(&parts) {
            Ok(_) => {}
            Err(AppError::BadRequest { field: Some(field), message }) => {
                prop_assert!(!field.is_empty() && !message.is_empty(), "{field:?} {message:?}");
            }
            Err(other) => prop_assert!(false, "a query is read or a 400 naming a parameter, not {other:?}"),
        }
    }

    #[test]
    fn fuzz_credential_headers(authorization in prop::collection::vec(any::<u8>(), 0..80), cookies in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..60), 0..3), name in "[a-z_]{1,12}") {
        let mut headers = HeaderMap::new();
        if let Ok(value) = HeaderValue::from_bytes(&authorization) {
            headers.insert(axum::http::header::AUTHORIZATION, value);
        }
        for cookie in &cookies {
            if let Ok(value) = HeaderValue::from_bytes(cookie) {
                headers.append(axum::http::header::COOKIE, value);
            }
        }
        if let Some(token) = bearer(&headers) {
            prop_assert!(!token.is_empty() && String::from_utf8_lossy(&authorization).contains(token));
        }
        if let Some(value) = cookie_value(&headers, &name) {
            prop_assert!(!value.is_empty());
            prop_assert!(cookies.iter().any(|c| String::from_utf8_lossy(c).contains(value)));
        }
    }
}

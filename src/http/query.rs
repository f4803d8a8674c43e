//! Query strings read strictly: a parameter the route does not take is a 400 naming
//! it, as docs/access.md promises, in the route's own error family (an HTML page for
//! [`StrictPageQuery`], JSON for [`StrictQuery`]), never axum's plain-text rejection.
//!
//! Invariant: the parameters' type decides what is known (`#[serde(deny_unknown_fields)]`
//! on it); this module only names the parameter that was refused.

use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::errors::{AppError, PageError};

/// The query as `T`, or a 400 naming the parameter that could not be read.
fn read<T: DeserializeOwned>(parts: &Parts) -> Result<T, AppError> {
    Query::<T>::try_from_uri(&parts.uri).map(|Query(value)| value).map_err(|rejection| {
        let text = rejection.body_text();
        // serde's words: "unknown field `x`, expected one of ..." or "... field `x` ...".
        let named = text.split('`').nth(1).unwrap_or("query").to_string();
        if text.contains("unknown field") {
            let known = text.split_once("expected ").map_or(String::new(), |(_, known)| known.replace('`', ""));
            if named.is_empty() {
                // `?=x` or `?&=`: a parameter without a name.
                return AppError::bad_request(
                    "query",
                    format!("a parameter with no name is not one this page takes ({known})"),
                );
            }
            AppError::bad_request(named.clone(), format!("{named} must be a parameter this page takes ({known})"))
        } else {
            AppError::bad_request(named, text)
        }
    })
}

/// A page's query: unknown parameters answer the HTML error page.
pub struct StrictPageQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for StrictPageQuery<T> {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        read(parts).map(StrictPageQuery).map_err(PageError)
    }
}

/// An API route's query: unknown parameters answer JSON naming them.
pub struct StrictQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for StrictQuery<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        read(parts).map(StrictQuery)
    }
}

#[cfg(test)]
mod fuzz;

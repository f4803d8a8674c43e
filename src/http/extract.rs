//! The extractors handlers use for paths, query strings, forms and JSON bodies: axum's,
//! with their rejections answered through [`AppError`] (JSON naming the problem on API
//! routes, the product's HTML error page on pages) instead of axum's plain text.
//!
//! Invariant: a handler never sees axum's rejection types; every malformed request
//! gets the same error family whatever part of it was wrong. The status axum chose is
//! kept (400, 413, 415, 422), so clients see the same codes as before.

use axum::extract::rejection::{FormRejection, JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequest, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::errors::{AppError, PageError};

/// Paths whose clients read JSON: the API, OAuth and ingest routes.
pub fn answers_json(path: &str) -> bool {
    ["/api/", "/oauth/", "/v1/"].iter().any(|prefix| path.starts_with(prefix))
}

/// A rejected request part, answered as JSON or as a page by the request's path.
pub struct Rejected {
    error: AppError,
    page: bool,
}

impl Rejected {
    fn new(path: &str, status: StatusCode, part: &str, text: String) -> Rejected {
        let error = match status {
            // axum buffers the body and words our deadline's error into its rejection.
            _ if text.contains(super::body_deadline::TIMED_OUT) => AppError::TimedOut(text),
            StatusCode::PAYLOAD_TOO_LARGE => AppError::TooLarge(text),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => AppError::UnsupportedEncoding(text),
            StatusCode::UNPROCESSABLE_ENTITY => AppError::Invalid { parameter: part.to_string(), message: text },
            _ => AppError::bad_request(part, text),
        };
        Rejected { error, page: !answers_json(path) }
    }
}

impl IntoResponse for Rejected {
    fn into_response(self) -> Response {
        if self.page { PageError(self.error).into_response() } else { self.error.into_response() }
    }
}

/// The route's path parameters as `T`.
pub struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = Rejected;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(Path(value)),
            Err(rejection) => Err(path_rejected(parts.uri.path(), rejection)),
        }
    }
}

fn path_rejected(path: &str, rejection: PathRejection) -> Rejected {
    Rejected::new(path, rejection.status(), "path", rejection.body_text())
}

/// The query string as `T` (unknown parameters are ignored; `super::query` refuses them).
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = Rejected;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Query(value)),
            Err(rejection) => Err(query_rejected(parts.uri.path(), rejection)),
        }
    }
}

fn query_rejected(path: &str, rejection: QueryRejection) -> Rejected {
    Rejected::new(path, rejection.status(), "query", rejection.body_text())
}

/// A form body as `T`.
pub struct Form<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Form<T> {
    type Rejection = Rejected;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let path = request.uri().path().to_string();
        match axum::Form::<T>::from_request(request, state).await {
            Ok(axum::Form(value)) => Ok(Form(value)),
            Err(rejection) => Err(form_rejected(&path, rejection)),
        }
    }
}

fn form_rejected(path: &str, rejection: FormRejection) -> Rejected {
    Rejected::new(path, rejection.status(), "form", rejection.body_text())
}

/// A JSON body as `T`; as a response, `T` serialised.
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = Rejected;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let path = request.uri().path().to_string();
        match <axum::Json<T> as FromRequest<S>>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(Json(value)),
            Err(rejection) => Err(json_rejected(&path, rejection)),
        }
    }
}

/// An optional JSON body: none without a JSON content type, as axum's.
impl<T: DeserializeOwned, S: Send + Sync> OptionalFromRequest<S> for Json<T> {
    type Rejection = Rejected;

    async fn from_request(request: Request, state: &S) -> Result<Option<Self>, Self::Rejection> {
        let path = request.uri().path().to_string();
        match <axum::Json<T> as OptionalFromRequest<S>>::from_request(request, state).await {
            Ok(value) => Ok(value.map(|axum::Json(value)| Json(value))),
            Err(rejection) => Err(json_rejected(&path, rejection)),
        }
    }
}

fn json_rejected(path: &str, rejection: JsonRejection) -> Rejected {
    Rejected::new(path, rejection.status(), "body", rejection.body_text())
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

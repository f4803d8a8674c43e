//! The one error family at the HTTP edge. Each [`AppError`] variant maps to a status
//! and, on API routes, a JSON body `{"error": {"code", "message", "field"?,
//! "request_id"?}}`; on pages, [`PageError`] shows the same status and message as HTML,
//! with the request's id to quote. Internal causes are logged once here (in the
//! request's span, so with its id) and never shown to the client.

use axum::Json;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::db::DbError;
use crate::events::writer::WriteError;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The request is malformed; `field` names the part that is wrong, if one is.
    #[error("{message}")]
    BadRequest { field: Option<String>, message: String },
    #[error("missing or invalid credentials")]
    Unauthorized,
    #[error("not found")]
    NotFound,
    /// A thing the request names does not exist; the message says which.
    #[error("{0}")]
    Unknown(String),
    /// A parameter is well-formed but its value cannot be used (422).
    #[error("{parameter}: {message}")]
    Invalid { parameter: String, message: String },
    /// Signed in, but this person may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The request conflicts with the resource's state.
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    TooLarge(String),
    /// The request's body did not arrive within its deadline (`http::body_deadline`).
    #[error("{0}")]
    TimedOut(String),
    /// The request is understood, but this build cannot do it (a feature not landed yet).
    #[error("{0}")]
    NotImplemented(String),
    #[error("{0}")]
    UnsupportedEncoding(String),
    /// Storage cannot take writes now (disk full, I/O error, read-only); retry.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl AppError {
    pub fn bad_request(field: impl Into<String>, message: impl Into<String>) -> Self {
        AppError::BadRequest { field: Some(field.into()), message: message.into() }
    }
}

impl From<crate::model::wire::Rejection> for AppError {
    fn from(rejection: crate::model::wire::Rejection) -> Self {
        AppError::BadRequest { field: Some(rejection.field), message: rejection.reason }
    }
}

impl From<DbError> for AppError {
    fn from(err: DbError) -> Self {
        if err.is_storage_unavailable() {
            AppError::Unavailable(err.to_string())
        } else {
            AppError::Internal(err.to_string())
        }
    }
}

impl From<WriteError> for AppError {
    fn from(err: WriteError) -> Self {
        match err {
            WriteError::Unavailable(cause) => AppError::Unavailable(cause),
            WriteError::ShuttingDown => AppError::Unavailable("server is shutting down".into()),
        }
    }
}

/// Seconds a client should wait before retrying a 503.
pub const RETRY_AFTER_SECS: u32 = 5;

/// `response` saying when to come back (`Retry-After`, in seconds), when there is a
/// when: every throttle's 429 answers through here.
pub fn with_retry_after(mut response: Response, secs: Option<u64>) -> Response {
    if let Some(secs) = secs {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

impl AppError {
    /// The status, code, public message and field of this error; internal causes are
    /// logged here and never shown.
    fn parts(&self) -> (StatusCode, &'static str, String, Option<String>) {
        match self {
            AppError::BadRequest { field, message } => {
                (StatusCode::BAD_REQUEST, "bad_request", message.clone(), field.clone())
            }
            AppError::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized", self.to_string(), None),
            AppError::NotFound => (StatusCode::NOT_FOUND, "not_found", self.to_string(), None),
            AppError::Unknown(message) => (StatusCode::NOT_FOUND, "not_found", message.clone(), None),
            AppError::Invalid { parameter, message } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_parameter",
                format!("{parameter}: {message}"),
                Some(parameter.clone()),
            ),
            AppError::Forbidden(message) => (StatusCode::FORBIDDEN, "forbidden", message.clone(), None),
            AppError::Conflict(message) => (StatusCode::CONFLICT, "conflict", message.clone(), None),
            AppError::TooLarge(message) => (StatusCode::PAYLOAD_TOO_LARGE, "too_large", message.clone(), None),
            AppError::TimedOut(message) => (StatusCode::REQUEST_TIMEOUT, "request_timeout", message.clone(), None),
            AppError::NotImplemented(message) => {
                (StatusCode::NOT_IMPLEMENTED, "not_implemented", message.clone(), None)
            }
            AppError::UnsupportedEncoding(message) => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_encoding", message.clone(), None)
            }
            AppError::Unavailable(cause) => {
                tracing::error!(%cause, "storage unavailable");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    "storage is unavailable; retry later".to_string(),
                    None,
                )
            }
            AppError::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error".to_string(), None)
            }
        }
    }

    /// `WWW-Authenticate` on a 401, `Retry-After` on a 503.
    fn add_headers(&self, headers: &mut HeaderMap) {
        match self {
            AppError::Unauthorized => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            AppError::Unavailable(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
            }
            _ => {}
        }
    }

    /// The status and the public message, for a page that shows the error as HTML.
    pub fn status_and_message(&self) -> (StatusCode, String) {
        let (status, _, message, _) = self.parts();
        (status, message)
    }

    /// This error as an HTML page in the listener's own look: `render` gets the status
    /// and the public message (the cause is logged once, here) and answers the HTML.
    pub fn page(&self, render: impl FnOnce(StatusCode, &str) -> String) -> Response {
        let (status, message) = self.status_and_message();
        let html = render(status, &message);
        let mut response = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
        self.add_headers(response.headers_mut());
        response
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let (status, code, message, field) = self.parts();
        let mut body = json!({ "code": code, "message": message });
        if let AppError::Invalid { parameter, message } = &self {
            // The eval dashboard's documented shape: the parameter, and its own message.
            body["parameter"] = json!(parameter);
            body["message"] = json!(message);
        } else if let Some(field) = field {
            body["field"] = json!(field);
        }
        if let Some(id) = super::request_id::current() {
            body["request_id"] = json!(id);
        }
        let mut response = (status, Json(json!({ "error": body }))).into_response();
        self.add_headers(response.headers_mut());
        response
    }
}

/// [`AppError`] on a page: the same status, message and headers, as an HTML page a
/// person can read (API routes answer JSON; pages never do).
pub struct PageError(pub AppError);

impl From<AppError> for PageError {
    fn from(err: AppError) -> Self {
        PageError(err)
    }
}

/// What a page's storage calls fail with converts as for the API, so `?` is the one
/// conversion a page handler needs.
impl From<DbError> for PageError {
    fn from(err: DbError) -> Self {
        PageError(err.into())
    }
}

impl From<WriteError> for PageError {
    fn from(err: WriteError) -> Self {
        PageError(err.into())
    }
}

#[derive(askama::Template)]
#[template(path = "http/error.html")]
struct ErrorPage<'a> {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    title: &'a str,
    message: &'a str,
    /// The request's id (`http::request_id`), for the person to quote.
    request_id: Option<String>,
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        use askama::Template;
        self.0.page(|status, message| {
            let title = status.canonical_reason().unwrap_or("Error");
            let request_id = super::request_id::current();
            ErrorPage { nav_role: "", title, message, request_id }.render().unwrap_or_else(|_| message.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_text(response: Response) -> String {
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn pages_show_the_error_as_html_with_the_api_status_and_headers() {
        let page = PageError(AppError::Unavailable("disk full at /var/lib".into())).into_response();
        assert_eq!(page.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(page.headers()[header::CONTENT_TYPE], "text/html; charset=utf-8");
        assert_eq!(page.headers()[header::RETRY_AFTER], RETRY_AFTER_SECS.to_string().as_str());
        let html = body_text(page).await;
        assert!(html.contains("<h1>Service Unavailable</h1>"), "{html}");
        assert!(html.contains("storage is unavailable; retry later"), "{html}");
        assert!(!html.contains("disk full"), "the internal cause is never shown: {html}");

        let api = AppError::bad_request("limit", "limit <b>must</b> be small").into_response();
        assert_eq!(api.status(), StatusCode::BAD_REQUEST);
        assert_eq!(api.headers()[header::CONTENT_TYPE], "application/json");
        let page =
            body_text(PageError(AppError::bad_request("limit", "limit <b>must</b> be small")).into_response()).await;
        assert!(
            page.contains("limit &#60;b&#62;must&#60;/b&#62; be small")
                || page.contains("limit &lt;b&gt;must&lt;/b&gt; be small"),
            "escaped: {page}"
        );
    }
}

//! The one error type at the HTTP edge. Each variant maps to a status and a JSON
//! body `{"error": {"code", "message", "field"?}}`; internal causes are logged once
//! here and never shown to the client.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
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
    /// Signed in, but this person may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// The request conflicts with the resource's state.
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    TooLarge(String),
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
            AppError::Forbidden(message) => (StatusCode::FORBIDDEN, "forbidden", message.clone(), None),
            AppError::Conflict(message) => (StatusCode::CONFLICT, "conflict", message.clone(), None),
            AppError::TooLarge(message) => (StatusCode::PAYLOAD_TOO_LARGE, "too_large", message.clone(), None),
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

    /// The status and the public message, for a page that shows the error as HTML.
    pub fn status_and_message(&self) -> (StatusCode, String) {
        let (status, _, message, _) = self.parts();
        (status, message)
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let (status, code, message, field) = self.parts();
        let mut body = json!({ "code": code, "message": message });
        if let Some(field) = field {
            body["field"] = json!(field);
        }
        let mut response = (status, Json(json!({ "error": body }))).into_response();
        match self {
            AppError::Unauthorized => {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            AppError::Unavailable(_) => {
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
            }
            _ => {}
        }
        response
    }
}

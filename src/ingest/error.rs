//! Why ingest refused a batch or an export: one error for the three ways events arrive
//! (the hook's `/v1/events`, OTLP/HTTP, OTLP/gRPC), with no transport's type in it.
//! Each listener answers it in its own terms through a `From` impl here: an HTTP status
//! ([`AppError`]) or a gRPC code (`otlp::grpc::Status`), so neither maps the other's
//! numbers back.
//!
//! Invariant: only [`IngestError::Unavailable`] is worth retrying (503 with
//! `Retry-After`, gRPC `UNAVAILABLE` with RetryInfo); every other refusal is final, so
//! a conforming exporter never retries a body it will be refused again.

use crate::db::DbError;
use crate::events::writer::WriteError;
use crate::http::errors::{AppError, RETRY_AFTER_SECS};
use crate::metrics::BatchOutcome;
use crate::model::wire::Rejection;
use crate::otlp::bounds::Refusal;
use crate::otlp::grpc::{Code, Status};

#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum IngestError {
    /// The body or envelope cannot be read; `field` names the part, if one is wrong.
    #[error("{message}")]
    Malformed { field: Option<String>, message: String },
    /// The credential names nobody (or a token revoked, expired, of a disabled person).
    #[error("missing or invalid credentials")]
    Unauthorized,
    /// Past one of the documented limits (body, decoded size, events, records).
    #[error("{0}")]
    TooLarge(String),
    /// An encoding (content or compression) ingest does not read.
    #[error("{0}")]
    UnsupportedEncoding(String),
    /// The body did not arrive within its deadline (`http::body_deadline`).
    #[error("{0}")]
    TimedOut(String),
    /// Storage cannot take the batch now; nothing of it was acknowledged. Retry.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// A fault of ours; the cause is logged by the listener's answer, never shown.
    #[error("internal error: {0}")]
    Internal(String),
}

impl IngestError {
    pub fn malformed(field: &str, message: impl Into<String>) -> IngestError {
        IngestError::Malformed { field: Some(field.to_string()), message: message.into() }
    }

    /// How a refusal is counted (`sightline_ingest_batches_total`, `sightline_otlp_exports_total`).
    pub fn outcome(&self) -> BatchOutcome {
        match self {
            IngestError::Malformed { .. } => BatchOutcome::Malformed,
            IngestError::Unauthorized => BatchOutcome::Unauthorized,
            IngestError::TooLarge(_) => BatchOutcome::TooLarge,
            IngestError::UnsupportedEncoding(_) => BatchOutcome::UnsupportedEncoding,
            IngestError::TimedOut(_) => BatchOutcome::TimedOut,
            IngestError::Unavailable(_) => BatchOutcome::StorageUnavailable,
            IngestError::Internal(_) => BatchOutcome::Internal,
        }
    }
}

impl From<Rejection> for IngestError {
    fn from(rejection: Rejection) -> Self {
        IngestError::Malformed { field: Some(rejection.field), message: rejection.reason }
    }
}

impl From<Refusal> for IngestError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::TooLarge(message) => IngestError::TooLarge(message),
            Refusal::Malformed(message) => IngestError::malformed("body", message),
            Refusal::UnsupportedEncoding(message) => IngestError::UnsupportedEncoding(message),
        }
    }
}

impl From<WriteError> for IngestError {
    fn from(err: WriteError) -> Self {
        match err {
            WriteError::Unavailable(cause) => IngestError::Unavailable(cause),
            WriteError::ShuttingDown => IngestError::Unavailable("server is shutting down".into()),
        }
    }
}

impl From<DbError> for IngestError {
    fn from(err: DbError) -> Self {
        if err.is_storage_unavailable() {
            IngestError::Unavailable(err.to_string())
        } else {
            IngestError::Internal(err.to_string())
        }
    }
}

/// The HTTP listeners' answer (`/v1/events`, OTLP/HTTP).
impl From<IngestError> for AppError {
    fn from(err: IngestError) -> Self {
        match err {
            IngestError::Malformed { field, message } => AppError::BadRequest { field, message },
            IngestError::Unauthorized => AppError::Unauthorized,
            IngestError::TooLarge(message) => AppError::TooLarge(message),
            IngestError::UnsupportedEncoding(message) => AppError::UnsupportedEncoding(message),
            IngestError::TimedOut(message) => AppError::TimedOut(message),
            IngestError::Unavailable(cause) => AppError::Unavailable(cause),
            IngestError::Internal(cause) => AppError::Internal(cause),
        }
    }
}

/// The gRPC listener's answer, in the codes OTLP/gRPC names: only `UNAVAILABLE`
/// carries RetryInfo; too large stays too large (not retryable).
impl From<IngestError> for Status {
    fn from(err: IngestError) -> Self {
        let (code, message) = match err {
            IngestError::Malformed { message, .. } => (Code::InvalidArgument, message),
            IngestError::UnsupportedEncoding(message) => (Code::InvalidArgument, message),
            IngestError::Unauthorized => (Code::Unauthenticated, "missing or invalid credentials".to_string()),
            IngestError::TooLarge(message) => (Code::ResourceExhausted, message),
            IngestError::TimedOut(message) => (Code::DeadlineExceeded, message),
            IngestError::Unavailable(cause) => {
                tracing::error!(%cause, "storage unavailable");
                (Code::Unavailable, "storage is unavailable; retry later".to_string())
            }
            IngestError::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                (Code::Internal, "internal error".to_string())
            }
        };
        let retry_after_secs = (code == Code::Unavailable).then_some(RETRY_AFTER_SECS);
        Status { code, message, retry_after_secs }
    }
}

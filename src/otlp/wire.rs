//! OTLP/HTTP's framing (`opentelemetry-proto`, `docs/specification.md`, "OTLP/HTTP"):
//! a request is protobuf (`application/x-protobuf`) or JSON (`application/json`,
//! 64-bit integers as text or numbers, ids in hex), the answer is in the encoding it
//! came in: an `Export*ServiceResponse` with `partial_success` for records refused,
//! or a `google.rpc.Status` with the same status code as any other error of ours.
//!
//! Invariant: nothing here is retried forever by a conforming exporter: a body that
//! cannot be read is 400, a body too large 413, a wrong credential 401 (none of them
//! retryable); only storage that cannot take writes answers 503 with `Retry-After`.

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use prost::Message;

use super::bounds::{self, Limits, Msg, Refusal};
use crate::http::errors::AppError;

/// The two encodings of OTLP/HTTP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Protobuf,
    Json,
}

impl Encoding {
    /// The request's encoding by its `Content-Type` (parameters such as `charset` aside).
    pub fn of(headers: &HeaderMap) -> Result<Encoding, Refusal> {
        let content_type = headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or("");
        let media = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        match media.as_str() {
            "application/x-protobuf" | "application/protobuf" => Ok(Encoding::Protobuf),
            "application/json" => Ok(Encoding::Json),
            "" => Err(Refusal::UnsupportedEncoding(
                "Content-Type is missing; OTLP/HTTP sends application/x-protobuf or application/json".into(),
            )),
            other => Err(Refusal::UnsupportedEncoding(format!(
                "Content-Type {other:?} is not OTLP; use application/x-protobuf or application/json"
            ))),
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        }
    }

    /// Decodes an export request of type `root` once its walk (`otlp::bounds`) finds it
    /// within `limits`: a body past them is refused (413) before anything is decoded.
    pub fn decode_bounded<T>(self, body: &[u8], root: Msg, limits: &Limits) -> Result<T, Refusal>
    where
        T: Message + Default + serde::de::DeserializeOwned,
    {
        match self {
            Encoding::Protobuf => bounds::check_protobuf(body, root, limits)?,
            Encoding::Json => bounds::check_json(body, root, limits)?,
        };
        self.decode(body, root.signal())
    }

    /// Decodes an export request, naming what is wrong with a body that is not one.
    pub fn decode<T>(self, body: &[u8], signal: &str) -> Result<T, Refusal>
    where
        T: Message + Default + serde::de::DeserializeOwned,
    {
        match self {
            Encoding::Protobuf => T::decode(body)
                .map_err(|err| Refusal::Malformed(format!("body is not a protobuf OTLP {signal} export: {err}"))),
            Encoding::Json => serde_json::from_slice(body)
                .map_err(|err| Refusal::Malformed(format!("body is not an OTLP/JSON {signal} export: {err}"))),
        }
    }

    /// A 200 answer carrying `message` in this encoding.
    pub fn answer<T: Message + serde::Serialize>(self, message: &T) -> Response {
        let body = match self {
            Encoding::Protobuf => message.encode_to_vec(),
            // proto3's JSON leaves unset fields out (the crate writes them as null).
            Encoding::Json => serde_json::to_value(message)
                .map(without_nulls)
                .and_then(|value| serde_json::to_vec(&value))
                .unwrap_or_else(|_| b"{}".to_vec()),
        };
        self.respond(StatusCode::OK, Bytes::from(body))
    }

    /// `error` as OTLP answers errors: its status and headers, a `google.rpc.Status` body.
    pub fn error(self, error: AppError) -> Response {
        let (status, message) = error.status_and_message();
        let status_body = RpcStatus { code: grpc_code(status), message };
        let body = match self {
            Encoding::Protobuf => status_body.encode_to_vec(),
            Encoding::Json => serde_json::to_vec(&serde_json::json!({
                "code": status_body.code,
                "message": status_body.message,
            }))
            .unwrap_or_default(),
        };
        // The rest of the answer (status, Retry-After, WWW-Authenticate) as for any error.
        let mut response = error.into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(self.content_type()));
        headers.remove(header::CONTENT_LENGTH);
        let (parts, _) = response.into_parts();
        Response::from_parts(parts, axum::body::Body::from(body))
    }

    fn respond(self, status: StatusCode, body: Bytes) -> Response {
        (status, [(header::CONTENT_TYPE, HeaderValue::from_static(self.content_type()))], body).into_response()
    }
}

/// proto3's JSON form of an answer: unset fields left out (the crate writes them as
/// null) and the `rejected*` counts, int64, written as text.
fn without_nulls(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => map
            .into_iter()
            .filter(|(_, inner)| !inner.is_null())
            .map(|(key, inner)| match inner {
                serde_json::Value::Number(count) if key.starts_with("rejected") => {
                    (key, serde_json::Value::String(count.to_string()))
                }
                inner => (key, without_nulls(inner)),
            })
            .collect(),
        other => other,
    }
}

/// `google.rpc.Status` (`google/rpc/status.proto`), without `details`.
#[derive(Clone, PartialEq, Message)]
pub struct RpcStatus {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
}

/// The gRPC code OTLP pairs with an HTTP status (`google.rpc.Code`), as the gRPC
/// listener answers the same error (`ingest::otlp_grpc`).
fn grpc_code(status: StatusCode) -> i32 {
    match status.as_u16() {
        400 | 415 | 422 => 3, // INVALID_ARGUMENT
        401 => 16,            // UNAUTHENTICATED
        403 => 7,             // PERMISSION_DENIED
        404 => 5,             // NOT_FOUND
        408 => 4,             // DEADLINE_EXCEEDED
        413 | 429 => 8,       // RESOURCE_EXHAUSTED
        503 => 14,            // UNAVAILABLE
        _ => 13,              // INTERNAL
    }
}

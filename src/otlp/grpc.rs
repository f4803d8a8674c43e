//! OTLP/gRPC's framing, for the three unary `Export` calls over HTTP/2 (gRPC's
//! "PROTOCOL-HTTP2"): a request is `POST /<service>/Export` with `content-type:
//! application/grpc[+proto]`, its body one length-prefixed message (a compressed flag,
//! four bytes of length, the message; `grpc-encoding` names the compression); the answer
//! is the response message framed the same way, then trailers with `grpc-status` 0, or,
//! for an error, "Trailers-Only": the headers alone carry `grpc-status`, `grpc-message`
//! and, where the client should wait before retrying, `grpc-status-details-bin` with a
//! `google.rpc.RetryInfo` (OTLP/gRPC's throttling).
//!
//! The codes are those OTLP's specification gives a receiver: UNAUTHENTICATED for a
//! credential, INVALID_ARGUMENT for a malformed export, RESOURCE_EXHAUSTED without
//! RetryInfo for one too large (not retryable: it will not get smaller) and with it for
//! throttling, UNAVAILABLE with RetryInfo for storage that cannot take writes. Never
//! OUT_OF_RANGE, which exporters retry forever.
//!
//! Invariant: nothing here reads a body; the handler authenticates from the headers
//! first, reads the body within its limits, then hands it to [`message`].

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use base64::Engine;
use http_body::{Body, Frame, SizeHint};
use prost::Message;

pub const LOGS_PATH: &str = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";
pub const METRICS_PATH: &str = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";
pub const TRACES_PATH: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// The compressions a request may use (`grpc-accept-encoding` of every answer).
pub const ACCEPTED_ENCODINGS: &str = "gzip, identity";

/// `google.rpc.Code`, the values OTLP's receiver answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Code {
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    ResourceExhausted = 8,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    Unauthenticated = 16,
}

/// A gRPC error answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub code: Code,
    pub message: String,
    /// Seconds the client should wait before retrying (RetryInfo), where it may.
    pub retry_after_secs: Option<u32>,
}

impl Status {
    pub fn new(code: Code, message: impl Into<String>) -> Status {
        Status { code, message: message.into(), retry_after_secs: None }
    }

    /// The answer: HTTP 200 whose headers carry the status (Trailers-Only).
    pub fn into_response(self) -> Response {
        let mut response = Response::new(axum::body::Body::empty());
        let headers = response.headers_mut();
        grpc_headers(headers);
        headers.insert("grpc-status", HeaderValue::from(self.code as i32));
        if let Ok(message) = HeaderValue::from_str(&percent_encode(&self.message)) {
            headers.insert("grpc-message", message);
        }
        if let Some(seconds) = self.retry_after_secs {
            let details = status_details(self.code, &self.message, seconds);
            let encoded = base64::engine::general_purpose::STANDARD_NO_PAD.encode(details);
            if let Ok(value) = HeaderValue::from_str(&encoded) {
                headers.insert("grpc-status-details-bin", value);
            }
        }
        response
    }
}

fn grpc_headers(headers: &mut HeaderMap) {
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    headers.insert(HeaderName::from_static("grpc-accept-encoding"), HeaderValue::from_static(ACCEPTED_ENCODINGS));
}

/// Whether a request is gRPC at all (`application/grpc`, `application/grpc+proto`); any
/// other content type is answered with HTTP 415, as gRPC asks.
pub fn is_grpc(headers: &HeaderMap) -> bool {
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    media == "application/grpc" || media == "application/grpc+proto"
}

/// The answer to a request that is not gRPC.
pub fn not_grpc() -> Response {
    let mut response = Response::new(axum::body::Body::from("OTLP/gRPC takes content-type application/grpc\n"));
    *response.status_mut() = StatusCode::UNSUPPORTED_MEDIA_TYPE;
    response
}

/// How the request's message is compressed (`grpc-encoding`): `None` for none.
pub fn encoding(headers: &HeaderMap) -> Result<Option<&'static str>, Status> {
    let named = headers.get("grpc-encoding").map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase());
    match named.as_deref() {
        None | Some("identity") => Ok(None),
        Some("gzip") => Ok(Some("gzip")),
        Some(other) => Err(Status::new(
            Code::Unimplemented,
            format!("grpc-encoding {other:?} is not supported; use {ACCEPTED_ENCODINGS}"),
        )),
    }
}

/// The one message of a unary request's body, and whether it is compressed.
pub fn message(body: &[u8]) -> Result<(bool, &[u8]), Status> {
    let invalid =
        |what: &str| Status::new(Code::InvalidArgument, format!("the request is not one gRPC message: {what}"));
    let (prefix, rest) = body.split_at_checked(5).ok_or_else(|| invalid("it is shorter than the 5-byte prefix"))?;
    let compressed = match prefix[0] {
        0 => false,
        1 => true,
        flag => return Err(invalid(&format!("the compressed flag is {flag}, not 0 or 1"))),
    };
    let length = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
    if rest.len() != length {
        return Err(invalid(&format!("the prefix says {length} bytes and {} follow", rest.len())));
    }
    Ok((compressed, rest))
}

/// A successful answer carrying `message`.
pub fn ok<T: Message>(message: &T) -> Response {
    let encoded = message.encode_to_vec();
    let mut framed = Vec::with_capacity(encoded.len() + 5);
    framed.push(0);
    framed.extend_from_slice(&(encoded.len() as u32).to_be_bytes());
    framed.extend_from_slice(&encoded);
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let mut response =
        Response::new(axum::body::Body::new(Unary { message: Some(Bytes::from(framed)), trailers: Some(trailers) }));
    grpc_headers(response.headers_mut());
    response
}

/// One data frame, then the trailers.
struct Unary {
    message: Option<Bytes>,
    trailers: Option<HeaderMap>,
}

impl Body for Unary {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(message) = self.message.take() {
            return Poll::Ready(Some(Ok(Frame::data(message))));
        }
        Poll::Ready(self.trailers.take().map(|trailers| Ok(Frame::trailers(trailers))))
    }

    fn is_end_stream(&self) -> bool {
        self.message.is_none() && self.trailers.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.message.as_ref().map_or(0, |m| m.len() as u64))
    }
}

/// `grpc-message`'s percent-encoding: every byte outside printable ASCII, and `%`.
fn percent_encode(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for byte in message.bytes() {
        if (0x20..=0x7e).contains(&byte) && byte != b'%' {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `google.rpc.Status` with one `google.rpc.RetryInfo` in its details.
fn status_details(code: Code, message: &str, retry_after_secs: u32) -> Vec<u8> {
    #[derive(Clone, PartialEq, Message)]
    struct Duration {
        #[prost(int64, tag = "1")]
        seconds: i64,
    }
    #[derive(Clone, PartialEq, Message)]
    struct RetryInfo {
        #[prost(message, optional, tag = "1")]
        retry_delay: Option<Duration>,
    }
    #[derive(Clone, PartialEq, Message)]
    struct Any {
        #[prost(string, tag = "1")]
        type_url: String,
        #[prost(bytes = "vec", tag = "2")]
        value: Vec<u8>,
    }
    #[derive(Clone, PartialEq, Message)]
    struct RpcStatus {
        #[prost(int32, tag = "1")]
        code: i32,
        #[prost(string, tag = "2")]
        message: String,
        #[prost(message, repeated, tag = "3")]
        details: Vec<Any>,
    }
    let retry = RetryInfo { retry_delay: Some(Duration { seconds: i64::from(retry_after_secs) }) };
    RpcStatus {
        code: code as i32,
        message: message.to_string(),
        details: vec![Any {
            type_url: "type.googleapis.com/google.rpc.RetryInfo".into(),
            value: retry.encode_to_vec(),
        }],
    }
    .encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unary_body_is_exactly_one_message() {
        assert_eq!(message(&[0, 0, 0, 0, 2, 8, 1]).unwrap(), (false, &[8u8, 1][..]));
        assert_eq!(message(&[1, 0, 0, 0, 0]).unwrap(), (true, &[][..]));
        for bad in [&[0u8, 0, 0][..], &[2, 0, 0, 0, 0], &[0, 0, 0, 0, 3, 1], &[0, 0, 0, 0, 1, 1, 1]] {
            assert_eq!(message(bad).unwrap_err().code, Code::InvalidArgument, "{bad:?}");
        }
    }

    #[test]
    fn an_error_is_trailers_only_with_its_message_encoded_and_retry_info_where_given() {
        let mut status = Status::new(Code::Unavailable, "storage 100% full: wait");
        status.retry_after_secs = Some(5);
        let response = status.into_response();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["grpc-status"], "14");
        assert_eq!(response.headers()["grpc-message"], "storage 100%25 full: wait");
        let details = base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(response.headers()["grpc-status-details-bin"].as_bytes())
            .unwrap();
        assert!(details.windows(b"google.rpc.RetryInfo".len()).any(|w| w == b"google.rpc.RetryInfo"));
        let plain = Status::new(Code::ResourceExhausted, "too large").into_response();
        assert!(plain.headers().get("grpc-status-details-bin").is_none(), "too large is not retryable");
    }

    #[test]
    fn only_gzip_and_identity_are_taken() {
        let mut headers = HeaderMap::new();
        assert_eq!(encoding(&headers), Ok(None));
        headers.insert("grpc-encoding", HeaderValue::from_static("gzip"));
        assert_eq!(encoding(&headers), Ok(Some("gzip")));
        headers.insert("grpc-encoding", HeaderValue::from_static("snappy"));
        assert_eq!(encoding(&headers).unwrap_err().code, Code::Unimplemented);
    }
}

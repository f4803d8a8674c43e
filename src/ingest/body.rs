//! A request body as every ingest listener reads it: within its size limit (declared
//! or read), decompressed within the decoded limit (a decompression bomb gets 413, not
//! our memory), and, for OTLP, walked within the export limits before it is decoded.

use std::io::Read;

use axum::body::Body;
use axum::http::{HeaderMap, header};

use super::error::IngestError;
use crate::otlp::bounds::Limits;

/// What one OTLP export may hold (`[ingest]`): its records and attribute lists, and its
/// decoded form at most three times the largest decoded body.
pub fn export_limits(config: &crate::config::Config) -> Limits {
    Limits {
        max_records: config.ingest.max_otlp_records,
        max_attributes: config.ingest.max_otlp_attributes,
        max_decoded_memory: 3 * config.ingest.max_decoded_bytes as u64,
    }
}

/// The request body, refused with 413 past `max_body_bytes` (declared or read).
pub async fn read_body(
    headers: &HeaderMap,
    body: Body,
    max_body_bytes: usize,
) -> Result<axum::body::Bytes, IngestError> {
    if let Some(length) = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
        && length > max_body_bytes
    {
        return Err(too_large_body(max_body_bytes));
    }
    axum::body::to_bytes(body, max_body_bytes).await.map_err(|err| {
        // to_bytes fails on the limit, on a body past its deadline, or on a broken connection.
        if crate::http::body_deadline::is_timeout(&err) {
            IngestError::TimedOut(err.to_string())
        } else if err.to_string().contains("length limit") {
            too_large_body(max_body_bytes)
        } else {
            IngestError::malformed("body", format!("could not read the request body: {err}"))
        }
    })
}

pub(super) fn too_large_body(limit: usize) -> IngestError {
    IngestError::TooLarge(format!("request body is larger than {limit} bytes"))
}

/// Decodes `Content-Encoding: zstd | gzip | identity`, refusing to inflate past
/// `max_decoded` bytes (a decompression bomb gets 413, not our memory).
pub fn decode<'a>(
    headers: &HeaderMap,
    raw: &'a [u8],
    max_decoded: usize,
) -> Result<std::borrow::Cow<'a, [u8]>, IngestError> {
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase())
        .unwrap_or_default();
    decode_named(&encoding, raw, max_decoded)
}

/// [`decode`] for an encoding named elsewhere (gRPC's `grpc-encoding`).
pub fn decode_named<'a>(
    encoding: &str,
    raw: &'a [u8],
    max_decoded: usize,
) -> Result<std::borrow::Cow<'a, [u8]>, IngestError> {
    let reader: Box<dyn Read + 'a> = match encoding {
        "" | "identity" => {
            if raw.len() > max_decoded {
                return Err(too_large_body(max_decoded));
            }
            return Ok(std::borrow::Cow::Borrowed(raw));
        }
        "zstd" => Box::new(
            zstd::stream::read::Decoder::new(raw)
                .map_err(|err| IngestError::malformed("body", format!("zstd body cannot be decoded: {err}")))?,
        ),
        "gzip" | "x-gzip" => Box::new(flate2::read::GzDecoder::new(raw)),
        other => {
            return Err(IngestError::UnsupportedEncoding(format!(
                "Content-Encoding {other:?} is not supported; use zstd, gzip or none"
            )));
        }
    };
    let mut decoded = Vec::with_capacity(raw.len() * 4);
    reader
        .take(max_decoded as u64 + 1)
        .read_to_end(&mut decoded)
        .map_err(|err| IngestError::malformed("body", format!("{encoding} body cannot be decoded: {err}")))?;
    if decoded.len() > max_decoded {
        return Err(IngestError::TooLarge(format!("decoded request body is larger than {max_decoded} bytes")));
    }
    Ok(std::borrow::Cow::Owned(decoded))
}

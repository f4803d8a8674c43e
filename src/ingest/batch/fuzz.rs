//! Generated batches for the ingest decoder (`fuzz_*`, see `model::arbitrary`): real
//! events bent by edits, bodies cut or flipped, zstd and gzip framing. Whatever arrives,
//! decoding never panics; a refused event names its field; a body that cannot be read is
//! a 400 or 413, never more than the decoded limit held in memory.

use axum::http::{HeaderMap, HeaderValue, header};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::parse_envelope;
use crate::ingest::body::decode;
use crate::ingest::error::IngestError;
use crate::model::arbitrary::{damage, damaged, edited, edits};
use crate::model::wire::{EventLimits, parse_event};

const NOW_MS: i64 = 1_795_000_000_000;

/// A batch of the events the hook sends, each kind once.
fn batch() -> Value {
    let ts = crate::model::rfc3339_ms(NOW_MS - 60_000);
    let base = |kind: &str| {
        json!({"event_id": "01a21d50-a017-779e-885f-48bdd12fb896", "type": kind, "ts": ts,
               "agent_type": "claude_code", "session_id": "s-1"})
    };
    let mut tool = base("tool_end");
    tool["tool"] = json!({"name": "claude_code:Bash", "status": "success", "input_sha256": "ab".repeat(32),
                          "input_bytes": 120, "duration_ms": 40});
    tool["eval"] = json!({"cell_id": "claude-code__sonnet__django__django-11099__r0", "run_name": "nightly",
                          "phase": "review"});
    let mut turn = base("turn_end");
    turn["model"] = json!("claude-sonnet-4-5-20250929");
    turn["usage"] = json!({"input_tokens": 1000, "output_tokens": 500, "cache_read_tokens": 10000,
                           "cache_write_5m_tokens": 2000, "cache_write_1h_tokens": 4000});
    turn["git"] = json!({"repo": "git@github.com:acme/shop.git", "branch": "main", "commit": "a".repeat(40)});
    turn["metadata"] = json!({"source": "startup", "nested": {"a": [1, 2, 3]}});
    let mut notification = base("notification");
    notification["notification_kind"] = json!("permission");
    json!({"client": {"machine_id": "m-1", "cli_version": "0.1.0", "os": "linux"},
           "events": [base("session_start"), tool, turn, notification]})
}

fn encoding(name: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if !name.is_empty() {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_str(name).unwrap());
    }
    headers
}

proptest! {
    #[test]
    fn fuzz_event_batches(edits in edits(), (cut, flips) in damage()) {
        let body = serde_json::to_vec(&edited(&batch(), &edits)).unwrap();
        let body = damaged(&body, cut, &flips);
        match parse_envelope(&body, 1000) {
            Ok(envelope) => {
                for raw in &envelope.events {
                    if let Err(rejection) = parse_event(raw, &EventLimits::default(), NOW_MS) {
                        prop_assert!(!rejection.field.is_empty(), "a refused event names its field: {rejection:?}");
                        prop_assert!(!rejection.reason.is_empty());
                    }
                }
            }
            Err(IngestError::Malformed { message, .. }) => prop_assert!(!message.is_empty()),
            Err(IngestError::TooLarge(_)) => {}
            Err(other) => prop_assert!(false, "a batch is refused as a bad request, not {other:?}"),
        }
    }

    #[test]
    fn fuzz_compressed_bodies(payload in prop::collection::vec(any::<u8>(), 0..4096), (cut, flips) in damage(), which in 0usize..4) {
        let max = 2048;
        let (name, framed) = match which {
            0 => ("zstd", zstd::bulk::compress(&payload, 3).unwrap()),
            1 => ("gzip", {
                use std::io::Write;
                let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                encoder.write_all(&payload).unwrap();
                encoder.finish().unwrap()
            }),
            2 => ("", payload.clone()),
            _ => ("br", payload.clone()),
        };
        let intact = cut.is_none() && flips.is_empty();
        let sent = damaged(&framed, cut, &flips);
        match decode(&encoding(name), &sent, max) {
            Ok(decoded) => {
                prop_assert!(decoded.len() <= max);
                if intact {
                    prop_assert_eq!(&decoded[..], &payload[..], "an intact body decodes to what was sent");
                }
            }
            Err(IngestError::TooLarge(_)) => prop_assert!(payload.len() > max || !intact),
            Err(IngestError::Malformed { .. }) => prop_assert!(!intact || payload.len() > max, "an intact {name} body is read"),
            Err(IngestError::UnsupportedEncoding(_)) => prop_assert_eq!(name, "br"),
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }
}

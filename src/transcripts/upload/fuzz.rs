//! Generated uploads (`fuzz_*`, see `model::arbitrary`): a transcript cut into chunks of
//! any size, sent in any order, some twice, one perhaps with bytes or headers that lie.
//! A chunk that lies is refused naming its header; the upload completes once every chunk
//! has arrived whole, and holds the transcript as sent; chunk headers of any value never
//! panic.

use proptest::prelude::*;

use super::{Chunk, UploadError, check, receive};
use crate::model::sha256_hex;

const TRANSCRIPT: &str = include_str!("../../../tests/fixtures/agents/claude_code/transcript.jsonl");

proptest! {
    #[test]
    fn fuzz_transcript_uploads(
        lines in 1usize..12,
        chunk_bytes in 1usize..400,
        order in any::<u64>(),
        again in prop::collection::vec(any::<usize>(), 0..3),
        lie in prop::option::weighted(0.3, (any::<usize>(), 0u8..3)),
    ) {
        let text: String = TRANSCRIPT.lines().skip(1).take(lines).map(|l| format!("{l}\n")).collect();
        let compressed = zstd::bulk::compress(text.as_bytes(), 3).unwrap();
        let whole = sha256_hex(&compressed);
        let parts: Vec<&[u8]> = compressed.chunks(chunk_bytes).collect();
        let total = parts.len() as u32;
        let mut sends: Vec<usize> = (0..parts.len()).collect();
        fastrand::Rng::with_seed(order).shuffle(&mut sends);
        sends.extend(again.iter().map(|i| i % parts.len()));
        let dir = tempfile::tempdir().unwrap();
        let mut completed = 0;
        let mut lied = false;
        for (n, index) in sends.iter().enumerate() {
            let mut chunk = Chunk { index: *index as u32, total, sha256: sha256_hex(parts[*index]), whole_sha256: whole.clone() };
            let mut bytes = parts[*index].to_vec();
            if let Some((at, how)) = lie.filter(|(at, _)| at % sends.len() == n) {
                match how {
                    0 => {
                        let i = at % bytes.len();
                        bytes[i] ^= 0x55;
                    }
                    1 => chunk.index = total + (at % 3) as u32,
                    _ => chunk.sha256 = "not a digest".into(),
                }
                match receive(dir.path(), "owner", "session", &chunk, &bytes) {
                    Err(UploadError::Invalid { field, .. }) => prop_assert!(field.starts_with("X-Chunk-")),
                    other => prop_assert!(false, "a lying chunk is refused: {other:?}"),
                }
                lied = true;
                continue;
            }
            if let Some(stored) = receive(dir.path(), "owner", "session", &chunk, &bytes).unwrap() {
                completed += 1;
                let kept = crate::transcripts::store::read(dir.path(), &stored.relative_path).unwrap();
                prop_assert_eq!(kept.lines().count(), text.lines().count(), "the transcript as sent");
            }
        }
        if !lied {
            prop_assert!(completed >= 1, "every chunk arrived whole, so the upload completed");
        }
    }

    #[test]
    fn fuzz_chunk_headers(index in any::<u32>(), total in any::<u32>(), sha in ".{0,70}", whole in ".{0,70}", bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let chunk = Chunk { index, total, sha256: sha, whole_sha256: whole };
        match check(&chunk, &bytes) {
            Ok(()) => prop_assert!(index < total),
            Err(UploadError::Invalid { field, message }) => prop_assert!(field.starts_with("X-") && !message.is_empty()),
            Err(UploadError::TooLarge(message)) => prop_assert!(message.contains("X-Chunk-Total") || message.contains("bytes")),
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }
}

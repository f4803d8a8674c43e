//! The upload's limits, staging and streaming assembly on a real data directory.

use std::time::{Duration, SystemTime};

use super::*;

/// An upload's whole digest and its chunks with their bytes.
type Upload = (String, Vec<(Chunk, Vec<u8>)>);

/// Compresses `text` as the shipper does and cuts it into chunks of `chunk_bytes`.
fn chunked(text: &[u8], chunk_bytes: usize) -> Upload {
    let compressed = zstd::bulk::compress(text, 9).unwrap();
    cut(&compressed, chunk_bytes)
}

fn cut(compressed: &[u8], chunk_bytes: usize) -> Upload {
    let whole = sha256_hex(compressed);
    let parts: Vec<&[u8]> = compressed.chunks(chunk_bytes).collect();
    let total = parts.len() as u32;
    let chunks = parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let chunk = Chunk { index: i as u32, total, sha256: sha256_hex(part), whole_sha256: whole.clone() };
            (chunk, part.to_vec())
        })
        .collect();
    (whole, chunks)
}

fn send_all(
    limits: &Limits,
    dir: &Path,
    owner: &str,
    session: &str,
    chunks: &[(Chunk, Vec<u8>)],
) -> Result<Option<Stored>, UploadError> {
    let mut last = None;
    for (chunk, bytes) in chunks {
        last = receive_within(limits, dir, owner, session, chunk, bytes)?;
    }
    Ok(last)
}

/// A transcript of `lines` JSON lines that do not compress to nothing.
fn transcript(lines: usize) -> String {
    (0..lines).map(|i| format!("{{\"type\":\"user\",\"n\":{i},\"text\":\"line {i} {:x}\"}}\n", i * 7919)).collect()
}

#[test]
fn an_upload_of_many_small_chunks_is_held_to_its_real_size() {
    let dir = tempfile::tempdir().unwrap();
    let text = transcript(20_000);
    // Far more than 33 chunks: the old check multiplied the chunk count by 8 MiB.
    let (_, chunks) = chunked(text.as_bytes(), 2048);
    assert!(chunks.len() > 40, "{} chunks", chunks.len());
    let stored = send_all(&Limits::default(), dir.path(), "ada", "s1", &chunks).unwrap().expect("stored");
    assert_eq!(store::read(dir.path(), &stored.relative_path).unwrap(), text);
    assert!(staged(dir.path(), "s1").is_empty(), "staging is removed once stored");

    // The sum of chunks actually received is what counts against the limit.
    let small = Limits { upload_bytes: 10_000, ..Limits::default() };
    let refused = send_all(&small, dir.path(), "ada", "s2", &chunks);
    assert!(matches!(refused, Err(UploadError::TooLarge(ref m)) if m.contains("at most 10000 bytes")), "{refused:?}");
    // Sending a chunk again does not count twice.
    let (chunk, bytes) = &chunks[0];
    for _ in 0..3 {
        assert!(receive_within(&small, dir.path(), "ada", "s3", chunk, bytes).unwrap().is_none());
    }
}

#[test]
fn a_person_can_stage_only_so_much_and_a_new_upload_replaces_an_unfinished_older_one() {
    let dir = tempfile::tempdir().unwrap();
    // Room for three chunks of 4 KiB and their uploads' small `total` files.
    let limits = Limits { upload_bytes: MAX_UPLOAD_BYTES, staged_bytes_per_person: 3 * 4096 + 64 };
    let sessions: Vec<Upload> = (0..4).map(|i| chunked(transcript(2_000 + i).as_bytes(), 4096)).collect();
    // Three first chunks of three sessions fill the allowance; a fourth session waits.
    for (i, (_, chunks)) in sessions.iter().take(3).enumerate() {
        let (chunk, bytes) = &chunks[0];
        assert!(receive_within(&limits, dir.path(), "ada", &format!("s{i}"), chunk, bytes).unwrap().is_none());
    }
    let (chunk, bytes) = &sessions[3].1[0];
    let refused = receive_within(&limits, dir.path(), "ada", "s3", chunk, bytes);
    assert!(matches!(refused, Err(UploadError::TooLarge(ref m)) if m.contains("per person")), "{refused:?}");
    // Someone else is not held up.
    assert!(receive_within(&limits, dir.path(), "bo", "s9", chunk, bytes).unwrap().is_none());
    // A new upload of s0 (its transcript grew) replaces the unfinished one and frees room.
    let (_, grown) = chunked(transcript(2_500).as_bytes(), 4096);
    assert!(receive_within(&limits, dir.path(), "ada", "s0", &grown[0].0, &grown[0].1).unwrap().is_none());
    assert_eq!(staged(dir.path(), "s0").len(), 1, "only the new upload of s0 is staged");
}

#[test]
fn unfinished_uploads_expire_a_day_after_their_last_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let (_, chunks) = chunked(transcript(3_000).as_bytes(), 4096);
    for (session, owner) in [("old", "ada"), ("fresh", "ada"), ("other", "bo")] {
        receive_within(&Limits::default(), dir.path(), owner, session, &chunks[0].0, &chunks[0].1).unwrap();
    }
    // A folder laid out as before per-person staging, left behind by an older server.
    let legacy = store::dir(dir.path()).join("incoming").join(format!("legacy-{}", "ab".repeat(32)));
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(legacy.join("0"), b"x").unwrap();
    let now = SystemTime::now();
    let two_days_ago = now - Duration::from_secs(48 * 3600);
    for folder in staged(dir.path(), "old").into_iter().chain(staged(dir.path(), "other")).chain([legacy.clone()]) {
        std::fs::File::open(&folder).unwrap().set_modified(two_days_ago).unwrap();
    }
    assert_eq!(expire_staged(dir.path(), STAGING_MAX_AGE, now).unwrap(), 3);
    assert!(staged(dir.path(), "old").is_empty() && staged(dir.path(), "other").is_empty() && !legacy.exists());
    assert_eq!(staged(dir.path(), "fresh").len(), 1, "an upload touched today stays");
    assert!(!store::dir(dir.path()).join("incoming").join("bo").exists(), "an emptied person's folder goes too");
    assert_eq!(expire_staged(dir.path(), STAGING_MAX_AGE, now).unwrap(), 0, "re-runnable");
}

#[test]
fn a_decompression_bomb_is_refused_without_being_held_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    // 600 MiB of one repeated line compresses to a few hundred KB.
    let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 19).unwrap();
    let line = format!("{}\n", "A".repeat(4095));
    for _ in 0..(150 << 10) {
        std::io::Write::write_all(&mut encoder, line.as_bytes()).unwrap();
    }
    let compressed = encoder.finish().unwrap();
    assert!(compressed.len() < 1 << 20, "{} bytes", compressed.len());
    let (_, chunks) = cut(&compressed, 1 << 20);
    let refused = send_all(&Limits::default(), dir.path(), "ada", "bomb", &chunks);
    assert!(matches!(refused, Err(UploadError::TooLarge(ref m)) if m.contains("uncompressed")), "{refused:?}");
    assert!(!dir.path().join(store::relative_path("bomb")).exists(), "nothing stored");
    let leftovers: Vec<_> =
        std::fs::read_dir(store::dir(dir.path())).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(leftovers.iter().all(|name| name == "incoming"), "no temporary file left: {leftovers:?}");
}

/// Four million short lines compress to well under a megabyte and would make every
/// later read parse four million messages: the upload refuses them.
#[test]
fn a_transcript_of_more_lines_than_a_person_reads_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 19).unwrap();
    for _ in 0..4_000_000 {
        std::io::Write::write_all(&mut encoder, b"x\n").unwrap();
    }
    let compressed = encoder.finish().unwrap();
    assert!(compressed.len() < 1 << 20, "{} bytes", compressed.len());
    let (_, chunks) = cut(&compressed, 1 << 20);
    let refused = send_all(&Limits::default(), dir.path(), "ada", "tiny", &chunks);
    assert!(
        matches!(refused, Err(UploadError::TooLarge(ref m)) if m.contains(&format!("at most {MAX_TRANSCRIPT_LINES} lines"))),
        "{refused:?}"
    );
    assert!(!dir.path().join(store::relative_path("tiny")).exists(), "nothing stored");

    // Exactly the limit, with blank lines between, is kept.
    let text: String = (0..MAX_TRANSCRIPT_LINES).map(|i| format!("{i}\n\n")).collect();
    let (_, chunks) = chunked(text.as_bytes(), 1 << 20);
    assert!(send_all(&Limits::default(), dir.path(), "ada", "full", &chunks).unwrap().is_some());
}

#[test]
fn overlong_lines_and_oversized_windows_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("{{\"text\":\"{}\"}}\n", "b".repeat(MAX_LINE_BYTES));
    let (_, chunks) = chunked(long.as_bytes(), 1 << 20);
    let refused = send_all(&Limits::default(), dir.path(), "ada", "long", &chunks);
    assert!(matches!(refused, Err(UploadError::TooLarge(ref m)) if m.contains("line")), "{refused:?}");

    // A frame that asks for a 128 MiB window (zstd --long=27) is not decoded.
    let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    encoder.window_log(27).unwrap();
    encoder.long_distance_matching(true).unwrap();
    encoder.include_contentsize(false).unwrap();
    std::io::Write::write_all(&mut encoder, transcript(40_000).as_bytes()).unwrap();
    let (_, chunks) = cut(&encoder.finish().unwrap(), 1 << 20);
    let refused = send_all(&Limits::default(), dir.path(), "ada", "window", &chunks);
    assert!(matches!(refused, Err(UploadError::Invalid { field: "body", .. })), "{refused:?}");
}

#[test]
fn the_stored_transcript_is_redacted_line_by_line_as_a_whole_would_be() {
    let dir = tempfile::tempdir().unwrap();
    let text = "{\"apiKey\":\"sk-live-abcdef\",\"text\":\"AKIAIOSFODNN7EXAMPLE\"}\r\nplain AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n\nlast line without end";
    let (_, chunks) = chunked(text.as_bytes(), 7);
    let stored = send_all(&Limits::default(), dir.path(), "ada", "red", &chunks).unwrap().unwrap();
    let kept = store::read(dir.path(), &stored.relative_path).unwrap();
    assert_eq!(kept, crate::redact::redact_transcript(text));
    assert_eq!(stored.bytes, kept.len() as i64);
    assert!(!kept.contains("AKIAIOSFODNN7EXAMPLE") && !kept.contains("wJalrXUtnFEMI"), "{kept}");
}

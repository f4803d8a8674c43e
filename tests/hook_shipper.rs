//! The shipper through the real binary: at a session's end the transcript is redacted on
//! the laptop, compressed and uploaded in chunks to a loopback stand-in of the transcript
//! endpoint (the transcripts issue builds the real one); an upload that fails part-way
//! resumes with the missing chunks; an unchanged transcript is not sent again.

use crate::common;

use common::machine::*;
use common::transcript_standin::StandIn;
use common::*;

#[test]
fn a_finished_sessions_transcript_is_redacted_and_uploaded_once_resuming_after_failures() {
    let server = TestServer::spawn();
    let standin = StandIn::start(&server.ingest);
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    // A secret the person pasted into the conversation, and a pad so the upload spans
    // several chunks.
    replay_with_pasted_secrets(home, &standin.url, &server.token, 400, |i| format!("note {i}: {}", fastrand::u64(..)));

    standin.uploads.lock().unwrap().refuse_index_once = Some(2);
    let flush = |expect_ok: bool| {
        let out = client(home, &["flusher", "--once", "--transcript-chunk-bytes", "1024"], None);
        assert_eq!(out.status.success(), expect_ok, "{}", stderr(&out));
    };
    flush(true);
    let status = stdout(&client(home, &["status"], None));
    assert!(status.contains("transcripts: 1 waiting to upload (last error: chunk"), "{status}");
    assert!(standin.completed("claude_code", "3f1c2a9e-5b7d-4c1e-9a0f-6d2e8b4c7a11").is_empty());
    let posts_before = standin.uploads.lock().unwrap().chunk_posts;
    assert_eq!(posts_before, 3, "chunks 0 and 1 accepted, 2 refused, the rest not tried");

    flush(true);
    let uploads = standin.completed("claude_code", "3f1c2a9e-5b7d-4c1e-9a0f-6d2e8b4c7a11");
    assert_eq!(uploads.len(), 1, "uploaded once");
    let resent = standin.uploads.lock().unwrap().chunk_posts - posts_before;
    assert!(resent >= 2, "the second flush sent chunk 2 onwards ({resent} posts)");
    assert!(
        standin.uploads.lock().unwrap().partial.is_empty(),
        "chunks 0 and 1 were not sent again: the upload completed from what the stand-in held"
    );
    let uploaded = &uploads[0];
    assert!(uploaded.contains("[REDACTED:"), "secrets replaced by markers");
    for secret in PLANTED {
        assert!(!uploaded.contains(secret), "{secret} left the laptop");
    }
    assert!(uploaded.contains("note 399") && uploaded.contains("msg_01A"), "ordinary content kept");
    assert!(stdout(&client(home, &["status"], None)).contains("transcripts: 0 waiting"));

    let posts = standin.uploads.lock().unwrap().chunk_posts;
    flush(true);
    assert_eq!(standin.uploads.lock().unwrap().chunk_posts, posts, "an unchanged transcript is not sent again");
    assert_eq!(server.session(&server.token, "3f1c2a9e-5b7d-4c1e-9a0f-6d2e8b4c7a11").1["event_count"], 21);
}

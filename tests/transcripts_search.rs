//! Transcript search end to end: sessions made through `POST /v1/events`, transcripts in
//! Claude Code's and Codex's own formats uploaded to a real `sightline serve`, indexed by
//! its indexer thread and searched through `GET /api/search` on the web listener: words,
//! phrases, filters, dates, exclusions, sorting, paging, snippets, privacy between two
//! people and the errors that name what is wrong. Then the operator verbs on the same
//! data directory: deleting `index/` and running `index-transcripts` (and `--rebuild`)
//! gives the same hits; `backfill-redaction` takes a secret stored under older rules out
//! of the file and the index; and the deletion hook removes a session's documents and file.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use common::transcripts::*;
use common::*;
use serde_json::{Value, json};

/// 2025-03-03T10:00:00Z, 2025-03-10T09:00:00Z and 2025-03-20T16:00:00Z.
const MAR_3: i64 = 1_740_996_000_000;
const MAR_10: i64 = 1_741_597_200_000;
const MAR_20: i64 = 1_742_486_400_000;

/// The sessions of the search corpus (row ids) and Bo's token. Ada (the server's first
/// user) has `a1` (Claude Code, Sonnet, Mar 3: messages 0 user, 1 Bash call, 2 its
/// output, 3 answer), `a2` (Codex, Mar 10: 0 user, 1 exec_command call, 2 its output,
/// 3 answer) and `a3` (Claude Code, Opus, Mar 20: 0 user, 1 answer); Bo has `b1`, with
/// the same words as `a1`.
struct Corpus {
    a1: String,
    a2: String,
    a3: String,
    b1: String,
    bo: String,
}

const A1: &[Turn] = &[
    Turn::User("Please fix the flaky kestrel checkout test"),
    Turn::Shell {
        command: "cargo test kestrel_checkout",
        output: "test kestrel_checkout ... FAILED: timeout after 30s",
    },
    Turn::Assistant("The kestrel checkout retried too early; I raised the backoff."),
];
const A2: &[Turn] = &[
    Turn::User("Deploy the billing service for kestrel"),
    Turn::Shell { command: "make deploy-billing", output: "billing deployed to staging" },
    Turn::Assistant("Billing is deployed; the checkout is untouched."),
];
const A3: &[Turn] = &[
    Turn::User("Draw the checkout flowchart, not the kestrel one"),
    Turn::Assistant("Here is the flowchart for checkout."),
];
const B1: &[Turn] = &[
    Turn::User("Please fix the flaky kestrel checkout test for Bo"),
    Turn::Assistant("Bo's kestrel checkout is fixed."),
];

fn corpus(server: &TestServer) -> Corpus {
    let bo = user_with_token(&server.data_dir, "bo@example.com");
    let sonnet = "claude-sonnet-4-5-20250929";
    let upload = |token: &str, agent, session, model, start_ms, turns| {
        session_with_transcript(server, token, &Transcript { agent, session, model, start_ms, turns })
    };
    let corpus = Corpus {
        a1: upload(&server.token, "claude_code", "8d1f0c2e-0000-4000-8000-0000000000a1", sonnet, MAR_3, A1),
        a2: upload(&server.token, "codex", "019a5c1e-0000-7000-8000-0000000000a2", "gpt-5.1-codex", MAR_10, A2),
        a3: upload(&server.token, "claude_code", "8d1f0c2e-0000-4000-8000-0000000000a3", "claude-opus-4-1", MAR_20, A3),
        b1: upload(&bo, "claude_code", "8d1f0c2e-0000-4000-8000-0000000000b1", sonnet, MAR_3, B1),
        bo,
    };
    wait_searchable(server, &server.token, &[&corpus.a1, &corpus.a2, &corpus.a3]);
    wait_searchable(server, &corpus.bo, &[&corpus.b1]);
    corpus
}

fn at(session: &str, positions: &[u64]) -> Vec<(String, u64)> {
    positions.iter().map(|p| (session.to_string(), *p)).collect()
}

fn all<const N: usize>(parts: [Vec<(String, u64)>; N]) -> Vec<(String, u64)> {
    let mut hits: Vec<_> = parts.into_iter().flatten().collect();
    hits.sort();
    hits
}

/// A 400 whose error names `field` (the shape of `src/http/errors.rs`).
fn bad_request(server: &TestServer, params: &[(&str, &str)], field: &str) -> String {
    let (status, body) = search(server, Some(&server.token), params);
    assert_eq!(status, 400, "{params:?}: {body}");
    assert_eq!(body["error"]["code"], "bad_request", "{body}");
    assert_eq!(body["error"]["field"], field, "{params:?}: {body}");
    body["error"]["message"].as_str().expect("a message").to_string()
}

#[test]
fn search_finds_words_phrases_and_filtered_messages_in_the_callers_own_sessions_only() {
    let server = TestServer::spawn();
    let Corpus { a1, a2, a3, b1, bo } = &corpus(&server);
    let ada = server.token.as_str();

    // Words and phrases.
    let kestrel = all([at(a1, &[0, 1, 2, 3]), at(a2, &[0]), at(a3, &[0])]);
    assert_eq!(hits(&server, ada, "kestrel"), kestrel, "a command and its output are searchable too");
    assert_eq!(hits(&server, ada, "KESTREL"), kestrel, "case does not matter");
    assert_eq!(hits(&server, ada, "kestrel checkout"), all([at(a1, &[0, 1, 2, 3]), at(a3, &[0])]));
    assert_eq!(hits(&server, ada, "\"kestrel checkout\""), at(a1, &[0, 1, 2, 3]), "only adjacent, in order");
    assert_eq!(hits(&server, ada, "\"checkout kestrel\""), vec![], "the same words apart do not match");
    assert_eq!(hits(&server, ada, "flowchart"), at(a3, &[0, 1]));

    // Filters: tool, agent, model prefix, role, dates; exclusions.
    assert_eq!(hits(&server, ada, "tool:Bash"), at(a1, &[1, 2]), "the call and its result");
    assert_eq!(hits(&server, ada, "tool:bash role:tool"), at(a1, &[2]));
    assert_eq!(hits(&server, ada, "tool:exec_command billing"), at(a2, &[1, 2]));
    assert_eq!(hits(&server, ada, "agent:codex"), at(a2, &[0, 1, 2, 3]));
    assert_eq!(hits(&server, ada, "kestrel agent:codex"), at(a2, &[0]));
    assert_eq!(hits(&server, ada, "kestrel agent:claude-code"), all([at(a1, &[0, 1, 2, 3]), at(a3, &[0])]));
    assert_eq!(hits(&server, ada, "kestrel model:gpt-5"), at(a2, &[0]));
    assert_eq!(hits(&server, ada, "kestrel model:claude-opus"), at(a3, &[0]));
    assert_eq!(hits(&server, ada, "kestrel model:Claude"), all([at(a1, &[0, 1, 2, 3]), at(a3, &[0])]));
    assert_eq!(hits(&server, ada, "kestrel role:user"), all([at(a1, &[0]), at(a2, &[0]), at(a3, &[0])]));
    assert_eq!(hits(&server, ada, "kestrel after:2025-03-05"), all([at(a2, &[0]), at(a3, &[0])]));
    assert_eq!(hits(&server, ada, "kestrel before:2025-03-05"), at(a1, &[0, 1, 2, 3]));
    assert_eq!(hits(&server, ada, "kestrel after:2025-03-05 before:2025-03-15"), at(a2, &[0]));
    assert_eq!(hits(&server, ada, "kestrel before:2025-03-10"), at(a1, &[0, 1, 2, 3]), "before excludes its day");
    assert_eq!(
        hits(&server, ada, "kestrel after:2025-03-03T10:00:02Z"),
        all([at(a1, &[3]), at(a2, &[0]), at(a3, &[0])]),
        "an RFC 3339 time, to the second"
    );
    assert_eq!(hits(&server, ada, "kestrel -checkout"), at(a2, &[0]));
    assert_eq!(hits(&server, ada, "kestrel -\"kestrel checkout\""), all([at(a2, &[0]), at(a3, &[0])]));
    assert_eq!(hits(&server, ada, &format!("kestrel session:{a3}")), at(a3, &[0]));

    // Ordering, paging and what a hit says.
    let (status, newest) = search(&server, Some(ada), &[("q", "kestrel"), ("sort", "newest")]);
    assert_eq!((status, &newest["sort"], &newest["total"]), (200, &json!("newest"), &json!(6)), "{newest}");
    let order: Vec<(&str, u64, i64)> = newest["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["session_id"].as_str().unwrap(), h["position"].as_u64().unwrap(), h["time_ms"].as_i64().unwrap()))
        .collect();
    assert_eq!((order[0].0, order[0].2), (a3.as_str(), MAR_20), "{order:?}");
    assert_eq!((order[1].0, order[1].2), (a2.as_str(), MAR_10), "{order:?}");
    assert!(order.windows(2).all(|w| w[0].2 >= w[1].2), "newest first: {order:?}");
    assert_eq!((order[2].0, order[2].2), (a1.as_str(), MAR_3 + 2000), "{order:?}");
    let (_, relevance) = search(&server, Some(ada), &[("q", "kestrel")]);
    assert_eq!(relevance["sort"], "relevance");
    assert!(relevance["hits"][0]["score"].as_f64().unwrap() > 0.0, "{relevance}");

    let page = |limit: &str, offset: &str| {
        let (status, body) =
            search(&server, Some(ada), &[("q", "kestrel"), ("sort", "newest"), ("limit", limit), ("offset", offset)]);
        assert_eq!(status, 200, "{body}");
        body
    };
    let second = page("1", "1");
    assert_eq!((&second["total"], &second["limit"], &second["offset"]), (&json!(6), &json!(1), &json!(1)));
    assert_eq!(second["next_offset"], 2, "{second}");
    assert_eq!(second["hits"].as_array().unwrap().len(), 1);
    let hit = &second["hits"][0];
    assert_eq!((hit["session_id"].as_str(), hit["position"].as_u64()), (Some(a2.as_str()), Some(0)), "{hit}");
    assert_eq!(
        (&hit["role"], &hit["agent"], &hit["model"]),
        (&json!("user"), &json!("codex"), &json!("gpt-5.1-codex"))
    );
    assert_eq!(
        (&hit["time"], &hit["time_ms"], &hit["tools"]),
        (&json!("2025-03-10T09:00:00.000Z"), &json!(MAR_10), &json!([]))
    );
    assert_eq!(hit["snippet"]["fragment"], "Deploy the billing service for kestrel", "{hit}");
    assert!(hit["snippet"]["html"].as_str().unwrap().contains("<mark>kestrel</mark>"), "{hit}");
    assert_eq!(hit["snippet"]["highlights"], json!([[31, 38]]), "{hit}");
    let last = page("4", "4");
    assert_eq!((last["hits"].as_array().unwrap().len(), &last["next_offset"]), (2, &Value::Null), "{last}");
    let paged: std::collections::BTreeSet<String> =
        (0..6).map(|i| page("1", &i.to_string())["hits"][0].to_string()).collect();
    assert_eq!(paged.len(), 6, "pages of one do not overlap");
    let (_, call) = search(&server, Some(ada), &[("q", "tool:bash role:assistant")]);
    let call = &call["hits"][0];
    assert_eq!(
        (&call["role"], &call["tools"], &call["model"]),
        (&json!("assistant"), &json!(["bash"]), &json!("claude-sonnet-4-5-20250929"))
    );
    assert!(call["snippet"]["fragment"].as_str().unwrap().contains("cargo test kestrel_checkout"), "{call}");

    // Privacy: Bo sees his own session only, whatever he names; counts are his alone.
    assert_eq!(hits(&server, bo, "kestrel"), at(b1, &[0, 1]));
    assert_eq!(hits(&server, bo, "\"kestrel checkout\""), at(b1, &[0, 1]));
    assert_eq!(hits(&server, bo, &format!("kestrel session:{a1}")), vec![], "naming Ada's session does not help");
    assert_eq!(hits(&server, bo, &format!("session:{a1}")), vec![]);
    assert_eq!(hits(&server, bo, "billing"), vec![]);
    assert_eq!(hits(&server, bo, "agent:codex"), vec![]);
    assert_eq!(hits(&server, ada, &format!("kestrel session:{b1}")), vec![]);
    assert_eq!(results(&server, ada, "kestrel")["total"], 6, "Bo's two messages are not counted");
    let (status, body) = search(&server, None, &[("q", "kestrel")]);
    assert_eq!((status, &body["error"]["code"]), (401, &json!("unauthorized")), "{body}");
    let (status, _) = search(&server, Some("sl_hook_not_a_token"), &[("q", "kestrel")]);
    assert_eq!(status, 401);

    // Errors name the parameter (and, for the query, the term).
    let message = bad_request(&server, &[("q", "kestrel after:yesterday")], "q");
    assert!(message.contains("after:yesterday") && message.contains("YYYY-MM-DD"), "{message}");
    assert!(bad_request(&server, &[("q", "agent:vim")], "q").contains("agent:vim"));
    assert!(bad_request(&server, &[("q", "")], "q").contains("empty"));
    bad_request(&server, &[("q", "   ")], "q");
    bad_request(&server, &[], "q");
    assert!(bad_request(&server, &[("q", "-checkout")], "q").contains("only excludes"));
    for nothing in ["...", "-", "-checkout !!"] {
        assert!(bad_request(&server, &[("q", nothing)], "q").contains("no words"), "{nothing}");
    }
    bad_request(&server, &[("q", "kestrel"), ("limit", "0")], "limit");
    bad_request(&server, &[("q", "kestrel"), ("limit", "101")], "limit");
    assert!(bad_request(&server, &[("q", "kestrel"), ("limit", "abc")], "limit").contains("whole number"));
    bad_request(&server, &[("q", "kestrel"), ("offset", "-1")], "offset");
    bad_request(&server, &[("q", "kestrel"), ("offset", "5000")], "offset");
    assert!(bad_request(&server, &[("q", "kestrel"), ("sort", "weird")], "sort").contains("weird"));
}

/// The queries whose hits must survive rebuilding the index, per person.
fn snapshot(server: &TestServer, corpus: &Corpus) -> BTreeMap<String, Vec<(String, u64)>> {
    let ada = [
        "kestrel",
        "\"kestrel checkout\"",
        "tool:bash",
        "agent:codex",
        "billing -kestrel",
        "kestrel after:2025-03-05",
        "model:claude role:assistant",
    ];
    let mut seen = BTreeMap::new();
    for q in ada {
        seen.insert(format!("ada {q}"), hits(server, &server.token, q));
    }
    seen.insert("bo kestrel".into(), hits(server, &corpus.bo, "kestrel"));
    seen
}

fn index_transcripts(data_dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["index-transcripts", "--data-dir", data_dir.to_str().unwrap()];
    args.extend(extra);
    let run = sightline(&args);
    assert!(run.status.success(), "index-transcripts {extra:?}: {}", stderr(&run));
    stdout(&run)
}

#[test]
fn deleting_index_and_running_index_transcripts_gives_the_same_hits_for_the_same_queries() {
    let mut server = TestServer::spawn();
    let corpus = corpus(&server);
    let before = snapshot(&server, &corpus);
    assert!(before.values().all(|hits| !hits.is_empty()), "every query finds something: {before:?}");
    assert_eq!(before["ada kestrel"].len(), 6);

    assert_eq!(server.terminate(), Some(0));
    std::fs::remove_dir_all(server.data_dir.join("index")).unwrap();
    let out = index_transcripts(&server.data_dir, &[]);
    assert!(out.contains("indexed 4 transcripts (12 messages)"), "{out}");
    assert!(server.data_dir.join("index/meta.json").exists());
    server.start();
    assert_eq!(snapshot(&server, &corpus), before, "the rebuilt index answers as the old one did");

    // Beside the running server (whose indexer holds the writer only while it works).
    let out = index_transcripts(&server.data_dir, &[]);
    assert!(out.contains("indexed 0 transcripts (0 messages)"), "nothing new: {out}");

    assert_eq!(server.terminate(), Some(0));
    let out = index_transcripts(&server.data_dir, &["--rebuild"]);
    assert!(out.contains("indexed 4 transcripts (12 messages)"), "{out}");
    server.start();
    assert_eq!(snapshot(&server, &corpus), before, "--rebuild answers as the old one did");
}

const PELICAN: &[Turn] =
    &[Turn::User("Reconcile the pelican ledger"), Turn::Assistant("The pelican ledger is reconciled.")];

#[test]
fn backfill_redaction_takes_a_secret_stored_under_older_rules_out_of_the_file_and_the_index() {
    let mut server = TestServer::spawn();
    let transcript = Transcript {
        agent: "claude_code",
        session: "pelican-1",
        model: "claude-sonnet-4-5",
        start_ms: MAR_3,
        turns: PELICAN,
    };
    let session = session_with_transcript(&server, &server.token, &transcript);
    wait_searchable(&server, &server.token, &[&session]);
    assert_eq!(server.terminate(), Some(0));

    // The same session as a server under older rules would have stored it: the key pasted
    // in the prompt kept as it was.
    let secret = "AKIAIOSFODNN7EXAMPLE";
    let older = Transcript {
        turns: &[Turn::User("Reconcile the pelican ledger with key AKIAIOSFODNN7EXAMPLE"), PELICAN[1]],
        ..transcript
    };
    let conn = server.main_db();
    let path: String =
        conn.query_row("SELECT transcript_path FROM sessions WHERE id = ?1", [&session], |r| r.get(0)).unwrap();
    assert_eq!(path, format!("transcripts/{session}.jsonl.zst"));
    std::fs::write(server.data_dir.join(&path), zstd::bulk::compress(older.text().as_bytes(), 3).unwrap()).unwrap();
    conn.execute("UPDATE sessions SET transcript_rules_version = 0 WHERE id = ?1", [&session]).unwrap();
    conn.execute("UPDATE transcript_index SET indexed_ms = NULL WHERE session_id = ?1", [&session]).unwrap();
    let out = index_transcripts(&server.data_dir, &[]);
    assert!(out.contains("indexed 1 transcripts (2 messages)"), "{out}");
    let ada = user_id(&server.data_dir, "dev@example.com");
    assert_eq!(library_hits(&server.data_dir, &ada, secret), vec![(session.clone(), 0)], "the old rules let it in");

    let backfill = || {
        let run = sightline(&["backfill-redaction", "--data-dir", server.data_dir.to_str().unwrap()]);
        assert!(run.status.success(), "{}", stderr(&run));
        stdout(&run)
    };
    let out = backfill();
    let current = sightline::redact::RULES_VERSION;
    assert!(out.contains(&format!("redacted 1 transcripts again under rules version {current} (1 changed)")), "{out}");
    assert!(out.contains("indexed 1 transcripts (2 messages)"), "the changed transcript is indexed again: {out}");
    let text = stored_text(&server.data_dir, &session);
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains("Reconcile the pelican ledger with key [REDACTED:cloud_access_key]"), "{text}");
    assert!(text.contains("The pelican ledger is reconciled."), "{text}");
    let version: i64 = conn
        .query_row("SELECT transcript_rules_version FROM sessions WHERE id = ?1", [&session], |r| r.get(0))
        .unwrap();
    assert_eq!(version, i64::from(current));
    assert_eq!(library_hits(&server.data_dir, &ada, secret), vec![], "the secret is out of the index");
    assert_eq!(library_hits(&server.data_dir, &ada, "pelican"), vec![(session.clone(), 0), (session.clone(), 1)]);
    assert_eq!(library_hits(&server.data_dir, &ada, "\"key redacted cloud\""), vec![(session.clone(), 0)]);

    let out = backfill();
    assert!(out.contains(&format!("redacted 0 transcripts again under rules version {current} (0 changed)")), "{out}");
    assert!(out.contains("indexed 0 transcripts (0 messages)"), "{out}");

    server.start();
    assert_eq!(hits(&server, &server.token, secret), vec![]);
    assert_eq!(hits(&server, &server.token, "pelican ledger").len(), 2);
}

#[test]
fn the_deletion_hook_removes_a_sessions_documents_and_file_and_can_run_again() {
    let mut server = TestServer::spawn();
    let walrus = [Turn::User("Count the walrus herd"), Turn::Assistant("The walrus herd has twelve.")];
    let narwhal = [Turn::User("Count the narwhal pod"), Turn::Assistant("The narwhal pod has five.")];
    let upload = |session, turns| {
        let transcript = Transcript { agent: "codex", session, model: "gpt-5.1-codex", start_ms: MAR_10, turns };
        session_with_transcript(&server, &server.token, &transcript)
    };
    let (gone, kept) = (upload("walrus-1", &walrus[..]), upload("narwhal-1", &narwhal[..]));
    wait_searchable(&server, &server.token, &[&gone, &kept]);
    assert_eq!(server.terminate(), Some(0));
    let data_dir = server.data_dir.clone();
    let ada = user_id(&data_dir, "dev@example.com");
    let file = data_dir.join(format!("transcripts/{gone}.jsonl.zst"));
    assert!(file.exists());
    assert_eq!(library_hits(&data_dir, &ada, "walrus").len(), 2);

    let index = sightline::transcripts::index::TranscriptIndex::open(&data_dir).unwrap().index;
    let mut writer = index.writer(1, 15 << 20).unwrap();
    sightline::transcripts::indexing::forget(&index, &mut writer, &data_dir, &gone).expect("forget");
    assert!(!file.exists(), "the stored transcript is removed");
    assert_eq!(library_hits(&data_dir, &ada, "walrus"), vec![], "its documents are gone");
    assert_eq!(library_hits(&data_dir, &ada, &format!("session:{gone}")), vec![]);
    assert_eq!(library_hits(&data_dir, &ada, "narwhal"), vec![(kept.clone(), 0), (kept.clone(), 1)], "others stay");
    assert!(data_dir.join(format!("transcripts/{kept}.jsonl.zst")).exists());
    sightline::transcripts::indexing::forget(&index, &mut writer, &data_dir, &gone).expect("forgetting again is fine");
    assert_eq!(library_hits(&data_dir, &ada, "walrus"), vec![]);
    drop(writer);

    // A server started afterwards does not bring it back.
    server.start();
    wait_until(Duration::from_secs(30), "narwhal to be searchable again", || {
        !hits(&server, &server.token, "narwhal").is_empty()
    });
    assert_eq!(hits(&server, &server.token, "walrus"), vec![]);
}

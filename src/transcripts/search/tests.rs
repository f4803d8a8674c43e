//! Search on a real index in a temporary directory: words, phrases, filters, paging,
//! snippets, the time cap, and that a scope never lets another person's message through.

use super::*;
use crate::transcripts::index::documents::{self, SessionFacts};
use crate::transcripts::model::{Message, Role, ToolCall};

const DAY_MS: i64 = 86_400_000;
/// 2026-11-01T00:00:00Z.
const NOV_1: i64 = 1_793_491_200_000;

fn message(role: Role, text: &str, ts_ms: i64) -> Message {
    let mut message = Message::new(role, text);
    message.ts_ms = Some(ts_ms);
    message
}

fn facts(session: &str, owner: &str, agent: &str, model: &str) -> SessionFacts {
    SessionFacts {
        session_id: session.into(),
        owner_id: owner.into(),
        team_id: String::new(),
        agent_type: agent.into(),
        model: Some(model.into()),
        started_ms: NOV_1,
    }
}

/// Ada has two sessions (claude_code on Nov 1, codex on Nov 5); Bo has one that uses the
/// same words as Ada's first.
fn corpus() -> (tempfile::TempDir, TranscriptIndex) {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = TranscriptIndex::open(dir.path()).expect("open").index;
    let mut writer = index.writer(1, 15 << 20).expect("writer");
    let mut call = message(Role::Assistant, "Running the login tests now.", NOV_1 + 2_000);
    call.tool_calls.push(ToolCall { id: Some("t1".into()), name: "Bash".into(), input: "cargo test login".into() });
    let mut result = message(Role::Tool, "test login_rate_limit ... FAILED", NOV_1 + 3_000);
    result.tool_name = Some("Bash".into());
    let ada_first = vec![
        message(Role::User, "Fix the flaky login rate limit test please", NOV_1 + 1_000),
        call,
        result,
        message(Role::Assistant, "The limit resets too early; the rate window is wrong.", NOV_1 + 4_000),
    ];
    let ada_second = vec![
        message(Role::User, "Deploy the billing service", NOV_1 + 4 * DAY_MS),
        message(Role::Assistant, "Deploying billing with the login changes.", NOV_1 + 4 * DAY_MS + 1_000),
    ];
    let bo = vec![message(Role::User, "Fix the flaky login rate limit test for Bo", NOV_1 + 1_000)];
    let fields = *index.fields();
    documents::replace_session(
        &writer,
        &fields,
        &facts("s-ada-1", "ada", "claude_code", "claude-sonnet-4-5"),
        &ada_first,
    )
    .expect("add");
    documents::replace_session(&writer, &fields, &facts("s-ada-2", "ada", "codex", "gpt-5-codex"), &ada_second)
        .expect("add");
    documents::replace_session(&writer, &fields, &facts("s-bo-1", "bo", "claude_code", "claude-sonnet-4-5"), &bo)
        .expect("add");
    writer.commit().expect("commit");
    index.reload().expect("reload");
    (dir, index)
}

fn ada() -> Scope {
    Scope::OwnSessions { user_id: "ada".into() }
}

fn hits(index: &TranscriptIndex, scope: Scope, query: &str) -> Vec<(String, u64)> {
    let results = search(index, &SearchRequest::new(query, scope)).expect("search");
    assert!(!results.cut_short);
    results.hits.into_iter().map(|hit| (hit.session_id, hit.position)).collect()
}

#[test]
fn words_must_all_match_and_phrases_must_be_adjacent() {
    let (_dir, index) = corpus();
    assert_eq!(hits(&index, ada(), "flaky limit"), vec![("s-ada-1".into(), 0)]);
    let mut phrase = hits(&index, ada(), "\"rate limit\"");
    phrase.sort();
    assert_eq!(phrase, vec![("s-ada-1".into(), 0), ("s-ada-1".into(), 2)], "login_rate_limit holds it too");
    assert!(hits(&index, ada(), "\"limit rate\"").is_empty(), "order matters in a phrase");
    let mut login = hits(&index, ada(), "login");
    login.sort();
    assert_eq!(login.len(), 4, "{login:?}");
    assert_eq!(hits(&index, ada(), "login -billing").len(), 3);
    // A compound word is a phrase of its parts; tool output is searchable.
    assert_eq!(hits(&index, ada(), "login_rate_limit failed"), vec![("s-ada-1".into(), 2)]);
}

#[test]
fn filters_narrow_by_tool_agent_model_role_session_and_date() {
    let (_dir, index) = corpus();
    assert_eq!(hits(&index, ada(), "tool:bash"), vec![("s-ada-1".into(), 2), ("s-ada-1".into(), 1)]);
    assert_eq!(hits(&index, ada(), "login tool:BASH role:tool"), vec![("s-ada-1".into(), 2)]);
    assert_eq!(hits(&index, ada(), "login agent:codex").len(), 1);
    assert_eq!(hits(&index, ada(), "login model:gpt-5").len(), 1);
    assert_eq!(hits(&index, ada(), "login model:claude-sonnet").len(), 3);
    assert_eq!(hits(&index, ada(), "login session:s-ada-2").len(), 1);
    assert_eq!(hits(&index, ada(), "login after:2026-11-03").len(), 1);
    assert_eq!(hits(&index, ada(), "login before:2026-11-03").len(), 3);
    assert_eq!(hits(&index, ada(), "login after:2026-11-02 before:2026-11-03").len(), 0);
}

#[test]
fn a_scope_is_part_of_the_query_so_another_persons_messages_never_match() {
    let (_dir, index) = corpus();
    let bo = Scope::OwnSessions { user_id: "bo".into() };
    assert_eq!(hits(&index, bo.clone(), "flaky login"), vec![("s-bo-1".into(), 0)]);
    assert!(hits(&index, bo.clone(), "billing").is_empty());
    assert!(hits(&index, bo.clone(), "login session:s-ada-1").is_empty(), "naming Ada's session does not help");
    let results = search(&index, &SearchRequest::new("login", bo)).expect("search");
    assert_eq!(results.total, 1, "counts cover only the scope");
    let nobody = Scope::OwnSessions { user_id: "carol".into() };
    assert!(hits(&index, nobody, "login").is_empty());
}

#[test]
fn pages_snippets_and_sorting() {
    let (_dir, index) = corpus();
    let mut request = SearchRequest::new("login", ada());
    request.limit = 3;
    let first = search(&index, &request).expect("search");
    assert_eq!((first.total, first.hits.len(), first.next_offset), (4, 3, Some(3)));
    request.offset = 3;
    let second = search(&index, &request).expect("search");
    assert_eq!((second.hits.len(), second.next_offset), (1, None));
    let mut seen: Vec<_> = first.hits.iter().chain(&second.hits).map(|h| (h.session_id.clone(), h.position)).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 4, "pages do not overlap");

    let hit = &search(&index, &SearchRequest::new("\"rate window\"", ada())).expect("search").hits[0];
    let marked: Vec<&str> = hit.snippet.highlights.iter().map(|[s, e]| &hit.snippet.fragment[*s..*e]).collect();
    assert_eq!(marked, vec!["rate", "window"]);
    assert!(hit.snippet.html.contains("<mark>rate</mark> <mark>window</mark>"), "{}", hit.snippet.html);
    assert_eq!(
        (hit.agent.as_str(), hit.model.as_deref(), hit.role.as_str()),
        ("claude_code", Some("claude-sonnet-4-5"), "assistant")
    );
    assert_eq!(hit.time, "2026-11-01T00:00:04.000Z");

    let mut newest = SearchRequest::new("login", ada());
    newest.sort = Sort::Newest;
    let times: Vec<i64> = search(&index, &newest).expect("search").hits.iter().map(|h| h.time_ms).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]) && times[0] == NOV_1 + 4 * DAY_MS + 1_000, "{times:?}");
}

#[test]
fn a_search_past_its_time_cap_says_it_was_cut_short() {
    let (_dir, index) = corpus();
    let mut request = SearchRequest::new("login", ada());
    request.time_cap = Duration::ZERO;
    let results = search(&index, &request).expect("search");
    assert!(results.cut_short);
    assert!(results.hits.is_empty() && results.total == 0, "nothing was looked at");
}

#[test]
fn bad_requests_name_what_is_wrong() {
    let (_dir, index) = corpus();
    let mut request = SearchRequest::new("login", ada());
    request.limit = 0;
    assert!(matches!(search(&index, &request), Err(SearchError::Paging { field: "limit", .. })));
    request.limit = 10;
    request.offset = MAX_OFFSET + 1;
    assert!(matches!(search(&index, &request), Err(SearchError::Paging { field: "offset", .. })));
    for nothing in ["...", "-", "-login !!"] {
        match search(&index, &SearchRequest::new(nothing, ada())) {
            Err(SearchError::Query(err)) => assert!(err.message.contains("no words"), "{nothing}: {err:?}"),
            other => panic!("{nothing}: expected a query error, got {other:?}"),
        }
    }
    match search(&index, &SearchRequest::new("login before:soon", ada())) {
        Err(SearchError::Query(err)) => assert_eq!(err.term, "before:soon"),
        other => panic!("expected a query error, got {other:?}"),
    }
}

#[test]
fn replacing_a_session_leaves_one_copy() {
    let (_dir, index) = corpus();
    let mut writer = index.writer(1, 15 << 20).expect("writer");
    let again = vec![message(Role::User, "Deploy the billing service again", NOV_1)];
    documents::replace_session(&writer, index.fields(), &facts("s-ada-2", "ada", "codex", "gpt-5-codex"), &again)
        .expect("replace");
    writer.commit().expect("commit");
    index.reload().expect("reload");
    assert_eq!(hits(&index, ada(), "billing"), vec![("s-ada-2".into(), 0)]);
    assert!(hits(&index, ada(), "deploying").is_empty(), "the old documents are gone");
}

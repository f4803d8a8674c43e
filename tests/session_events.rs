//! Reading a session's events page by page, on both routes (the hook's own
//! `/v1/me/sessions/…/events` and the web's audited `/api/sessions/{id}/events`):
//! following `next_cursor` reads every event once, in order, across days; a cursor the
//! API did not issue is a 400, and one past the session's end an empty last page.

use crate::common;

use common::*;
use serde_json::Value;

/// A session of more than one page (and more than one day) is read whole through both
/// event routes by following `next_cursor`; a cursor the API did not issue is a 400.
#[test]
fn long_sessions_page_through_every_event_on_both_routes() {
    let server = TestServer::spawn();
    let token = user_with_token(&server.data_dir, "pat@example.com");
    let access = access_token(&server, "pat@example.com");
    // 2,499 events, the last 699 on the next day.
    let day_ms = 86_400_000;
    let start = (now_ms() / day_ms - 2) * day_ms + day_ms - 1_800_000;
    let events: Vec<Value> = session_events("long-one", start, 1800)
        .into_iter()
        .chain(session_events("long-one", start + 1_900_000, 700).into_iter().skip(1))
        .collect();
    for batch in events.chunks(500) {
        assert_eq!(server.post_events(&token, &envelope(batch.to_vec())).0, 200);
    }
    let sent: Vec<String> = events.iter().map(|e| e["event_id"].as_str().unwrap().to_string()).collect();
    let (_, view) = server.agent_session(&token, "claude_code", "long-one");
    let row_id = view["id"].as_str().unwrap().to_string();

    let read_all = |url: &dyn Fn(Option<&str>) -> String, auth: &str| -> Vec<String> {
        let mut ids = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let (status, page) = get_auth(&url(cursor.as_deref()), auth);
            assert_eq!(status, 200, "{page}");
            ids.extend(page["events"].as_array().unwrap().iter().map(|e| e["event_id"].as_str().unwrap().to_string()));
            match page["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => break,
            }
            assert!(ids.len() <= sent.len(), "paging does not repeat");
        }
        ids
    };
    let web = |cursor: Option<&str>| {
        format!(
            "{}/api/sessions/{row_id}/events?limit=1000{}",
            server.web,
            cursor.map(|c| format!("&cursor={c}")).unwrap_or_default()
        )
    };
    let hook = |cursor: Option<&str>| {
        format!(
            "{}/v1/me/sessions/claude_code/long-one/events?limit=1000{}",
            server.ingest,
            cursor.map(|c| format!("&cursor={c}")).unwrap_or_default()
        )
    };
    // Every event has its own millisecond, in the order sent.
    let expected = sent.clone();
    assert_eq!(read_all(&web, &access), expected, "the web route reads every event once, in order");
    assert_eq!(read_all(&hook, &token), expected, "the hook route too");

    // A well-formed cursor far past the session's end is an empty last page, answered
    // at once (it once walked the calendar from year -9999, one day at a time).
    let far = format!("9223372036854775807_{}", uuid::Uuid::now_v7());
    let (status, page) = get_auth(&format!("{}/api/sessions/{row_id}/events?cursor={far}", server.web), &access);
    assert_eq!((status, page["events"].as_array().map(Vec::len), page["next_cursor"].is_null()), (200, Some(0), true));
    for bad in ["nonsense", "12_not-a-uuid", "_"] {
        let (status, body) = get_auth(&format!("{}/api/sessions/{row_id}/events?cursor={bad}", server.web), &access);
        assert_eq!((status, body["error"]["field"].as_str()), (400, Some("cursor")), "{bad}: {body}");
    }
}

//! The developer's own pages (issue 16): `/` sends a signed-in person to `/me`; `/me`
//! shows their interactive usage of the period from the aggregates (a CI run never
//! counts), against the period before, with a chart and its table; a bad period is a
//! clear 400; and a headless Chromium walks the page in light and dark with no console
//! error, keeping screenshots under `target/test-artefacts/`.

use crate::common;

use std::time::Duration;

use common::inprocess::InProcess;
use common::webdriver::Browser;
use common::*;
use serde_json::json;

fn page(url: &str, token: Option<&str>) -> (u16, String, Option<String>) {
    let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
    let mut request = agent.get(url);
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    let mut response = request.call().unwrap();
    let location = response.headers().get("location").map(|l| l.to_str().unwrap().to_string());
    (response.status().as_u16(), response.body_mut().read_to_string().unwrap_or_default(), location)
}

/// A developer with two interactive turns ($0.045 each) and one CI turn today, after the
/// aggregates' refresh.
fn world() -> (tempfile::TempDir, InProcess, String) {
    let dir = tempfile::tempdir().unwrap();
    let token = user_with_token(dir.path(), "dev@example.com");
    let server = InProcess::start(dir.path(), &token);
    let now = server.clock.now_ms();
    let mut events = session_events("mine", now - 60_000, 10);
    let mut ci = event("turn_end", "ci-build", now - 30_000);
    ci["run_kind"] = json!("CI");
    events.push(ci);
    assert_eq!(server.server.post_events(&token, &envelope(events)).0, 200);
    server.clock.advance_ms(15_000);
    let conn = rusqlite::Connection::open(dir.path().join("main.db")).unwrap();
    wait_until(Duration::from_secs(10), "the aggregates' refresh", || {
        conn.query_row("SELECT count(*) FROM aggregate_dirty_buckets", [], |r| r.get::<_, i64>(0)).unwrap() == 0
    });
    (dir, server, token)
}

#[test]
fn me_shows_my_interactive_usage_and_the_root_sends_me_there() {
    let (_dir, server, hook) = world();
    let web = server.server.web.clone();
    let access = access_token(&server.server, "dev@example.com");

    let (status, _, location) = page(&format!("{web}/"), None);
    assert_eq!((status, location.as_deref()), (303, Some("/login?next=%2F")));
    let (status, _, location) = page(&format!("{web}/"), Some(&access));
    assert_eq!((status, location.as_deref()), (303, Some("/me")), "a developer lands on their own overview");
    let (status, _, location) = page(&format!("{web}/me"), None);
    assert_eq!((status, location.as_deref()), (303, Some("/login?next=%2Fme")), "not signed in: the login page");

    let (status, html, _) = page(&format!("{web}/me"), Some(&access));
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("the last 30 days"), "30 days by default");
    // Two interactive turns: $0.09; the CI run's turn is not counted.
    assert!(html.contains(r#"<div class="label">Spend</div><div class="value">$0.09</div>"#), "{html}");
    assert!(html.contains("new: nothing the previous 30 days"), "{html}");
    assert!(html.contains("<svg") && html.contains("Spend per day (USD)"), "the chart");
    assert_eq!(
        html.matches("<td>$0.09</td>").count(),
        4,
        "today's row of the table, the agent's, the model family's and its exact id's"
    );
    // The model is its family, with the sessions that used it (not 0), and no "(no model)"
    // row for the events that carry none; the exact id is one click away.
    assert!(html.contains("<td>claude_code</td>") && html.contains("<td>claude-sonnet-4-5</td>"), "{html}");
    assert!(html.contains("<td>claude-sonnet-4-5</td><td>$0.09</td><td>100%</td><td>"), "the family's row: {html}");
    assert!(
        html.contains("<summary>Exact model ids</summary>") && html.contains("<td>claude-sonnet-4-5-20250929</td>")
    );
    assert!(!html.contains("(no model)"), "{html}");
    let models = html.split("<h2>Models</h2>").nth(1).unwrap().split("</tr>").nth(1).unwrap();
    assert!(models.contains("</td><td>1</td><td>"), "one session used the model: {models}");
    assert!(html.contains("<td>claude_code:Bash</td>"), "the tools: {html}");

    // The list: both sessions, the CI run apart under its run kind, and the CSV.
    let (status, html, _) = page(&format!("{web}/me/sessions"), Some(&access));
    assert_eq!(status, 200, "{html}");
    assert!(
        html.contains("2 sessions") && html.contains("<td>INTERACTIVE</td>") && html.contains("<td>CI</td>"),
        "{html}"
    );
    let (status, html, _) = page(&format!("{web}/me/runs"), Some(&access));
    assert_eq!(status, 200);
    assert!(
        html.contains(r#"<div class="label">CI runs</div><div class="value">1</div><div class="muted">$0.05"#),
        "{html}"
    );
    assert!(html.contains("/me/sessions?run_kind=CI"), "{html}");
    let (_, html, _) = page(&format!("{web}/me/sessions?run_kind=CI"), Some(&access));
    assert!(html.contains("1 sessions") && !html.contains("<td>INTERACTIVE</td>"), "{html}");
    let (status, csv, _) = page(&format!("{web}/me/sessions?format=csv&sort=cost&order=desc"), Some(&access));
    assert_eq!(status, 200);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("id,name,agent,session,run_kind,started"), "{csv}");
    assert_eq!(lines.len(), 3, "a header and two sessions: {csv}");
    assert!(lines[1].contains(",mine,INTERACTIVE,") && lines[1].contains(",0.090000,"), "the costlier first: {csv}");
    // One session's timeline, linked from the list.
    let id: String = rusqlite::Connection::open(server.server.data_dir.join("main.db"))
        .unwrap()
        .query_row("SELECT id FROM sessions WHERE agent_session_id = 'mine'", [], |r| r.get(0))
        .unwrap();
    assert!(html_list_links_to(&web, &access, &id));
    let (status, html, _) = page(&format!("{web}/sessions/{id}"), Some(&access));
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("<code>mine</code>") && html.contains("<td>prompt</td>"), "{html}");
    assert!(html.contains("claude_code:Bash: success"), "tool calls with their outcome: {html}");
    assert!(html.contains("claude-sonnet-4-5-20250929: 1000 in, 500 out"), "each turn's tokens: {html}");
    assert!(html.contains("<td>$0.0450</td>"), "each turn's cost: {html}");
    assert!(html.contains("notification: permission"), "{html}");
    let (status, _, _) = page(&format!("{web}/sessions/no-such-session"), Some(&access));
    assert_eq!(status, 404);
    let (status, html, _) = page(&format!("{web}/sessions/{id}?after=nonsense"), Some(&access));
    assert!(status == 400 && html.contains("after must be a cursor"), "{html}");

    for (query, field) in [
        ("sort=price", "sort"),
        ("outcome=won", "outcome"),
        ("from=yesterday", "from"),
        ("page=0", "page"),
        ("colour=red", "colour"),
    ] {
        let (status, html, _) = page(&format!("{web}/me/sessions?{query}"), Some(&access));
        assert_eq!(status, 400, "{query}");
        assert!(html.contains(&format!("{field} must be")), "{query}: {html}");
    }

    // Insights: the money by model with what caching saved (20,000 cache reads at $3 fresh
    // against $0.30 cached: $0.054), and no comparison with fewer than five developers.
    let (status, html, _) = page(&format!("{web}/me/insights"), Some(&access));
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("Caching saved you about <strong>$0.05</strong>"), "{html}");
    assert!(html.contains("<td>claude-sonnet-4-5-20250929</td><td>$0.09</td><td>100%</td>"), "{html}");
    assert!(html.contains("Fewer than five developers"), "{html}");
    // Four more developers with sessions: now a band, naming nobody.
    for i in 0..4 {
        let email = format!("peer{i}@example.com");
        let token = user_with_token(&server.server.data_dir, &email);
        let events = session_events(&format!("peer-{i}"), server.clock.now_ms() - 1_000, 5 + i);
        assert_eq!(server.server.post_events(&token, &envelope(events)).0, 200);
    }
    server.clock.advance_ms(15_000);
    let conn = rusqlite::Connection::open(server.server.data_dir.join("main.db")).unwrap();
    wait_until(Duration::from_secs(10), "the refresh", || {
        conn.query_row("SELECT count(*) FROM aggregate_dirty_buckets", [], |r| r.get::<_, i64>(0)).unwrap() == 0
    });
    let (_, html, _) = page(&format!("{web}/me/insights"), Some(&access));
    assert!(html.contains("of 5 developers"), "{html}");
    assert!(!html.contains("peer0@example.com") && !html.contains("peer-0"), "nobody is named");

    // The search page, over my own transcripts, matches marked, linked to the session.
    let secret = format!("here, with ghp_{}", "a1B2c3D4e5".repeat(4).chars().take(36).collect::<String>());
    let turns = [
        common::transcripts::Turn::User("where is the zanzibar migration?"),
        common::transcripts::Turn::Assistant(&secret),
    ];
    let transcript = common::transcripts::Transcript {
        agent: "claude_code",
        session: "mine",
        model: "claude-sonnet-4-5-20250929",
        start_ms: server.clock.now_ms(),
        turns: &turns,
    };
    assert_eq!(common::transcripts::upload(&server.server, &hook, "claude_code", "mine", &transcript.text()).0, 200);
    common::transcripts::wait_searchable(&server.server, &hook, &[&id]);
    let (status, html, _) = page(&format!("{web}/me/search?q=zanzibar"), Some(&access));
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("1 matching messages") && html.contains("<mark>zanzibar</mark>"), "{html}");
    assert!(html.contains(&format!("href=\"/sessions/{id}\"")), "{html}");
    // The transcript, rendered: the secret redacted and marked; find lists the matches.
    let (status, html, _) = page(&format!("{web}/sessions/{id}/transcript"), Some(&access));
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("where is the zanzibar migration?"), "{html}");
    assert!(html.contains(r#"<span class="redacted">[REDACTED:code_hosting_token]</span>"#), "{html}");
    assert!(!html.contains("ghp_a1B2"), "the secret never reaches the page");
    let (_, html, _) = page(&format!("{web}/sessions/{id}/transcript?find=ZANZIBAR"), Some(&access));
    assert!(html.contains("1 messages contain") && html.contains("<mark>zanzibar</mark>"), "{html}");
    let (_, html, _) = page(&format!("{web}/sessions/{id}"), Some(&access));
    assert!(html.contains(&format!("href=\"/sessions/{id}/transcript\"")), "the session links its transcript");
    assert_eq!(page(&format!("{web}/sessions/{id}/transcript?page=0"), Some(&access)).0, 400);
    let (status, html, _) = page(&format!("{web}/me/search"), Some(&access));
    assert!(status == 200 && !html.contains("matching messages"), "no query: the form alone");
    let (status, _, _) = page(&format!("{web}/me/search?q=x&sort=oldest"), Some(&access));
    assert_eq!(status, 400);

    let (status, html, _) = page(&format!("{web}/me?days=7"), Some(&access));
    assert!(status == 200 && html.contains("the last 7 days"));
    let (status, html, _) = page(&format!("{web}/me?days=12"), Some(&access));
    assert_eq!(status, 400);
    assert!(
        html.contains("days must be 7, 30 or 90, not &quot;12&quot;") || html.contains("days must be 7, 30 or 90"),
        "{html}"
    );

    // Text a developer controls never reaches a spreadsheet as a formula.
    let formula = r#"=HYPERLINK("http://x.example","open")"#;
    assert_eq!(server.server.post_events(&hook, &envelope(session_events(formula, server.clock.now_ms(), 2))).0, 200);
    let (_, csv, _) = page(&format!("{web}/me/sessions?format=csv"), Some(&access));
    assert!(csv.contains(r#","'=HYPERLINK(""http://x.example"",""open"")",INTERACTIVE,"#), "{csv}");
    assert!(!csv.lines().any(|line| line.contains(",=")), "no cell begins a formula: {csv}");
}

#[test]
fn a_browser_walks_me_in_light_and_dark_with_no_console_error() {
    let (_dir, server, hook) = world();
    let turns = [common::transcripts::Turn::User("walk <me> through it"), common::transcripts::Turn::Assistant("sure")];
    let transcript = common::transcripts::Transcript {
        agent: "claude_code",
        session: "mine",
        model: "claude-sonnet-4-5-20250929",
        start_ms: server.clock.now_ms(),
        turns: &turns,
    };
    assert_eq!(common::transcripts::upload(&server.server, &hook, "claude_code", "mine", &transcript.text()).0, 200);
    let id: String = rusqlite::Connection::open(server.server.data_dir.join("main.db"))
        .unwrap()
        .query_row("SELECT id FROM sessions WHERE agent_session_id = 'mine'", [], |r| r.get(0))
        .unwrap();
    let web = server.server.web.clone();
    let browser = Browser::start();
    // The check can fail: a page that logs an error is seen.
    browser.goto("data:text/html,<script>console.error('seen')</script>");
    assert_eq!(browser.console_errors().len(), 1);

    browser.goto(&format!("{web}/"));
    browser.wait_for(Duration::from_secs(20), "the login form", |b| b.url().contains("/login"));
    browser.type_into("input[name=email]", "dev@example.com");
    browser.type_into("input[name=password]", TEST_PASSWORD);
    browser.click("form[action='/login'] button[type=submit]");
    browser.wait_for(Duration::from_secs(20), "the overview", |b| b.url().ends_with("/me"));
    let artefacts = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("../test-artefacts");
    for theme in ["light", "dark"] {
        browser.script(&format!("document.documentElement.dataset.theme = '{theme}';"));
        assert!(browser.text("h1").contains("the last 30 days"));
        assert!(browser.find("svg[role=img]").is_some(), "the chart is drawn");
        browser.screenshot(&artefacts.join(format!("me-{theme}.png")));
        let background = browser.script("return getComputedStyle(document.body).backgroundColor;");
        let dark = background.as_str().unwrap() == "rgb(13, 17, 23)";
        assert_eq!(dark, theme == "dark", "{theme}: {background}");
    }
    browser.goto(&format!("{web}/me/sessions"));
    browser.wait_for(Duration::from_secs(20), "the list", |b| b.shows("h1", "My sessions"));
    browser.screenshot(&artefacts.join("me-sessions.png"));
    browser.click("td a");
    browser.wait_for(Duration::from_secs(20), "a session's timeline", |b| b.shows("h1", "session"));
    browser.screenshot(&artefacts.join("me-session.png"));
    assert_eq!(browser.console_errors(), Vec::<String>::new(), "no console error on the list or a session");
    browser.goto(&format!("{web}/sessions/{id}/transcript"));
    browser.wait_for(Duration::from_secs(20), "the transcript", |b| b.shows("h1", "Transcript"));
    assert!(browser.text(".message.user .text").contains("walk <me> through it"), "escaped, shown as written");
    browser.screenshot(&artefacts.join("me-transcript.png"));
    for (path, heading) in [
        ("/me/insights", "My insights"),
        ("/me/search?q=bash", "Search my transcripts"),
        ("/me/prs", "My pull requests"),
        ("/me/runs", "My CI and evaluation runs"),
    ] {
        browser.goto(&format!("{web}{path}"));
        browser.wait_for(Duration::from_secs(20), heading, |b| b.shows("h1", heading));
    }
    // Every page of mine fits a laptop's and a phone's window.
    let session_page = format!("/sessions/{id}");
    let transcript_page = format!("/sessions/{id}/transcript");
    let mine = ["/me", "/me/sessions", &session_page, &transcript_page, "/me/insights", "/me/search?q=bash"];
    for path in mine.into_iter().chain(["/me/prs", "/me/runs", "/me/settings", "/me/grants", "/me/settings/audit"]) {
        browser.goto(&format!("{web}{path}"));
        browser.at_each_width(path, |_| {});
    }
    assert_eq!(
        browser.console_errors(),
        Vec::<String>::new(),
        "no console error on insights, search, pull requests or runs"
    );
    // Settings: a form posted by the browser (the CSRF check sees our own origin).
    browser.goto(&format!("{web}/me/settings"));
    browser.wait_for(Duration::from_secs(20), "the settings", |b| b.shows("h1", "My settings"));
    assert_eq!(browser.script("return document.querySelector('input[name=share_transcripts]').checked;"), json!(false));
    browser.click("input[name=share_transcripts]");
    browser.click("form[action='/me/settings/visibility'] button[type=submit]");
    browser.wait_for(Duration::from_secs(20), "the saved settings", |b| {
        b.script("return document.querySelector('input[name=share_transcripts]').checked;") == json!(true)
    });
    browser.screenshot(&artefacts.join("me-settings.png"));
    assert_eq!(browser.console_errors(), Vec::<String>::new(), "no console error on settings");
    browser.goto(&format!("{web}/me"));
    browser.click("a[href='/me?days=7']");
    browser.wait_for(Duration::from_secs(20), "the 7-day view", |b| b.shows("h1", "7 days"));
    assert_eq!(browser.console_errors(), Vec::<String>::new(), "no console error on /me");
}

/// Whether the list's row of the session links to its timeline.
fn html_list_links_to(web: &str, access: &str, id: &str) -> bool {
    page(&format!("{web}/me/sessions"), Some(access)).1.contains(&format!("href=\"/sessions/{id}\""))
}

#[test]
fn settings_change_my_flags_revoke_my_tokens_and_ask_for_deletion() {
    let server = TestServer::spawn();
    let (web, hook) = (server.web.clone(), server.token.clone());
    let access = access_token(&server, "dev@example.com");
    let (status, html, _) = page(&format!("{web}/me/settings"), Some(&access));
    assert_eq!(status, 200, "{html}");
    assert!(html.contains(r#"name="share_transcripts">"#), "transcripts are not shared by default: {html}");
    assert!(html.contains(r#"name="team_drill_in" checked>"#), "{html}");
    let token_id: String =
        server.main_db().query_row("SELECT id FROM auth_tokens WHERE kind = 'hook'", [], |r| r.get(0)).unwrap();
    assert!(html.contains(&format!("/me/settings/tokens/{token_id}/revoke")), "my hook token is listed");
    assert!(html.contains("command line (password)") || html.contains("browser"), "my sign-ins are listed: {html}");

    // The flags: what is ticked is on, what is not is off.
    let (status, location) =
        post_form(&format!("{web}/me/settings/visibility"), &access, "form=visibility&share_transcripts=on");
    assert_eq!((status, location.as_deref()), (303, Some("/me/settings")));
    let (_, flags) = get_auth(&format!("{web}/api/me/visibility"), &access);
    assert_eq!(
        (flags["share_transcripts"].as_bool(), flags["team_drill_in"].as_bool()),
        (Some(true), Some(false)),
        "{flags}"
    );
    let (status, _) = post_form(&format!("{web}/me/settings/visibility"), &access, "share_transcripts=on");
    assert_eq!(status, 400, "a form that is not the settings form changes nothing");

    // Someone else's token is a 404; my own is revoked, and the hook is refused after.
    let other = user_with_token(&server.data_dir, "bo@example.com");
    let other_id: String = server
        .main_db()
        .query_row(
            "SELECT t.id FROM auth_tokens t JOIN users u ON u.id = t.user_id WHERE u.email = 'bo@example.com'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(post_form(&format!("{web}/me/settings/tokens/{other_id}/revoke"), &access, "").0, 404);
    assert_eq!(
        server.post_events(&other, &envelope(session_events("bo-1", now_ms(), 2))).0,
        200,
        "Bo's token still works"
    );
    assert_eq!(post_form(&format!("{web}/me/settings/tokens/{token_id}/revoke"), &access, "").0, 303);
    assert_eq!(server.post_events(&hook, &envelope(session_events("s", now_ms(), 2))).0, 401, "my revoked hook token");

    // Asking for deletion: the page then says where it stands.
    assert_eq!(post_form(&format!("{web}/me/settings/deletion"), &access, "").0, 303);
    let (_, html, _) = page(&format!("{web}/me/settings"), Some(&access));
    assert!(html.contains("You asked for your data to be deleted on"), "{html}");
}

/// A server where dev@example.com (the hook token's owner) and lead@example.com, their
/// lead, make up team shop, and one session of dev's whose transcript says `said`.
fn shop_with_a_lead(said: &str) -> (TestServer, String) {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "lead@example.com", "MEMBER");
    let path = server.data_dir.to_str().unwrap().to_string();
    for args in [
        &["team", "add", "--data-dir", &path, "--slug", "shop", "--name", "Shop"][..],
        &["team", "add-member", "--data-dir", &path, "--team", "shop", "--email", "dev@example.com"][..],
        &["team", "add-member", "--data-dir", &path, "--team", "shop", "--email", "lead@example.com", "--role", "lead"]
            [..],
    ] {
        assert!(sightline(args).status.success());
    }
    let turns = [common::transcripts::Turn::User(said), common::transcripts::Turn::Assistant("ok")];
    let transcript = common::transcripts::Transcript {
        agent: "claude_code",
        session: "mine",
        model: "claude-sonnet-4-5-20250929",
        start_ms: now_ms(),
        turns: &turns,
    };
    let id = common::transcripts::session_with_transcript(&server, &server.token, &transcript);
    (server, id)
}

/// The owner's switch on one session's transcript overrides their flag, both ways: the
/// team lead reads it only while it is shared, and the reads are audited.
#[test]
fn the_owner_switches_one_sessions_transcript_on_and_off_for_their_team_lead() {
    let (server, id) = shop_with_a_lead("a private thought");
    let web = server.web.clone();
    let (owner, lead) = (access_token(&server, "dev@example.com"), access_token(&server, "lead@example.com"));
    let lead_reads = || get_auth(&format!("{web}/api/sessions/{id}/transcript"), &lead).0;
    let switch =
        |value: &str| post_form(&format!("{web}/me/sessions/{id}/sharing"), &owner, &format!("transcript={value}"));

    assert_eq!(lead_reads(), 404, "transcripts are not shared by default");
    assert_eq!(switch("share"), (303, Some(format!("/sessions/{id}"))));
    assert_eq!(lead_reads(), 200, "this session's transcript is shared");
    let (_, html, _) = page(&format!("{web}/sessions/{id}"), Some(&owner));
    assert!(html.contains(r#"value="share" checked"#), "the page shows the switch: {html}");
    // The owner shares everything, but not this one.
    let patched = agent()
        .patch(format!("{web}/api/me/visibility"))
        .header("Authorization", format!("Bearer {owner}"))
        .content_type("application/json")
        .send(r#"{"share_transcripts": true}"#)
        .unwrap();
    assert_eq!(patched.status(), 200);
    assert_eq!(switch("private").0, 303);
    assert_eq!(lead_reads(), 404, "not shared, whatever the flag says");
    assert_eq!(switch("follow").0, 303);
    assert_eq!(lead_reads(), 200, "back to the flag, which shares");
    let reads: i64 = server
        .main_db()
        .query_row("SELECT count(*) FROM audit_log WHERE action = 'TRANSCRIPT_READ' AND target = ?1", [&id], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(reads, 2, "each read by the lead is audited");
    // Only the owner flips it; nonsense is refused.
    assert_eq!(post_form(&format!("{web}/me/sessions/{id}/sharing"), &lead, "transcript=share").0, 404);
    assert_eq!(switch("everyone").0, 400);
}

/// A transcript is read a window at a time: the API pages like the events API (offset,
/// limit, total, next offset; a bad value is a 400 naming it), the page shows its 200
/// messages and counts them all, and `find` counts every match while listing the first.
#[test]
fn a_transcript_is_read_a_window_at_a_time() {
    let server = TestServer::spawn();
    let (web, hook) = (server.web.clone(), server.token.clone());
    let words: Vec<String> = (0..450).map(|i| format!("prompt number {i}")).collect();
    let turns: Vec<common::transcripts::Turn<'_>> =
        words.iter().map(|text| common::transcripts::Turn::User(text.as_str())).collect();
    let transcript = common::transcripts::Transcript {
        agent: "claude_code",
        session: "long",
        model: "claude-sonnet-4-5-20250929",
        start_ms: now_ms(),
        turns: &turns,
    };
    let id = common::transcripts::session_with_transcript(&server, &hook, &transcript);
    let owner = access_token(&server, "dev@example.com");
    let api = |query: &str| get_auth(&format!("{web}/api/sessions/{id}/transcript{query}"), &owner);

    let (status, first) = api("");
    assert_eq!(status, 200, "{first}");
    assert_eq!((first["offset"].clone(), first["total"].clone()), (json!(0), json!(450)));
    assert_eq!(first["messages"].as_array().unwrap().len(), 200, "the default window");
    assert_eq!(first["next_offset"], json!(200));
    assert_eq!(first["messages"][0]["text"], json!("prompt number 0"));
    let (_, last) = api("?offset=400&limit=100");
    let positions: Vec<u64> =
        last["messages"].as_array().unwrap().iter().map(|m| m["position"].as_u64().unwrap()).collect();
    assert_eq!(positions, (400..450).collect::<Vec<u64>>());
    assert_eq!(last["next_offset"], json!(null), "nothing after the last window");
    assert_eq!(last["messages"][49]["text"], json!("prompt number 449"));
    for (query, field) in [("?limit=501", "limit"), ("?limit=0", "limit"), ("?offset=x", "offset")] {
        let (status, body) = api(query);
        assert_eq!((status, body["error"]["field"].as_str()), (400, Some(field)), "{query}: {body}");
    }

    let (status, html, _) = page(&format!("{web}/sessions/{id}/transcript?page=3"), Some(&owner));
    assert_eq!(status, 200);
    assert!(html.contains("450 messages, page 3 of 3"), "{html}");
    assert!(html.contains("prompt number 400") && !html.contains("prompt number 399<"), "only page 3's messages");
    let (_, html, _) = page(&format!("{web}/sessions/{id}/transcript?find=PROMPT"), Some(&owner));
    assert!(html.contains("450 messages contain “PROMPT”; the first 200 are listed."), "{html}");
}

/// A malformed path, query or body answers in the route's error family: JSON naming
/// the problem on the API, the product's HTML error page on a page, never axum's plain
/// text; axum's status codes are kept.
#[test]
fn malformed_requests_answer_in_the_error_family_of_their_route() {
    let (_dir, server, _hook) = world();
    let web = server.server.web.clone();
    let access = access_token(&server.server, "dev@example.com");

    // A path segment that is not UTF-8, on a page and on the API.
    let (status, html, _) = page(&format!("{web}/sessions/%FF%FE"), Some(&access));
    assert_eq!(status, 400, "{html}");
    assert!(html.contains("<h1>Bad Request</h1>") && html.contains("</html>"), "the HTML error page: {html}");
    let (status, body) = get_auth(&format!("{web}/api/sessions/%FF%FE/events"), &access);
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("bad_request")), "{body}");

    // A JSON body that does not parse, and one whose field has the wrong type.
    let url = format!("{web}/api/grants");
    let (status, body) = post_raw(&url, &access, &[], b"{not json".to_vec());
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("bad_request")), "{body}");
    let (status, body) = post_json(&url, &access, &json!({"subject": 5, "justification": "x", "duration_hours": 1}));
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("invalid_parameter")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("subject"), "names the field: {body}");
}

/// A team lead opens a member's session from the team's list, at the one session
/// address: the page says on what ground they read it and that the read is audited, shows
/// none of the owner's controls, offers the transcript only once the owner shares it, and
/// the owner finds each read under "Who read my data".
#[test]
fn a_lead_opens_a_members_session_and_shared_transcript_with_the_ground_said() {
    let (server, id) = shop_with_a_lead("the checkout flaked");
    let web = server.web.clone();
    let (owner, lead) = (access_token(&server, "dev@example.com"), access_token(&server, "lead@example.com"));

    let (status, list, _) = page(&format!("{web}/team/shop/sessions"), Some(&lead));
    assert_eq!(status, 200);
    assert!(list.contains(&format!("href=\"/sessions/{id}\"")), "the team's list opens the session: {list}");
    let (status, html, _) = page(&format!("{web}/sessions/{id}"), Some(&lead));
    assert_eq!(status, 200, "{html}");
    let ground = &html[html.find("id=\"reading-ground\"").expect("the banner")..];
    assert!(ground.contains("as their team lead") && ground.contains("recorded in the audit log"), "{ground}");
    assert!(!html.contains("name=\"transcript\"") && !html.contains("name=\"thumbs\""), "no owner controls: {html}");
    assert!(html.contains("Its transcript is not shared.") && !html.contains("/transcript\">"), "{html}");
    assert_eq!(page(&format!("{web}/sessions/{id}/transcript"), Some(&lead)).0, 404);

    let shared = post_form(&format!("{web}/me/sessions/{id}/sharing"), &owner, "transcript=share");
    assert_eq!(shared.0, 303);
    let (_, html, _) = page(&format!("{web}/sessions/{id}"), Some(&lead));
    assert!(html.contains(&format!("href=\"/sessions/{id}/transcript\"")), "{html}");
    let (status, html, _) = page(&format!("{web}/sessions/{id}/transcript"), Some(&lead));
    assert_eq!(status, 200);
    assert!(html.contains("the checkout flaked") && html.contains("id=\"reading-ground\""), "{html}");

    // The owner's own page has no banner; their audit page lists the lead's reads.
    let (_, mine, _) = page(&format!("{web}/sessions/{id}"), Some(&owner));
    assert!(!mine.contains("reading-ground") && mine.contains("name=\"thumbs\""));
    let (_, audit, _) = page(&format!("{web}/me/settings/audit"), Some(&owner));
    assert!(audit.contains("lead@example.com") && audit.contains("TRANSCRIPT_READ"), "{audit}");
    assert!(audit.contains("SESSION_READ"), "{audit}");
}

/// A session is named by what it was about for whoever may read its transcript, and by
/// where it worked for anyone else: the owner's lists, page and audit page show its first
/// prompt (one line), the lead's team list and session page its neutral name, and the
/// lead sees the title only on the transcript page, whose read is audited.
#[test]
fn a_session_is_named_by_its_first_prompt_only_for_readers_of_its_transcript() {
    let (server, id) = shop_with_a_lead("Fix the checkout flake\nIt fails one run in five.");
    let web = server.web.clone();
    let (owner, lead) = (access_token(&server, "dev@example.com"), access_token(&server, "lead@example.com"));
    let title = "Fix the checkout flake…";

    // The indexer names the session once it has read the stored transcript.
    let mut mine = String::new();
    for _ in 0..100 {
        mine = page(&format!("{web}/me/sessions"), Some(&owner)).1;
        if mine.contains(title) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(mine.contains(&format!("href=\"/sessions/{id}\" class=\"session-name\"")), "{mine}");
    assert!(mine.contains(title), "the owner's list names it by its first line: {mine}");
    assert!(!mine.contains(">mine</code>"), "not by the agent's session id: {mine}");
    let (_, csv, _) = page(&format!("{web}/me/sessions?format=csv"), Some(&owner));
    assert!(csv.starts_with("id,name,agent,") && csv.contains(title), "{csv}");
    let (_, own_page, _) = page(&format!("{web}/sessions/{id}"), Some(&owner));
    assert!(own_page.contains(&format!("<h1 class=\"session-title\">{title}</h1>")), "{own_page}");

    // The lead reads metadata: a neutral name on the team's list and the session page.
    let (_, list, _) = page(&format!("{web}/team/shop/sessions"), Some(&lead));
    assert!(!list.contains("checkout flake") && list.contains("a claude_code session"), "{list}");
    let (_, theirs, _) = page(&format!("{web}/sessions/{id}"), Some(&lead));
    assert!(!theirs.contains("checkout flake"), "{theirs}");
    assert!(theirs.contains("<h1 class=\"session-title neutral\">a claude_code session</h1>"), "{theirs}");
    // Once shared, the transcript page (an audited read) carries the title.
    assert_eq!(post_form(&format!("{web}/me/sessions/{id}/sharing"), &owner, "transcript=share").0, 303);
    let (_, transcript, _) = page(&format!("{web}/sessions/{id}/transcript"), Some(&lead));
    assert!(transcript.contains(&format!("<span class=\"session-title\">{title}</span>")), "{transcript}");
    let (_, theirs, _) = page(&format!("{web}/sessions/{id}"), Some(&lead));
    assert!(!theirs.contains("checkout flake"), "the session page stays metadata for the lead: {theirs}");

    // The owner's audit page names the session the lead read, by its title.
    let (_, audit, _) = page(&format!("{web}/me/settings/audit"), Some(&owner));
    assert!(audit.contains(&format!("href=\"/sessions/{id}\" class=\"session-name\">{title}</a>")), "{audit}");
    assert!(audit.contains("transcript as your team lead<br><code class=\"muted\">TRANSCRIPT_READ"), "{audit}");
}

/// A session reads as a trace: turns from each prompt, the tool calls nested under the
/// turn that made them (a failed one red, a wait for the person hatched), each turn's
/// tokens, cost and model in its summary; the flat table stays one click away and as CSV.
#[test]
fn a_session_reads_as_a_trace_of_turns_and_their_calls() {
    let (_dir, server, hook) = world();
    let now = server.clock.now_ms();
    let tool = |kind: &str, ts: i64, name: &str, id: &str, status: Option<&str>| {
        let mut e = event(kind, "traced", ts);
        e["tool"] = serde_json::json!({"name": name, "use_id": id});
        if let Some(status) = status {
            e["tool"]["status"] = serde_json::json!(status);
        }
        e
    };
    let mut wait = event("notification", "traced", now - 50_000);
    wait["notification_kind"] = serde_json::json!("permission");
    let mut answer = event("turn_end", "traced", now - 40_000);
    answer["model"] = serde_json::json!("claude-sonnet-4-5");
    answer["usage"] = serde_json::json!({"input_tokens": 1200, "output_tokens": 300});
    let mut start = event("session_start", "traced", now - 60_000);
    start["git"] =
        serde_json::json!({"remote": "git@github.com:acme/shop.git", "branch": "main", "commit": "a".repeat(40)});
    let events = vec![
        start,
        event("prompt_submit", "traced", now - 59_000),
        tool("tool_start", now - 58_000, "claude_code:Bash", "call-1", None),
        wait,
        tool("tool_end", now - 45_000, "claude_code:Bash", "call-1", Some("error")),
        tool("tool_start", now - 44_000, "claude_code:Read", "call-2", None),
        tool("tool_end", now - 43_000, "claude_code:Read", "call-2", Some("success")),
        answer,
        event("prompt_submit", "traced", now - 30_000),
        event("turn_end", "traced", now - 20_000),
    ];
    let (status, body) = server.server.post_events(&hook, &envelope(events));
    assert_eq!((status, &body["accepted"]), (200, &serde_json::json!(10)), "{body}");
    let id: String = rusqlite::Connection::open(server.server.data_dir.join("main.db"))
        .unwrap()
        .query_row("SELECT id FROM sessions WHERE agent_session_id = 'traced'", [], |r| r.get(0))
        .unwrap();
    let token = access_token(&server.server, "dev@example.com");
    let (status, html, _) = page(&format!("{}/sessions/{id}", server.server.web), Some(&token));
    assert_eq!(status, 200, "{html}");
    assert_eq!(html.matches("<details class=\"turn\"").count(), 2, "two turns: {html}");
    let first = &html[html.find("<summary>Turn 1").expect("turn 1")..];
    let summary = &first[..first.find("</summary>").unwrap()];
    assert!(summary.contains("claude-sonnet-4-5") && summary.contains("1,200 in, 300 out"), "{summary}");
    assert!(
        summary.contains("claude_code:Bash, claude_code:Read")
            && summary.contains("1 failed")
            && summary.contains("1 waits"),
        "{summary}"
    );
    let chart = &first[..first.find("</svg>").unwrap()];
    assert!(chart.contains("fill=\"rgb(220,38,38)\"") && chart.contains("fill=\"url(#wait)\""), "{chart}");
    assert!(html.contains("<details id=\"timeline\"><summary>Every event"), "the flat table, one click away");
    // A name and a time a person reads: the repository as owner/name, linked; when, in words.
    assert!(html.contains("<a href=\"https://github.com/acme/shop\">acme/shop</a>"), "{html}");
    assert!(html.contains(" UTC\">1 min ago</time>"), "{html}");

    let (status, csv, _) = page(&format!("{}/sessions/{id}?format=csv", server.server.web), Some(&token));
    assert_eq!(status, 200);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("At,What,Detail,Cost"));
    assert_eq!(lines.count(), 10, "one row per event: {csv}");
    let (status, _, _) = page(&format!("{}/sessions/{id}?format=xml", server.server.web), Some(&token));
    assert_eq!(status, 400);
}

/// The transcript shows the work: a shell call says its command in its line, its short
/// output is open under it, and a redaction label inside a command stays visible.
#[test]
fn the_transcript_shows_each_command_and_its_output() {
    let (_dir, server, hook) = world();
    let turns = [
        common::transcripts::Turn::User("run the tests"),
        common::transcripts::Turn::Shell { command: "cargo test --lib", output: "test result: ok. 12 passed" },
        common::transcripts::Turn::Shell {
            command: "curl -H 'Authorization: Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD' https://api.example.com",
            output: "{}",
        },
        common::transcripts::Turn::Assistant("all green"),
    ];
    let transcript = common::transcripts::Transcript {
        agent: "claude_code",
        session: "worked",
        model: "claude-sonnet-4-5",
        start_ms: server.clock.now_ms(),
        turns: &turns,
    };
    let id = common::transcripts::session_with_transcript(&server.server, &hook, &transcript);
    let token = access_token(&server.server, "dev@example.com");
    let (status, html, _) = page(&format!("{}/sessions/{id}/transcript", server.server.web), Some(&token));
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("<code>cargo test --lib</code></summary>"), "the command in the call's line: {html}");
    assert!(html.contains("<pre class=\"result\">test result: ok. 12 passed"), "a short output is open: {html}");
    assert!(html.contains("<span class=\"redacted\">[REDACTED:"), "the redaction is visible in the command: {html}");
    assert!(!html.contains("sk-proj-abcdefghijklmnopqrstuvwxyz"), "the secret itself never is");

    // Each row of the session's flat table links to its place in the transcript.
    let (_, session_page, _) = page(&format!("{}/sessions/{id}", server.server.web), Some(&token));
    let link = format!("href=\"/sessions/{id}/transcript?at=");
    let at = session_page.find(&link).expect("a row's link to the transcript") + link.len();
    let ts: i64 = session_page[at..].split('#').next().unwrap().parse().unwrap();
    let (status, placed, _) =
        page(&format!("{}/sessions/{id}/transcript?at={}", server.server.web, ts + 1_500), Some(&token));
    assert_eq!(status, 200);
    let here = &placed[placed.find("<span id=\"at\"></span>").expect("the place is marked")..];
    assert!(here.contains("class=\"message") && here.contains(" here\""), "{here}");
    let (status, _, _) = page(&format!("{}/sessions/{id}/transcript?at=soon", server.server.web), Some(&token));
    assert_eq!(status, 400);
}

//! Each persona does their job end to end in headless Chromium, by the pages alone:
//! the investigator asks for a grant, an administrator approves it, the investigator
//! opens the session under the audit banner and its subject sees the read; a team lead
//! lands on their team and opens a member's shared session and its transcript; finance
//! lands on `/org`, reads the month to date against the budget, then the months and
//! the team budgets; an administrator lands on the health page with a firing alert and
//! a channel that tells nobody, adds a person (who sets their password with the
//! one-time link) and creates a team. Each landing page is kept as a screenshot at
//! 1,400 and 390 px, light and dark (`target/test-artefacts/persona-*.png`), and no
//! page logs a console error.

use crate::admin_console::{ADMIN, turn, world as console_world};
use crate::common;
use crate::team_org_pages::world as org_world;

use std::path::PathBuf;
use std::time::Duration;

use common::transcripts::{Transcript, Turn, session_with_transcript};
use common::webdriver::Browser;
use common::*;

const WAIT: Duration = Duration::from_secs(20);

fn artefacts() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../test-artefacts")
}

/// Signs `email` in through the login form and waits for the landing page, `landing`.
fn sign_in(browser: &Browser, web: &str, email: &str, password: &str, landing: &str) {
    browser.goto(&format!("{web}/login"));
    browser.wait_for(WAIT, "the login form", |b| b.find("input[name=email]").is_some());
    browser.type_into("input[name=email]", email);
    browser.type_into("input[name=password]", password);
    browser.click("form[action='/login'] button[type=submit]");
    browser.wait_for(WAIT, landing, |b| b.url().trim_end_matches('/').ends_with(landing));
}

fn sign_out(browser: &Browser) {
    browser.click("nav form[action='/logout'] button");
    browser.wait_for(WAIT, "the login page after sign-out", |b| b.url().contains("/login"));
}

/// The landing page at a laptop's and a phone's width, light and dark; at each width
/// nothing is wider than the window (wide tables scroll inside their own box).
fn keep_landing(browser: &Browser, persona: &str) {
    browser.at_each_width(&format!("{persona}'s landing"), |width| {
        for theme in ["light", "dark"] {
            browser.script(&format!("document.documentElement.dataset.theme = '{theme}';"));
            browser.screenshot(&artefacts().join(format!("persona-{persona}-{width}-{theme}.png")));
        }
    });
    browser.script("delete document.documentElement.dataset.theme;");
}

/// The text from the heading with `id` to the next heading of its level: a section of
/// a report or console page (the id is on its `h2`).
fn section(browser: &Browser, id: &str) -> String {
    let script = format!(
        "const h = document.getElementById('{id}'); if (!h) return ''; let text = h.textContent; \
         for (let n = h.nextElementSibling; n && n.tagName !== h.tagName; n = n.nextElementSibling) text += '\\n' + n.textContent; \
         return text;"
    );
    browser.script(&script).as_str().unwrap_or_default().to_string()
}

/// Whether the page's `main` (once it is there: a page may still be loading) contains
/// `words`.
fn main_says(browser: &Browser, words: &str) -> bool {
    browser.shows("main", words)
}

fn no_console_errors(browser: &Browser, persona: &str) {
    assert_eq!(browser.console_errors(), Vec::<String>::new(), "{persona}: no console error");
}

#[test]
fn the_investigator_asks_an_administrator_approves_and_the_subject_sees_the_read() {
    let world = console_world();
    let web = world.server.web.clone();
    let batch = envelope(vec![event("session_start", "checkout-flake", now_ms() - 60_000)]);
    assert_eq!(world.server.post_events(&world.max_hook, &batch).0, 200);
    let session: String = world
        .db()
        .query_row("SELECT id FROM sessions WHERE agent_session_id = 'checkout-flake'", [], |r| r.get(0))
        .unwrap();
    let browser = Browser::start();

    // The investigator lands on their grants and asks for the session, by its id.
    sign_in(&browser, &web, "ivy@example.com", TEST_PASSWORD, "/grants");
    keep_landing(&browser, "investigator");
    browser.type_into("input[name=session]", &session);
    browser.script("document.querySelector('input[name=duration_hours]').value = '4';");
    browser.type_into("textarea[name=justification]", "why does checkout flake in CI");
    browser.click("form[action='/grants'] button[type=submit]");
    browser.wait_for(WAIT, "the grant's page", |b| b.url().contains("/grants/"));
    assert!(browser.text("main").contains("requested, waiting for an administrator"), "{}", browser.text("main"));
    let grant_id = browser.url().rsplit('/').next().unwrap().to_string();
    no_console_errors(&browser, "investigator");

    // The chat channel is told that a request waits, naming nobody.
    wait_until(WAIT, "the grant request's notice", || {
        world.chat.bodies().iter().any(|body| body.contains("access grant was requested"))
    });
    let notice = world.chat.bodies().into_iter().find(|body| body.contains("access grant was requested")).unwrap();
    assert!(notice.contains("/admin/access-grants") && notice.contains("one session"), "{notice}");
    assert!(!notice.contains("example.com\\u003e") && !notice.contains("ivy@") && !notice.contains("max@"), "{notice}");

    // An administrator approves it on the console.
    sign_out(&browser);
    sign_in(&browser, &web, ADMIN, TEST_PASSWORD, "/admin/health");
    browser.goto(&format!("{web}/admin/access-grants"));
    let approve = format!("form[action='/admin/access-grants/{grant_id}/approve'] button[type=submit]");
    browser.wait_for(WAIT, "the approve button", |b| b.find(&approve).is_some());
    browser.click(&approve);
    browser.wait_for(WAIT, "the approval", |b| main_says(b, "APPROVED"));

    // The investigator opens the session from the grant and reads on what ground.
    sign_out(&browser);
    sign_in(&browser, &web, "ivy@example.com", TEST_PASSWORD, "/grants");
    browser.goto(&format!("{web}/grants/{grant_id}"));
    let link = format!("a[href='/sessions/{session}']");
    browser.wait_for(WAIT, "the grant's session link", |b| b.find(&link).is_some());
    browser.click(&link);
    browser.wait_for(WAIT, "the session page", |b| b.find("#reading-ground").is_some());
    let banner = browser.text("#reading-ground");
    assert!(
        banner.contains(&format!("under access grant {grant_id}")) && banner.contains("recorded in the audit log"),
        "{banner}"
    );
    browser.screenshot(&artefacts().join("persona-investigator-session.png"));
    no_console_errors(&browser, "investigator");

    // The subject sees the read.
    sign_out(&browser);
    sign_in(&browser, &web, "max@example.com", TEST_PASSWORD, "/me");
    browser.goto(&format!("{web}/me/settings/audit"));
    browser.wait_for(WAIT, "the audit page", |b| b.shows("h1", "Who read my data"));
    let audit = browser.text("main");
    assert!(audit.contains("GRANT_USED") && audit.contains("ivy@example.com"), "{audit}");
    no_console_errors(&browser, "subject");
}

#[test]
fn the_lead_lands_on_their_team_and_reads_a_members_shared_session() {
    let world = org_world();
    let server = &world.server.server;
    let web = server.web.clone();
    let hook = stdout(&sightline(&[
        "token",
        "create",
        "--data-dir",
        server.data_dir.to_str().unwrap(),
        "--user",
        "web0@example.com",
        "--kind",
        "hook",
    ]))
    .trim()
    .to_string();
    let turns = [Turn::User("where is the ledger kept"), Turn::Assistant("in the vault, behind the payroll")];
    let transcript = Transcript {
        agent: "claude_code",
        session: "ledger-hunt",
        model: "claude-sonnet-4-5",
        start_ms: world.server.clock.now_ms(),
        turns: &turns,
    };
    let session = session_with_transcript(server, &hook, &transcript);
    let browser = Browser::start();

    // The member shares their transcripts on their settings page.
    sign_in(&browser, &web, "web0@example.com", TEST_PASSWORD, "/me");
    browser.goto(&format!("{web}/me/settings"));
    browser.wait_for(WAIT, "the settings", |b| b.shows("h1", "My settings"));
    browser.click("input[name=share_transcripts]");
    browser.click("form[action='/me/settings/visibility'] button[type=submit]");
    browser.wait_for(WAIT, "the saved setting", |b| {
        b.script("return document.querySelector('input[name=share_transcripts]').checked;") == serde_json::json!(true)
    });
    sign_out(&browser);

    // The lead lands on the team, opens its sessions, the member's session, then the transcript.
    sign_in(&browser, &web, "lee@example.com", TEST_PASSWORD, "/team/web");
    keep_landing(&browser, "lead");
    browser.goto(&format!("{web}/team/web/sessions"));
    let link = format!("a[href='/sessions/{session}']");
    browser.wait_for(WAIT, "the member's session in the team's list", |b| b.find(&link).is_some());
    // Named by where it worked (its first prompt is transcript content, not for a list);
    // when, in words, with the exact time on hover.
    let name = browser.text(&link);
    assert!(name.contains("session") && !name.contains("ledger"), "{name}");
    let started = |what: &str| {
        browser.script(&format!("return document.querySelector(\"{link}\").closest('tr').children[1].{what};"))
    };
    assert_eq!(started("textContent").as_str(), Some("just now"));
    let hover = started("title");
    assert!(hover.as_str().is_some_and(|t| t.ends_with(" UTC") && t.starts_with("20")), "{hover}");
    browser.click(&link);
    browser.wait_for(WAIT, "the session page", |b| b.find("#reading-ground").is_some());
    assert!(browser.text("#reading-ground").contains("as their team lead"), "{}", browser.text("#reading-ground"));
    assert!(browser.find("form[action$='/sharing']").is_none(), "the owner's controls are the owner's");
    let transcript_link = format!("a[href='/sessions/{session}/transcript']");
    browser.click(&transcript_link);
    browser.wait_for(WAIT, "the transcript", |b| main_says(b, "where is the ledger kept"));
    assert!(browser.text("main").contains("in the vault, behind the payroll"));
    browser.screenshot(&artefacts().join("persona-lead-transcript.png"));
    no_console_errors(&browser, "lead");
    let conn = rusqlite::Connection::open(server.data_dir.join("main.db")).unwrap();
    let reads: i64 = conn
        .query_row("SELECT count(*) FROM audit_log WHERE action = 'TRANSCRIPT_READ' AND target = ?1", [&session], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(reads, 1, "the lead's read of the transcript is audited");
}

#[test]
fn finance_lands_on_the_organisation_and_reads_the_month_against_the_budgets() {
    let world = org_world();
    let server = &world.server.server;
    let web = server.web.clone();
    let admin = access_token(server, "ari@example.com");
    let post = |path: &str, body: &str| post_form(&format!("{web}{path}"), &admin, body).0;
    assert_eq!(post("/admin/alerts/rules/budget_threshold", "threshold=1000&enabled=on"), 303);
    assert_eq!(post("/admin/alerts/budgets", "scope=team&who=web&monthly_usd=0.25"), 303);
    assert_eq!(post("/admin/alerts/budgets", "scope=team&who=ops&monthly_usd=50"), 303);
    let browser = Browser::start();

    sign_in(&browser, &web, "vera@example.com", TEST_PASSWORD, "/org");
    keep_landing(&browser, "finance");
    let month = browser.text("#month-table");
    assert!(month.contains("Spent this month") && month.contains("of a $1000.00 budget"), "{month}");
    assert!(month.contains("Forecast, weekday pattern"), "{month}");
    browser.click("a[href='/org/months']");
    browser.wait_for(WAIT, "the months page", |b| b.shows("h1", "Months"));
    let months = section(&browser, "months");
    assert!(months.contains("(to date)") && months.contains("$1,000.00"), "{months}");
    let budgets = section(&browser, "budgets");
    assert!(budgets.contains("web") && budgets.contains("past the budget by"), "{budgets}");
    assert!(budgets.contains("ops") && budgets.contains("withheld until 3 more active this month"), "{budgets}");
    assert!(browser.find("#reconciled-months").is_some(), "the vendors' monthly bills have their table");
    browser.screenshot(&artefacts().join("persona-finance-months.png"));
    // Each table is a CSV too.
    let (status, csv, kind) = world.get("vera@example.com", "/org/months?format=csv&table=budgets");
    assert_eq!(status, 200, "{csv}");
    assert!(kind.starts_with("text/csv") && csv.lines().next().unwrap().starts_with("Team,Monthly budget"), "{csv}");
    no_console_errors(&browser, "finance");
}

#[test]
fn the_administrator_lands_on_health_then_adds_a_person_and_a_team() {
    let world = console_world();
    let web = world.server.web.clone();
    let now = now_ms();
    let mut events = session_events("spend-1", now - 60_000, 3);
    events.push(turn("spend-1", now - 30_000, 1_000_000));
    assert_eq!(world.server.post_events(&world.max_hook, &envelope(events)).0, 200);
    wait_until(WAIT, "the hourly aggregate", || {
        world.count("SELECT count(*) FROM agg_usage_hourly WHERE cost_nusd > 0") > 0
    });
    // A budget the month is past fires; the only channel is switched off, so nobody is told.
    world.change("/admin/alerts/rules/budget_threshold", &[("threshold", "0.01"), ("enabled", "on")]);
    world.change("/admin/alerts/channels/chat_webhook", &[("form", "channel")]);
    world.evaluate();
    let browser = Browser::start();

    sign_in(&browser, &web, ADMIN, TEST_PASSWORD, "/admin/health");
    keep_landing(&browser, "admin");
    let health = browser.text("main");
    assert!(health.contains("budget_threshold"), "the firing alert is listed: {health}");
    assert!(health.contains("nobody is told"), "the channel problem is said: {health}");
    no_console_errors(&browser, "admin");

    // A new person, into team web; the page shows their one-time link.
    browser.goto(&format!("{web}/admin/people"));
    let add = "form[action='/admin/people']";
    browser.wait_for(WAIT, "the add form", |b| b.find(add).is_some());
    browser.type_into(&format!("{add} input[name=email]"), "noor@example.com");
    browser.type_into(&format!("{add} input[name=name]"), "Noor Haddad");
    browser.script(&format!("document.querySelector(\"{add} select[name=team]\").value = 'web';"));
    browser.click(&format!("{add} button[type=submit]"));
    browser.wait_for(WAIT, "the one-time link", |b| b.find("#links").is_some());
    assert!(section(&browser, "links").contains("noor@example.com"));
    let link = browser.script(
        "return [...document.querySelectorAll('td')].map(td => td.textContent).find(text => text.includes('/password/'));",
    );
    let link = link.as_str().expect("a one-time link").to_string();
    assert!(link.starts_with(&web), "{link}");
    assert!(!browser.url().contains("/password/"), "the secret is never in the page's address");

    // A team under web.
    browser.goto(&format!("{web}/admin/teams"));
    let create = "form[action='/admin/teams']";
    browser.wait_for(WAIT, "the create form", |b| b.find(create).is_some());
    browser.type_into(&format!("{create} input[name=slug]"), "web-checkout");
    browser.type_into(&format!("{create} input[name=name]"), "Checkout");
    browser.script(&format!("document.querySelector(\"{create} select[name=parent]\").value = 'web';"));
    browser.click(&format!("{create} button[type=submit]"));
    browser.wait_for(WAIT, "the created team", |b| main_says(b, "team web-checkout is created"));
    assert!(section(&browser, "tree").contains("Checkout"), "{}", section(&browser, "tree"));
    no_console_errors(&browser, "admin");
    sign_out(&browser);

    // The new person chooses a password with the link and is signed in.
    browser.goto(&link);
    browser.wait_for(WAIT, "the password form", |b| b.shows("h1", "Welcome to Sightline"));
    browser.type_into("input[name=password]", "a long and private phrase");
    browser.type_into("input[name=repeat]", "a long and private phrase");
    browser.click("form button[type=submit]");
    browser.wait_for(WAIT, "the new person's own page", |b| b.url().ends_with("/me"));
    no_console_errors(&browser, "new person");
    browser.goto(&link);
    browser.wait_for(WAIT, "the used link's page", |b| main_says(b, "cannot be used"));
    assert_eq!(world.audited("USER_ADDED"), 1);
    assert_eq!(world.audited("TEAM_CREATED"), 1);
    assert_eq!(world.audited("PASSWORD_SET_BY_LINK"), 1);
    assert_eq!(
        world.count(
            "SELECT count(*) FROM team_members m JOIN users u ON u.id = m.user_id WHERE u.email = 'noor@example.com'"
        ),
        1
    );
}

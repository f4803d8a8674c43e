//! The administrator's console (issue 20) on the real server: every `/admin` route
//! refuses everyone but an administrator (and changes nothing when it refuses); every
//! change an administrator makes through a form lands, with its audit row, and a bad
//! value is a 400 naming the field with nothing stored; budgets of a team and a person
//! fire at their levels (a person's notice names the budget, not the person); acknowledge
//! and silence act on events; a channel is tested through a loopback chat webhook and,
//! switched off, gets nothing; the service-level indicators are recorded by the server
//! itself and an objective's spent budget raises `slo_burn`; and a browser walks every
//! console page and `/install` without a console error.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::receiver::Receiver;
use common::*;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);
pub(crate) const ADMIN: &str = "ari@example.com";

pub(crate) struct World {
    pub(crate) server: TestServer,
    pub(crate) chat: Receiver,
    /// A hook token of max, a member of team web.
    pub(crate) max_hook: String,
}

fn cli(data_dir: &Path, args: &[&str]) -> String {
    let mut full = args.to_vec();
    full.extend(["--data-dir", data_dir.to_str().unwrap()]);
    let output = sightline(&full);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    stdout(&output)
}

pub(crate) fn world() -> World {
    let chat = Receiver::start(|_, _, _| 200);
    let server = TestServer::spawn_with_env(&[
        ("SIGHTLINE_ALERT_CHAT_WEBHOOK_URL", &chat.url),
        ("SIGHTLINE_SLI_FLUSH_SECS", "1"),
    ]);
    let data = server.data_dir.clone();
    for (email, role) in [
        (ADMIN, "ADMIN"),
        ("abe@example.com", "ADMIN"),
        ("ivy@example.com", "INVESTIGATOR"),
        ("vera@example.com", "VIEWER_AGGREGATE"),
        ("max@example.com", "MEMBER"),
        ("lee@example.com", "MEMBER"),
    ] {
        add_user(&data, email, role);
    }
    cli(&data, &["team", "add", "--slug", "web", "--name", "Web"]);
    cli(&data, &["team", "add-member", "--team", "web", "--email", "max@example.com"]);
    cli(&data, &["team", "add-member", "--team", "web", "--email", "lee@example.com", "--role", "lead"]);
    let max_hook = cli(&data, &["token", "create", "--user", "max@example.com", "--kind", "hook"]).trim().to_string();
    World { server, chat, max_hook }
}

impl World {
    pub(crate) fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.server.data_dir.join("main.db")).unwrap()
    }

    pub(crate) fn count(&self, sql: &str) -> i64 {
        self.db().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    pub(crate) fn user_id(&self, email: &str) -> String {
        self.db().query_row("SELECT id FROM users WHERE email = ?1", [email], |r| r.get(0)).unwrap()
    }

    /// A page as a browser asks for it: (status, body, Location).
    pub(crate) fn page(&self, email: Option<&str>, path: &str) -> (u16, String, String) {
        let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
        let mut request = agent.get(format!("{}{path}", self.server.web)).header("Accept", "text/html");
        if let Some(email) = email {
            request = request.header("Authorization", format!("Bearer {}", access_token(&self.server, email)));
        }
        answer(request.call())
    }

    /// A form posted as a browser posts it: (status, body, Location).
    pub(crate) fn form(&self, email: Option<&str>, path: &str, fields: &[(&str, &str)]) -> (u16, String, String) {
        let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
        let mut request = agent.post(format!("{}{path}", self.server.web)).header("Accept", "text/html");
        if let Some(email) = email {
            request = request.header("Authorization", format!("Bearer {}", access_token(&self.server, email)));
        }
        answer(request.send_form(fields.iter().copied()))
    }

    /// Posts as the administrator and expects the 303 back to the page; its message.
    pub(crate) fn change(&self, path: &str, fields: &[(&str, &str)]) -> String {
        let (status, body, location) = self.form(Some(ADMIN), path, fields);
        assert_eq!(status, 303, "{path}: {body}");
        let message = location.split_once("?done=").map(|(_, m)| m.to_string()).unwrap_or_default();
        percent_decode(&message)
    }

    pub(crate) fn audited(&self, action: &str) -> i64 {
        self.db().query_row("SELECT count(*) FROM audit_log WHERE action = ?1", [action], |r| r.get(0)).unwrap()
    }

    /// Runs `evaluate-alerts` from the console and waits for its run to end.
    pub(crate) fn evaluate(&self) {
        let runs = self.count("SELECT count(*) FROM job_runs WHERE job = 'evaluate-alerts' AND outcome <> 'running'");
        self.change("/admin/jobs/evaluate-alerts/run", &[]);
        wait_until(WAIT, "the evaluation", || {
            self.count("SELECT count(*) FROM job_runs WHERE job = 'evaluate-alerts' AND outcome <> 'running'") > runs
        });
        let outcome: String = self
            .db()
            .query_row(
                "SELECT outcome || ' ' || coalesce(error, summary, '') FROM job_runs WHERE job = 'evaluate-alerts'
                 ORDER BY started_at_ms DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(outcome.starts_with("succeeded"), "{outcome}");
    }
}

fn answer(response: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> (u16, String, String) {
    let mut response = response.unwrap();
    let location = response.headers().get("location").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (response.status().as_u16(), response.body_mut().read_to_string().unwrap_or_default(), location)
}

fn percent_decode(text: &str) -> String {
    form_urlencoded::parse(format!("m={text}").as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

/// Every console page, with a word of its heading.
const PAGES: [(&str, &str); 12] = [
    ("/admin/health", "Health"),
    ("/admin/jobs", "Jobs"),
    ("/admin/jobs/sweep-retention/runs", "Job sweep-retention"),
    ("/admin/people", "People"),
    ("/admin/teams", "Teams"),
    ("/admin/price-tables", "Price tables"),
    ("/admin/retention", "Retention"),
    ("/admin/access-grants", "Access grants"),
    ("/admin/adapters", "Adapters"),
    ("/admin/alerts", "Alerts"),
    ("/admin/slo", "Service levels"),
    ("/admin/projections", "Projections"),
];

#[test]
fn only_administrators_reach_the_console_and_a_refusal_changes_nothing() {
    let world = world();
    let max = world.user_id("max@example.com");
    let forms: Vec<(String, Vec<(&str, &str)>)> = vec![
        ("/admin/jobs/sweep-retention/schedule".into(), vec![("form", "schedule"), ("cron", "0 4 * * *")]),
        ("/admin/jobs/sweep-abandoned/run".into(), vec![]),
        (format!("/admin/people/{max}/role"), vec![("role", "ADMIN")]),
        ("/admin/people".into(), vec![("email", "new@example.com"), ("name", "New"), ("role", "ADMIN")]),
        ("/admin/people/import".into(), vec![("csv", "email,name\nnew@example.com,New\n")]),
        (format!("/admin/people/{max}/disable"), vec![]),
        (format!("/admin/people/{max}/revoke"), vec![]),
        (format!("/admin/people/{max}/password-link"), vec![]),
        ("/admin/teams".into(), vec![("slug", "ops"), ("name", "Ops")]),
        ("/admin/teams/web/rename".into(), vec![("name", "Renamed")]),
        ("/admin/teams/web/parent".into(), vec![("parent", "web")]),
        ("/admin/teams/web/members".into(), vec![("email", "ivy@example.com"), ("role", "lead")]),
        (format!("/admin/teams/web/members/{max}"), vec![("role", "lead")]),
        (format!("/admin/teams/web/members/{max}/remove"), vec![]),
        ("/admin/price-tables".into(), vec![("agent", "claude_code"), ("table", "{}")]),
        ("/admin/price-tables/catalogue".into(), vec![("catalogue", "{}")]),
        ("/admin/price-tables/catalogue/apply".into(), vec![("sha256", "00")]),
        ("/admin/retention/web".into(), vec![("days", "1")]),
        ("/admin/access-grants/some-grant/approve".into(), vec![]),
        ("/admin/alerts/rules/spend_spike".into(), vec![("threshold", "1"), ("enabled", "on")]),
        ("/admin/alerts/budgets".into(), vec![("scope", "team"), ("who", "web"), ("monthly_usd", "1")]),
        ("/admin/alerts/budgets/some-budget/remove".into(), vec![]),
        ("/admin/alerts/channels/chat_webhook".into(), vec![("form", "channel")]),
        ("/admin/alerts/channels/chat_webhook/test".into(), vec![]),
        ("/admin/alerts/events/some-event/acknowledge".into(), vec![]),
        (
            "/admin/projections".into(),
            vec![
                ("title", "t"),
                ("metric", "spend_per_week"),
                ("saving_low", "1"),
                ("saving_high", "2"),
                ("period_from", "2026-01-01"),
                ("period_to", "2026-01-31"),
                ("baseline_days", "30"),
            ],
        ),
        ("/admin/projections/some-projection/remove".into(), vec![]),
        ("/admin/adapters/service-tokens".into(), vec![("name", "collector")]),
        ("/admin/adapters/identities".into(), vec![("attribute", "user.email"), ("value", "a@b.c"), ("email", ADMIN)]),
        ("/admin/adapters/identities/unmap".into(), vec![("attribute", "user.email"), ("value", "a@b.c")]),
    ];
    let audit_before = world.count("SELECT count(*) FROM audit_log");
    let people_before = world.count("SELECT count(*) FROM users");
    for who in ["ivy@example.com", "vera@example.com", "max@example.com", "lee@example.com"] {
        for (path, _) in PAGES {
            let (status, body, _) = world.page(Some(who), path);
            assert_eq!(status, 403, "{who} GET {path}: {body}");
        }
        for (path, fields) in &forms {
            let (status, body, _) = world.form(Some(who), path, fields);
            assert_eq!(status, 403, "{who} POST {path}: {body}");
        }
        let (status, body, _) = world.page(Some(who), "/install");
        assert_eq!(status, 200, "{who} /install");
        assert!(body.contains(&format!("--server {}", world.server.ingest)), "the server's ingest URL is filled in");
    }
    for (path, _) in PAGES.iter().chain([("/install", "")].iter()) {
        let (status, _, location) = world.page(None, path);
        assert!(status == 303 && location.starts_with("/login?next="), "nobody GET {path}: {status} {location}");
    }
    for (path, fields) in &forms {
        let (status, _, location) = world.form(None, path, fields);
        let refused = status == 401 || (status == 303 && location.starts_with("/login"));
        assert!(refused, "nobody POST {path}: {status} {location}");
    }
    assert_eq!(world.count("SELECT count(*) FROM audit_log"), audit_before, "no refused act is recorded as done");
    assert_eq!(world.count("SELECT count(*) FROM job_config"), 0);
    assert_eq!(world.count("SELECT count(*) FROM alert_budgets"), 0);
    assert_eq!(world.count("SELECT count(*) FROM projections"), 0);
    assert_eq!(world.count("SELECT count(*) FROM otlp_service_tokens"), 0);
    assert_eq!(world.count("SELECT count(*) FROM otlp_identities"), 0);
    assert_eq!(world.count("SELECT count(*) FROM users WHERE org_role = 'ADMIN'"), 2);
    assert_eq!(world.count("SELECT count(*) FROM users"), people_before, "nobody was added");
    assert_eq!(world.count("SELECT count(*) FROM users WHERE disabled_at_ms IS NOT NULL"), 0);
    assert_eq!(world.count("SELECT count(*) FROM password_links"), 0);
    assert_eq!(world.count("SELECT count(*) FROM teams"), 1);
    assert_eq!(world.count("SELECT count(*) FROM team_members"), 2);
    assert_eq!(world.count("SELECT count(*) FROM teams WHERE name = 'Web'"), 1);
    for (path, heading) in PAGES {
        let (status, body, _) = world.page(Some(ADMIN), path);
        assert_eq!(status, 200, "admin GET {path}: {body}");
        assert!(body.contains(&format!("<h1>{heading}")), "{path}: {heading}");
    }
    // A client that does not ask for HTML still gets the jobs as JSON.
    let token = access_token(&world.server, ADMIN);
    let (status, jobs) = read(
        agent()
            .get(format!("{}/admin/jobs", world.server.web))
            .header("Authorization", format!("Bearer {token}"))
            .call(),
    );
    assert_eq!(status, 200);
    assert!(jobs["jobs"].as_array().is_some_and(|jobs| jobs.len() == 20), "{jobs}");
}

#[test]
fn administrators_change_roles_teams_retention_schedules_prices_and_grants_with_audit() {
    let world = world();
    let (max, abe) = (world.user_id("max@example.com"), world.user_id("abe@example.com"));

    let said = world.change(&format!("/admin/people/{max}/role"), &[("role", "INVESTIGATOR")]);
    assert_eq!(said, "the role is now INVESTIGATOR (was MEMBER)", "the flash, in the URL, names no one");
    assert_eq!(world.audited("USER_ROLE_CHANGED"), 1);
    world.change(&format!("/admin/people/{abe}/role"), &[("role", "MEMBER")]);
    let (status, body, _) =
        world.form(Some(ADMIN), &format!("/admin/people/{}/role", world.user_id(ADMIN)), &[("role", "MEMBER")]);
    assert_eq!(status, 400, "the last administrator stays");
    assert!(body.contains("only active administrator") && body.contains("role"), "{body}");
    let (status, body, _) = world.form(Some(ADMIN), &format!("/admin/people/{max}/role"), &[("role", "OWNER")]);
    assert!(status == 400 && body.contains("OWNER"), "{body}");
    assert_eq!(world.audited("USER_ROLE_CHANGED"), 2, "refusals record nothing");

    world.change(&format!("/admin/teams/web/members/{max}"), &[("role", "lead")]);
    world.change("/admin/teams/web/members", &[("email", "ivy@example.com"), ("role", "member")]);
    let (status, body, _) =
        world.form(Some(ADMIN), "/admin/teams/web/members", &[("email", "nobody@example.com"), ("role", "member")]);
    assert!(status == 400 && body.contains("nobody@example.com"), "{body}");
    assert_eq!(world.audited("TEAM_ROLE_CHANGED"), 2);
    assert_eq!(world.count("SELECT count(*) FROM team_members WHERE team_role = 'lead'"), 2);
    let (_, roles, _) = world.page(Some(ADMIN), "/admin/teams");
    assert!(roles.contains("ivy@example.com"), "the added member is listed");

    let (status, body, _) = world.form(Some(ADMIN), "/admin/retention/web", &[("days", "zero")]);
    assert!(status == 400 && body.contains("days"), "{body}");
    world.change("/admin/retention/web", &[("days", "30")]);
    assert_eq!(world.count("SELECT retention_days FROM teams WHERE slug = 'web'"), 30);
    assert_eq!(world.audited("RETENTION_CHANGED"), 1);
    let (_, retention, _) = world.page(Some(ADMIN), "/admin/retention");
    assert!(retention.contains("30 days") && retention.contains("What the next sweep removes"), "{retention}");

    let (status, body, _) = world.form(
        Some(ADMIN),
        "/admin/jobs/sweep-retention/schedule",
        &[("form", "schedule"), ("cron", "every night")],
    );
    assert!(status == 400 && body.contains("every night"), "{body}");
    let said = world.change("/admin/jobs/sweep-retention/schedule", &[("form", "schedule"), ("cron", "15 4 * * *")]);
    assert_eq!(said, "sweep-retention now runs cron 15 4 * * * (UTC) and is off", "an unchecked box is off");
    assert_eq!(world.audited("JOB_CONFIGURED"), 1);
    world.change("/admin/jobs/sweep-abandoned/run", &[]);
    assert_eq!(world.audited("JOB_RUN_REQUESTED"), 1);

    // A grant asked for by the investigator, approved by the administrator.
    let ivy = access_token(&world.server, "ivy@example.com");
    let (status, grant) = read(
        agent()
            .post(format!("{}/api/grants", world.server.web))
            .header("Authorization", format!("Bearer {ivy}"))
            .header("Content-Type", "application/json")
            .send(json!({"subject": "lee@example.com", "justification": "incident 42: a leaked key", "duration_hours": 2}).to_string()),
    );
    assert_eq!(status, 201, "{grant}");
    let (_, queue, _) = world.page(Some(ADMIN), "/admin/access-grants");
    assert!(queue.contains("incident 42"), "the request waits in the queue");
    let id = grant["id"].as_str().unwrap();
    assert!(world.change(&format!("/admin/access-grants/{id}/approve"), &[("note", "ok")]).ends_with("APPROVED"));
    world.change(&format!("/admin/access-grants/{id}/revoke"), &[]);
    let (status, _, _) = world.form(Some(ADMIN), &format!("/admin/access-grants/{id}/approve"), &[]);
    assert_eq!(status, 409, "a revoked grant cannot be approved");

    // A price table: a broken one is refused and nothing is written; a good one waits for a restart.
    let (status, body, _) =
        world.form(Some(ADMIN), "/admin/price-tables", &[("agent", "claude_code"), ("table", "{\"format\": 1}")]);
    assert!(status == 400 && body.contains("table"), "{body}");
    assert!(!world.server.data_dir.join("price-tables").join("price-table.claude_code.v1.json").exists());
    let table = include_str!("../assets/price-tables/price-table.claude_code.v1.json")
        .replace("\"revision\": \"2026-11-21\"", "\"revision\": \"2026-11-23\"");
    world.change("/admin/price-tables", &[("agent", "claude_code"), ("table", &table)]);
    assert_eq!(world.audited("PRICE_TABLE_UPLOADED"), 1);
    let (_, prices, _) = world.page(Some(ADMIN), "/admin/price-tables");
    assert!(prices.contains("revision 2026-11-23 waits for a restart"), "{prices}");
}

pub(crate) fn turn(session: &str, ts: i64, input_tokens: i64) -> Value {
    let mut turn = event("turn_end", session, ts);
    turn["model"] = json!("claude-sonnet-4-5");
    turn["usage"] = json!({"input_tokens": input_tokens, "output_tokens": 0});
    turn
}

#[test]
fn budgets_fire_at_their_levels_and_events_are_acknowledged_silenced_and_channels_tested() {
    let world = world();
    let now = now_ms();
    // Some dollars of spend for max this month (1,000,000 input tokens of Sonnet).
    let mut events = session_events("budget-1", now - 60_000, 3);
    events.push(turn("budget-1", now - 30_000, 1_000_000));
    assert_eq!(world.server.post_events(&world.max_hook, &envelope(events)).0, 200);
    wait_until(WAIT, "the hourly aggregate", || {
        world.count("SELECT count(*) FROM agg_usage_hourly WHERE cost_nusd > 0") > 0
    });

    let (status, body, _) =
        world.form(Some(ADMIN), "/admin/alerts/budgets", &[("scope", "team"), ("who", "web"), ("monthly_usd", "-1")]);
    assert!(status == 400 && body.contains("monthly_usd"), "{body}");
    let (status, body, _) = world.form(
        Some(ADMIN),
        "/admin/alerts/budgets",
        &[("scope", "team"), ("who", "web"), ("monthly_usd", "1"), ("levels", "50,x")],
    );
    assert!(status == 400 && body.contains("levels"), "{body}");
    // The team's budget is set so this month's spend is 80 % of it.
    let spent = world.count("SELECT sum(cost_nusd) FROM agg_usage_hourly") as f64 / 1e9;
    let budget = format!("{:.6}", spent / 0.8);
    world.change(
        "/admin/alerts/budgets",
        &[("scope", "team"), ("who", "web"), ("monthly_usd", &budget), ("levels", "50,75,90,100")],
    );
    world.change("/admin/alerts/budgets", &[("scope", "person"), ("who", "max@example.com"), ("monthly_usd", "1000")]);
    world.change("/admin/alerts/budgets", &[("scope", "person"), ("who", "lee@example.com"), ("monthly_usd", "1000")]);
    assert_eq!(world.audited("ALERT_BUDGET_CHANGED"), 3);
    world.change("/admin/alerts/rules/budget_threshold", &[("enabled", "on")]);
    assert_eq!(world.audited("ALERT_RULE_CHANGED"), 1);
    let (status, body, _) = world.form(Some(ADMIN), "/admin/alerts/rules/routing_waste", &[("enabled", "on")]);
    assert!(status == 400 && body.contains("needs a threshold"), "{body}");

    world.evaluate();
    let open = |world: &World| -> Vec<String> {
        let conn = world.db();
        let mut stmt =
            conn.prepare("SELECT subject FROM alert_events WHERE state <> 'resolved' ORDER BY subject").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(open(&world), vec!["team:web@50", "team:web@75"], "80 % of the budget: past 50 and 75 %, not 90");
    // A person's budget near its amount: the notice must not name them.
    world.change("/admin/alerts/budgets", &[("scope", "person"), ("who", "max@example.com"), ("monthly_usd", "2")]);
    world.evaluate();
    let opened = open(&world);
    assert_eq!(opened.len(), 2 + 3, "{opened:?}");
    let texts = world.chat.bodies().join("\n");
    assert!(texts.contains("team web"), "{texts}");
    assert!(!texts.contains("max@example.com") && !texts.contains("Test User"), "no person named: {texts}");
    assert!(texts.contains("personal budget"), "{texts}");

    // Acknowledge one, silence another, through the console.
    let (firing, other): (String, String) = {
        let conn = world.db();
        let ids: Vec<String> = conn
            .prepare("SELECT id FROM alert_events WHERE state = 'firing' ORDER BY subject")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        (ids[0].clone(), ids[1].clone())
    };
    world.change(&format!("/admin/alerts/events/{firing}/acknowledge"), &[]);
    let (status, _, _) = world.form(Some(ADMIN), &format!("/admin/alerts/events/{firing}/acknowledge"), &[]);
    assert_eq!(status, 409, "an acknowledged event is not acknowledged twice");
    let (status, body, _) =
        world.form(Some(ADMIN), &format!("/admin/alerts/events/{other}/silence"), &[("hours", "0")]);
    assert!(status == 400 && body.contains("hours"), "{body}");
    world.change(&format!("/admin/alerts/events/{other}/silence"), &[("hours", "24")]);
    assert_eq!((world.audited("ALERT_ACKNOWLEDGED"), world.audited("ALERT_SILENCED")), (1, 1));
    assert_eq!(
        world.count(&format!("SELECT count(*) FROM alert_events WHERE id = '{firing}' AND state = 'acknowledged'")),
        1
    );

    // A test notice reaches the chat webhook and is recorded, not logged as a delivery.
    let deliveries = world.count("SELECT count(*) FROM alert_delivery_log");
    let said = world.change("/admin/alerts/channels/chat_webhook/test", &[]);
    assert!(said.starts_with("test notice to chat_webhook: delivered on attempt 1"), "{said}");
    assert!(world.chat.bodies().last().unwrap().contains("Sightline test notice"));
    assert_eq!(world.count("SELECT count(*) FROM alert_delivery_log"), deliveries);
    assert_eq!(world.audited("ALERT_CHANNEL_TESTED"), 1);
    let (status, _, _) = world.form(Some(ADMIN), "/admin/alerts/channels/webhook/test", &[]);
    assert_eq!(status, 409, "an unconfigured channel cannot be tested");

    // Switched off, the chat channel hears nothing of what resolves next.
    world.change("/admin/alerts/channels/chat_webhook", &[("form", "channel")]);
    assert_eq!(world.audited("ALERT_CHANNEL_CHANGED"), 1);
    let heard = world.chat.bodies().len();
    let budget: String =
        world.db().query_row("SELECT id FROM alert_budgets WHERE scope = 'team'", [], |r| r.get(0)).unwrap();
    world.change(&format!("/admin/alerts/budgets/{budget}/remove"), &[]);
    world.evaluate();
    assert_eq!(open(&world).len(), 3, "the removed budget's events resolved");
    assert_eq!(world.chat.bodies().len(), heard, "a channel switched off gets nothing");
    let (_, page, _) = world.page(Some(ADMIN), "/admin/alerts");
    assert!(page.contains("person max@example.com @100%"), "the console names the person to administrators");
}

#[test]
fn the_server_records_its_service_levels_and_a_spent_budget_raises_slo_burn() {
    let world = world();
    let now = now_ms();
    assert_eq!(world.server.post_events(&world.max_hook, &envelope(session_events("sli-1", now - 60_000, 4))).0, 200);
    world.page(Some(ADMIN), "/admin/slo");
    wait_until(WAIT, "the minute flush", || {
        world.count("SELECT count(*) FROM sli_daily WHERE indicator = 'route' AND key = 'ingest /v1/events' AND good = total AND total > 0") == 1
            && world.count("SELECT coalesce(sum(total), 0) FROM sli_daily WHERE indicator = 'event_write'") == 4
            && world.count("SELECT count(*) FROM sli_daily WHERE indicator = 'aggregate_lag'") == 1
            && world.count("SELECT count(*) FROM sli_daily WHERE key = 'web /admin/slo'") == 1
    });
    let (_, page, _) = world.page(Some(ADMIN), "/admin/slo");
    assert!(page.contains("within budget"), "{page}");
    assert!(page.contains("no observations in the window"), "the GitHub objectives have none");

    // Yesterday, as a stand-in for a bad day: 1 in 20 web requests failed (budget: 1 in 100).
    let yesterday = (now / 86_400_000 - 1) * 86_400_000;
    world
        .db()
        .execute(
            "INSERT INTO sli_daily (day_start_ms, indicator, key, total, good) VALUES (?1, 'route', 'web /me', 2000, 1900)",
            [yesterday],
        )
        .unwrap();
    world.evaluate();
    let burning: Vec<String> = {
        let conn = world.db();
        let mut stmt =
            conn.prepare("SELECT subject FROM alert_events WHERE rule_id = 'slo_burn' AND state = 'firing'").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(burning, vec!["web-availability"]);
    assert!(world.chat.bodies().iter().any(|text| text.contains("slo_burn") && text.contains("budget exhausted")));
    let (_, page, _) = world.page(Some(ADMIN), "/admin/slo");
    assert!(page.contains("budget exhausted: freeze non-critical deploys"), "{page}");
}

#[test]
fn a_browser_walks_every_console_page_and_the_install_page() {
    use common::webdriver::Browser;
    let world = world();
    let now = now_ms();
    assert_eq!(world.server.post_events(&world.max_hook, &envelope(session_events("walk-1", now - 60_000, 4))).0, 200);
    let web = world.server.web.clone();
    let browser = Browser::start();
    let artefacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../test-artefacts");
    for (role, email) in [("admin", ADMIN), ("member", "max@example.com")] {
        browser.goto(&format!("{web}/login"));
        browser.wait_for(WAIT, "the login form", |b| b.find("input[name=email]").is_some());
        browser.type_into("input[name=email]", email);
        browser.type_into("input[name=password]", TEST_PASSWORD);
        browser.click("form[action='/login'] button[type=submit]");
        let landing = if role == "admin" { "/admin/health" } else { "/me" };
        browser.wait_for(WAIT, landing, |b| b.url().ends_with(landing));
        let mut pages: Vec<(&str, &str)> = vec![("/install", "Connect your agents")];
        if role == "admin" {
            pages.extend(PAGES);
            // An administrator may ask for access too (the investigator's page).
            pages.push(("/grants", "Access grants"));
        }
        for (path, heading) in pages {
            browser.goto(&format!("{web}{path}"));
            browser.wait_for(WAIT, heading, |b| b.shows("h1", heading));
            browser.at_each_width(&format!("{role} {path}"), |width| {
                for theme in ["light", "dark"] {
                    browser.script(&format!("document.documentElement.dataset.theme = '{theme}';"));
                    let name = path.trim_start_matches('/').replace('/', "-");
                    browser.screenshot(&artefacts.join(format!("{name}-{role}-{width}-{theme}.png")));
                }
            });
        }
        if role == "admin" {
            // A form works without JavaScript: the test-send comes back with what it did.
            browser.goto(&format!("{web}/admin/alerts"));
            let test_send = "form[action='/admin/alerts/channels/chat_webhook/test'] button[type=submit]";
            browser.wait_for(WAIT, "the test-send button", |b| b.find(test_send).is_some());
            browser.click(test_send);
            browser.wait_for(WAIT, "the test-send's outcome", |b| b.shows("p.notice", "delivered"));
        }
        assert_eq!(browser.console_errors(), Vec::<String>::new(), "{role}: no console error");
        browser
            .wait_for(WAIT, "the sign-out button", |b| b.find("form[action='/logout'] button[type=submit]").is_some());
        browser.click("form[action='/logout'] button[type=submit]");
        browser.wait_for(WAIT, "signed out", |b| b.find("nav a[href='/org']").is_none());
    }
}

/// `/install`'s settings-only alternative: each agent's OTLP settings with this server's
/// address, and a button that makes the person an OTLP token (shown once, filled in,
/// listed in their settings) that the receiver then takes as theirs.
#[test]
fn install_fills_an_otlp_token_of_ones_own_into_each_agents_settings() {
    let world = world();
    let (status, body, _) = world.page(Some("max@example.com"), "/install");
    assert_eq!(status, 200);
    assert!(body.contains("OTEL_EXPORTER_OTLP_ENDPOINT") && body.contains(&world.server.ingest), "{body}");
    assert!(body.contains(&format!("{}/otel/v1/logs", world.server.ingest)), "Codex's endpoint with its path");
    assert!(body.contains("Bearer &#60;token&#62;"), "a placeholder until a token is made");
    let line = format!("curl -fsSL {}/install.sh | sh</code>", world.server.ingest);
    assert!(body.contains(&line), "the one line that installs the hook from this server: {body}");

    let (status, body, _) = world.form(Some("max@example.com"), "/install/otlp-token", &[]);
    assert_eq!(status, 200, "{body}");
    let start = body.find("slh_otlp_").expect("the new token is shown");
    let token: String =
        body[start..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
    assert_eq!(body.matches(&token).count(), 7, "shown once and filled into the six agents' settings");
    assert!(!body.contains("&#60;token&#62;"));
    let (_, settings, _) = world.page(Some("max@example.com"), "/me/settings");
    assert!(settings.contains("OTLP settings (from /install)"), "listed to revoke");

    let url = format!("{}/v1/logs", world.server.ingest);
    let (status, _) = post_raw(&url, &token, &[], br#"{"resourceLogs": []}"#.to_vec());
    assert_eq!(status, 200, "the receiver takes it");
    let (status, _, location) = world.form(None, "/install/otlp-token", &[]);
    assert!(status == 401 || (status == 303 && location.starts_with("/login")), "nobody: {status} {location}");
    assert_eq!(world.count("SELECT count(*) FROM auth_tokens WHERE kind = 'otlp'"), 1);
}

/// `/admin/adapters` says per person and agent whether data arrives by the hook, by the
/// agent's own OTLP export, or both.
#[test]
fn adapters_name_each_persons_source() {
    let world = world();
    let session = format!("otlp-{}", now_ms());
    let now = now_rfc3339();
    let export = json!({"resourceLogs": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "codex_cli_rs"}}]},
        "scopeLogs": [{"logRecords": [{"timeUnixNano": format!("{}", (now_ms() as u64 - 60_000) * 1_000_000),
            "attributes": [{"key": "event.name", "value": {"stringValue": "codex.user_prompt"}},
                           {"key": "conversation.id", "value": {"stringValue": session}},
                           {"key": "prompt_length", "value": {"stringValue": "12"}}]}]}]}]});
    let (status, _) = post_json(&format!("{}/v1/logs", world.server.ingest), &world.max_hook, &export);
    assert_eq!(status, 200);
    let mut hook = event("session_start", "hook-session", now_ms() - 30_000);
    hook["ts"] = Value::from(now);
    let (status, _) = world.server.post_events(&world.max_hook, &envelope(vec![hook]));
    assert_eq!(status, 200);
    let (status, body, _) = world.page(Some(ADMIN), "/admin/adapters");
    assert_eq!(status, 200);
    let section = &body[body.find("id=\"sources\"").expect("the sources section")..];
    let row_of = |agent: &str| {
        let at = section.find(&format!("<td>{agent}</td>")).unwrap_or_else(|| panic!("{agent}: {section}"));
        section[at..at + 60].to_string()
    };
    assert!(row_of("codex").contains("<td>OTLP</td>"), "{}", row_of("codex"));
    assert!(row_of("claude_code").contains("<td>hook</td>"), "{}", row_of("claude_code"));

    // What the one-line install hands out: this server's own platform built in, the
    // released platforms it has no binary for named as such.
    let binaries = &body[body.find("id=\"hook-binaries\"").expect("the hook binaries section")..];
    let binaries = &binaries[..binaries.find("</table>").unwrap()];
    let own = if cfg!(target_arch = "aarch64") { "linux-aarch64" } else { "linux-x86_64" };
    let own_row = &binaries[binaries.find(&format!("<td>{own}</td>")).unwrap()..];
    assert!(own_row[..own_row.find("</tr>").unwrap()].contains("built in"), "{binaries}");
    assert_eq!(binaries.matches("none: machines of this platform cannot use the one line").count(), 4, "{binaries}");
}

/// `/admin/adapters` shows drift the day it arrives: the agent's own version and who runs
/// it, an event name and an attribute no mapping uses (new in that version), and what the
/// agent reported loading, without the error text that came with it.
#[test]
fn adapters_show_versions_unmapped_names_and_what_agents_loaded() {
    let world = world();
    let session = format!("drift-{}", now_ms());
    let time = format!("{}", (now_ms() as u64 - 60_000) * 1_000_000);
    let text = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    let record = |name: &str, extra: Vec<Value>| {
        let mut attributes = vec![text("event.name", name), text("session.id", &session)];
        attributes.extend(extra);
        json!({"timeUnixNano": time, "body": {"stringValue": format!("claude_code.{name}")}, "attributes": attributes})
    };
    let export = json!({"resourceLogs": [{"resource": {"attributes": [
    text("service.name", "claude-code"), text("service.version", "2.1.399")]},
    "scopeLogs": [{"scope": {"name": "com.anthropic.claude_code.events"}, "logRecords": [
        record("user_prompt", vec![text("prompt_length", "12"), text("prompt.vibe", "new in 2.1.399")]),
        record("fast_mode_toggled", vec![]),
        record("mcp_server_connection", vec![text("server_name", "github"), text("status", "failed"),
               text("transport_type", "http"), text("error", "https://ada:ghp_secret@mcp.example/ refused")]),
    ]}]}]});
    let (status, _) = post_json(&format!("{}/v1/logs", world.server.ingest), &world.max_hook, &export);
    assert_eq!(status, 200);
    // The drift counts reach the table with the minute's flush (a second here).
    wait_until(Duration::from_secs(20), "the drift flush", || {
        world.count("SELECT count(*) FROM adapter_unmapped WHERE agent_version = '2.1.399'") >= 2
    });
    let (status, body, _) = world.page(Some(ADMIN), "/admin/adapters");
    assert_eq!(status, 200);
    let section = |id: &str| {
        let start = body.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("section {id}: {body}"));
        let rest = &body[start..];
        rest[..rest.find("</table>").unwrap_or(rest.len())].to_string()
    };
    let versions = section("agent-versions");
    assert!(versions.contains("<td>2.1.399</td>") && versions.contains("max@example.com"), "{versions}");
    let unmapped = section("unmapped");
    for name in ["fast_mode_toggled", "prompt.vibe"] {
        let at = unmapped.find(&format!("<td>{name}</td>")).unwrap_or_else(|| panic!("{name}: {unmapped}"));
        assert!(unmapped[at..at + unmapped[at..].find("</tr>").unwrap()].contains("<td>new</td>"), "{unmapped}");
    }
    assert!(!unmapped.contains("<td>prompt_length</td>"), "the mapping reads it: {unmapped}");
    let loaded = section("capabilities");
    assert!(loaded.contains("<td>mcp_server</td>") && loaded.contains("<td>github</td>"), "{loaded}");
    let detail: String = world.db().query_row("SELECT detail FROM capability_sightings", [], |r| r.get(0)).unwrap();
    assert!(detail.contains("\"status\":\"failed\"") && !detail.contains("ghp_secret"), "{detail}");
    assert!(section("unpriced").contains("Every model seen has a price"), "the section is on this page too");
}

/// An administrator lands on the health page: each check says ok or problem with where
/// it is fixed; no notification channel configured is a problem, and so is a missing
/// backup until one is taken.
#[test]
fn the_health_page_lists_what_needs_an_administrator() {
    let world = world();
    let (status, _, location) = world.page(Some(ADMIN), "/");
    assert_eq!((status, location.as_str()), (303, "/admin/health"), "an administrator lands on the health page");
    let (status, body, _) = world.page(Some(ADMIN), "/admin/health");
    assert_eq!(status, 200, "{body}");
    let check = |body: &str, what: &str| -> String {
        let at = body.find(&format!(">{what}</a>")).unwrap_or_else(|| panic!("{what}: {body}"));
        body[at..at + body[at..].find("</tr>").unwrap()].to_string()
    };
    assert!(check(&body, "Notification channels").contains("<td>ok</td>"), "the chat webhook is on");
    let backup = check(&body, "Last backup");
    assert!(backup.contains("<td>problem</td>") && backup.contains("no backup has been taken"), "{backup}");
    assert!(body.contains("href=\"/admin/jobs\">Jobs</a>"), "each check links where it is fixed");
    assert!(body.contains("href=\"/admin/alerts\">Notification channels</a>"));
    assert!(check(&body, "Disk").contains("MB a day"), "{}", check(&body, "Disk"));
    assert!(body.contains("No alert is open."));

    let to = tempfile::tempdir().unwrap();
    cli(&world.server.data_dir, &["backup", "--to", to.path().to_str().unwrap()]);
    let (_, body, _) = world.page(Some(ADMIN), "/admin/health");
    let backup = check(&body, "Last backup");
    assert!(backup.contains("<td>ok</td>") && backup.contains("days ago"), "{backup}");

    // Without a channel, nobody is told: a problem, said so.
    let quiet = TestServer::spawn();
    add_user(&quiet.data_dir, "root@example.com", "ADMIN");
    let token = access_token(&quiet, "root@example.com");
    let agent = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
    let body = agent
        .get(format!("{}/admin/health", quiet.web))
        .header("Authorization", format!("Bearer {token}"))
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap();
    let channels = check(&body, "Notification channels");
    assert!(channels.contains("<td>problem</td>") && channels.contains("nobody is told"), "{channels}");
}

//! Team and organisation pages (issue 19) on the real server: `/org` and `/team/<slug>`
//! show a group's figures only when it had at least five active people (the minimum
//! group size), fold small teams into "other" so none can be had by subtraction, refuse
//! a small group's CSV, 404 a team the caller may not see, list only the caller's teams
//! to a member, and name on the roster only people who allow it. The minimum is
//! configurable (`SIGHTLINE_ANALYTICS_MIN_GROUP_SIZE`).

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::inprocess::InProcess;
use common::*;
use serde_json::json;

fn page(url: &str, token: &str) -> (u16, String, String) {
    let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
    let mut response = agent.get(url).header("Authorization", format!("Bearer {token}")).call().unwrap();
    let kind = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (response.status().as_u16(), response.body_mut().read_to_string().unwrap_or_default(), kind)
}

fn cli(data_dir: &Path, args: &[&str]) {
    let mut full = args.to_vec();
    full.extend(["--data-dir", data_dir.to_str().unwrap()]);
    let output = sightline(&full);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
}

/// Adds `email` named `name` with `role`, and returns a hook token for them.
fn person(data_dir: &Path, email: &str, name: &str, role: &str) -> String {
    let dir = data_dir.to_str().unwrap();
    let added = sightline_with_stdin(
        &["user", "add", "--data-dir", dir, "--email", email, "--name", name, "--role", role, "--password-stdin"],
        &format!("{TEST_PASSWORD}\n"),
    );
    assert!(added.status.success(), "{}", stderr(&added));
    let token = sightline(&["token", "create", "--data-dir", dir, "--user", email, "--kind", "hook"]);
    assert!(token.status.success(), "{}", stderr(&token));
    stdout(&token).trim().to_string()
}

/// Teams `web` (6 active people, led by Lee), `data` (5) and `ops` (2); an administrator,
/// a viewer of aggregates, an investigator and a member in no team, none of them active.
pub(crate) struct World {
    _dir: tempfile::TempDir,
    pub(crate) server: InProcess,
}

pub(crate) fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let mut hooks = Vec::new();
    for (team, people) in [("web", 6), ("data", 5), ("ops", 2)] {
        cli(data, &["team", "add", "--slug", team, "--name", &team.to_uppercase()]);
        for i in 0..people {
            let email = format!("{team}{i}@example.com");
            hooks.push((email.clone(), person(data, &email, &format!("{team} person {i}"), "MEMBER")));
            cli(data, &["team", "add-member", "--team", team, "--email", &email]);
        }
    }
    person(data, "lee@example.com", "Lee Lead", "MEMBER");
    cli(data, &["team", "add-member", "--team", "web", "--email", "lee@example.com", "--role", "lead"]);
    person(data, "ari@example.com", "Ari Admin", "ADMIN");
    person(data, "vera@example.com", "Vera Viewer", "VIEWER_AGGREGATE");
    person(data, "ivy@example.com", "Ivy Investigator", "INVESTIGATOR");
    person(data, "max@example.com", "Max Member", "MEMBER");
    let server = InProcess::start(data, &hooks[0].1);
    let now = server.clock.now_ms();
    for (i, (email, hook)) in hooks.iter().enumerate() {
        let mut events = session_events(&format!("s-{i}"), now - 3_600_000 + i as i64 * 1_000, 10);
        // Web's six: a secret the hook had redacted, and one it let through.
        if email.starts_with("web") {
            events[1]["metadata"] = json!({
                "earlier": "[REDACTED:email]",
                "command": format!("export GITHUB_TOKEN=ghp_{}", "a1B2".repeat(9)),
            });
        }
        assert_eq!(server.server.post_events(hook, &envelope(events)).0, 200, "{email}");
    }
    server.clock.advance_ms(15_000);
    let conn = rusqlite::Connection::open(data.join("main.db")).unwrap();
    wait_until(Duration::from_secs(20), "the aggregates' refresh", || {
        conn.query_row("SELECT count(*) FROM aggregate_dirty_buckets", [], |r| r.get::<_, i64>(0)).unwrap() == 0
    });
    World { _dir: dir, server }
}

impl World {
    pub(crate) fn get(&self, email: &str, path: &str) -> (u16, String, String) {
        page(&format!("{}{path}", self.server.server.web), &access_token(&self.server.server, email))
    }
}

#[test]
fn groups_of_fewer_than_five_people_are_never_shown() {
    let world = world();

    // The organisation: 13 active people. Ops (2) cannot be shown alone, nor had by
    // subtraction (13 − web − data): data, the smaller, is withheld too, and there is no
    // "other" row over teams.
    let (status, html, _) = world.get("ari@example.com", "/org");
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("<div class=\"label\">Active people</div><div class=\"value\">13</div>"), "{html}");
    let teams = html.split("<h2>Teams</h2>").nth(1).unwrap().split("</table>").next().unwrap();
    assert!(teams.contains("<tr><td>web</td><td>6</td>"), "{teams}");
    assert!(!teams.contains("other") && !teams.contains(">ops<") && !teams.contains(">data<"), "{teams}");

    // A team of two: nothing but why, for everyone; its CSV is refused.
    for email in ["ari@example.com", "vera@example.com"] {
        let (status, html, _) = world.get(email, "/team/ops");
        assert_eq!(status, 200, "{html}");
        assert!(html.contains("2 people were active in this period"), "{html}");
        assert!(html.contains("3 more active people (or a longer period) would show them"), "what would show them");
        assert!(!html.contains("Spend per day"), "{html}");
    }
    let (status, body, _) = world.get("ari@example.com", "/team/ops?format=csv&table=agents");
    assert_eq!(status, 403, "{body}");

    // A team of six: its figures, and every table as CSV.
    let (status, html, _) = world.get("vera@example.com", "/team/web?days=7");
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("<div class=\"label\">Active people</div><div class=\"value\">6</div>"), "{html}");
    let (status, csv, kind) = world.get("vera@example.com", "/team/web?format=csv&table=agents");
    assert_eq!((status, kind.as_str()), (200, "text/csv; charset=utf-8"), "{csv}");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("agent,spend_usd,share,tokens,sessions,people"));
    assert!(lines.next().unwrap().starts_with("claude_code,") && csv.trim_end().ends_with(",6"), "{csv}");
    let (status, body, _) = world.get("vera@example.com", "/team/web?format=csv&table=secrets");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("table must be one of"), "{body}");
    let (status, body, _) = world.get("vera@example.com", "/org?days=14");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("days must be 7, 30 or 90"), "{body}");
}

#[test]
fn members_see_their_own_teams_and_the_roster_names_only_who_allows_it() {
    let world = world();
    // A member sees the teams they are in; another team is not found, like a missing one.
    let (status, html, _) = world.get("web0@example.com", "/team");
    assert_eq!(status, 200);
    assert!(html.contains("href=\"/team/web\"") && !html.contains("href=\"/team/ops\""), "{html}");
    assert_eq!(world.get("web0@example.com", "/team/ops").0, 404);
    assert_eq!(world.get("web0@example.com", "/team/nowhere").0, 404);
    // No link on the list leads to a page the caller may not open: a parent team the
    // member is not in is named, not linked.
    let data = world.server.server.data_dir.clone();
    cli(&data, &["team", "add", "--slug", "eng", "--name", "Engineering"]);
    cli(&data, &["team", "add", "--slug", "mobile", "--name", "Mobile", "--parent", "eng"]);
    cli(&data, &["team", "add-member", "--team", "mobile", "--email", "web0@example.com"]);
    let (_, html, _) = world.get("web0@example.com", "/team");
    assert!(html.contains("<td>eng</td>") && !html.contains("href=\"/team/eng\""), "named, not linked: {html}");
    for email in ["web0@example.com", "lee@example.com", "vera@example.com"] {
        let (_, html, _) = world.get(email, "/team");
        for link in html.split("href=\"/team/").skip(1).filter_map(|rest| rest.split('"').next()) {
            assert_eq!(world.get(email, &format!("/team/{link}")).0, 200, "{email}: /team/{link} is linked");
        }
    }
    // An address no route serves answers the product's error page, not an empty body.
    let (status, html, kind) = world.get("web0@example.com", "/no/such/page");
    assert_eq!((status, kind.as_str()), (404, "text/html; charset=utf-8"));
    assert!(html.contains("Not Found") && html.contains("<html"), "{html}");
    let (status, json, kind) = world.get("web0@example.com", "/api/no/such/route");
    assert_eq!((status, kind.as_str()), (404, "application/json"), "{json}");
    let (_, html, _) = world.get("max@example.com", "/team");
    assert!(html.contains("You are in no team yet"), "{html}");
    assert_eq!(world.get("max@example.com", "/team/web").0, 404);
    assert_eq!(world.get("lee@example.com", "/team/web").0, 200, "the lead");
    // Every role sees the organisation's aggregates and all teams' list when its role says so.
    let (_, html, _) = world.get("vera@example.com", "/team");
    assert!(["web", "data", "ops"].iter().all(|t| html.contains(&format!("href=\"/team/{t}\""))), "{html}");

    // web1 prefers not to be named in team views.
    let web1 = access_token(&world.server.server, "web1@example.com");
    let (status, _) = read(
        agent()
            .patch(format!("{}/api/me/visibility", world.server.server.web))
            .header("Authorization", format!("Bearer {web1}"))
            .header("Content-Type", "application/json")
            .send(json!({"named_in_team_views": false}).to_string()),
    );
    assert_eq!(status, 200);
    let (status, html, _) = world.get("lee@example.com", "/team/web/roster");
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("Lee Lead") && html.contains("web person 0"), "{html}");
    assert!(!html.contains("web person 1"), "{html}");
    assert!(html.contains("1 member chose not to be named"), "{html}");
    assert_eq!(world.get("max@example.com", "/team/web/roster").0, 404);
}

/// The minimum is configuration: at two, the team of two shows its figures.
#[test]
fn the_minimum_group_size_is_configurable() {
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_ANALYTICS_MIN_GROUP_SIZE", "2")]);
    let data = server.data_dir.clone();
    cli(&data, &["team", "add", "--slug", "ops", "--name", "Ops"]);
    let now = now_ms();
    for i in 0..2 {
        let email = format!("ops{i}@example.com");
        let hook = person(&data, &email, &format!("ops person {i}"), "MEMBER");
        cli(&data, &["team", "add-member", "--team", "ops", "--email", &email]);
        let events = session_events(&format!("o-{i}"), now - 600_000, 10);
        assert_eq!(server.post_events(&hook, &envelope(events)).0, 200);
    }
    let url = format!("{}/team/ops", server.web);
    let token = access_token(&server, "ops0@example.com");
    wait_until(Duration::from_secs(60), "the team's figures", || {
        page(&url, &token).1.contains("<div class=\"label\">Active people</div><div class=\"value\">2</div>")
    });
}

/// Every team and organisation page, as each role, in light and dark, in a real browser:
/// no console error, the chart drawn where figures are shown.
#[test]
fn a_browser_walks_every_team_and_org_page_as_each_role() {
    use common::webdriver::Browser;
    let world = world();
    let web = world.server.server.web.clone();
    let browser = Browser::start();
    // The label check can fail: two labels drawn on each other are seen.
    browser.goto("data:text/html,<svg role='img' width='120' height='40'><text x='10' y='20'>alpha</text><text x='14' y='22'>beta</text></svg>");
    assert_eq!(browser.chart_label_faults(), ["overlap: alpha / beta"]);
    let artefacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../test-artefacts");
    for (role, email) in [
        ("admin", "ari@example.com"),
        ("viewer", "vera@example.com"),
        ("investigator", "ivy@example.com"),
        ("lead", "lee@example.com"),
        ("member", "web0@example.com"),
    ] {
        browser.goto(&format!("{web}/login"));
        browser.wait_for(WAIT, "the login form", |b| b.find("input[name=email]").is_some());
        browser.type_into("input[name=email]", email);
        browser.type_into("input[name=password]", TEST_PASSWORD);
        browser.click("form[action='/login'] button[type=submit]");
        // Each role lands on the page that answers its first question.
        let landing = match role {
            "admin" => "/admin/health",
            "viewer" => "/org",
            "investigator" => "/grants",
            "lead" => "/team/web",
            _ => "/me",
        };
        browser.wait_for(WAIT, landing, |b| b.url().ends_with(landing));
        assert!(browser.find("nav a[href='/org']").is_some() && browser.find("nav a[href='/team']").is_some());
        assert_eq!(browser.find("nav a[href='/admin/health']").is_some(), role == "admin", "{role}: admin link");
        let grants_link = browser.find("nav a[href='/grants']").is_some();
        assert_eq!(grants_link, matches!(role, "admin" | "investigator"), "{role}: the grants link");
        // (path, part of its heading, whether a chart is drawn; None: it depends on the data)
        let mut pages: Vec<(String, String, Option<bool>)> = vec![
            ("/org".into(), "The organisation".into(), Some(true)),
            ("/team".into(), "Teams".into(), Some(false)),
            ("/team/web".into(), "Team WEB".into(), Some(true)),
            ("/team/web/roster".into(), "roster".into(), Some(false)),
        ];
        for tab in ["sessions", "pulls", "adoption", "tools", "tool-servers", "agents", "skills", "months"] {
            pages.push((format!("/team/web/{tab}"), "Team WEB: ".into(), (tab == "adoption").then_some(true)));
        }
        for tab in [
            "adoption",
            "delivery",
            "benchmarks",
            "teams",
            "search",
            "tools",
            "tool-servers",
            "skills",
            "agents",
            "models",
            "governance",
            "roi",
            "security",
            "knowledge",
            "months",
        ] {
            pages.push((format!("/org/{tab}"), "Organisation: ".into(), (tab == "adoption").then_some(true)));
        }
        if role == "lead" {
            pages.push((
                format!("/team/web/members/{}", user_id(&world, "web0@example.com")),
                "web person 0".into(),
                Some(false),
            ));
        }
        if role == "admin" || role == "viewer" || role == "investigator" {
            pages.push(("/team/ops".into(), "Team OPS".into(), Some(false)));
            pages.push(("/team/ops/tools".into(), "Team OPS: Tools".into(), Some(false)));
        }
        for (path, heading, chart) in pages {
            browser.goto(&format!("{web}{path}"));
            browser.wait_for(WAIT, &heading, |b| b.shows("h1", &heading));
            // Nothing is wider than the window, on a laptop or a phone: wide tables
            // scroll in their own box, charts scale, the navigation wraps.
            browser.at_each_width(&format!("{role} {path}"), |width| {
                for theme in ["light", "dark"] {
                    browser.script(&format!("document.documentElement.dataset.theme = '{theme}';"));
                    if let Some(chart) = chart {
                        assert_eq!(browser.find("svg[role=img]").is_some(), chart, "{role} {path}: the chart");
                    }
                    let name = path.trim_start_matches('/').replace('/', "-");
                    browser.screenshot(&artefacts.join(format!("{name}-{role}-{width}-{theme}.png")));
                }
            });
        }
        assert_eq!(browser.console_errors(), Vec::<String>::new(), "{role}: no console error");
        browser.click("form[action='/logout'] button[type=submit]");
        browser.wait_for(WAIT, "signed out", |b| b.find("nav a[href='/org']").is_none());
    }
}

const WAIT: Duration = Duration::from_secs(20);

fn user_id(world: &World, email: &str) -> String {
    let conn = rusqlite::Connection::open(world.server.server.data_dir.join("main.db")).unwrap();
    conn.query_row("SELECT id FROM users WHERE email = ?1", [email], |r| r.get(0)).unwrap()
}

/// The organisation's and teams' report pages keep the minimum group size with real
/// figures: 13 active people, teams of 6, 5 and 2. No table row or CSV line is about ops
/// (2) alone; a team of two shows nothing on any report; counts of fewer than five people
/// say so; the lead's drill-in into a member is audited and shows in that member's audit.
#[test]
fn team_and_organisation_reports_keep_the_minimum_group_size() {
    let world = world();
    let (status, html, _) = world.get("vera@example.com", "/org/teams");
    assert_eq!(status, 200, "{html}");
    let top = html.split("Top-level teams</h2>").nth(1).unwrap().split("</table>").next().unwrap();
    assert!(top.contains("<td>web</td><td>6</td>"), "{top}");
    assert!(!top.contains("other") && !top.contains("<td>data</td>"), "13 − web − data would be ops: {top}");
    for (path, table) in [
        ("/org/teams", "teams"),
        ("/org/teams", "all-teams"),
        ("/org/agents", "agents"),
        ("/org/models", "models"),
        ("/org/tools", "tools"),
        ("/org/security", "team-modes"),
        ("/org/adoption", "summary"),
    ] {
        let (status, csv, kind) = world.get("vera@example.com", &format!("{path}?format=csv&table={table}"));
        assert_eq!((status, kind.as_str()), (200, "text/csv; charset=utf-8"), "{path} {table}: {csv}");
        assert!(csv.lines().count() > 1, "{path} {table}: rows\n{csv}");
        assert!(!csv.lines().any(|l| l.starts_with("ops,") || l.starts_with("data,")), "{path} {table}:\n{csv}");
    }
    let (_, csv, _) = world.get("vera@example.com", "/org/adoption?format=csv&table=summary");
    assert!(csv.contains("Active in the period,13,"), "{csv}");
    let (_, csv, _) = world.get("vera@example.com", "/org/adoption?format=csv&table=agents-per-person");
    assert!(csv.contains("two,fewer than 5"), "nobody used two agents: withheld, not 0\n{csv}");
    let (_, csv, _) = world.get("vera@example.com", "/org/agents?format=csv&table=agents");
    assert!(csv.lines().nth(1).unwrap().starts_with("claude_code,13,"), "{csv}");
    for tab in ["adoption", "tools", "tool-servers", "agents", "skills", "pulls"] {
        let (status, html, _) = world.get("ari@example.com", &format!("/team/ops/{tab}"));
        assert_eq!(status, 200, "{tab}");
        assert!(html.contains("2 people were active in this period"), "{tab}: {html}");
    }
    let (status, _, _) = world.get("ari@example.com", "/team/ops/tools?format=csv&table=tools");
    assert_eq!(status, 403);
    let (_, html, _) = world.get("vera@example.com", "/team/web/adoption");
    assert!(html.contains("<td>Active in the period</td><td>6</td>"), "{html}");

    // The lead drills into a member of web: audited, and the member sees it in their audit.
    let member = user_id(&world, "web1@example.com");
    let (status, html, _) = world.get("lee@example.com", &format!("/team/web/members/{member}"));
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("web person 1") && html.contains("MEMBER_VIEWED"), "{html}");
    let (_, audit, _) = world.get("web1@example.com", "/me/settings/audit");
    assert!(audit.contains("MEMBER_VIEWED"), "{audit}");
    assert!(audit.contains("lee@example.com"), "the person sees who looked, by address: {audit}");
    // Not into a member of a team they do not lead, nor when the member turns drill-in off.
    assert_eq!(
        world.get("lee@example.com", &format!("/team/ops/members/{}", user_id(&world, "ops0@example.com"))).0,
        404
    );
    let token = access_token(&world.server.server, "web1@example.com");
    let off = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent()
        .patch(format!("{}/api/me/visibility", world.server.server.web))
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .send(json!({"team_drill_in": false}).to_string())
        .unwrap();
    assert_eq!(off.status().as_u16(), 200);
    assert_eq!(world.get("lee@example.com", &format!("/team/web/members/{member}")).0, 404);
    let (_, html, _) = world.get("lee@example.com", "/team/web/sessions");
    assert!(!html.contains(&member), "{html}");
    assert!(html.contains(&user_id(&world, "web2@example.com")), "the others still allow it: {html}");

    // Secrets by rule: the hook's apart from ingest's, six people each.
    let (status, csv, _) = world.get("vera@example.com", "/org/security?format=csv&table=redactions");
    assert_eq!(status, 200, "{csv}");
    assert!(csv.contains("\nemail,6,6,0,0.0\n"), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("code_hosting_token,6,0,")), "{csv}");

    // Benchmarks without a results.db say which setting names one.
    let (_, html, _) = world.get("vera@example.com", "/org/benchmarks");
    assert!(html.contains("set analytics.results_db"), "{html}");
}

/// `/org/benchmarks` lists the runs of the configured results.db, each linking into the
/// eval dashboard.
#[test]
fn benchmarks_list_the_runs_of_the_configured_results_db() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.db");
    let made = sightline(&["evals", "demo", "--out", results.to_str().unwrap()]);
    assert!(made.status.success(), "{}", stderr(&made));
    let server = TestServer::spawn_with_env(&[
        ("SIGHTLINE_ANALYTICS_RESULTS_DB", results.to_str().unwrap()),
        ("SIGHTLINE_ANALYTICS_EVAL_DASHBOARD_URL", "http://evals.example:8090/"),
    ]);
    person(&server.data_dir, "vera@example.com", "Vera Viewer", "VIEWER_AGGREGATE");
    let token = access_token(&server, "vera@example.com");
    let (status, html, _) = page(&format!("{}/org/benchmarks", server.web), &token);
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("<a href=\"http://evals.example:8090/run/"), "{html}");
    let file = results.to_str().unwrap();
    assert!(!html.contains(file), "the server's file path is for administrators only");
    person(&server.data_dir, "ari@example.com", "Ari Admin", "ADMIN");
    let (_, html, _) = page(&format!("{}/org/benchmarks", server.web), &access_token(&server, "ari@example.com"));
    assert!(html.contains(file), "an administrator reads which file: {html}");
    let (status, csv, _) = page(&format!("{}/org/benchmarks?format=csv&table=runs", server.web), &token);
    assert_eq!(status, 200);
    assert!(
        csv.starts_with("Run,Cells,Completed,Passed,Failed,Mean success,Cost,Agent sessions,Last activity\n"),
        "{csv}"
    );
    assert!(csv.lines().count() > 1, "{csv}");
}

/// The benchmarks page counts a run's cells as every eval surface does
/// (`evals_counts` reads the same fixture on the others).
#[test]
fn benchmarks_count_cells_as_the_eval_surfaces_do() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.db");
    let expected = common::results::mixed_runs(&results);
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_ANALYTICS_RESULTS_DB", results.to_str().unwrap())]);
    person(&server.data_dir, "vera@example.com", "Vera Viewer", "VIEWER_AGGREGATE");
    let token = access_token(&server, "vera@example.com");
    let (status, csv, _) = page(&format!("{}/org/benchmarks?format=csv&table=runs", server.web), &token);
    assert_eq!(status, 200, "{csv}");
    for (run, want) in expected {
        let row = csv.lines().find(|l| l.starts_with(&format!("{run},"))).unwrap_or_else(|| panic!("{run}: {csv}"));
        let counts: Vec<i64> = row.split(',').skip(1).take(4).map(|c| c.parse().unwrap()).collect();
        assert_eq!(counts, [want.total, want.completed, want.passed, want.failed], "{run}: {row}");
    }
}

/// Finance lands on `/org` and reads the month to date against the organisation's
/// budget, with the forecast to the month's end (linear and by weekday, as a range) and
/// the cost per active developer; past the budget at this pace, the page says so.
#[test]
fn finance_reads_the_month_to_date_against_the_budget() {
    let world = world();
    let token = access_token(&world.server.server, "vera@example.com");
    let (status, location) = {
        let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
        let response = agent
            .get(format!("{}/", world.server.server.web))
            .header("Authorization", format!("Bearer {token}"))
            .call();
        let response = response.unwrap();
        (response.status().as_u16(), response.headers()["location"].to_str().unwrap().to_string())
    };
    assert_eq!((status, location.as_str()), (303, "/org"), "VIEWER_AGGREGATE lands on the organisation");
    let (status, html, _) = world.get("vera@example.com", "/org");
    assert_eq!(status, 200);
    let month = &html[html.find("id=\"month\"").expect("the month section")..];
    let month = &month[..month.find("</table>").unwrap()];
    assert!(month.contains("Month to date") && month.contains("no organisation budget is set"), "{month}");
    assert!(
        month.contains("Forecast, weekday pattern") && month.contains("people with interactive sessions"),
        "{month}"
    );
    assert!(month.contains("13 people active this month") || month.contains("people active this month"), "{month}");

    // A budget of one cent: the month is past it, and the page says so.
    let token = access_token(&world.server.server, "ari@example.com");
    let url = format!("{}/admin/alerts/rules/budget_threshold", world.server.server.web);
    let (status, _) = post_form(&url, &token, "threshold=0.01&enabled=on");
    assert_eq!(status, 303);
    let (_, html, _) = world.get("vera@example.com", "/org");
    assert!(html.contains("of a $0.01 budget") && html.contains("id=\"over-budget\""), "{html}");
}

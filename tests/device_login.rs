//! `sightline login` against the real server: the RFC 8628 device flow driven by the
//! real binary (the person approves the printed code at `/device` in a signed-in
//! browser session), its denial, the token endpoint's `slow_down` and
//! `expired_token` answers, and the password fallback.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::inprocess::InProcess;
use common::machine::client;
use common::{BIN, TEST_PASSWORD, TestServer, add_user, agent, read, wait_until};
use serde_json::Value;

fn no_redirects() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent()
}

pub(crate) fn browser_cookie(server: &TestServer, email: &str) -> String {
    let response = no_redirects()
        .post(format!("{}/login", server.web))
        .header("Sec-Fetch-Site", "same-origin")
        .send_form([("email", email), ("password", TEST_PASSWORD)])
        .unwrap();
    assert_eq!(response.status().as_u16(), 303);
    response.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_string()
}

/// Starts `sightline login` on a machine at `home`; returns the child, the printed
/// verification URI and user code.
fn start_login(home: &std::path::Path, server: &str) -> (Child, String, String) {
    let mut child = Command::new(BIN)
        .args(["login", "--server", server])
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("SIGHTLINE_NO_FLUSHER", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut uri = String::new();
    let code = loop {
        let line = lines.next().expect("login printed no code").unwrap();
        if line.trim_start().starts_with("http") {
            uri = line.trim().to_string();
        }
        if let Some(code) = line.strip_prefix("and enter the code: ") {
            break code.trim().to_string();
        }
    };
    // Keep draining stdout so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, uri, code)
}

pub(crate) fn decide(server: &TestServer, cookie: &str, code: &str, action: &str) -> (u16, String) {
    let response = no_redirects()
        .post(format!("{}/device", server.web))
        .header("Cookie", cookie)
        .header("Sec-Fetch-Site", "same-origin")
        .send_form([("user_code", code), ("action", action)])
        .unwrap();
    (response.status().as_u16(), response.into_body().read_to_string().unwrap())
}

fn wait_exit(child: &mut Child) -> (i32, String) {
    let mut status = None;
    wait_until(Duration::from_secs(60), "sightline login to finish", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    (status.unwrap().code().unwrap_or(-1), stderr)
}

fn stored_token(home: &std::path::Path) -> String {
    let text = std::fs::read_to_string(home.join("config/sightline/client.toml")).unwrap();
    let config: toml::Table = text.parse().unwrap();
    config["token"].as_str().unwrap().to_string()
}

#[test]
fn the_device_flow_signs_the_real_cli_in_with_a_hook_token() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "ada@example.com", "MEMBER");
    let home = tempfile::tempdir().unwrap();
    let (mut child, uri, code) = start_login(home.path(), &server.ingest);
    assert_eq!(uri, format!("{}/device", server.web));
    assert_eq!(code.len(), 9, "{code}");
    assert!(code.chars().filter(|c| *c != '-').all(|c| "BCDFGHJKLMNPQRSTVWXZ".contains(c)), "{code}");

    // The page needs a signed-in browser; there the person sees and approves the code,
    // typed in lower case with spaces, as people do.
    let page = no_redirects().get(format!("{}/device?user_code={code}", server.web)).call().unwrap();
    assert_eq!(page.status().as_u16(), 303, "anonymous visitors are sent to /login");
    let cookie = browser_cookie(&server, "ada@example.com");
    let page =
        no_redirects().get(format!("{}/device?user_code={code}", server.web)).header("Cookie", &cookie).call().unwrap();
    let page = page.into_body().read_to_string().unwrap();
    assert!(page.contains(&code));
    // The page says who asked before anyone approves (L9 of issue 52).
    let asked = &page[page.find("id=\"device-request\"").expect("who asked")..];
    assert!(
        asked.contains("(sightline login)") && asked.contains("<code>127.0.0.1</code>") && asked.contains("ureq"),
        "{asked}"
    );
    let typed = code.to_lowercase().replace('-', " ");
    let (status, body) = decide(&server, &cookie, &typed, "approve");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Approved"));

    let (exit, stderr) = wait_exit(&mut child);
    assert_eq!(exit, 0, "{stderr}");
    let hook = stored_token(home.path());
    assert!(hook.starts_with("slh_hook_"));
    let batch = common::envelope(vec![common::event("session_start", "device-1", common::now_ms())]);
    assert_eq!(common::post_json(&format!("{}/v1/events", server.ingest), &hook, &batch).0, 200);
    let status = client(home.path(), &["status"], None);
    assert!(common::stdout(&status).contains(&server.ingest));

    // The approval yields the hook token and nothing else: no sign-in, no refresh token,
    // and the hook token opens no page or API (L9 of issue 52).
    let conn = server.main_db();
    let sign_ins: i64 = conn.query_row("SELECT count(*) FROM auth_sessions", [], |row| row.get(0)).unwrap();
    assert_eq!(sign_ins, 1, "only the browser's own sign-in");
    let refresh: i64 =
        conn.query_row("SELECT count(*) FROM auth_tokens WHERE kind = 'refresh'", [], |row| row.get(0)).unwrap();
    assert_eq!(refresh, 0);
    assert_eq!(common::get_auth(&format!("{}/api/me/grants", server.web), &hook).0, 401);
    let label: String = conn
        .query_row("SELECT label FROM auth_tokens WHERE kind = 'hook' ORDER BY created_at_ms DESC LIMIT 1", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert!(label.ends_with("(sightline login)"), "{label}");
    // A used code cannot be approved again.
    assert_eq!(decide(&server, &cookie, &code, "approve").0, 404);
}

#[test]
fn a_denied_code_fails_the_cli_and_fast_polling_is_slowed_down() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "bo@example.com", "MEMBER");
    let cookie = browser_cookie(&server, "bo@example.com");
    let home = tempfile::tempdir().unwrap();
    let (mut child, _, code) = start_login(home.path(), &server.ingest);
    assert!(decide(&server, &cookie, &code, "deny").1.contains("Denied"));
    let (exit, stderr) = wait_exit(&mut child);
    assert_ne!(exit, 0);
    assert!(stderr.contains("denied"), "{stderr}");
    assert!(!home.path().join("config/sightline/client.toml").exists());

    // Polling faster than the interval: authorization_pending, then slow_down.
    let (_, started) =
        read(agent().post(format!("{}/oauth/device/code", server.ingest)).send_form([("client_id", "sightline-cli")]));
    let poll = || {
        read(agent().post(format!("{}/oauth/device/token", server.ingest)).send_form([
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ("device_code", started["device_code"].as_str().unwrap()),
            ("client_id", "sightline-cli"),
        ]))
    };
    assert_eq!(poll().1["error"], "authorization_pending");
    assert_eq!(poll().1["error"], "slow_down");
    let (status, body) =
        read(agent().post(format!("{}/oauth/device/code", server.ingest)).send_form([("client_id", "someone-else")]));
    assert_eq!((status, body["error"].as_str()), (401, Some("invalid_client")));

    // Asking for codes is throttled per address: twenty in fifteen minutes.
    for asked in 3..=20 {
        let (status, body) = read(
            agent().post(format!("{}/oauth/device/code", server.ingest)).send_form([("client_id", "sightline-cli")]),
        );
        assert_eq!(status, 200, "code {asked}: {body}");
    }
    let refused = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent()
        .post(format!("{}/oauth/device/code", server.ingest))
        .send_form([("client_id", "sightline-cli")])
        .unwrap();
    assert_eq!(refused.status().as_u16(), 429);
    let wait: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(wait > 0 && wait <= 15 * 60, "{wait}");
}

#[test]
fn an_unapproved_code_expires_after_ten_minutes() {
    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("data");
    add_user(&data_dir, "cy@example.com", "MEMBER");
    let running = InProcess::start(&data_dir, "");
    let base = running.server.ingest.clone();
    let (_, started) =
        read(agent().post(format!("{base}/oauth/device/code")).send_form([("client_id", "sightline-cli")]));
    assert_eq!(started["expires_in"], 600);
    assert_eq!(started["interval"], 5);
    let poll = || -> Value {
        read(agent().post(format!("{base}/oauth/device/token")).send_form([
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ("device_code", started["device_code"].as_str().unwrap()),
            ("client_id", "sightline-cli"),
        ]))
        .1
    };
    assert_eq!(poll()["error"], "authorization_pending");
    running.clock.advance_ms(600_000);
    assert_eq!(poll()["error"], "expired_token");
}

#[test]
fn the_password_fallback_signs_in_without_a_browser() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "dee@example.com", "MEMBER");
    let home = tempfile::tempdir().unwrap();
    let args = ["login", "--server", &server.ingest, "--email", "dee@example.com", "--password-stdin"];
    let wrong = client(home.path(), &args, Some("not my password\n"));
    assert!(!wrong.status.success());
    assert!(common::stderr(&wrong).contains("incorrect"), "{}", common::stderr(&wrong));
    let output = client(home.path(), &args, Some(&format!("{TEST_PASSWORD}\n")));
    assert!(output.status.success(), "{}", common::stderr(&output));
    let hook = stored_token(home.path());
    let batch = common::envelope(vec![common::event("session_start", "pw-1", common::now_ms())]);
    assert_eq!(common::post_json(&format!("{}/v1/events", server.ingest), &hook, &batch).0, 200);
}

/// RFC 8628 §5.1: guessing codes at `/device` is throttled. Five wrong codes in the
/// window, then even the right one waits (429 with Retry-After), so guessing gains
/// nothing by going on; another person is not held up.
#[test]
fn wrong_codes_at_the_device_page_are_throttled() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "cy@example.com", "MEMBER");
    add_user(&server.data_dir, "di@example.com", "MEMBER");
    let cookie = browser_cookie(&server, "cy@example.com");
    let (_, started) =
        read(agent().post(format!("{}/oauth/device/code", server.ingest)).send_form([("client_id", "sightline-cli")]));
    let right = started["user_code"].as_str().unwrap().to_string();
    let wrong = if right.starts_with('B') { "CCCC-CCCC" } else { "BBBB-BBBB" };
    for attempt in 1..=5 {
        assert_eq!(decide(&server, &cookie, wrong, "approve").0, 404, "wrong code {attempt}");
    }
    let refused = no_redirects()
        .post(format!("{}/device", server.web))
        .header("Cookie", &cookie)
        .header("Sec-Fetch-Site", "same-origin")
        .send_form([("user_code", right.as_str()), ("action", "approve")])
        .unwrap();
    assert_eq!(refused.status().as_u16(), 429, "past the limit even the right code waits");
    let wait: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(wait > 0 && wait <= 15 * 60, "{wait}");
    let other = browser_cookie(&server, "di@example.com");
    assert_eq!(decide(&server, &other, &right, "approve").0, 200, "someone else is not held up");
}

/// A person disabled after approving a code gets no hook token for it: the poll is
/// denied, and no token waits to come back when they are enabled again (issue 52, L9).
#[test]
fn a_code_approved_by_someone_since_disabled_yields_nothing() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "eve@example.com", "MEMBER");
    let cookie = browser_cookie(&server, "eve@example.com");
    let (_, started) =
        read(agent().post(format!("{}/oauth/device/code", server.ingest)).send_form([("client_id", "sightline-cli")]));
    let code = started["user_code"].as_str().unwrap();
    assert_eq!(decide(&server, &cookie, code, "approve").0, 200);
    let dir = server.data_dir.to_str().unwrap();
    assert!(common::sightline(&["user", "disable", "--data-dir", dir, "--email", "eve@example.com"]).status.success());
    let (status, answer) = read(agent().post(format!("{}/oauth/device/token", server.ingest)).send_form([
        ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ("device_code", started["device_code"].as_str().unwrap()),
        ("client_id", "sightline-cli"),
    ]));
    assert_eq!((status, answer["error"].as_str()), (400, Some("access_denied")), "{answer}");
    let hooks: i64 = server
        .main_db()
        .query_row("SELECT count(*) FROM auth_tokens WHERE kind = 'hook'", [], |row| row.get(0))
        .unwrap();
    assert_eq!(hooks, 1, "only the test server's own developer token");
}

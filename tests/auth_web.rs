//! Sign-in on the real binary: the `/login` form and its cookie, CSRF refusal, login
//! throttling, security headers, refresh-token rotation (reuse revokes the family;
//! of two parallel refreshes exactly one wins), token kinds that are not
//! interchangeable, and logout and disabling that end tokens at once.

use crate::common;

use common::{
    TEST_PASSWORD, TestServer, add_user, agent, password_grant, read, sightline, sightline_with_stdin, stderr,
};
use std::time::Duration;

use serde_json::{Value, json};

fn no_redirects() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent()
}

/// Posts the login form as a same-origin browser would; returns status, Location and Set-Cookie.
fn login_form(server: &TestServer, email: &str, password: &str) -> (u16, String, String) {
    let response = no_redirects()
        .post(format!("{}/login", server.web))
        .header("Sec-Fetch-Site", "same-origin")
        .send_form([("email", email), ("password", password), ("next", "/me/grants")])
        .unwrap();
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (response.status().as_u16(), header("location"), header("set-cookie"))
}

fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().to_string()
}

fn get_with_cookie(url: &str, cookie: &str) -> (u16, Value) {
    read(no_redirects().get(url).header("Cookie", cookie).call())
}

/// A GET with the cookie, following no redirect: status, body and `Location`.
fn get_with_cookie_location(url: &str, cookie: &str) -> (u16, String, String) {
    let mut response = no_redirects().get(url).header("Cookie", cookie).call().unwrap();
    let location = response.headers().get("location").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (response.status().as_u16(), response.body_mut().read_to_string().unwrap_or_default(), location)
}

fn refresh(server: &TestServer, token: &str) -> (u16, Value) {
    read(
        agent()
            .post(format!("{}/oauth/token", server.ingest))
            .send_form([("grant_type", "refresh_token"), ("refresh_token", token)]),
    )
}

#[test]
fn the_login_form_sets_a_hardened_cookie_that_signs_the_browser_in() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "ada@example.com", "MEMBER");

    let page = no_redirects().get(format!("{}/login?next=/me/grants", server.web)).call().unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let headers = page.headers().clone();
    for name in ["content-security-policy", "x-frame-options", "x-content-type-options", "referrer-policy"] {
        assert!(headers.contains_key(name), "{name} missing");
    }
    let html = page.into_body().read_to_string().unwrap();
    assert!(html.contains(r#"name="email""#) && html.contains(r#"name="password""#));

    let (status, _, cookie) = login_form(&server, "ada@example.com", "not the password");
    assert_eq!((status, cookie.as_str()), (401, ""));

    let (status, location, cookie) = login_form(&server, "ada@example.com", TEST_PASSWORD);
    assert_eq!((status, location.as_str()), (303, "/login/check?next=%2Fme%2Fgrants"));
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=28800"] {
        assert!(cookie.contains(attribute), "{attribute} missing from {cookie}");
    }
    assert!(cookie.starts_with("sightline="), "plain HTTP has no __Host- prefix: {cookie}");
    assert!(!cookie.contains("Secure"), "a browser drops a Secure cookie set over plain HTTP: {cookie}");
    let cookie = cookie_pair(&cookie);
    // The check finds the cookie and sends the browser on; without it, the page says why.
    let (status, _, location) = get_with_cookie_location(&format!("{}{location}", server.web), &cookie);
    assert_eq!((status, location.as_str()), (303, "/me/grants"));
    let dropped = no_redirects().get(format!("{}/login/check?next=/me/grants", server.web)).call().unwrap();
    assert_eq!(dropped.status().as_u16(), 200);
    let text = dropped.into_body().read_to_string().unwrap();
    assert!(text.contains("did not keep the sign-in cookie"), "{text}");
    // Plain HTTP from another machine: the page warns that the password crosses in clear.
    let remote =
        no_redirects().get(format!("{}/login", server.web)).header("Host", "sightline.internal").call().unwrap();
    assert!(remote.into_body().read_to_string().unwrap().contains("cross the network unencrypted"));
    let local = no_redirects().get(format!("{}/login", server.web)).call().unwrap();
    assert!(!local.into_body().read_to_string().unwrap().contains("unencrypted"), "not on this machine's loopback");
    assert_eq!(get_with_cookie(&format!("{}/me/grants", server.web), &cookie).0, 200);
    assert_eq!(get_with_cookie(&format!("{}/api/me/grants", server.web), &cookie).0, 200);
    // Without the cookie a page sends the browser to /login, and the API says 401.
    let anonymous = no_redirects().get(format!("{}/me/settings/audit", server.web)).call().unwrap();
    assert_eq!(anonymous.status().as_u16(), 303);
    assert_eq!(anonymous.headers()["location"], "/login?next=%2Fme%2Fsettings%2Faudit");
    assert_eq!(get_with_cookie(&format!("{}/api/me/grants", server.web), "").0, 401);

    // CSRF: a cross-site or header-less form post with the cookie is refused.
    let logout = |headers: &[(&str, &str)]| {
        let mut request = no_redirects().post(format!("{}/logout", server.web)).header("Cookie", &cookie);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send_empty().unwrap().status().as_u16()
    };
    assert_eq!(logout(&[("Sec-Fetch-Site", "cross-site")]), 403);
    assert_eq!(logout(&[("Origin", "https://evil.example")]), 403);
    assert_eq!(logout(&[]), 403);
    // The sign-in cookie in a second Cookie header (as HTTP/2 sends them) is still seen.
    let address = server.web.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    use std::io::{Read, Write};
    write!(
        stream,
        "POST /logout HTTP/1.1\r\nHost: {address}\r\nCookie: theme=dark\r\nCookie: {cookie}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 403"), "a cookie in the second header is refused too: {answer}");
    assert_eq!(get_with_cookie(&format!("{}/api/me/grants", server.web), &cookie).0, 200, "still signed in");
    // A same-origin logout ends the sign-in: the same cookie no longer works.
    assert_eq!(logout(&[("Sec-Fetch-Site", "same-origin")]), 303);
    assert_eq!(get_with_cookie(&format!("{}/api/me/grants", server.web), &cookie).0, 401);
}

#[test]
fn failed_sign_ins_are_throttled_per_account_with_retry_after() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "bo@example.com", "MEMBER");
    for _ in 0..3 {
        assert_eq!(login_form(&server, "bo@example.com", "wrong password!").0, 401);
    }
    let response = no_redirects()
        .post(format!("{}/login", server.web))
        .header("Sec-Fetch-Site", "same-origin")
        .send_form([("email", "bo@example.com"), ("password", TEST_PASSWORD)])
        .unwrap();
    assert_eq!(response.status().as_u16(), 429, "even the right password waits out the delay");
    let retry: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert_eq!(retry, 1, "the first delay is a second, growing with each failure");
    // The password grant shares the throttle.
    let (status, body) = password_grant(&server.ingest, "bo@example.com", TEST_PASSWORD);
    assert_eq!((status, body["error"].as_str()), (429, Some("slow_down")));
    // Another account is unaffected.
    add_user(&server.data_dir, "cy@example.com", "MEMBER");
    assert_eq!(login_form(&server, "cy@example.com", TEST_PASSWORD).0, 303);
}

/// L3 of issue 52: the addresses that exempt an account from the account-wide lockout
/// survive a restart. The administrator signs in from home (behind the organisation's
/// proxy), the server restarts, someone guesses from ten other addresses: the
/// administrator still gets straight in from home, and the guesser still waits.
#[test]
fn a_familiar_address_still_gets_in_after_a_restart_while_guesses_wait() {
    let mut server = TestServer::spawn_with_env(&[("SIGHTLINE_LISTEN_TRUSTED_PROXIES", "127.0.0.1")]);
    add_user(&server.data_dir, "root@example.com", "ADMIN");
    let from = |server: &TestServer, address: &str, password: &str| {
        no_redirects()
            .post(format!("{}/login", server.web))
            .header("Sec-Fetch-Site", "same-origin")
            .header("X-Forwarded-For", address)
            .send_form([("email", "root@example.com"), ("password", password)])
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(from(&server, "10.0.0.1", TEST_PASSWORD), 303);
    server.terminate();
    server.start();
    for round in 0..10 {
        assert_eq!(from(&server, &format!("198.51.100.{round}"), "a wrong guess"), 401, "guess {round}");
    }
    assert_eq!(from(&server, "198.51.100.200", TEST_PASSWORD), 429, "an unfamiliar address waits");
    assert_eq!(from(&server, "10.0.0.1", TEST_PASSWORD), 303, "home is still familiar after the restart");
}

#[test]
fn refresh_tokens_rotate_and_reuse_revokes_the_whole_family() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "dee@example.com", "MEMBER");
    let (status, first) = password_grant(&server.ingest, "dee@example.com", TEST_PASSWORD);
    assert_eq!(status, 200, "{first}");
    assert_eq!((first["token_type"].as_str(), first["expires_in"].as_i64()), (Some("Bearer"), Some(28800)));
    let r1 = first["refresh_token"].as_str().unwrap().to_string();

    let (status, second) = refresh(&server, &r1);
    assert_eq!(status, 200, "{second}");
    let r2 = second["refresh_token"].as_str().unwrap().to_string();
    assert_ne!(r1, r2, "rotated on use");
    let access = second["access_token"].as_str().unwrap().to_string();
    assert_eq!(common::get_auth(&format!("{}/api/me/grants", server.web), &access).0, 200);

    // Reusing the rotated token is theft or a bug: the whole sign-in ends.
    let (status, body) = refresh(&server, &r1);
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(refresh(&server, &r2).0, 400, "the successor is revoked with its family");
    assert_eq!(
        common::get_auth(&format!("{}/api/me/grants", server.web), &access).0,
        401,
        "and so is its access token"
    );
    let reused: i64 = server
        .main_db()
        .query_row("SELECT count(*) FROM audit_log WHERE action = 'REFRESH_TOKEN_REUSED'", [], |row| row.get(0))
        .unwrap();
    assert_eq!(reused, 1);

    // Two parallel refreshes with one token: exactly one succeeds.
    let (_, fresh) = password_grant(&server.ingest, "dee@example.com", TEST_PASSWORD);
    let shared = fresh["refresh_token"].as_str().unwrap().to_string();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let racers: Vec<_> = (0..2)
        .map(|_| {
            let (barrier, url, token) = (barrier.clone(), server.ingest.clone(), shared.clone());
            std::thread::spawn(move || {
                barrier.wait();
                read(
                    agent()
                        .post(format!("{url}/oauth/token"))
                        .send_form([("grant_type", "refresh_token"), ("refresh_token", token.as_str())]),
                )
                .0
            })
        })
        .collect();
    let mut statuses: Vec<u16> = racers.into_iter().map(|racer| racer.join().unwrap()).collect();
    statuses.sort();
    assert_eq!(statuses, vec![200, 400]);
}

#[test]
fn token_kinds_are_not_interchangeable() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "eve@example.com", "MEMBER");
    let (_, tokens) = password_grant(&server.ingest, "eve@example.com", TEST_PASSWORD);
    let access = tokens["access_token"].as_str().unwrap();
    let refresh_token = tokens["refresh_token"].as_str().unwrap();
    let search = format!("{}/api/search?q=anything", server.web);
    assert_eq!(common::get_auth(&search, access).0, 200);
    assert_eq!(common::get_auth(&search, &server.token).0, 401, "a hook token is not an access token");
    assert_eq!(common::get_auth(&search, refresh_token).0, 401, "a refresh token is not an access token");
    let events = format!("{}/v1/events", server.ingest);
    let batch = common::envelope(vec![common::event("session_start", "kinds-1", common::now_ms())]);
    assert_eq!(common::post_json(&events, access, &batch).0, 401, "an access token is not a hook token");
    assert_eq!(common::post_json(&events, &server.token, &batch).0, 200);
    let (status, body) = refresh(&server, &server.token);
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "a hook token is not a refresh token");
    // An access token buys a hook token that works on ingest only.
    let (status, minted) =
        common::post_json(&format!("{}/api/me/hook-tokens", server.ingest), access, &json!({"label": "laptop"}));
    assert_eq!(status, 201, "{minted}");
    let hook = minted["token"].as_str().unwrap();
    assert_eq!(common::post_json(&events, hook, &batch).0, 200);
    assert_eq!(common::get_auth(&search, hook).0, 401);
}

#[test]
fn disabling_a_user_ends_every_token_they_hold() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "fay@example.com", "MEMBER");
    let hook = common::user_with_token(&server.data_dir, "gus@example.com");
    let (_, tokens) = password_grant(&server.ingest, "gus@example.com", TEST_PASSWORD);
    let access = tokens["access_token"].as_str().unwrap();
    let dir = server.data_dir.to_str().unwrap();
    let disabled = sightline(&["user", "disable", "--data-dir", dir, "--email", "gus@example.com"]);
    assert!(disabled.status.success(), "{}", stderr(&disabled));
    assert_eq!(common::get_auth(&format!("{}/api/me/grants", server.web), access).0, 401);
    let batch = common::envelope(vec![common::event("session_start", "gone-1", common::now_ms())]);
    assert_eq!(common::post_json(&format!("{}/v1/events", server.ingest), &hook, &batch).0, 401);
    assert_eq!(refresh(&server, tokens["refresh_token"].as_str().unwrap()).0, 400);
    assert_eq!(password_grant(&server.ingest, "gus@example.com", TEST_PASSWORD).0, 400);
    let audit: i64 = server
        .main_db()
        .query_row("SELECT count(*) FROM audit_log WHERE action = 'USER_DISABLED'", [], |row| row.get(0))
        .unwrap();
    assert_eq!(audit, 1);
}

#[test]
fn operator_verbs_manage_people_and_reject_bad_input() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("data");
    let dir = dir.to_str().unwrap();
    let add = |email: &str, password: &str| {
        sightline_with_stdin(
            &["user", "add", "--data-dir", dir, "--email", email, "--name", "Hal", "--password-stdin"],
            password,
        )
    };
    for (password, why) in [("short\n", "at least 8"), ("password123\n", "most commonly used"), ("\n", "no password")] {
        let output = add("hal@example.com", password);
        assert!(!output.status.success());
        assert!(stderr(&output).contains(why), "{why}: {}", stderr(&output));
    }
    let list = sightline(&["user", "list", "--data-dir", dir]);
    assert!(!common::stdout(&list).contains("hal@example.com"), "a rejected password leaves no user behind");
    assert!(add("hal@example.com", "a fine long passphrase\n").status.success());
    let output =
        sightline(&["user", "set-role", "--data-dir", dir, "--email", "hal@example.com", "--role", "investigator"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let output = sightline(&["user", "set-role", "--data-dir", dir, "--email", "hal@example.com", "--role", "OWNER"]);
    assert!(stderr(&output).contains("OWNER"), "{}", stderr(&output));
    let output = sightline_with_stdin(
        &["user", "set-password", "--data-dir", dir, "--email", "hal@example.com", "--password-stdin"],
        "another fine passphrase\n",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let list = common::stdout(&sightline(&["user", "list", "--data-dir", dir]));
    assert!(list.lines().any(|line| line.contains("hal@example.com") && line.contains("INVESTIGATOR")), "{list}");

    assert!(
        sightline(&[
            "team",
            "add",
            "--data-dir",
            dir,
            "--slug",
            "platform",
            "--name",
            "Platform",
            "--retention-days",
            "30"
        ])
        .status
        .success()
    );
    let output = sightline(&["team", "add", "--data-dir", dir, "--slug", "Bad Slug", "--name", "x"]);
    assert!(stderr(&output).contains("slug"), "{}", stderr(&output));
    let output =
        sightline(&["team", "add", "--data-dir", dir, "--slug", "child", "--name", "Child", "--parent", "nope"]);
    assert!(stderr(&output).contains("no team with slug nope"), "{}", stderr(&output));
    let output = sightline(&[
        "team",
        "add-member",
        "--data-dir",
        dir,
        "--team",
        "platform",
        "--email",
        "hal@example.com",
        "--role",
        "lead",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let teams = common::stdout(&sightline(&["team", "list", "--data-dir", dir]));
    assert!(
        teams.lines().any(|line| line.starts_with("platform") && line.contains(" 1 ") && line.contains("30 d")),
        "{teams}"
    );
    let output = sightline(&["token", "create", "--data-dir", dir, "--user", "hal@example.com", "--kind", "refresh"]);
    assert!(!output.status.success(), "refresh tokens come from sign-in only");
}

/// Guessing from elsewhere never locks the owner out: sign-in is throttled by account and
/// address together with growing delays, and an address the account signed in from is
/// exempt from the account-wide count. The addresses come from `X-Forwarded-For`, which
/// the server believes only because 127.0.0.1 is a configured trusted proxy.
#[test]
fn guesses_from_elsewhere_never_lock_the_owner_out_of_their_usual_address() {
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_LISTEN_TRUSTED_PROXIES", "127.0.0.1")]);
    add_user(&server.data_dir, "bo@example.com", "ADMIN");
    let attempt = |from: &str, password: &str| {
        let response = no_redirects()
            .post(format!("{}/login", server.web))
            .header("Sec-Fetch-Site", "same-origin")
            .header("X-Forwarded-For", from)
            .send_form([("email", "bo@example.com"), ("password", password)])
            .unwrap();
        let retry = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
        (response.status().as_u16(), retry)
    };
    assert_eq!(attempt("203.0.113.5", TEST_PASSWORD).0, 303, "the owner signs in from home");
    // Someone else guesses from many addresses, three tries each: refused, and soon
    // made to wait.
    let mut waited = 0;
    for i in 0..12 {
        for _ in 0..3 {
            let (status, _) = attempt(&format!("198.51.100.{i}"), "wrong password!");
            assert!(status == 401 || status == 429, "{status}");
            waited += usize::from(status == 429);
        }
    }
    assert!(waited > 0, "the guesser was slowed down");
    let (status, retry) = attempt("198.51.100.200", "wrong password!");
    assert_eq!(status, 429, "a new address waits: the account has been guessed at");
    assert!(retry.is_some_and(|r| r.parse::<u64>().is_ok_and(|s| s >= 1)));
    let (status, _) = attempt("198.51.100.0", "wrong password!");
    assert_eq!(status, 429, "an address that guessed waits too");
    assert_eq!(attempt("203.0.113.5", TEST_PASSWORD).0, 303, "the owner still gets straight in from home");
}

/// Without a trusted proxy, `X-Forwarded-For` names nobody: every guess counts against
/// the real peer.
#[test]
fn forwarded_for_from_an_untrusted_peer_is_ignored() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "bo@example.com", "MEMBER");
    for i in 0..3 {
        let response = no_redirects()
            .post(format!("{}/login", server.web))
            .header("Sec-Fetch-Site", "same-origin")
            .header("X-Forwarded-For", format!("198.51.100.{i}"))
            .send_form([("email", "bo@example.com"), ("password", "wrong password!")])
            .unwrap();
        assert_eq!(response.status().as_u16(), 401);
    }
    assert_eq!(login_form(&server, "bo@example.com", "wrong password!").0, 429, "all three were from 127.0.0.1");
}

/// Half-sent requests are closed once the header timeout passes, and a listener holds no
/// more connections than its limit: the next request is answered once slots free up.
#[test]
fn slow_clients_are_closed_and_the_connection_limit_holds() {
    use std::io::{Read, Write};
    let server = TestServer::spawn_with_env(&[
        ("SIGHTLINE_LISTEN_MAX_CONNECTIONS", "4"),
        ("SIGHTLINE_LISTEN_HEADER_TIMEOUT_SECS", "1"),
    ]);
    let address = server.web.trim_start_matches("http://").to_string();
    let mut slow: Vec<std::net::TcpStream> = (0..4)
        .map(|_| {
            let mut stream = std::net::TcpStream::connect(&address).unwrap();
            stream.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n").unwrap(); // no blank line: never finished
            stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            stream
        })
        .collect();
    // A fifth client waits for a slot; it is answered once the slow ones are closed.
    let fifth = std::thread::spawn({
        let url = format!("{}/login", server.web);
        move || no_redirects().get(&url).call().map(|r| r.status().as_u16()).unwrap_or(0)
    });
    for stream in &mut slow {
        let mut answer = Vec::new();
        let read = stream.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer).to_string();
        assert!(
            read.is_ok() && (answer.is_empty() || text.starts_with("HTTP/1.1 408")),
            "the server closed a half-sent request: {read:?} {text}"
        );
    }
    assert_eq!(fifth.join().unwrap(), 200, "the waiting client is served");
    // An idle kept-alive connection is closed after the timeout too.
    let mut idle = std::net::TcpStream::connect(&address).unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut answer = Vec::new();
    assert!(idle.read_to_end(&mut answer).is_ok(), "closed, not timed out on our side");
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"), "answered first");
}

//! GitHub sign-in end to end: the real server against a loopback GitHub laid out as a
//! GitHub Enterprise Server (`SIGHTLINE_AUTH_GITHUB_URL` set, API URL left empty, so
//! the REST calls must go to `<github_url>/api/v3`). The test is the browser: an agent
//! that follows no redirects, reads `Location` and `Set-Cookie`, and sends `Cookie`.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::github_standin::{CLIENT_ID, CLIENT_SECRET, GithubStandIn, s256};
use common::{TestServer, add_user, sightline};

const OCTOCAT: i64 = 583231;

fn browser() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent()
}

struct Answer {
    status: u16,
    location: String,
    set_cookies: Vec<String>,
}

impl Answer {
    /// The sign-in cookie's `name=value`, if this answer set one.
    fn sign_in_cookie(&self) -> Option<String> {
        self.set_cookies
            .iter()
            .map(|c| c.split(';').next().unwrap_or("").to_string())
            .find(|pair| pair.starts_with("sightline=") && pair.len() > "sightline=".len())
    }

    fn refused(&self) -> bool {
        self.status == 303 && self.location.starts_with("/login?error=github") && self.sign_in_cookie().is_none()
    }
}

fn visit(url: &str, cookie: Option<&str>) -> Answer {
    let mut request = browser().get(url);
    if let Some(cookie) = cookie {
        request = request.header("Cookie", cookie);
    }
    let response = request.call().expect("request");
    let header = |name: &str| response.headers().get_all(name).iter().map(|v| v.to_str().unwrap().to_string());
    Answer {
        status: response.status().as_u16(),
        location: header("location").next().unwrap_or_default(),
        set_cookies: header("set-cookie").collect(),
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                out.push(u8::from_str_radix(&text[i + 1..i + 3], 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

fn query_of(url: &str) -> BTreeMap<String, String> {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (percent_decode(k), percent_decode(v)))
        .collect()
}

/// `url` with parameter `name` set to `value` (already encoded), or removed.
fn with_param(url: &str, name: &str, value: Option<&str>) -> String {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut pairs: Vec<String> =
        query.split('&').filter(|p| !p.starts_with(&format!("{name}="))).map(String::from).collect();
    if let Some(value) = value {
        pairs.push(format!("{name}={value}"));
    }
    format!("{base}?{}", pairs.join("&"))
}

fn server_with_github(github: &GithubStandIn) -> TestServer {
    TestServer::spawn_with_env(&[
        ("SIGHTLINE_AUTH_GITHUB_CLIENT_ID", CLIENT_ID),
        ("SIGHTLINE_AUTH_GITHUB_CLIENT_SECRET", CLIENT_SECRET),
        ("SIGHTLINE_AUTH_GITHUB_URL", &github.url),
    ])
}

/// A started flow: where Sightline sent the browser, and the flow cookie it set.
struct Started {
    authorize_url: String,
    flow_cookie: String,
}

fn start(server: &TestServer, github: &GithubStandIn) -> Started {
    let answer = visit(&format!("{}/auth/github?next=%2Fme%2Fgrants", server.web), None);
    assert_eq!(answer.status, 303);
    assert!(answer.location.starts_with(&format!("{}/login/oauth/authorize?", github.url)), "{}", answer.location);
    let set = answer.set_cookies.iter().find(|c| c.starts_with("sightline_oauth=")).expect("flow cookie");
    Started { authorize_url: answer.location.clone(), flow_cookie: set.split(';').next().unwrap().to_string() }
}

/// The person approves at "GitHub"; returns the callback URL GitHub sends them to.
fn approve(authorize_url: &str) -> String {
    let answer = visit(authorize_url, None);
    assert_eq!(answer.status, 302, "authorize");
    answer.location
}

fn sign_in(server: &TestServer, github: &GithubStandIn) -> Answer {
    let started = start(server, github);
    visit(&approve(&started.authorize_url), Some(&started.flow_cookie))
}

fn github_link(server: &TestServer, email: &str) -> (Option<i64>, Option<String>) {
    server
        .main_db()
        .query_row("SELECT github_id, github_login FROM users WHERE email = ?1", [email], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
}

#[test]
fn pkce_challenge_is_rfc_7636_s256() {
    // RFC 7636 Appendix B; proves the stand-in's check before trusting it.
    assert_eq!(s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

#[test]
fn known_user_signs_in_by_verified_email_then_by_github_id() {
    let github = GithubStandIn::start();
    github.put_account(OCTOCAT, "octocat", &[("octocat@github.example", true, true), ("dev@example.com", false, true)]);
    github.approve_as(OCTOCAT);
    let server = server_with_github(&github);

    let started = start(&server, &github);
    let asked = query_of(&started.authorize_url);
    assert_eq!(asked["client_id"], CLIENT_ID);
    assert_eq!(asked["redirect_uri"], format!("{}/auth/github/callback", server.web));
    assert_eq!(asked["scope"], "read:user user:email");
    assert_eq!(asked["code_challenge_method"], "S256");
    assert_eq!(asked["allow_signup"], "false");
    assert_eq!((asked["state"].len(), asked["code_challenge"].len()), (43, 43));
    let flow_set = visit(&format!("{}/auth/github", server.web), None).set_cookies.join("\n");
    for attribute in ["Path=/auth/github", "HttpOnly", "SameSite=Lax", "Max-Age=600"] {
        assert!(flow_set.contains(attribute), "flow cookie lacks {attribute}: {flow_set}");
    }
    assert!(!flow_set.contains("Secure"), "no Secure over plain HTTP: {flow_set}");

    let done = visit(&approve(&started.authorize_url), Some(&started.flow_cookie));
    assert_eq!((done.status, done.location.as_str()), (303, "/login/check?next=%2Fme%2Fgrants"));
    let cookie = done.sign_in_cookie().expect("sign-in cookie");
    assert!(done.set_cookies.iter().any(|c| c.starts_with("sightline_oauth=;") && c.contains("Max-Age=0")));
    let mut me = browser().get(format!("{}/api/me/grants", server.web)).header("Cookie", &cookie).call().unwrap();
    assert_eq!(me.status(), 200, "{}", me.body_mut().read_to_string().unwrap_or_default());
    assert_eq!(github_link(&server, "dev@example.com"), (Some(OCTOCAT), Some("octocat".into())));
    let method: String = server
        .main_db()
        .query_row("SELECT method FROM auth_sessions ORDER BY created_at_ms DESC LIMIT 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(method, "github");
    {
        let hub = github.hub.lock().unwrap();
        let (accept, form) = &hub.token_requests[0];
        assert_eq!(accept, "application/json");
        assert_eq!(form["redirect_uri"], asked["redirect_uri"]);
        assert_eq!(s256(&form["code_verifier"]), asked["code_challenge"]);
        assert_eq!(hub.token_outcomes, vec![None]);
        let paths: Vec<&str> = hub.api_requests.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(paths, ["/api/v3/user", "/api/v3/user/emails"]);
        for (_, headers) in &hub.api_requests {
            assert_eq!(headers["user-agent"], "sightline");
            assert_eq!(headers["accept"], "application/vnd.github+json");
            assert_eq!(headers["x-github-api-version"], "2022-11-28");
        }
    }

    // Renamed on GitHub and no longer has the address: the link by id still holds,
    // and the e-mail list is not even asked for.
    github.put_account(OCTOCAT, "octocat-renamed", &[("octo@elsewhere.example", true, true)]);
    let again = sign_in(&server, &github);
    assert_eq!(again.status, 303);
    assert!(again.sign_in_cookie().is_some(), "second sign-in: {}", again.location);
    assert_eq!(github_link(&server, "dev@example.com"), (Some(OCTOCAT), Some("octocat-renamed".into())));
    let emails_asked = github.hub.lock().unwrap().api_requests.iter().filter(|(p, _)| p.ends_with("/emails")).count();
    assert_eq!(emails_asked, 1);
}

#[test]
fn callback_without_this_browsers_state_is_refused() {
    let github = GithubStandIn::start();
    github.put_account(OCTOCAT, "octocat", &[("dev@example.com", true, true)]);
    github.approve_as(OCTOCAT);
    let server = server_with_github(&github);

    let started = start(&server, &github);
    let callback = approve(&started.authorize_url);
    let other_flow = start(&server, &github);
    let attempts = [
        ("no flow cookie", callback.clone(), None),
        (
            "state altered",
            with_param(&callback, "state", Some("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")),
            Some(&started.flow_cookie),
        ),
        ("state missing", with_param(&callback, "state", None), Some(&started.flow_cookie)),
        ("another flow's cookie", callback.clone(), Some(&other_flow.flow_cookie)),
    ];
    for (what, url, cookie) in attempts {
        let answer = visit(&url, cookie.map(String::as_str));
        assert!(answer.refused(), "{what}: {} {} {:?}", answer.status, answer.location, answer.set_cookies);
    }
    // Refused before the code was ever sent to GitHub.
    assert!(github.hub.lock().unwrap().token_requests.is_empty());

    // The person cancels at GitHub.
    github.hub.lock().unwrap().deny = true;
    let denied = start(&server, &github);
    let back = approve(&denied.authorize_url);
    assert!(back.contains("error=access_denied"));
    assert!(visit(&back, Some(&denied.flow_cookie)).refused());

    // The same callback with its own cookie works: the refusals above were the state's.
    let done = visit(&callback, Some(&started.flow_cookie));
    assert!(done.sign_in_cookie().is_some(), "{} {}", done.status, done.location);
}

#[test]
fn code_from_another_pkce_challenge_is_refused() {
    let github = GithubStandIn::start();
    github.put_account(OCTOCAT, "octocat", &[("dev@example.com", true, true)]);
    github.approve_as(OCTOCAT);
    let server = server_with_github(&github);

    // The code was issued for someone else's challenge (an injected code).
    let started = start(&server, &github);
    let foreign = s256("someone-elses-verifier-someone-elses-verifier");
    let callback = approve(&with_param(&started.authorize_url, "code_challenge", Some(&foreign)));
    let answer = visit(&callback, Some(&started.flow_cookie));
    assert!(answer.refused(), "{} {}", answer.status, answer.location);
    assert_eq!(github.hub.lock().unwrap().token_outcomes, vec![Some("bad_verification_code".to_string())]);
    assert_eq!(github_link(&server, "dev@example.com"), (None, None));
}

#[test]
fn unverified_email_is_never_linked() {
    let github = GithubStandIn::start();
    github.put_account(
        OCTOCAT,
        "octocat",
        &[("octocat@github.example", true, true), ("dev@example.com", false, false)],
    );
    github.approve_as(OCTOCAT);
    let server = server_with_github(&github);

    let answer = sign_in(&server, &github);
    assert!(answer.refused(), "{} {}", answer.status, answer.location);
    assert_eq!(github_link(&server, "dev@example.com"), (None, None));
}

#[test]
fn unknown_github_account_is_refused_and_creates_no_user() {
    let github = GithubStandIn::start();
    github.put_account(7, "stranger", &[("stranger@example.org", true, true)]);
    github.approve_as(7);
    let server = server_with_github(&github);

    let answer = sign_in(&server, &github);
    assert!(answer.refused(), "{} {}", answer.status, answer.location);
    assert_eq!(answer.location, "/login?error=github&next=%2Fme%2Fgrants");
    let users: i64 = server.main_db().query_row("SELECT count(*) FROM users", [], |r| r.get(0)).unwrap();
    assert_eq!(users, 1);
}

#[test]
fn disabled_user_is_refused_by_link_and_by_email() {
    let github = GithubStandIn::start();
    github.put_account(OCTOCAT, "octocat", &[("dev@example.com", true, true)]);
    github.put_account(42, "gone", &[("gone@example.com", true, true)]);
    let server = server_with_github(&github);
    add_user(&server.data_dir, "gone@example.com", "MEMBER");
    let disable = |email: &str| {
        let out = sightline(&["user", "disable", "--data-dir", server.data_dir.to_str().unwrap(), "--email", email]);
        assert!(out.status.success(), "{}", common::stderr(&out));
    };

    github.approve_as(OCTOCAT);
    assert!(sign_in(&server, &github).sign_in_cookie().is_some(), "linked while enabled");
    disable("dev@example.com");
    assert!(sign_in(&server, &github).refused(), "disabled after linking");

    disable("gone@example.com");
    github.approve_as(42);
    assert!(sign_in(&server, &github).refused(), "disabled before linking");
    assert_eq!(github_link(&server, "gone@example.com"), (None, None));
}

#[test]
fn github_sign_in_off_never_redirects_to_github() {
    let server = TestServer::spawn();
    for path in ["/auth/github?next=%2Fme%2Fgrants", "/auth/github/callback?code=abc&state=def"] {
        let answer = visit(&format!("{}{path}", server.web), None);
        assert_eq!(answer.status, 404, "{path}");
        assert!(answer.location.is_empty() && answer.set_cookies.is_empty(), "{path}");
    }
}

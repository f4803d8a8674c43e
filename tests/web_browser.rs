//! Sign-in in headless Chromium: the browser is sent to `/login`, signs in with the
//! form, keeps the (HttpOnly) cookie across pages, approves a device code at
//! `/device`, and signs out.

use crate::common;

use std::time::Duration;

use common::webdriver::Browser;
use common::{TEST_PASSWORD, TestServer, add_user, agent, read};

const WAIT: Duration = Duration::from_secs(20);

#[test]
fn a_browser_signs_in_approves_a_device_and_signs_out() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, "ada@example.com", "MEMBER");
    let browser = Browser::start();

    browser.goto(&format!("{}/me/grants", server.web));
    browser.wait_for(WAIT, "the login form", |b| b.url().contains("/login"));
    browser.type_into("input[name=email]", "ada@example.com");
    browser.type_into("input[name=password]", TEST_PASSWORD);
    browser.click("form[action='/login'] button[type=submit]");
    browser.wait_for(WAIT, "the grants page after sign-in", |b| b.url().ends_with("/me/grants"));
    assert!(browser.text("h1").contains("Grants on me"));
    assert_eq!(browser.script("return document.cookie;"), "", "the sign-in cookie is HttpOnly");
    browser.goto(&format!("{}/me/settings/audit", server.web));
    browser.wait_for(WAIT, "the audit page", |b| b.shows("h1", "Who read my data"));

    // A device code typed into the page, approved with the button.
    let (_, started) =
        read(agent().post(format!("{}/oauth/device/code", server.ingest)).send_form([("client_id", "sightline-cli")]));
    // The link `sightline login` prints shows who asked before approval (issue 52, L9).
    let code = started["user_code"].as_str().unwrap();
    browser.goto(&format!("{}/device?user_code={code}", server.web));
    browser.wait_for(WAIT, "who asked", |b| b.find("#device-request").is_some());
    assert!(browser.text("#device-request").contains("127.0.0.1"), "{}", browser.text("#device-request"));
    let artefacts = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("../test-artefacts");
    browser.at_each_width("/device", |width| {
        for theme in ["light", "dark"] {
            browser.script(&format!("document.documentElement.dataset.theme = '{theme}';"));
            browser.screenshot(&artefacts.join(format!("device-{width}-{theme}.png")));
        }
    });
    browser.goto(&format!("{}/device", server.web));
    browser.type_into("input[name=user_code]", code);
    browser.click("button[value=approve]");
    browser.wait_for(WAIT, "the approval", |b| {
        b.find("[role=status]").is_some_and(|_| b.text("[role=status]").contains("Approved"))
    });
    let (status, tokens) = read(agent().post(format!("{}/oauth/device/token", server.ingest)).send_form([
        ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ("device_code", started["device_code"].as_str().unwrap()),
        ("client_id", "sightline-cli"),
    ]));
    assert_eq!(status, 200, "{tokens}");
    assert!(tokens["scope"] == "hook" && tokens["refresh_token"].is_null(), "a hook token only: {tokens}");
    assert_eq!(browser.console_errors(), Vec::<String>::new(), "no console error");

    // Signing out ends the sign-in: the next page asks to sign in again.
    browser.click("nav form[action='/logout'] button");
    browser.wait_for(WAIT, "the login page after sign-out", |b| b.url().contains("/login"));
    browser.goto(&format!("{}/me/grants", server.web));
    browser.wait_for(WAIT, "the login form again", |b| b.url().contains("/login"));
}

/// The pages link one stylesheet by a hashed address, kept by the browser for a year;
/// no page inlines a style, so the CSP refuses inline styles; a page drawn by Chromium
/// under that CSP logs no refusal.
#[test]
fn one_cached_stylesheet_and_no_inline_style() {
    let server = TestServer::spawn();
    let response = agent().get(format!("{}/login", server.web)).call().unwrap();
    let csp = response.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(csp.contains("style-src 'self';") && !csp.contains("unsafe-inline"), "{csp}");
    let page = response.into_body().read_to_string().unwrap();
    assert!(!page.contains("<style") && !page.contains(" style=\""), "{page}");
    let at = page.find("href=\"/static/sightline-").expect("the stylesheet's link") + 6;
    let href = &page[at..at + page[at..].find('"').unwrap()];
    let css = agent().get(format!("{}{href}", server.web)).call().unwrap();
    assert_eq!(css.headers()["content-type"], "text/css; charset=utf-8");
    assert_eq!(css.headers()["cache-control"], "public, max-age=31536000, immutable");
    assert!(css.into_body().read_to_string().unwrap().contains(":root[data-theme=\"dark\"]"));
    let stale = agent().get(format!("{}/static/sightline-000000000000.css", server.web)).call();
    assert_eq!(stale.map(|r| r.status().as_u16()).unwrap_or(404), 404, "an unknown hash is not served");

    let browser = Browser::start();
    browser.goto(&format!("{}/login", server.web));
    browser.wait_for(WAIT, "the login page", |b| b.find("input[name=email]").is_some());
    let background = browser.script("return getComputedStyle(document.body).backgroundColor;");
    assert!(background.as_str().is_some_and(|bg| !bg.is_empty() && bg != "rgba(0, 0, 0, 0)"), "styled: {background}");
    assert_eq!(browser.console_errors(), Vec::<String>::new(), "no CSP refusal");
}

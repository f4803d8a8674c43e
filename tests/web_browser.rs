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
    browser.wait_for(WAIT, "the audit page", |b| b.text("h1").contains("Who read my data"));

    // A device code typed into the page, approved with the button.
    let (_, started) =
        read(agent().post(format!("{}/oauth/device/code", server.ingest)).send_form([("client_id", "sightline-cli")]));
    browser.goto(&format!("{}/device", server.web));
    browser.type_into("input[name=user_code]", started["user_code"].as_str().unwrap());
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

    // Signing out ends the sign-in: the next page asks to sign in again.
    browser.click("nav form[action='/logout'] button");
    browser.wait_for(WAIT, "the login page after sign-out", |b| b.url().contains("/login"));
    browser.goto(&format!("{}/me/grants", server.web));
    browser.wait_for(WAIT, "the login form again", |b| b.url().contains("/login"));
}

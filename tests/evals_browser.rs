//! The dashboard in headless Chromium: signing in sets the cookie and later pages need
//! no token; column sort toggles; pagination; the dark-mode toggle persists across
//! reloads; live progress counts update by themselves when `run_state` changes.

use crate::common;

use std::time::Duration;

use common::webdriver::Browser;

struct Dashboard {
    _server: common::results::RunningDashboard,
    base: String,
    db: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

fn start(token: &str) -> Dashboard {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    common::results::hostile(&db);
    let server = common::results::RunningDashboard::start(&db, Some(token));
    Dashboard { base: server.base.clone(), _server: server, db, _dir: dir }
}

const WAIT: Duration = Duration::from_secs(15);

#[test]
fn dashboard_behaves_in_a_real_browser() {
    let token = "browser-test-token";
    let d = start(token);
    let browser = Browser::start();

    // Sign in once; the cookie carries every later page.
    browser.goto(&format!("{}/run/plain-run", d.base));
    browser.wait_for(WAIT, "the login form", |b| b.url().contains("/login"));
    browser.type_into("input[name=token]", token);
    browser.click("form[action='/login'] button[type=submit]");
    browser.wait_for(WAIT, "the run page after login", |b| b.url().ends_with("/run/plain-run"));
    browser.goto(&format!("{}/", d.base));
    browser.wait_for(WAIT, "the overview without a token", |b| b.find("a[href='/run/plain-run']").is_some());
    let cookie_visible_to_scripts = browser.script("return document.cookie;");
    assert_eq!(cookie_visible_to_scripts, "", "the session cookie is HttpOnly");

    // Sorting: the Success header toggles between descending and ascending.
    browser.goto(&format!("{}/run/plain-run?per_page=25", d.base));
    let header = "#results-table thead a[href*='sort=success']";
    browser.click(header);
    browser.wait_for(WAIT, "descending sort", |b| b.url().contains("sort=success") && b.url().contains("order=desc"));
    let successes = |b: &Browser| -> Vec<f64> {
        let values = b.script(
            "return Array.from(document.querySelectorAll('#results-table > tbody > tr > td:nth-child(7)')).map(td => td.textContent.trim());",
        );
        values.as_array().unwrap().iter().filter_map(|v| v.as_str()?.parse().ok()).collect()
    };
    let desc = successes(&browser);
    assert!(!desc.is_empty() && desc.windows(2).all(|w| w[0] >= w[1]), "{desc:?}");
    browser.click(header);
    browser.wait_for(WAIT, "ascending sort", |b| b.url().contains("order=asc"));
    let asc = successes(&browser);
    assert!(asc.windows(2).all(|w| w[0] <= w[1]), "{asc:?}");

    // Pagination.
    assert!(browser.text(".pager span").contains("Page 1 of 2"));
    browser.click(".pager a[rel=next]");
    browser.wait_for(WAIT, "page 2", |b| b.shows(".pager span", "Page 2 of 2"));

    // Dark mode: the switch sets the theme and the choice survives a reload.
    let theme = |b: &Browser| b.script("return document.documentElement.getAttribute('data-theme');");
    let before = browser.script("return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';");
    let other = if before == "dark" { "light" } else { "dark" };
    assert_eq!(
        browser.script("return document.getElementById('theme-choice').hidden;"),
        false,
        "shown with JavaScript"
    );
    browser.script(&format!(
        "const s = document.getElementById('theme-choice'); s.value = '{other}'; s.dispatchEvent(new Event('change'));"
    ));
    let chosen = theme(&browser);
    assert_eq!(chosen, other, "the switch sets the other theme");
    browser.goto(&format!("{}/", d.base));
    browser.wait_for(WAIT, "the theme after reload", |b| theme(b) == chosen);
    let background = browser.script("return getComputedStyle(document.body).backgroundColor;");
    let dark_background = background.as_str().unwrap().contains("13, 17, 23");
    assert_eq!(dark_background, chosen == "dark", "background {background} for theme {chosen}");

    // Live progress: the harness finishes the running cell; the page notices by itself.
    browser.goto(&format!("{}/run/plain-run", d.base));
    assert_eq!(browser.text("[data-count=running]"), "1");
    let conn = rusqlite::Connection::open(&d.db).unwrap();
    conn.execute("UPDATE run_state SET status = 'completed' WHERE status = 'running'", []).unwrap();
    browser.wait_for(WAIT, "live progress to update", |b| {
        b.text("[data-count=running]") == "0" && b.text("[data-count=completed]") == "1"
    });
}

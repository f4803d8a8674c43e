//! A minimal W3C WebDriver client over HTTP (ureq) driving Debian's `chromedriver`
//! and headless `chromium`, for the behaviour that lives in the browser. `.ci/run`
//! installs both packages.
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

pub struct Browser {
    driver: Child,
    base: String,
    session: String,
    agent: ureq::Agent,
    _profile: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Browser {
    pub fn start() -> Browser {
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is missing: run the tests with scripts/test, which installs Debian's chromium and chromium-driver");
        let base = format!("http://127.0.0.1:{port}");
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .new_agent();
        let started = Instant::now();
        while agent.get(format!("{base}/status")).call().is_err() {
            assert!(started.elapsed() < Duration::from_secs(20), "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--window-size=1280,1000".into(),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args},
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        let mut response = agent
            .post(format!("{base}/session"))
            .content_type("application/json")
            .send(capabilities.to_string())
            .unwrap();
        let body: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap();
        let session = body["value"]["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {body}")).to_string();
        Browser { driver, base, session, agent, _profile: profile }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let response = match method {
            "GET" => self.agent.get(&url).call(),
            "DELETE" => self.agent.delete(&url).call(),
            _ => self.agent.post(&url).content_type("application/json").send(body.unwrap_or(json!({})).to_string()),
        };
        let text = response.unwrap().body_mut().read_to_string().unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        value["value"].clone()
    }

    pub fn goto(&self, url: &str) {
        self.call("POST", "/url", Some(json!({"url": url})));
    }

    pub fn url(&self) -> String {
        self.call("GET", "/url", None).as_str().unwrap_or_default().to_string()
    }

    pub fn find(&self, css: &str) -> Option<String> {
        let value = self.call("POST", "/element", Some(json!({"using": "css selector", "value": css})));
        value.get(ELEMENT).and_then(|v| v.as_str()).map(str::to_string)
    }

    pub fn element(&self, css: &str) -> String {
        self.find(css).unwrap_or_else(|| panic!("no element {css} on {}", self.url()))
    }

    pub fn click(&self, css: &str) {
        let id = self.element(css);
        self.call("POST", &format!("/element/{id}/click"), Some(json!({})));
    }

    pub fn type_into(&self, css: &str, text: &str) {
        let id = self.element(css);
        self.call("POST", &format!("/element/{id}/value"), Some(json!({"text": text})));
    }

    pub fn text(&self, css: &str) -> String {
        let id = self.element(css);
        self.call("GET", &format!("/element/{id}/text"), None).as_str().unwrap_or_default().to_string()
    }

    /// Whether an element `css` is on the page now and its text contains `words`. Never
    /// panics: for waits, where the page may be between two documents (the element found a
    /// moment ago can be gone, or stale, by the time its text is read).
    pub fn shows(&self, css: &str, words: &str) -> bool {
        let Some(id) = self.find(css) else { return false };
        let text = self.call("GET", &format!("/element/{id}/text"), None);
        text.as_str().is_some_and(|text| text.contains(words))
    }

    pub fn script(&self, source: &str) -> Value {
        self.call("POST", "/execute/sync", Some(json!({"script": source, "args": []})))
    }

    /// The browser console's errors since the last call (chromedriver's log of the page:
    /// `console.error`, uncaught exceptions, failed loads, refused content).
    pub fn console_errors(&self) -> Vec<String> {
        let entries = self.call("POST", "/se/log", Some(json!({"type": "browser"})));
        entries
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .filter(|entry| entry["level"] == "SEVERE")
                    .map(|entry| entry["message"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Sets the window's outer size (a phone is 390 px wide).
    pub fn resize(&self, width: u32, height: u32) {
        self.call("POST", "/window/rect", Some(json!({"width": width, "height": height})));
    }

    /// At a laptop's (1,400 px) and a phone's (390 px) width in turn: the page is no wider
    /// than the window and no chart label overlaps another or leaves its chart (panics
    /// naming `what`), then `each(width)` (a screenshot); back to 1,400 px after.
    pub fn at_each_width(&self, what: &str, mut each: impl FnMut(u32)) {
        for (width, height) in [(1400, 1000), (390, 844)] {
            self.resize(width, height);
            let overflow = self.overflow_px();
            assert!(overflow <= 0, "{what} at {width} px: {overflow} px too wide");
            let faults = self.chart_label_faults();
            assert!(faults.is_empty(), "{what} at {width} px: chart labels {faults:?}");
            each(width);
        }
        self.resize(1400, 1000);
    }

    /// How many pixels the page is wider than the window (0 or less: it fits).
    pub fn overflow_px(&self) -> i64 {
        self.script("return document.documentElement.scrollWidth - document.documentElement.clientWidth;")
            .as_i64()
            .unwrap_or(i64::MAX)
    }

    /// The chart labels that overlap another label of the same chart or run past the
    /// chart's edge, computed from their boxes as drawn (each as its text).
    pub fn chart_label_faults(&self) -> Vec<String> {
        let found = self.script(
            "const faults = [];
             // Each label as the four corners it is drawn at (turned labels included).
             const corners = t => {
               const b = t.getBBox(), m = t.getScreenCTM();
               return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
                 .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
             };
             // Two convex shapes overlap unless an edge's normal separates them (by more than 1 px).
             const overlap = (p, q) => {
               for (const shape of [p, q]) for (let i = 0; i < 4; i++) {
                 const [x1, y1] = shape[i], [x2, y2] = shape[(i + 1) % 4];
                 const n = [y1 - y2, x2 - x1], len = Math.hypot(n[0], n[1]) || 1;
                 const proj = s => s.map(([x, y]) => (x * n[0] + y * n[1]) / len);
                 const a = proj(p), b = proj(q);
                 if (Math.max(...a) - 1 <= Math.min(...b) || Math.max(...b) - 1 <= Math.min(...a)) return false;
               }
               return true;
             };
             for (const svg of document.querySelectorAll('svg[role=img]')) {
               const frame = svg.getBoundingClientRect();
               const labels = [...svg.querySelectorAll('text')]
                 .filter(t => t.getBBox().width > 0)
                 .map(t => [t.childNodes[0] ? t.childNodes[0].textContent : t.textContent, corners(t)]);
               for (let i = 0; i < labels.length; i++) {
                 const [text, p] = labels[i];
                 if (p.some(([x, y]) => x < frame.left - 1 || x > frame.right + 1 || y < frame.top - 1 || y > frame.bottom + 1))
                   faults.push('cut: ' + text);
                 for (let j = i + 1; j < labels.length; j++)
                   if (overlap(p, labels[j][1])) faults.push('overlap: ' + text + ' / ' + labels[j][0]);
               }
             }
             return faults;",
        );
        found
            .as_array()
            .map(|list| list.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    }

    /// Saves a PNG of the window to `path` (test artefacts).
    pub fn screenshot(&self, path: &std::path::Path) {
        use base64::Engine as _;
        let encoded = self.call("GET", "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD.decode(encoded.as_str().unwrap_or_default()).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }

    /// Polls `check` every 50 ms until it holds; panics naming `what` after `limit`.
    pub fn wait_for(&self, limit: Duration, what: &str, mut check: impl FnMut(&Browser) -> bool) {
        let started = Instant::now();
        while !check(self) {
            assert!(started.elapsed() < limit, "timed out waiting for {what} on {}", self.url());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.agent.delete(format!("{}/session/{}", self.base, self.session)).call();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

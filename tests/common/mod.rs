//! Test harness: runs the real `sightline` binary on 127.0.0.1:0 with a temporary
//! data directory, waits for `/readyz` by polling (never a fixed sleep), and talks
//! HTTP to it. Operator verbs (user add, token create) run as the real CLI too.
#![allow(dead_code)]

pub mod datadir;
pub mod github_app_standin;
pub mod github_payloads;
pub mod github_standin;
pub mod inprocess;
pub mod machine;
pub mod model_standin;
pub mod proxy;
pub mod receiver;
pub mod results;
pub mod secrets;
pub mod transcript_standin;
pub mod transcripts;
pub mod webdriver;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_sightline");

/// Runs the CLI to completion.
pub fn sightline(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env_remove("SIGHTLINE_CONFIG").output().expect("run sightline")
}

/// Runs the CLI on a real terminal: a pty made by util-linux `script` (Debian's
/// essential `bsdutils`), `columns` wide. Returns what the terminal showed, with the
/// pty's carriage returns taken out.
pub fn sightline_on_terminal(args: &[&str], columns: u16) -> String {
    let quoted: Vec<String> =
        std::iter::once(BIN).chain(args.iter().copied()).map(|a| format!("'{}'", a.replace('\'', "'\\''"))).collect();
    let output = Command::new("script")
        .args(["-qec", &quoted.join(" "), "/dev/null"])
        .env_remove("SIGHTLINE_CONFIG")
        .env("COLUMNS", columns.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("run script (util-linux)");
    assert!(output.status.success(), "{args:?} on a terminal failed: {}", stdout(&output));
    stdout(&output).replace('\r', "")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The password every test user gets (long enough, not a common one).
pub const TEST_PASSWORD: &str = "correct horse battery staple";

/// Runs the CLI with `input` on standard input.
pub fn sightline_with_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .env_remove("SIGHTLINE_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sightline");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().expect("wait for sightline")
}

/// Adds a user with `role` and [`TEST_PASSWORD`].
pub fn add_user(data_dir: &Path, email: &str, role: &str) {
    let dir = data_dir.to_str().unwrap();
    let added = sightline_with_stdin(
        &[
            "user",
            "add",
            "--data-dir",
            dir,
            "--email",
            email,
            "--name",
            "Test User",
            "--role",
            role,
            "--password-stdin",
        ],
        &format!("{TEST_PASSWORD}\n"),
    );
    assert!(added.status.success(), "user add: {}", stderr(&added));
}

/// Signs in with the password grant at `base` (either listener); returns the answer.
pub fn password_grant(base: &str, email: &str, password: &str) -> (u16, Value) {
    read(agent().post(format!("{base}/oauth/token")).send_form([
        ("grant_type", "password"),
        ("username", email),
        ("password", password),
    ]))
}

/// An access token for a test user of `server` (signed in once per server and user,
/// then reused). The cache is keyed by the data directory, which no other server in
/// the process shares: a port can be reused by a later server, whose key differs.
pub fn access_token(server: &TestServer, email: &str) -> String {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static CACHE: Mutex<Option<HashMap<(PathBuf, String), String>>> = Mutex::new(None);
    let key = (server.data_dir.clone(), email.to_string());
    if let Some(token) = CACHE.lock().unwrap().get_or_insert_with(HashMap::new).get(&key) {
        return token.clone();
    }
    let (status, body) = password_grant(&server.ingest, email, TEST_PASSWORD);
    assert_eq!(status, 200, "sign-in of {email}: {body}");
    let token = body["access_token"].as_str().unwrap().to_string();
    CACHE.lock().unwrap().get_or_insert_with(HashMap::new).insert(key, token.clone());
    token
}

/// Adds a user and returns a fresh hook token for them. The user also has
/// [`TEST_PASSWORD`], for routes that want an access token.
pub fn user_with_token(data_dir: &Path, email: &str) -> String {
    let dir = data_dir.to_str().unwrap();
    add_user(data_dir, email, "MEMBER");
    let token = sightline(&["token", "create", "--data-dir", dir, "--user", email, "--kind", "hook"]);
    assert!(token.status.success(), "token create: {}", stderr(&token));
    stdout(&token).trim().to_string()
}

pub struct TestServer {
    pub data_dir: PathBuf,
    _temp: Option<tempfile::TempDir>,
    pub child: Option<Child>,
    pub ingest: String,
    pub web: String,
    pub github: String,
    pub token: String,
    pub extra_env: Vec<(String, String)>,
}

impl TestServer {
    /// A server on a new data directory with one user (`dev@example.com`).
    pub fn spawn() -> TestServer {
        Self::spawn_with_env(&[])
    }

    pub fn spawn_with_env(env: &[(&str, &str)]) -> TestServer {
        let temp = tempfile::tempdir().expect("temp dir");
        let data_dir = temp.path().join("data");
        let token = user_with_token(&data_dir, "dev@example.com");
        let mut server = TestServer {
            data_dir,
            _temp: Some(temp),
            child: None,
            ingest: String::new(),
            web: String::new(),
            github: String::new(),
            token,
            extra_env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        };
        server.start();
        server
    }

    /// A server started on an existing data directory (a restored or upgraded one), its
    /// ingest calls made with `token`.
    pub fn on(data_dir: PathBuf, token: String) -> TestServer {
        let mut server = TestServer {
            data_dir,
            _temp: None,
            child: None,
            ingest: String::new(),
            web: String::new(),
            github: String::new(),
            token,
            extra_env: Vec::new(),
        };
        server.start();
        server
    }

    /// A handle on a server started some other way (in-process, with a manual clock),
    /// so the HTTP helpers work against it. Dropping it stops nothing.
    pub fn attach(data_dir: PathBuf, ingest: String, web: String, token: String) -> TestServer {
        TestServer {
            data_dir,
            _temp: None,
            child: None,
            ingest,
            web,
            github: String::new(),
            token,
            extra_env: Vec::new(),
        }
    }

    /// Starts (or restarts) the server process on this data directory.
    pub fn start(&mut self) {
        let _ = std::fs::remove_file(self.data_dir.join("run/addresses.json"));
        let mut command = Command::new(BIN);
        command
            .args(["serve", "--data-dir", self.data_dir.to_str().unwrap()])
            .args(["--ingest-addr", "127.0.0.1:0", "--web-addr", "127.0.0.1:0", "--github-addr", "127.0.0.1:0"])
            .env("SIGHTLINE_LOG", "warn")
            .env_remove("SIGHTLINE_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        for (k, v) in &self.extra_env {
            command.env(k, v);
        }
        let child = command.spawn().expect("spawn server");
        let pid = child.id();
        self.child = Some(child);
        let addresses = wait_for_addresses(&self.data_dir, pid, self.child.as_mut().unwrap());
        let scheme = if addresses["tls"].as_bool() == Some(true) { "https" } else { "http" };
        self.ingest = format!("{scheme}://{}", addresses["ingest"].as_str().unwrap());
        self.web = format!("{scheme}://{}", addresses["web"].as_str().unwrap());
        self.github = format!("{scheme}://{}", addresses["github"].as_str().unwrap());
        // Over TLS the server's certificate is the test's own; `healthcheck` asks it.
        let data_dir = self.data_dir.to_str().unwrap().to_string();
        wait_until(Duration::from_secs(30), "readyz", || match scheme {
            "https" => sightline(&["healthcheck", "--data-dir", &data_dir]).status.success(),
            _ => get(&format!("{}/readyz", self.ingest)).0 == 200,
        });
    }

    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends SIGTERM and waits for a clean exit; returns the exit status code.
    pub fn terminate(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        child.wait().ok().and_then(|s| s.code())
    }

    pub fn post_events(&self, token: &str, body: &Value) -> (u16, Value) {
        post_json(&format!("{}/v1/events", self.ingest), token, body)
    }

    pub fn session(&self, token: &str, session_id: &str) -> (u16, Value) {
        self.agent_session(token, "claude_code", session_id)
    }

    pub fn agent_session(&self, token: &str, agent: &str, session_id: &str) -> (u16, Value) {
        get_auth(&format!("{}/v1/me/sessions/{agent}/{session_id}", self.ingest), token)
    }

    pub fn main_db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.data_dir.join("main.db")).expect("open main.db")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill9();
    }
}

fn wait_for_addresses(data_dir: &Path, pid: u32, child: &mut Child) -> Value {
    let path = data_dir.join("run/addresses.json");
    let mut found = Value::Null;
    wait_until(Duration::from_secs(30), "addresses.json", || {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("server exited during start-up: {status}");
        }
        match std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok()) {
            Some(value) if value["pid"] == json!(pid) => {
                found = value;
                true
            }
            _ => false,
        }
    });
    found
}

/// Polls `check` every 20 ms until it holds; panics naming `what` after `limit`.
/// A main.db change run as the writer would run it, in its own transaction on `conn`
/// (for library calls that take the writer's `change_main`, outside a server).
pub fn commit_on(
    conn: &rusqlite::Connection,
) -> impl Fn(sightline::events::writer::MainChange) -> Result<(), sightline::db::DbError> + '_ {
    move |change| {
        let tx = conn.unchecked_transaction()?;
        change(&tx)?;
        Ok(tx.commit()?)
    }
}

pub fn wait_until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent()
}

pub fn read(response: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> (u16, Value) {
    match response {
        Ok(mut response) => {
            let status = response.status().as_u16();
            let text = response.body_mut().read_to_string().unwrap_or_default();
            (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
        }
        Err(err) => (0, Value::String(err.to_string())),
    }
}

pub fn get(url: &str) -> (u16, Value) {
    read(agent().get(url).call())
}

pub fn get_auth(url: &str, token: &str) -> (u16, Value) {
    read(agent().get(url).header("Authorization", format!("Bearer {token}")).call())
}

pub fn post_json(url: &str, token: &str, body: &Value) -> (u16, Value) {
    post_raw(url, token, &[], serde_json::to_vec(body).unwrap())
}

pub fn post_raw(url: &str, token: &str, headers: &[(&str, &str)], body: Vec<u8>) -> (u16, Value) {
    let mut request =
        agent().post(url).header("Authorization", format!("Bearer {token}")).header("Content-Type", "application/json");
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    read(request.send(&body[..]))
}

pub fn now_rfc3339() -> String {
    ts_rfc3339(now_ms())
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

pub fn ts_rfc3339(ms: i64) -> String {
    sightline::model::rfc3339_ms(ms)
}

pub fn envelope(events: Vec<Value>) -> Value {
    json!({"client": {"machine_id": "test-machine", "cli_version": "0.1.0", "os": "linux"}, "events": events})
}

/// A valid event of `kind` in `session` at `ts_ms`, with a fresh UUIDv7.
pub fn event(kind: &str, session: &str, ts_ms: i64) -> Value {
    let mut event = json!({
        "event_id": uuid::Uuid::now_v7().to_string(),
        "type": kind,
        "ts": ts_rfc3339(ts_ms),
        "agent_type": "claude_code",
        "session_id": session,
    });
    match kind {
        "tool_start" | "tool_end" => {
            event["tool"] = json!({"name": "claude_code:Bash", "status": if kind == "tool_end" { Some("success") } else { None },
                "input_sha256": "ab".repeat(32), "input_bytes": 120});
        }
        "turn_end" => {
            event["model"] = json!("claude-sonnet-4-5-20250929");
            event["usage"] = json!({"input_tokens": 1000, "output_tokens": 500, "cache_read_tokens": 10000,
                "cache_write_5m_tokens": 2000, "cache_write_1h_tokens": 4000});
        }
        "notification" => event["notification_kind"] = json!("permission"),
        "prompt_submit" => event["response_ms"] = json!(1500),
        _ => {}
    }
    event
}

/// A realistic mixed session of `n` events starting at `start_ms`.
pub fn session_events(session: &str, start_ms: i64, n: usize) -> Vec<Value> {
    let kinds = ["session_start", "prompt_submit", "tool_start", "tool_end", "turn_end", "notification"];
    (0..n)
        .map(|i| event(kinds[if i == 0 { 0 } else { 1 + (i % (kinds.len() - 1)) }], session, start_ms + i as i64))
        .collect()
}

/// The aggregate columns of a session row, for equality checks.
pub fn session_aggregates(conn: &rusqlite::Connection, session: &str) -> Vec<i64> {
    conn.query_row(
        "SELECT event_count, prompt_count, tool_call_count, tool_error_count, denial_count, notification_count,
                input_tokens, output_tokens, cache_read_tokens, cache_write_5m_tokens, cache_write_1h_tokens,
                cost_nusd, total_response_ms, response_sample_count, first_event_ms, last_event_ms
         FROM sessions WHERE agent_session_id = ?1",
        [session],
        |row| (0..16).map(|i| row.get::<_, i64>(i)).collect(),
    )
    .expect("session row")
}

/// Total rows over every event partition.
pub fn count_stored_events(data_dir: &Path) -> i64 {
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(data_dir.join("events")) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) == Some("db") {
                let conn = rusqlite::Connection::open(&path).unwrap();
                total += conn.query_row("SELECT count(*) FROM events", [], |row| row.get::<_, i64>(0)).unwrap();
            }
        }
    }
    total
}

/// A form post with a bearer token, not following redirects: the status and the
/// `Location` it answered.
pub fn post_form(url: &str, token: &str, body: &str) -> (u16, Option<String>) {
    let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
    let response = agent
        .post(url)
        .header("Authorization", format!("Bearer {token}"))
        .content_type("application/x-www-form-urlencoded")
        .send(body)
        .unwrap();
    (response.status().as_u16(), response.headers().get("location").map(|l| l.to_str().unwrap().to_string()))
}

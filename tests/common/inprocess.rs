//! The real server run inside the test process with a manual clock, so tests can move
//! time (grant expiry, device-code expiry) instead of sleeping. It listens on
//! 127.0.0.1:0 and speaks HTTP like the binary; only the clock is the test's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use sightline::clock::Clock;
use sightline::config::Config;

use super::{TestServer, get, wait_until};

/// The GitHub App webhook secret of an in-process server.
pub const WEBHOOK_SECRET: &str = "in-process-webhook-secret";

pub struct InProcess {
    pub server: TestServer,
    pub clock: Clock,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InProcess {
    /// Starts a server on `data_dir` (users may already be in it) at the system time.
    pub fn start(data_dir: &Path, token: &str) -> InProcess {
        let clock = Clock::manual(super::now_ms());
        let mut config = Config { data_dir: data_dir.to_path_buf(), ..Config::default() };
        config.listen.ingest = "127.0.0.1:0".parse().unwrap();
        config.listen.web = "127.0.0.1:0".parse().unwrap();
        config.listen.github = "127.0.0.1:0".parse().unwrap();
        config.github.webhook_secret = sightline::config::Secret(WEBHOOK_SECRET.into());
        let _ = std::fs::remove_file(data_dir.join("run/addresses.json"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server_clock = clock.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime
                .block_on(sightline::app::serve::serve_with_clock(config, server_clock, async {
                    let _ = stopped.await;
                }))
                .unwrap();
        });
        let path: PathBuf = data_dir.join("run/addresses.json");
        let mut addresses = Value::Null;
        wait_until(Duration::from_secs(30), "addresses.json", || {
            match std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok()) {
                Some(value) => {
                    addresses = value;
                    true
                }
                None => false,
            }
        });
        let ingest = format!("http://{}", addresses["ingest"].as_str().unwrap());
        let web = format!("http://{}", addresses["web"].as_str().unwrap());
        wait_until(Duration::from_secs(30), "readyz", || get(&format!("{ingest}/readyz")).0 == 200);
        let mut server = TestServer::attach(data_dir.to_path_buf(), ingest, web, token.to_string());
        server.github = format!("http://{}", addresses["github"].as_str().unwrap());
        InProcess { server, clock, stop: Some(stop), thread: Some(thread) }
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

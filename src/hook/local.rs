//! Where the hook CLI keeps its state, and the login config: `$XDG_CONFIG_HOME/sightline/
//! client.toml` (server URL and hook token, mode 0600) and `$XDG_DATA_HOME/sightline/`
//! (the queue, the flusher's lock and the log file). Falls back to `~/.config` and
//! `~/.local/share` as the XDG specification says.

use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::machine::{self, MachineVariable};

/// The person's home directory (`.` when `HOME` is unset).
pub fn home() -> PathBuf {
    machine::home_dir()
}

/// `$XDG_CONFIG_HOME`, or `~/.config`: where agents and editors keep their configuration too.
pub fn xdg_config_home() -> PathBuf {
    machine::directory(MachineVariable::XdgConfigHome, ".config", true)
}

/// A directory an agent lets an environment variable move (`CODEX_HOME`, …), else
/// `~/<fallback>`.
pub fn dir_from_env(variable: MachineVariable, fallback: &str) -> PathBuf {
    machine::directory(variable, fallback, false)
}

/// `$XDG_DATA_HOME`, or `~/.local/share`: where some agents keep their sessions.
pub fn xdg_data_home() -> PathBuf {
    machine::directory(MachineVariable::XdgDataHome, ".local/share", true)
}

pub fn config_dir() -> PathBuf {
    xdg_config_home().join("sightline")
}

pub fn data_dir() -> PathBuf {
    xdg_data_home().join("sightline")
}

pub fn queue_path() -> PathBuf {
    data_dir().join("queue.db")
}

pub fn lock_path() -> PathBuf {
    data_dir().join("flusher.lock")
}

pub fn log_path() -> PathBuf {
    data_dir().join("hook.log")
}

/// The server and credential the flusher uses.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClientConfig {
    /// Base URL of the ingest listener, e.g. https://sightline.example.com:4000.
    pub server: String,
    pub token: String,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig").field("server", &self.server).field("token", &"<hidden>").finish()
    }
}

pub fn config_path() -> PathBuf {
    config_dir().join("client.toml")
}

pub fn load_config() -> std::io::Result<Option<ClientConfig>> {
    match std::fs::read_to_string(config_path()) {
        Ok(text) => toml::from_str(&text).map(Some).map_err(std::io::Error::other),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Writes the config with mode 0600 (it holds a token), via a temporary file.
pub fn save_config(config: &ClientConfig) -> std::io::Result<PathBuf> {
    let path = config_path();
    std::fs::create_dir_all(config_dir())?;
    let temp = path.with_extension("toml.partial");
    let text = toml::to_string(config).map_err(std::io::Error::other)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temp, &path)?;
    Ok(path)
}

/// An HTTP client for the server that answers every status as a response (the caller
/// decides what a 4xx or 5xx means), with a whole-request timeout.
pub fn http_agent(timeout: std::time::Duration) -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(timeout)).build().new_agent()
}

/// Appends one line to the local log file (errors the hook must not show the agent).
pub fn log(message: &str) {
    let _ = std::fs::create_dir_all(data_dir());
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(log_path()) {
        let _ = writeln!(file, "{} {message}", crate::model::rfc3339_ms(crate::clock::system_now_ms()));
    }
}

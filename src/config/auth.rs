//! The `[auth]` section (sign-in: the public URL, GitHub sign-in and which GitHub), and
//! [`Secret`], a value that never reaches logs. Validated with the rest in
//! `Config::validate`.

use std::net::SocketAddr;

use serde::Deserialize;

/// Sign-in settings. See `assets/sightline.default.toml` for each key.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Auth {
    pub public_url: String,
    /// The ingest listener as developer machines reach it (`/install` shows it); empty:
    /// the web app's public host with the ingest listener's port.
    pub ingest_public_url: String,
    /// `/install.sh` names the server by the `Host` the script was fetched with (when
    /// `ingest_public_url` is empty). Off by default: a `Host` is the client's to set, and
    /// a script that names another server sends that machine's sessions there.
    pub install_script_uses_host: bool,
    pub github_client_id: String,
    pub github_client_secret: Secret,
    pub github_url: String,
    pub github_api_url: String,
}

/// The defaults of each key, also when a file or the environment sets only some of the
/// `[auth]` keys (a derived default would leave `github_url` empty, which is invalid).
impl Default for Auth {
    fn default() -> Self {
        Auth {
            public_url: String::new(),
            ingest_public_url: String::new(),
            install_script_uses_host: false,
            github_client_id: String::new(),
            github_client_secret: Secret::default(),
            github_url: "https://github.com".into(),
            github_api_url: String::new(),
        }
    }
}

/// A configuration value that must never reach logs or `Debug` output.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() { "\"\"" } else { "\"<hidden>\"" })
    }
}

impl Auth {
    /// The web app's public origin, without a trailing slash.
    /// `public_url`, else the web listener's own address (`https://` when it speaks TLS).
    pub fn public_origin(&self, web: SocketAddr, tls: bool) -> String {
        if self.public_url.is_empty() {
            format!("{}://{web}", if tls { "https" } else { "http" })
        } else {
            self.public_url.trim_end_matches('/').to_string()
        }
    }

    pub fn github_enabled(&self) -> bool {
        !self.github_client_id.is_empty()
    }

    /// The GitHub REST API base: api.github.com for github.com, `/api/v3` under a
    /// GitHub Enterprise Server.
    pub fn github_api(&self) -> String {
        if !self.github_api_url.is_empty() {
            return self.github_api_url.trim_end_matches('/').to_string();
        }
        let base = self.github_url.trim_end_matches('/');
        if base == "https://github.com" { "https://api.github.com".to_string() } else { format!("{base}/api/v3") }
    }
}

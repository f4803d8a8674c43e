//! Server configuration: defaults in code, then a TOML file, then `SIGHTLINE_*`
//! environment variables, then command-line flags; validated once at start-up.
//!
//! Invariants: `assets/sightline.default.toml` (printed by `sightline config
//! default`) parses to exactly [`Config::default`] (a test holds them together);
//! unknown keys in the file and malformed environment values are errors that name
//! the key; a [`Config`] that exists has passed [`Config::validate`].

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use serde::Deserialize;

mod analytics;
mod auth;
mod environment;
mod github;
mod integrations;
pub mod machine;

pub use analytics::Analytics;
pub use auth::{Auth, Secret};
pub use environment::{COMMAND_VARIABLES, ENV_KEYS};
pub use github::Github;
pub use integrations::{Alerts, Backup, Billing, Jira, Judge};

pub const DEFAULT_FILE: &str = include_str!("../assets/sightline.default.toml");

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub data_dir: PathBuf,
    pub listen: Listen,
    pub ingest: Ingest,
    pub storage: Storage,
    pub jobs: Jobs,
    pub server: Server,
    pub log: Log,
    pub auth: Auth,
    pub github: Github,
    pub analytics: Analytics,
    pub judge: Judge,
    pub jira: Jira,
    pub billing: Billing,
    pub alerts: Alerts,
    pub backup: Backup,
    /// The configuration file read, if any (a backup copies it).
    #[serde(skip)]
    pub source_file: Option<PathBuf>,
    /// `SIGHTLINE_*` variables of the environment that name no setting (a typo, or a
    /// setting of another version); the server warns of each at start.
    #[serde(skip)]
    pub unknown_variables: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Listen {
    pub ingest: SocketAddr,
    pub web: SocketAddr,
    pub github: SocketAddr,
    /// OTLP/gRPC's listener (`host:port`, OTLP's own port is 4317), or empty for none.
    pub otlp_grpc: String,
    /// Reverse proxies whose `X-Forwarded-For` is believed (the client address for
    /// throttling); from any other peer the header is ignored.
    pub trusted_proxies: Vec<IpAddr>,
    /// Connections each listener holds at once; more wait in the kernel's backlog.
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers, from when the connection opens
    /// or falls idle after an answer.
    pub header_timeout_secs: u64,
    /// Connections one client address may hold on a listener (at most
    /// `max_connections`; a trusted proxy's are not counted: it carries many clients).
    pub max_connections_per_address: usize,
    /// Seconds a request not (yet) authenticated has for its whole body.
    pub body_timeout_secs: u64,
    /// An authenticated upload's slowest average rate, in bytes per second, counted
    /// after its first `body_timeout_secs`, and the longest it may take in all.
    pub upload_min_bytes_per_sec: u64,
    pub upload_timeout_secs: u64,
    /// An HTTP/2 (OTLP/gRPC) connection with no request in flight for this long is
    /// closed, and it may carry at most `max_streams_per_connection` requests at once.
    pub idle_timeout_secs: u64,
    pub max_streams_per_connection: u32,
    /// PEM certificate chain and private key: with both, the ingest, web and GitHub
    /// listeners speak HTTPS (`http::tls`); empty for plain HTTP behind a proxy.
    pub tls_cert: String,
    pub tls_key: String,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ingest {
    pub max_body_bytes: usize,
    pub max_decoded_bytes: usize,
    pub max_events_per_batch: usize,
    pub max_metadata_bytes: usize,
    pub max_future_skew_secs: i64,
    pub max_event_age_days: i64,
    /// A second path for the OTLP receiver's `/v1/logs`, `/v1/metrics` and `/v1/traces`
    /// (`/otel` serves `/otel/v1/logs`), for exporters and proxies that want their own.
    pub otlp_path_prefix: String,
    /// Most log records, spans or metric data points in one OTLP export, and most
    /// attributes in one of its lists (counted before the export is decoded).
    pub max_otlp_records: u64,
    pub max_otlp_attributes: u64,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Storage {
    pub max_group_events: usize,
    pub writer_queue: usize,
    pub wal_soft_cap_mb: u64,
    pub checkpoint_interval_secs: u64,
    pub wal_hard_cap_mb: u64,
    pub compact_after_days: i64,
    pub reader_pool: u32,
}

/// Settings of the jobs that sweep: how long raw events are kept, and when a quiet
/// session counts as abandoned.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Jobs {
    /// Raw events older than this many days are dropped by `sweep-retention` (a team's
    /// `retention_days` overrides it for its members).
    pub retention_days: i64,
    /// A session with no event for this many minutes and no end is closed as abandoned.
    pub abandon_after_mins: i64,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Server {
    pub shutdown_grace_secs: u64,
    /// How often the service-level counters are written to main.db.
    pub sli_flush_secs: u64,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Log {
    pub level: String,
    pub format: LogFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: PathBuf::from("./sightline-data"),
            listen: Listen::default(),
            ingest: Ingest::default(),
            storage: Storage::default(),
            jobs: Jobs::default(),
            server: Server::default(),
            log: Log::default(),
            auth: Auth::default(),
            github: Github::default(),
            analytics: Analytics::default(),
            judge: Judge::default(),
            jira: Jira::default(),
            billing: Billing::default(),
            alerts: Alerts::default(),
            backup: Backup::default(),
            source_file: None,
            unknown_variables: Vec::new(),
        }
    }
}

impl Listen {
    /// The certificate and key files when TLS is on (both set), `None` when both are empty.
    pub fn tls_files(&self) -> Result<Option<(PathBuf, PathBuf)>, ConfigError> {
        match (self.tls_cert.trim(), self.tls_key.trim()) {
            ("", "") => Ok(None),
            (cert, key) if !cert.is_empty() && !key.is_empty() => Ok(Some((PathBuf::from(cert), PathBuf::from(key)))),
            _ => Err(ConfigError::Invalid(
                "listen.tls_cert and listen.tls_key go together: set both (PEM files) for HTTPS, or neither".into(),
            )),
        }
    }

    /// `otlp_grpc` as an address, `None` when it is empty (no gRPC listener).
    pub fn otlp_grpc_addr(&self) -> Result<Option<SocketAddr>, ConfigError> {
        let text = self.otlp_grpc.trim();
        if text.is_empty() {
            return Ok(None);
        }
        text.parse().map(Some).map_err(|_| {
            ConfigError::Invalid(format!(
                "listen.otlp_grpc must be host:port such as 127.0.0.1:4317, or empty for none; got {text:?}"
            ))
        })
    }
}

impl Default for Listen {
    fn default() -> Self {
        Listen {
            ingest: SocketAddr::from(([127, 0, 0, 1], 4000)),
            web: SocketAddr::from(([127, 0, 0, 1], 3000)),
            github: SocketAddr::from(([127, 0, 0, 1], 4001)),
            otlp_grpc: String::new(),
            trusted_proxies: Vec::new(),
            max_connections: 1024,
            header_timeout_secs: 10,
            max_connections_per_address: 128,
            body_timeout_secs: 10,
            upload_min_bytes_per_sec: 1024,
            upload_timeout_secs: 900,
            idle_timeout_secs: 120,
            max_streams_per_connection: 32,
            tls_cert: String::new(),
            tls_key: String::new(),
        }
    }
}

impl Default for Ingest {
    fn default() -> Self {
        Ingest {
            max_body_bytes: 1 << 20,
            max_decoded_bytes: 8 << 20,
            max_events_per_batch: 1000,
            max_metadata_bytes: 8192,
            max_future_skew_secs: 86_400,
            max_event_age_days: 400,
            otlp_path_prefix: "/otel".to_string(),
            max_otlp_records: 20_000,
            max_otlp_attributes: 1024,
        }
    }
}

impl Default for Storage {
    fn default() -> Self {
        Storage {
            max_group_events: 10_000,
            writer_queue: 1024,
            wal_soft_cap_mb: 32,
            checkpoint_interval_secs: 10,
            wal_hard_cap_mb: 256,
            compact_after_days: 7,
            reader_pool: 8,
        }
    }
}

impl Default for Jobs {
    fn default() -> Self {
        Jobs { retention_days: 400, abandon_after_mins: 60 }
    }
}

impl Default for Server {
    fn default() -> Self {
        Server { shutdown_grace_secs: 30, sli_flush_secs: 60 }
    }
}

impl Default for Log {
    fn default() -> Self {
        Log { level: "info".into(), format: LogFormat::Text }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("environment variable {name}: {message}")]
    Env { name: String, message: String },
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// Values given on the command line; `None` leaves the lower layers in force.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub data_dir: Option<PathBuf>,
    pub ingest_addr: Option<SocketAddr>,
    pub web_addr: Option<SocketAddr>,
    pub github_addr: Option<SocketAddr>,
}

impl Config {
    /// Builds the configuration from all four layers. `file` is the explicit
    /// `--config` path; without it `./sightline.toml` is read if present.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        overrides: &Overrides,
    ) -> Result<Config, ConfigError> {
        let mut table = toml::Table::new();
        let default_path = PathBuf::from("sightline.toml");
        let path = file.map(Path::to_path_buf).or_else(|| default_path.exists().then_some(default_path));
        if let Some(path) = &path {
            let text =
                std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.clone(), source })?;
            table = text
                .parse::<toml::Table>()
                .map_err(|err| ConfigError::Parse { path: path.clone(), message: err.message().to_string() })?;
        }
        let unknown_variables = environment::apply(&mut table, env)?;
        let mut config: Config = Config::deserialize(toml::Value::Table(table)).map_err(|err| {
            let message = err.message().to_string();
            match &path {
                Some(path) => ConfigError::Parse { path: path.clone(), message },
                None => ConfigError::Env { name: "SIGHTLINE_*".into(), message },
            }
        })?;
        config.unknown_variables = unknown_variables;
        config.source_file = path;
        if let Some(dir) = &overrides.data_dir {
            config.data_dir = dir.clone();
        }
        if let Some(addr) = overrides.ingest_addr {
            config.listen.ingest = addr;
        }
        if let Some(addr) = overrides.web_addr {
            config.listen.web = addr;
        }
        if let Some(addr) = overrides.github_addr {
            config.listen.github = addr;
        }
        config.validate()?;
        Ok(config)
    }

    /// Checks what types cannot: ranges, and that the listeners do not collide.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |message: String| Err(ConfigError::Invalid(message));
        if self.data_dir.as_os_str().is_empty() {
            return invalid("data_dir must not be empty".into());
        }
        let grpc = self.listen.otlp_grpc_addr()?;
        self.listen.tls_files()?;
        let mut listeners =
            vec![("ingest", self.listen.ingest), ("web", self.listen.web), ("github", self.listen.github)];
        listeners.extend(grpc.map(|addr| ("otlp_grpc", addr)));
        for (i, (name_a, a)) in listeners.iter().enumerate() {
            for (name_b, b) in &listeners[i + 1..] {
                if a.port() != 0 && a == b {
                    return invalid(format!("listen.{name_a} and listen.{name_b} are both {a}"));
                }
            }
        }
        if self.listen.max_connections < 1 || !(1..=3600).contains(&self.listen.header_timeout_secs) {
            return invalid(
                "listen.max_connections must be >= 1 and listen.header_timeout_secs between 1 and 3600".into(),
            );
        }
        let listen = &self.listen;
        if listen.max_connections_per_address < 1 {
            return invalid("listen.max_connections_per_address must be at least 1".into());
        }
        if !(1..=3600).contains(&listen.body_timeout_secs)
            || !(listen.body_timeout_secs..=86_400).contains(&listen.upload_timeout_secs)
            || !(1..=86_400).contains(&listen.idle_timeout_secs)
        {
            return invalid(
                "listen.body_timeout_secs must be between 1 and 3600, listen.upload_timeout_secs between it and 86400, \
                 and listen.idle_timeout_secs between 1 and 86400"
                    .into(),
            );
        }
        if !(1..=1024).contains(&listen.max_streams_per_connection) {
            return invalid("listen.max_streams_per_connection must be between 1 and 1024".into());
        }
        let ingest = &self.ingest;
        if !(1..=10_000_000).contains(&ingest.max_otlp_records)
            || !(1..=1_000_000).contains(&ingest.max_otlp_attributes)
        {
            return invalid(
                "ingest.max_otlp_records must be between 1 and 10000000 and ingest.max_otlp_attributes between 1 and 1000000"
                    .into(),
            );
        }
        if ingest.max_body_bytes < 1024 || ingest.max_decoded_bytes < ingest.max_body_bytes {
            return invalid("ingest.max_body_bytes must be at least 1024 and at most ingest.max_decoded_bytes".into());
        }
        let prefix = &ingest.otlp_path_prefix;
        if !prefix.starts_with('/')
            || prefix.len() < 2
            || prefix.ends_with('/')
            || prefix.starts_with("/v1")
            || !prefix.chars().all(|c| c.is_ascii_alphanumeric() || "/-_.".contains(c))
        {
            return invalid(format!(
                "ingest.otlp_path_prefix must be a path such as /otel (letters, digits, - _ . and /, no trailing /, not /v1); got {prefix:?}"
            ));
        }
        if !(1..=100_000).contains(&ingest.max_events_per_batch) {
            return invalid("ingest.max_events_per_batch must be between 1 and 100000".into());
        }
        if !(2..=1 << 20).contains(&ingest.max_metadata_bytes) {
            return invalid("ingest.max_metadata_bytes must be between 2 and 1048576".into());
        }
        if !(1..=600).contains(&self.github.api_timeout_secs) {
            return invalid("github.api_timeout_secs must be between 1 and 600".into());
        }
        if !(1..=1000).contains(&self.backup.keep) {
            return invalid("backup.keep must be between 1 and 1000".into());
        }
        if ingest.max_future_skew_secs < 0 || ingest.max_event_age_days < 1 {
            return invalid("ingest.max_future_skew_secs must be >= 0 and ingest.max_event_age_days >= 1".into());
        }
        let storage = &self.storage;
        if storage.max_group_events < 1 || storage.writer_queue < 1 || storage.reader_pool < 1 {
            return invalid(
                "storage.max_group_events, storage.writer_queue and storage.reader_pool must be >= 1".into(),
            );
        }
        if storage.wal_soft_cap_mb < 1 || storage.wal_hard_cap_mb <= storage.wal_soft_cap_mb {
            return invalid("storage.wal_hard_cap_mb must be greater than storage.wal_soft_cap_mb (>= 1)".into());
        }
        if storage.checkpoint_interval_secs < 1 {
            return invalid("storage.checkpoint_interval_secs must be >= 1".into());
        }
        if storage.compact_after_days < 1 {
            return invalid("storage.compact_after_days must be >= 1".into());
        }
        if self.jobs.retention_days < 1 || self.jobs.abandon_after_mins < 1 {
            return invalid("jobs.retention_days and jobs.abandon_after_mins must be >= 1".into());
        }
        let auth = &self.auth;
        for (key, url) in [
            ("auth.public_url", &auth.public_url),
            ("auth.ingest_public_url", &auth.ingest_public_url),
            ("auth.github_url", &auth.github_url),
            ("auth.github_api_url", &auth.github_api_url),
        ] {
            let blank_allowed = key != "auth.github_url";
            if (url.is_empty() && !blank_allowed)
                || !(url.is_empty() || url.starts_with("http://") || url.starts_with("https://"))
            {
                return invalid(format!("{key} must be an http:// or https:// URL, got {url:?}"));
            }
        }
        if auth.github_enabled() && auth.github_client_secret.0.is_empty() {
            return invalid(
                "auth.github_client_id is set but auth.github_client_secret is empty (SIGHTLINE_AUTH_GITHUB_CLIENT_SECRET)"
                    .into(),
            );
        }
        let github = &self.github;
        if let Err(err) = regex::Regex::new(&github.issue_key_pattern) {
            return invalid(format!("github.issue_key_pattern is not a regular expression: {err}"));
        }
        if !github.app_id.is_empty() && !github.app_id.bytes().all(|b| b.is_ascii_digit()) {
            return invalid(format!("github.app_id must be the App's numeric id, got {:?}", github.app_id));
        }
        if github.app_id.is_empty() != github.private_key_path.is_empty() {
            return invalid("github.app_id and github.private_key_path are set together or not at all".into());
        }
        if !(2..=1_000).contains(&self.analytics.min_group_size) {
            return invalid(format!(
                "analytics.min_group_size must be between 2 and 1000, got {}",
                self.analytics.min_group_size
            ));
        }
        if tracing_subscriber::EnvFilter::try_new(&self.log.level).is_err() {
            return invalid(format!("log.level {:?} is not a valid filter", self.log.level));
        }
        Ok(())
    }

    /// The configuration a set of environment variables gives (no file), for tests of
    /// the features that read a section; the error in words.
    #[cfg(test)]
    pub fn from_variables(pairs: &[(&str, &str)]) -> Result<Config, String> {
        let env = pairs.iter().map(|(name, value)| (name.to_string(), value.to_string()));
        Config::load(Some(Path::new("/dev/null")), env, &Overrides::default()).map_err(|err| err.to_string())
    }

    pub fn main_db_path(&self) -> PathBuf {
        self.data_dir.join("main.db")
    }

    pub fn run_dir(&self) -> PathBuf {
        self.data_dir.join("run")
    }
}

#[cfg(test)]
mod tests;

//! The environment layer of the configuration: which `SIGHTLINE_*` variable sets which
//! key ([`ENV_KEYS`]), which belong to other commands ([`COMMAND_VARIABLES`]), and how a
//! variable's text becomes a typed TOML value, so an error names the variable.
//!
//! Invariant: every key a variable sets is documented in `assets/sightline.default.toml`
//! with its variable (a test holds them together); a variable that names nothing is
//! reported, never silently used.

use std::net::{IpAddr, SocketAddr};

use super::ConfigError;

/// Every environment variable and the TOML key it sets.
pub const ENV_KEYS: &[(&str, &str)] = &[
    ("SIGHTLINE_DATA_DIR", "data_dir"),
    ("SIGHTLINE_INGEST_ADDR", "listen.ingest"),
    ("SIGHTLINE_WEB_ADDR", "listen.web"),
    ("SIGHTLINE_GITHUB_ADDR", "listen.github"),
    ("SIGHTLINE_LISTEN_OTLP_GRPC", "listen.otlp_grpc"),
    ("SIGHTLINE_LISTEN_TLS_CERT", "listen.tls_cert"),
    ("SIGHTLINE_LISTEN_TLS_KEY", "listen.tls_key"),
    ("SIGHTLINE_LISTEN_TRUSTED_PROXIES", "listen.trusted_proxies"),
    ("SIGHTLINE_LISTEN_MAX_CONNECTIONS", "listen.max_connections"),
    ("SIGHTLINE_LISTEN_HEADER_TIMEOUT_SECS", "listen.header_timeout_secs"),
    ("SIGHTLINE_LISTEN_MAX_CONNECTIONS_PER_ADDRESS", "listen.max_connections_per_address"),
    ("SIGHTLINE_LISTEN_BODY_TIMEOUT_SECS", "listen.body_timeout_secs"),
    ("SIGHTLINE_LISTEN_UPLOAD_MIN_BYTES_PER_SEC", "listen.upload_min_bytes_per_sec"),
    ("SIGHTLINE_LISTEN_UPLOAD_TIMEOUT_SECS", "listen.upload_timeout_secs"),
    ("SIGHTLINE_LISTEN_IDLE_TIMEOUT_SECS", "listen.idle_timeout_secs"),
    ("SIGHTLINE_LISTEN_MAX_STREAMS_PER_CONNECTION", "listen.max_streams_per_connection"),
    ("SIGHTLINE_INGEST_MAX_BODY_BYTES", "ingest.max_body_bytes"),
    ("SIGHTLINE_INGEST_MAX_DECODED_BYTES", "ingest.max_decoded_bytes"),
    ("SIGHTLINE_INGEST_MAX_EVENTS_PER_BATCH", "ingest.max_events_per_batch"),
    ("SIGHTLINE_INGEST_MAX_METADATA_BYTES", "ingest.max_metadata_bytes"),
    ("SIGHTLINE_INGEST_MAX_FUTURE_SKEW_SECS", "ingest.max_future_skew_secs"),
    ("SIGHTLINE_INGEST_MAX_EVENT_AGE_DAYS", "ingest.max_event_age_days"),
    ("SIGHTLINE_INGEST_OTLP_PATH_PREFIX", "ingest.otlp_path_prefix"),
    ("SIGHTLINE_INGEST_MAX_OTLP_RECORDS", "ingest.max_otlp_records"),
    ("SIGHTLINE_INGEST_MAX_OTLP_ATTRIBUTES", "ingest.max_otlp_attributes"),
    ("SIGHTLINE_STORAGE_MAX_GROUP_EVENTS", "storage.max_group_events"),
    ("SIGHTLINE_STORAGE_WRITER_QUEUE", "storage.writer_queue"),
    ("SIGHTLINE_STORAGE_WAL_SOFT_CAP_MB", "storage.wal_soft_cap_mb"),
    ("SIGHTLINE_STORAGE_CHECKPOINT_INTERVAL_SECS", "storage.checkpoint_interval_secs"),
    ("SIGHTLINE_STORAGE_WAL_HARD_CAP_MB", "storage.wal_hard_cap_mb"),
    ("SIGHTLINE_STORAGE_COMPACT_AFTER_DAYS", "storage.compact_after_days"),
    ("SIGHTLINE_STORAGE_READER_POOL", "storage.reader_pool"),
    ("SIGHTLINE_JOBS_RETENTION_DAYS", "jobs.retention_days"),
    ("SIGHTLINE_JOBS_ABANDON_AFTER_MINS", "jobs.abandon_after_mins"),
    ("SIGHTLINE_SERVER_SHUTDOWN_GRACE_SECS", "server.shutdown_grace_secs"),
    ("SIGHTLINE_LOG", "log.level"),
    ("SIGHTLINE_LOG_FORMAT", "log.format"),
    ("SIGHTLINE_AUTH_PUBLIC_URL", "auth.public_url"),
    ("SIGHTLINE_AUTH_INGEST_PUBLIC_URL", "auth.ingest_public_url"),
    ("SIGHTLINE_AUTH_INSTALL_SCRIPT_USES_HOST", "auth.install_script_uses_host"),
    ("SIGHTLINE_AUTH_GITHUB_CLIENT_ID", "auth.github_client_id"),
    ("SIGHTLINE_AUTH_GITHUB_CLIENT_SECRET", "auth.github_client_secret"),
    ("SIGHTLINE_AUTH_GITHUB_URL", "auth.github_url"),
    ("SIGHTLINE_AUTH_GITHUB_API_URL", "auth.github_api_url"),
    ("SIGHTLINE_GITHUB_WEBHOOK_SECRET", "github.webhook_secret"),
    ("SIGHTLINE_GITHUB_APP_ID", "github.app_id"),
    ("SIGHTLINE_GITHUB_PRIVATE_KEY_PATH", "github.private_key_path"),
    ("SIGHTLINE_GITHUB_ORGANISATION", "github.organisation"),
    ("SIGHTLINE_GITHUB_ISSUE_KEY_PATTERN", "github.issue_key_pattern"),
    ("SIGHTLINE_GITHUB_PROCESS_DELIVERIES", "github.process_deliveries"),
    ("SIGHTLINE_GITHUB_API_TIMEOUT_SECS", "github.api_timeout_secs"),
    ("SIGHTLINE_ANALYTICS_MIN_GROUP_SIZE", "analytics.min_group_size"),
    ("SIGHTLINE_ANALYTICS_RESULTS_DB", "analytics.results_db"),
    ("SIGHTLINE_ANALYTICS_EVAL_DASHBOARD_URL", "analytics.eval_dashboard_url"),
    ("SIGHTLINE_SLI_FLUSH_SECS", "server.sli_flush_secs"),
    ("SIGHTLINE_JUDGE_URL", "judge.url"),
    ("SIGHTLINE_JUDGE_KEY", "judge.key"),
    ("SIGHTLINE_JUDGE_MODEL", "judge.model"),
    ("SIGHTLINE_JUDGE_DAILY_CAP_USD", "judge.daily_cap_usd"),
    ("SIGHTLINE_JUDGE_USD_PER_MTOK_INPUT", "judge.usd_per_mtok_input"),
    ("SIGHTLINE_JUDGE_USD_PER_MTOK_OUTPUT", "judge.usd_per_mtok_output"),
    ("SIGHTLINE_JUDGE_TIMEOUT_SECS", "judge.timeout_secs"),
    ("SIGHTLINE_JIRA_URL", "jira.url"),
    ("SIGHTLINE_JIRA_EMAIL", "jira.email"),
    ("SIGHTLINE_JIRA_API_TOKEN", "jira.api_token"),
    ("SIGHTLINE_JIRA_VALUE_FIELD", "jira.value_field"),
    ("SIGHTLINE_BACKUP_DIR", "backup.dir"),
    ("SIGHTLINE_BACKUP_KEEP", "backup.keep"),
    ("SIGHTLINE_BILLING_RECONCILIATION_ENABLED", "billing.reconciliation_enabled"),
    ("SIGHTLINE_BILLING_RECONCILE_DAYS", "billing.reconcile_days"),
    ("SIGHTLINE_BILLING_DRIFT_TOLERANCE_PCT", "billing.drift_tolerance_pct"),
    ("SIGHTLINE_BILLING_ANTHROPIC_ADMIN_KEY", "billing.anthropic_admin_key"),
    ("SIGHTLINE_BILLING_ANTHROPIC_URL", "billing.anthropic_url"),
    ("SIGHTLINE_BILLING_ANTHROPIC_WORKSPACES", "billing.anthropic_workspaces"),
    ("SIGHTLINE_BILLING_ANTHROPIC_AGENTS", "billing.anthropic_agents"),
    ("SIGHTLINE_BILLING_OPENAI_ADMIN_KEY", "billing.openai_admin_key"),
    ("SIGHTLINE_BILLING_OPENAI_URL", "billing.openai_url"),
    ("SIGHTLINE_BILLING_OPENAI_PROJECTS", "billing.openai_projects"),
    ("SIGHTLINE_BILLING_OPENAI_AGENTS", "billing.openai_agents"),
    ("SIGHTLINE_ALERT_CHAT_WEBHOOK_URL", "alerts.chat_webhook_url"),
    ("SIGHTLINE_ALERT_WEBHOOK_URL", "alerts.webhook_url"),
    ("SIGHTLINE_ALERT_WEBHOOK_SECRET", "alerts.webhook_secret"),
    ("SIGHTLINE_ALERT_SMTP_URL", "alerts.smtp_url"),
    ("SIGHTLINE_ALERT_EMAIL_FROM", "alerts.email_from"),
    ("SIGHTLINE_ALERT_EMAIL_TO", "alerts.email_to"),
];

/// `SIGHTLINE_*` variables read by commands other than the server (their flags' values,
/// `--help` shows each) or by the test and benchmark scripts: known, so not warned of.
pub const COMMAND_VARIABLES: &[(&str, &str)] = &[
    ("SIGHTLINE_CONFIG", "--config of every server command"),
    ("SIGHTLINE_HOOK_TOKEN", "sightline hook login --token"),
    ("SIGHTLINE_NO_FLUSHER", "the hook: do not start a background flusher"),
    ("SIGHTLINE_BIN", "the agents' plugins: the hook binary they run"),
    ("SIGHTLINE_RESULTS_DB", "--db of results, report and dashboard"),
    ("SIGHTLINE_DASHBOARD_TOKEN", "sightline dashboard --token"),
    ("SIGHTLINE_BENCH_TOKEN", "sightline bench --token"),
    ("SIGHTLINE_BENCH_BIN", "benches/ingest.sh: the binary to measure"),
    ("SIGHTLINE_BENCH_PORT", "benches/ingest.sh: the port to serve on"),
    ("SIGHTLINE_BENCH_CLIENT", "benches/ingest.sh: the binary whose bench ingest drives the load"),
    ("SIGHTLINE_BENCH_SETTLE", "benches/ingest.sh: seconds between start-up and the history runs' load"),
    ("SIGHTLINE_HISTORY_DIR", "benches/ingest.sh: the year of history the history runs load"),
    ("SIGHTLINE_CRASH_ROUNDS", "the crash tests' rounds"),
    ("SIGHTLINE_FLUSHER_KILL_ROUNDS", "the flusher kill test's rounds"),
    ("SIGHTLINE_AGENTS_DIR", "scripts/test: the pinned agent CLIs the conformance suite runs"),
    ("SIGHTLINE_LITELLM_CATALOGUE", "scripts/test: the pinned LiteLLM price catalogue the tests import"),
];

/// Sets the keys the `SIGHTLINE_*` variables of `env` name into `table`; answers the
/// variables that name no setting and no command's flag, sorted.
pub(super) fn apply(
    table: &mut toml::Table,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<Vec<String>, ConfigError> {
    let mut unknown = Vec::new();
    for (name, value) in env {
        if !name.starts_with("SIGHTLINE_") {
            continue;
        }
        let Some((_, key)) = ENV_KEYS.iter().find(|(env_name, _)| *env_name == name) else {
            if !COMMAND_VARIABLES.iter().any(|(known, _)| *known == name) {
                unknown.push(name);
            }
            continue;
        };
        let value = env_value(key, &value).map_err(|message| ConfigError::Env { name: name.clone(), message })?;
        set_key(table, key, value);
    }
    unknown.sort();
    Ok(unknown)
}

/// Environment values are strings; each is checked against its key's type here so
/// the error names the variable, then handed to TOML typed.
fn env_value(key: &str, raw: &str) -> Result<toml::Value, String> {
    let raw = raw.trim();
    if key == "listen.trusted_proxies" {
        let addresses = raw.split(',').map(str::trim).filter(|a| !a.is_empty());
        let parsed: Result<Vec<toml::Value>, String> = addresses
            .map(|a| {
                a.parse::<IpAddr>()
                    .map(|_| toml::Value::String(a.to_string()))
                    .map_err(|_| format!("{a:?} is not an IP address such as 127.0.0.1"))
            })
            .collect();
        return parsed.map(toml::Value::Array);
    }
    if matches!(key, "listen.otlp_grpc" | "listen.tls_cert" | "listen.tls_key" | "ingest.otlp_path_prefix") {
        // Text checked with the rest of the configuration (empty turns gRPC off).
        return Ok(toml::Value::String(raw.to_string()));
    }
    if matches!(key, "listen.ingest" | "listen.web" | "listen.github") {
        raw.parse::<SocketAddr>().map_err(|_| format!("{raw:?} is not an address such as 127.0.0.1:4000"))?;
        return Ok(toml::Value::String(raw.to_string()));
    }
    if matches!(key, "github.process_deliveries" | "billing.reconciliation_enabled" | "auth.install_script_uses_host") {
        return match raw.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Ok(toml::Value::Boolean(true)),
            "false" | "0" | "no" => Ok(toml::Value::Boolean(false)),
            _ => Err(format!("{raw:?} is not true or false")),
        };
    }
    if matches!(
        key,
        "judge.daily_cap_usd"
            | "judge.usd_per_mtok_input"
            | "judge.usd_per_mtok_output"
            | "billing.drift_tolerance_pct"
    ) {
        return match raw.parse::<f64>() {
            Ok(number) if number.is_finite() => Ok(toml::Value::Float(number)),
            _ => Err(format!("{raw:?} is not a number")),
        };
    }
    if matches!(
        key,
        "billing.reconcile_days" | "server.sli_flush_secs" | "judge.timeout_secs" | "github.api_timeout_secs"
    ) {
        return raw.parse::<i64>().map(toml::Value::Integer).map_err(|_| format!("{raw:?} is not a whole number"));
    }
    if matches!(key, "data_dir" | "log.level" | "log.format" | "analytics.results_db" | "analytics.eval_dashboard_url")
        || key == "backup.dir"
        || ["auth.", "github.", "judge.", "jira.", "billing.", "alerts."].iter().any(|section| key.starts_with(section))
    {
        return Ok(toml::Value::String(raw.to_string()));
    }
    raw.parse::<i64>().map(toml::Value::Integer).map_err(|_| format!("{raw:?} is not a whole number"))
}

fn set_key(table: &mut toml::Table, dotted: &str, value: toml::Value) {
    match dotted.split_once('.') {
        None => {
            table.insert(dotted.to_string(), value);
        }
        Some((section, key)) => {
            let entry = table.entry(section.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let toml::Value::Table(inner) = entry {
                inner.insert(key.to_string(), value);
            }
        }
    }
}

//! The sections of the services outside Sightline that jobs and the alert console
//! reach: `[judge]` (the LLM judge), `[jira]`, `[billing]` (the vendors' billing APIs)
//! and `[alerts]` (the notification channels). Each key has its `SIGHTLINE_*`
//! variable (`ENV_KEYS`). The types are checked when the configuration loads; what
//! only the feature can judge (all-or-none groups, URLs without credentials, e-mail
//! addresses, ranges) is checked by the feature when it reads its section, with an
//! error naming the variable.

use serde::Deserialize;

use super::Secret;

/// The LLM judge (`judge-sessions`, docs/scoring.md).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Judge {
    pub url: String,
    pub key: Secret,
    pub model: String,
    pub daily_cap_usd: f64,
    pub usd_per_mtok_input: f64,
    pub usd_per_mtok_output: f64,
    /// Seconds one call may take.
    pub timeout_secs: u64,
}

impl Default for Judge {
    fn default() -> Self {
        Judge {
            url: String::new(),
            key: Secret::default(),
            model: "gpt-4o-mini".into(),
            daily_cap_usd: 5.0,
            usd_per_mtok_input: 0.15,
            usd_per_mtok_output: 0.60,
            timeout_secs: 120,
        }
    }
}

/// Jira (`sync-jira`, docs/cost.md): all four keys or none.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Jira {
    pub url: String,
    pub email: String,
    pub api_token: Secret,
    pub value_field: String,
}

/// Backups of the data directory (`backup`, docs/operations.md): off until `dir` is set.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Backup {
    /// Where the daily backups go (a directory of backups, ideally another disk).
    pub dir: String,
    /// How many complete backups are kept there.
    pub keep: i64,
}

impl Default for Backup {
    fn default() -> Self {
        Backup { dir: String::new(), keep: 7 }
    }
}

impl Backup {
    /// The directory of backups, when set.
    pub fn dir(&self) -> Option<std::path::PathBuf> {
        (!self.dir.trim().is_empty()).then(|| std::path::PathBuf::from(self.dir.trim()))
    }
}

/// The vendors' billing APIs (`reconcile-cost`, docs/cost.md).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Billing {
    pub reconciliation_enabled: bool,
    pub reconcile_days: i64,
    pub drift_tolerance_pct: f64,
    pub anthropic_admin_key: Secret,
    pub anthropic_url: String,
    pub anthropic_workspaces: String,
    pub anthropic_agents: String,
    pub openai_admin_key: Secret,
    pub openai_url: String,
    pub openai_projects: String,
    pub openai_agents: String,
}

impl Default for Billing {
    fn default() -> Self {
        Billing {
            reconciliation_enabled: false,
            reconcile_days: 7,
            drift_tolerance_pct: 5.0,
            anthropic_admin_key: Secret::default(),
            anthropic_url: String::new(),
            anthropic_workspaces: String::new(),
            anthropic_agents: String::new(),
            openai_admin_key: Secret::default(),
            openai_url: String::new(),
            openai_projects: String::new(),
            openai_agents: String::new(),
        }
    }
}

/// The alert channels (`evaluate-alerts`, docs/alerts.md).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Alerts {
    pub chat_webhook_url: Secret,
    pub webhook_url: String,
    pub webhook_secret: Secret,
    pub smtp_url: Secret,
    pub email_from: String,
    pub email_to: String,
}

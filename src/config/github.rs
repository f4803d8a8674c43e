//! The `[github]` section: the GitHub App's webhook secret, its id and key, the
//! organisation `sync-teams` copies, the issue-key pattern, and whether deliveries are
//! applied. Validated with the rest in `Config::validate`.

use serde::Deserialize;

use super::Secret;

/// The GitHub App: webhooks, the bot comment and team sync. See
/// `assets/sightline.default.toml` for each key.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Github {
    pub webhook_secret: Secret,
    pub app_id: String,
    pub private_key_path: String,
    pub organisation: String,
    pub issue_key_pattern: String,
    /// When false, deliveries are verified, stored and acknowledged but not applied
    /// until a start with it true (maintenance, a restore in progress).
    pub process_deliveries: bool,
    /// Seconds one call to GitHub's API may take.
    pub api_timeout_secs: u64,
}

impl Default for Github {
    fn default() -> Self {
        Github {
            webhook_secret: Secret::default(),
            app_id: String::new(),
            private_key_path: String::new(),
            organisation: String::new(),
            issue_key_pattern: r"\b[A-Z][A-Z0-9]{1,9}-[0-9]{1,7}\b".into(),
            process_deliveries: true,
            api_timeout_secs: 20,
        }
    }
}

impl Github {
    /// True when the App's id and key are set: the bot comment and team sync can run.
    pub fn app_enabled(&self) -> bool {
        !self.app_id.is_empty() && !self.private_key_path.is_empty()
    }
}

//! Jira (docs/cost.md `sync-jira`, issue 21): the issues named by pull requests' issue keys,
//! read through Jira Cloud's REST search (`POST /rest/api/3/search/jql`, paged by
//! `nextPageToken`), each with its business value from a configured field
//! ([`client`]), kept in `jira_issues` ([`store`], owned here) for the ROI page.
//!
//! Invariants: configured by the `[jira]` section (`SIGHTLINE_JIRA_URL`, `…_EMAIL`,
//! `…_API_TOKEN`, `…_VALUE_FIELD`; all four or none, the token never in logs or the
//! database); without them a run says so and changes nothing; a key Jira does not know is
//! recorded as not found, never dropped silently; a value that is not a number is no
//! value (`NULL`), never zero.

pub mod client;
pub mod store;

/// Where Jira is and how to sign in (basic authentication with an API token).
#[derive(Clone, PartialEq, Eq)]
pub struct JiraConfig {
    /// The site, e.g. `https://example.atlassian.net`, without a trailing slash.
    pub base_url: String,
    pub email: String,
    pub api_token: String,
    /// The field holding an issue's business value, e.g. `customfield_10050`.
    pub value_field: String,
}

impl std::fmt::Debug for JiraConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JiraConfig")
            .field("base_url", &self.base_url)
            .field("email", &self.email)
            .field("api_token", &"<hidden>")
            .field("value_field", &self.value_field)
            .finish()
    }
}

/// What a run says, and logs, without configuration.
pub const NOT_CONFIGURED: &str =
    "Jira is not configured (SIGHTLINE_JIRA_URL, _EMAIL, _API_TOKEN, _VALUE_FIELD); nothing to sync";

const VARIABLES: [&str; 4] =
    ["SIGHTLINE_JIRA_URL", "SIGHTLINE_JIRA_EMAIL", "SIGHTLINE_JIRA_API_TOKEN", "SIGHTLINE_JIRA_VALUE_FIELD"];

/// The configuration the `[jira]` section gives: `Ok(None)` when none of the four keys
/// is set, an error naming what is missing or wrong when only some are.
pub fn from_config(jira: &crate::config::Jira) -> Result<Option<JiraConfig>, String> {
    let values: Vec<Option<String>> = [&jira.url, &jira.email, &jira.api_token.0, &jira.value_field]
        .iter()
        .map(|v| Some(v.trim().to_string()).filter(|v| !v.is_empty()))
        .collect();
    if values.iter().all(Option::is_none) {
        return Ok(None);
    }
    let missing: Vec<&str> = VARIABLES.iter().zip(&values).filter(|(_, v)| v.is_none()).map(|(n, _)| *n).collect();
    if !missing.is_empty() {
        return Err(format!("Jira needs {} too (all four SIGHTLINE_JIRA_* or none)", missing.join(", ")));
    }
    let [base_url, email, api_token, value_field] = [0, 1, 2, 3].map(|i| values[i].clone().unwrap_or_default());
    if !crate::model::is_credential_safe_url(&base_url) {
        return Err(format!(
            "SIGHTLINE_JIRA_URL must be an https:// URL without credentials (http:// only on loopback), not {base_url:?}"
        ));
    }
    if !value_field.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!(
            "SIGHTLINE_JIRA_VALUE_FIELD must be a field id such as customfield_10050, not {value_field:?}"
        ));
    }
    Ok(Some(JiraConfig { base_url: base_url.trim_end_matches('/').to_string(), email, api_token, value_field }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `[jira]` section the variables give.
    fn env(pairs: &[(&str, &str)]) -> crate::config::Jira {
        crate::config::Config::from_variables(pairs).unwrap().jira
    }

    fn from_env(jira: crate::config::Jira) -> Result<Option<JiraConfig>, String> {
        from_config(&jira)
    }

    #[test]
    fn all_four_variables_or_none() {
        assert_eq!(from_env(env(&[])).unwrap(), None);
        let err = from_env(env(&[("SIGHTLINE_JIRA_URL", "https://x.atlassian.net")])).unwrap_err();
        assert!(err.contains("SIGHTLINE_JIRA_API_TOKEN") && err.contains("SIGHTLINE_JIRA_VALUE_FIELD"), "{err}");
        let config = from_env(env(&[
            ("SIGHTLINE_JIRA_URL", "https://x.atlassian.net/"),
            ("SIGHTLINE_JIRA_EMAIL", "bot@example.com"),
            ("SIGHTLINE_JIRA_API_TOKEN", "t0ken"),
            ("SIGHTLINE_JIRA_VALUE_FIELD", "customfield_10050"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(config.base_url, "https://x.atlassian.net");
        assert!(!format!("{config:?}").contains("t0ken"), "the token never reaches logs");
        let bad = from_env(env(&[
            ("SIGHTLINE_JIRA_URL", "https://x.atlassian.net"),
            ("SIGHTLINE_JIRA_EMAIL", "bot@example.com"),
            ("SIGHTLINE_JIRA_API_TOKEN", "t0ken"),
            ("SIGHTLINE_JIRA_VALUE_FIELD", "Business value"),
        ]))
        .unwrap_err();
        assert!(bad.contains("customfield_10050"), "{bad}");
        let plain = from_env(env(&[
            ("SIGHTLINE_JIRA_URL", "http://jira.example.com"),
            ("SIGHTLINE_JIRA_EMAIL", "bot@example.com"),
            ("SIGHTLINE_JIRA_API_TOKEN", "t0ken"),
            ("SIGHTLINE_JIRA_VALUE_FIELD", "customfield_10050"),
        ]))
        .unwrap_err();
        assert!(plain.contains("https://"), "{plain}");
    }
}

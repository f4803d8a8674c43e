//! Jira Cloud's enhanced search: `POST {site}/rest/api/3/search/jql` with a JQL of issue
//! keys, the fields wanted and `maxResults`, then the same with the answer's
//! `nextPageToken` until it has none. Basic authentication (e-mail and API token).
//!
//! Invariants: keys are sent in batches of [`BATCH`]; a batch Jira refuses (400: JQL
//! naming a key that does not exist) is split until the unknown keys stand alone, so one
//! missing issue never hides the others; any other failure stops the run with Jira's
//! status and message.

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::JiraConfig;

/// Keys per search.
pub const BATCH: usize = 50;

/// One issue as read.
#[derive(Clone, Debug, PartialEq)]
pub struct JiraIssue {
    pub key: String,
    pub summary: String,
    pub status: Option<String>,
    pub business_value: Option<f64>,
}

/// What a fetch found: the issues, and the keys Jira does not know.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fetched {
    pub issues: Vec<JiraIssue>,
    pub not_found: Vec<String>,
}

/// A business value as Jira gives it: a number, a numeric text, or a select option whose
/// `value` is numeric; anything else is no value.
pub fn value_of(field: &Value) -> Option<f64> {
    match field {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Object(o) => o.get("value").and_then(value_of),
        _ => None,
    }
    .filter(|v: &f64| v.is_finite())
}

fn issue_of(raw: &Value, value_field: &str) -> Option<JiraIssue> {
    let fields = raw.get("fields")?;
    Some(JiraIssue {
        key: raw.get("key")?.as_str()?.to_string(),
        summary: fields.get("summary").and_then(Value::as_str).unwrap_or_default().to_string(),
        status: fields.get("status").and_then(|s| s.get("name")).and_then(Value::as_str).map(str::to_string),
        business_value: fields.get(value_field).and_then(value_of),
    })
}

enum Search {
    Found(Vec<JiraIssue>),
    /// Jira refused the JQL (400), e.g. a key that does not exist.
    Refused,
}

fn search(agent: &ureq::Agent, config: &JiraConfig, keys: &[String]) -> Result<Search, String> {
    let url = format!("{}/rest/api/3/search/jql", config.base_url);
    let credentials =
        base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", config.email, config.api_token));
    let jql = format!("key in ({}) ORDER BY key ASC", keys.join(", "));
    let mut found = Vec::new();
    let mut page_token: Option<String> = None;
    loop {
        let mut body = json!({
            "jql": jql,
            "fields": ["summary", "status", config.value_field],
            "maxResults": BATCH,
        });
        if let Some(token) = &page_token {
            body["nextPageToken"] = json!(token);
        }
        let mut response = agent
            .post(&url)
            .header("Authorization", format!("Basic {credentials}"))
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .send(body.to_string())
            .map_err(|err| format!("Jira search at {url}: {err}"))?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        if status == 400 {
            return Ok(Search::Refused);
        }
        if status != 200 {
            let message: String = text.chars().take(300).collect();
            return Err(format!("Jira search answered {status}: {message}"));
        }
        let page: Value = serde_json::from_str(&text)
            .map_err(|err| format!("Jira search answered with something not JSON: {err}"))?;
        let issues = page.get("issues").and_then(Value::as_array).cloned().unwrap_or_default();
        found.extend(issues.iter().filter_map(|raw| issue_of(raw, &config.value_field)));
        page_token = page.get("nextPageToken").and_then(Value::as_str).map(str::to_string);
        if page_token.is_none() || issues.is_empty() {
            return Ok(Search::Found(found));
        }
    }
}

/// Reads `keys` from Jira (blocking).
pub fn fetch(config: &JiraConfig, keys: &[String]) -> Result<Fetched, String> {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent();
    let mut fetched = Fetched::default();
    let mut pending: Vec<Vec<String>> = keys.chunks(BATCH).map(<[String]>::to_vec).collect();
    while let Some(batch) = pending.pop() {
        match search(&agent, config, &batch)? {
            Search::Found(issues) => {
                for key in &batch {
                    if !issues.iter().any(|issue| issue.key.eq_ignore_ascii_case(key)) {
                        fetched.not_found.push(key.clone());
                    }
                }
                fetched.issues.extend(issues);
            }
            Search::Refused if batch.len() == 1 => fetched.not_found.extend(batch),
            Search::Refused => {
                let (left, right) = batch.split_at(batch.len() / 2);
                pending.push(left.to_vec());
                pending.push(right.to_vec());
            }
        }
    }
    Ok(fetched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn business_values_are_numbers_numeric_texts_or_numeric_options() {
        assert_eq!(value_of(&json!(8)), Some(8.0));
        assert_eq!(value_of(&json!(" 13.5 ")), Some(13.5));
        assert_eq!(value_of(&json!({"self": "…", "value": "21", "id": "10021"})), Some(21.0));
        assert_eq!(value_of(&json!("high")), None);
        assert_eq!(value_of(&json!(null)), None);
        assert_eq!(value_of(&json!({"value": "NaN"})), None);
    }
}

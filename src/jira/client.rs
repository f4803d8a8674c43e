//! Jira Cloud's enhanced search: `POST {site}/rest/api/3/search/jql` with a JQL of issue
//! keys, the fields wanted and `maxResults`, then the same with the answer's
//! `nextPageToken` until it has none. Basic authentication (e-mail and API token).
//!
//! Invariants: only keys of the form `ABC-123` are sent, quoted, in batches of
//! [`BATCH`]; when Jira refuses a batch (400) naming some of its keys as unknown, those
//! are set aside and the rest asked again, so one missing issue never hides the others;
//! a 400 that names none of them, any other failure, or paging that does not end within
//! a few pages stops the run with Jira's answer, and nothing is written.

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::JiraConfig;

/// Keys per search.
const BATCH: usize = 50;

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
fn value_of(field: &Value) -> Option<f64> {
    match field {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Object(o) => o.get("value").and_then(value_of),
        _ => None,
    }
    // A value past a trillion is a typo or mischief, never a business value.
    .filter(|v: &f64| v.is_finite() && v.abs() <= 1e12)
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
    /// Jira refused the JQL (400) naming these keys of the batch as unknown or invalid.
    Unknown(Vec<String>),
}

/// Pages a search may take: a batch of [`BATCH`] keys fits in one; more means Jira is
/// not paging as documented, and the run stops rather than loop.
const MAX_PAGES: usize = 10;

/// An issue key as Jira writes them (`ABC-123`); anything else is never sent.
fn is_issue_key(key: &str) -> bool {
    let Some((project, number)) = key.rsplit_once('-') else { return false };
    let mut letters = project.bytes();
    letters.next().is_some_and(|b| b.is_ascii_uppercase())
        && letters.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
}

/// The keys of `batch` a 400's `errorMessages` name (Jira quotes them: "An issue with key
/// 'X-1' does not exist for field 'key'.", "The issue key 'X' for field 'key' is invalid.").
fn named_keys(answer: &str, batch: &[String]) -> Vec<String> {
    let messages: Vec<String> = serde_json::from_str::<Value>(answer)
        .ok()
        .and_then(|v| v.get("errorMessages").and_then(Value::as_array).cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|m| m.as_str().map(str::to_string))
        .collect();
    batch.iter().filter(|key| messages.iter().any(|m| m.contains(&format!("'{key}'")))).cloned().collect()
}

/// One search of `keys` at `url`, with the `Authorization` header's value.
fn search(
    agent: &ureq::Agent,
    url: &str,
    authorization: &str,
    config: &JiraConfig,
    keys: &[String],
) -> Result<Search, String> {
    // Keys are checked by `is_issue_key` and quoted besides.
    let quoted: Vec<String> = keys.iter().map(|key| format!("\"{key}\"")).collect();
    let jql = format!("key in ({}) ORDER BY key ASC", quoted.join(", "));
    let mut found = Vec::new();
    let mut page_token: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut body = json!({
            "jql": jql,
            "fields": ["summary", "status", config.value_field],
            "maxResults": BATCH,
        });
        if let Some(token) = &page_token {
            body["nextPageToken"] = json!(token);
        }
        let mut response = agent
            .post(url)
            .header("Authorization", authorization)
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .send(body.to_string())
            .map_err(|err| format!("Jira search at {url}: {err}"))?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        let message = || text.chars().take(300).collect::<String>();
        if status == 400 {
            // Only a refusal naming keys of the batch is about them; any other 400 (a
            // changed request format, a bad token) stops the run, and nothing is written.
            let unknown = named_keys(&text, keys);
            if unknown.is_empty() {
                return Err(format!("Jira search answered 400: {}", message()));
            }
            return Ok(Search::Unknown(unknown));
        }
        if status != 200 {
            return Err(format!("Jira search answered {status}: {}", message()));
        }
        let page: Value = serde_json::from_str(&text)
            .map_err(|err| format!("Jira search answered with something not JSON: {err}"))?;
        let issues = page.get("issues").and_then(Value::as_array).cloned().unwrap_or_default();
        found.extend(issues.iter().filter_map(|raw| issue_of(raw, &config.value_field)));
        let next = page.get("nextPageToken").and_then(Value::as_str).map(str::to_string);
        let last = page.get("isLast").and_then(Value::as_bool).unwrap_or(false);
        if last || next.is_none() || issues.is_empty() || next == page_token {
            return Ok(Search::Found(found));
        }
        page_token = next;
    }
    Err(format!("Jira search of {} keys did not end within {MAX_PAGES} pages", keys.len()))
}

/// Reads `keys` from Jira (blocking). Keys that are not issue keys are skipped and
/// reported as not found.
pub fn fetch(config: &JiraConfig, keys: &[String]) -> Result<Fetched, String> {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent();
    let url = format!("{}/rest/api/3/search/jql", config.base_url);
    let credentials =
        base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", config.email, config.api_token));
    let authorization = format!("Basic {credentials}");
    let mut fetched = Fetched::default();
    let (valid, invalid): (Vec<String>, Vec<String>) = keys.iter().cloned().partition(|key| is_issue_key(key));
    fetched.not_found.extend(invalid);
    let mut pending: Vec<Vec<String>> = valid.chunks(BATCH).map(<[String]>::to_vec).collect();
    while let Some(batch) = pending.pop() {
        match search(&agent, &url, &authorization, config, &batch)? {
            Search::Found(issues) => {
                for key in &batch {
                    if !issues.iter().any(|issue| issue.key.eq_ignore_ascii_case(key)) {
                        fetched.not_found.push(key.clone());
                    }
                }
                fetched.issues.extend(issues);
            }
            Search::Unknown(unknown) => {
                let rest: Vec<String> = batch.iter().filter(|key| !unknown.contains(key)).cloned().collect();
                fetched.not_found.extend(unknown);
                if !rest.is_empty() {
                    pending.push(rest);
                }
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
        assert_eq!(value_of(&json!("1e300")), None, "past any business value");
    }

    #[test]
    fn only_issue_keys_are_sent_and_refusals_name_their_keys() {
        assert!(is_issue_key("PAY-12") && is_issue_key("A1_B-3"));
        for bad in ["pay-1", "PAY-", "-1", "PAY1", "X-1) OR project = HR", "PAY-1\"", "ÄB-1"] {
            assert!(!is_issue_key(bad), "{bad}");
        }
        let batch = vec!["GONE-1".to_string(), "PAY-1".to_string(), "OLD-2".to_string()];
        let answer = r#"{"errorMessages":["An issue with key 'GONE-1' does not exist for field 'key'.","The issue key 'OLD-2' for field 'key' is invalid."],"errors":{}}"#;
        assert_eq!(named_keys(answer, &batch), vec!["GONE-1", "OLD-2"]);
        assert!(named_keys(r#"{"errorMessages":["Invalid request payload."]}"#, &batch).is_empty());
        assert!(named_keys("not json", &batch).is_empty());
    }
}

//! Anthropic's Admin API cost report: `GET /v1/organizations/cost_report` with an admin
//! key (`x-api-key`, `anthropic-version: 2023-06-01`), daily buckets
//! (`bucket_width=1d`) grouped by workspace and description, paged by `next_page` while
//! `has_more`. Amounts are cents as decimal strings.

use serde_json::Value;

use super::money::{NUSD_PER_CENT, decimal_to_nusd};
use super::{BillingLine, MAX_PAGES, SourceConfig, Vendor};

/// Buckets per page: the API's maximum for daily buckets.
const PAGE_BUCKETS: &str = "31";

/// The bill of the UTC days `[from_day, to_day)` (`YYYY-MM-DD`), blocking.
pub fn fetch(config: &SourceConfig, from_day: &str, to_day: &str) -> Result<Vec<BillingLine>, String> {
    let agent = super::agent();
    let url = format!("{}/v1/organizations/cost_report", config.base_url);
    let mut lines = Vec::new();
    let mut page: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut request = agent
            .get(&url)
            .header("x-api-key", &config.admin_key)
            .header("anthropic-version", "2023-06-01")
            .query("starting_at", format!("{from_day}T00:00:00Z"))
            .query("ending_at", format!("{to_day}T00:00:00Z"))
            .query("bucket_width", "1d")
            .query("group_by[]", "workspace_id")
            .query("group_by[]", "description")
            .query("limit", PAGE_BUCKETS);
        if let Some(token) = &page {
            request = request.query("page", token);
        }
        let mut response = request.call().map_err(|err| format!("Anthropic cost report at {url}: {err}"))?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        if status != 200 {
            return Err(format!("Anthropic cost report answered {status}: {}", error_message(&text)));
        }
        let report: Value = serde_json::from_str(&text)
            .map_err(|err| format!("Anthropic cost report answered with something not JSON: {err}"))?;
        for bucket in report.get("data").and_then(Value::as_array).into_iter().flatten() {
            lines.extend(bucket_lines(bucket, config, (from_day, to_day))?);
        }
        let next = report.get("next_page").and_then(Value::as_str).map(str::to_string);
        let more = report.get("has_more").and_then(Value::as_bool).unwrap_or(false);
        if !more {
            return Ok(lines);
        }
        if next.is_none() || next == page {
            // A partial bill would be stored as the whole one and show as drift.
            return Err("Anthropic cost report said has_more without a new next_page: the bill is incomplete".into());
        }
        page = next;
    }
    Err(format!("Anthropic cost report did not end within {MAX_PAGES} pages"))
}

/// The lines of one daily bucket that fall in the configured workspaces.
fn bucket_lines(
    bucket: &Value,
    config: &SourceConfig,
    (from_day, to_day): (&str, &str),
) -> Result<Vec<BillingLine>, String> {
    let starting_at = bucket.get("starting_at").and_then(Value::as_str).unwrap_or_default();
    let day = utc_day(starting_at)
        .ok_or_else(|| format!("Anthropic cost report: bucket starting_at {starting_at:?} is not an RFC 3339 time"))?;
    if day.as_str() < from_day || day.as_str() >= to_day {
        return Err(format!(
            "Anthropic cost report: a bucket of {day}, outside the days asked ({from_day} to {to_day})"
        ));
    }
    let mut lines = Vec::new();
    for result in bucket.get("results").and_then(Value::as_array).into_iter().flatten() {
        let text = |field: &str| result.get(field).and_then(Value::as_str).map(str::to_string);
        let workspace = text("workspace_id").unwrap_or_default();
        if !config.scope.is_empty() && !config.scope.contains(&workspace) {
            continue;
        }
        let currency = text("currency").unwrap_or_else(|| "USD".into());
        if !currency.eq_ignore_ascii_case("USD") {
            return Err(format!("Anthropic cost report: a {currency} amount on {day}; only USD is reconciled"));
        }
        let amount = match result.get("amount") {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Number(number)) => number.to_string(),
            other => return Err(format!("Anthropic cost report: amount {other:?} on {day} is not a decimal")),
        };
        let billed_nusd = decimal_to_nusd(&amount, NUSD_PER_CENT)
            .ok_or_else(|| format!("Anthropic cost report: amount {amount:?} on {day} is not a decimal"))?;
        let cost_type = text("cost_type");
        let model = match cost_type.as_deref() {
            Some("tokens") | None => text("model"),
            Some(_) => None,
        };
        let description = text("description")
            .or_else(|| cost_type.clone())
            .unwrap_or_else(|| model.clone().unwrap_or_else(|| "(no description)".into()));
        lines.push(BillingLine {
            day: day.clone(),
            vendor: Vendor::Anthropic,
            workspace,
            model,
            description,
            billed_nusd,
        });
    }
    Ok(lines)
}

/// The UTC day an RFC 3339 time falls on.
pub(super) fn utc_day(time: &str) -> Option<String> {
    let ms = crate::model::parse_rfc3339_ms(time)?;
    Some(crate::events::partitions::Day::of_ms(ms).to_string())
}

/// The `error.message` of an error answer, or its first 300 characters.
pub(super) fn error_message(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.pointer("/error/message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| text.chars().take(300).collect())
}

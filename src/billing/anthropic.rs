//! Anthropic's Admin API cost report: `GET /v1/organizations/cost_report` with an admin
//! key (`x-api-key`, `anthropic-version: 2023-06-01`), daily buckets
//! (`bucket_width=1d`) grouped by workspace and description, paged by `next_page` while
//! `has_more`. Amounts are cents as decimal strings.

use serde_json::Value;

use super::money::{NUSD_PER_CENT, decimal_to_nusd};
use super::{BillingLine, SourceConfig, Vendor};

/// Buckets per page: the API's maximum for daily buckets.
const PAGE_BUCKETS: &str = "31";

/// How errors name this API.
const WHAT: &str = "Anthropic cost report";

/// The bill of the UTC days `[from_day, to_day)` (`YYYY-MM-DD`), blocking.
pub fn fetch(config: &SourceConfig, from_day: &str, to_day: &str) -> Result<Vec<BillingLine>, String> {
    let agent = super::agent();
    let url = format!("{}/v1/organizations/cost_report", config.base_url);
    let request = |page: Option<&str>| {
        let request = agent
            .get(&url)
            .header("x-api-key", &config.admin_key)
            .header("anthropic-version", "2023-06-01")
            .query("starting_at", format!("{from_day}T00:00:00Z"))
            .query("ending_at", format!("{to_day}T00:00:00Z"))
            .query("bucket_width", "1d")
            .query("group_by[]", "workspace_id")
            .query("group_by[]", "description")
            .query("limit", PAGE_BUCKETS);
        match page {
            Some(token) => request.query("page", token),
            None => request,
        }
    };
    let mut lines = Vec::new();
    super::fetch_pages(WHAT, &url, &request, &mut |bucket| {
        lines.extend(bucket_lines(bucket, config, (from_day, to_day))?);
        Ok(())
    })?;
    Ok(lines)
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
    let results = match bucket.get("results") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(results)) => &results[..],
        Some(_) => return Err(format!("Anthropic cost report: the bucket of {day} has results that are not a list")),
    };
    for result in results {
        let text = |field: &str| result.get(field).and_then(Value::as_str).map(str::to_string);
        let workspace = text("workspace_id").unwrap_or_default();
        if !config.scope.is_empty() && !config.scope.contains(&workspace) {
            continue;
        }
        let currency = text("currency").unwrap_or_else(|| "USD".into());
        if !currency.eq_ignore_ascii_case("USD") {
            return Err(format!("Anthropic cost report: a {currency} amount on {day}; only USD is reconciled"));
        }
        let amount = super::decimal_text(result.get("amount")).ok_or_else(|| {
            format!("Anthropic cost report: amount {:?} on {day} is not a decimal", result.get("amount"))
        })?;
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
fn utc_day(time: &str) -> Option<String> {
    let ms = crate::model::parse_rfc3339_ms(time)?;
    Some(crate::events::partitions::Day::of_ms(ms).to_string())
}

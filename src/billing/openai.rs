//! OpenAI's organization costs API: `GET /v1/organization/costs` with an admin key
//! (`Authorization: Bearer`), daily buckets between Unix seconds, only the configured
//! projects (`project_ids`, the key's scope), grouped by project and line item, paged
//! by `next_page` while `has_more`. Amounts are dollars; a line item of a model reads
//! `"<model>, <kind>"` (`"gpt-4.1-2025-04-14, input"`), anything else (`"Image models"`)
//! is a charge that is not for tokens.

use serde_json::Value;

use super::money::{NUSD_PER_USD, decimal_to_nusd};
use super::{BillingLine, SourceConfig, Vendor};
use crate::events::partitions::Day;

/// Buckets per page: the API's maximum.
const PAGE_BUCKETS: &str = "180";

/// How errors name this API.
const WHAT: &str = "OpenAI costs";

/// The bill of the UTC days `[from_day, to_day)` (`YYYY-MM-DD`), blocking.
pub fn fetch(config: &SourceConfig, from_day: &str, to_day: &str) -> Result<Vec<BillingLine>, String> {
    let seconds =
        |day: &str| Day::parse(day).map(|d| d.start_ms() / 1000).ok_or_else(|| format!("{day:?} is not a day"));
    let (start_time, end_time) = (seconds(from_day)?, seconds(to_day)?);
    let agent = super::agent();
    let url = format!("{}/v1/organization/costs", config.base_url);
    let authorization = format!("Bearer {}", config.admin_key);
    let request = |page: Option<&str>| {
        let mut request = agent
            .get(&url)
            .header("Authorization", &authorization)
            .query("start_time", start_time.to_string())
            .query("end_time", end_time.to_string())
            .query("bucket_width", "1d")
            .query("group_by", "project_id")
            .query("group_by", "line_item")
            .query("limit", PAGE_BUCKETS);
        for project in &config.scope {
            request = request.query("project_ids", project);
        }
        match page {
            Some(token) => request.query("page", token),
            None => request,
        }
    };
    let mut lines = Vec::new();
    super::fetch_pages(WHAT, &url, &request, &mut |bucket| {
        lines.extend(bucket_lines(bucket, (from_day, to_day))?);
        Ok(())
    })?;
    Ok(lines)
}

fn bucket_lines(bucket: &Value, (from_day, to_day): (&str, &str)) -> Result<Vec<BillingLine>, String> {
    let start = bucket.get("start_time").and_then(Value::as_i64);
    let day = start
        .and_then(|seconds| seconds.checked_mul(1000))
        .map(|ms| Day::of_ms(ms).to_string())
        .ok_or_else(|| format!("OpenAI costs: bucket start_time {:?} is not Unix seconds", bucket.get("start_time")))?;
    super::in_window(WHAT, &day, (from_day, to_day))?;
    // The reference names the list `results`; some of its examples `result`.
    let results = bucket.get("results").or_else(|| bucket.get("result"));
    let mut lines = Vec::new();
    let results = match results {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(results)) => &results[..],
        Some(_) => return Err(format!("OpenAI costs: the bucket of {day} has results that are not a list")),
    };
    for result in results {
        let amount = result.get("amount").cloned().unwrap_or(Value::Null);
        let currency = amount.get("currency").and_then(Value::as_str).unwrap_or("usd");
        if !currency.eq_ignore_ascii_case("usd") {
            return Err(format!("OpenAI costs: a {currency} amount on {day}; only USD is reconciled"));
        }
        let value = super::decimal_text(amount.get("value"))
            .ok_or_else(|| format!("OpenAI costs: amount value {:?} on {day} is not a number", amount.get("value")))?;
        let billed_nusd = decimal_to_nusd(&value, NUSD_PER_USD)
            .ok_or_else(|| format!("OpenAI costs: amount value {value:?} on {day} is not a number"))?;
        let line_item = result.get("line_item").and_then(Value::as_str).unwrap_or("(no line item)").to_string();
        lines.push(BillingLine {
            day: day.clone(),
            vendor: Vendor::OpenAi,
            workspace: result.get("project_id").and_then(Value::as_str).unwrap_or_default().to_string(),
            model: model_of_line_item(&line_item),
            description: line_item,
            billed_nusd,
        });
    }
    Ok(lines)
}

/// The model a line item bills (`"gpt-4o-2024-08-06, cached input"` → `gpt-4o-2024-08-06`),
/// `None` for a line item that is not `"<model>, <kind>"` with a model-like name.
fn model_of_line_item(line_item: &str) -> Option<String> {
    let (model, kind) = line_item.split_once(", ")?;
    let model = model.trim();
    let model_like = !model.is_empty()
        && !model.contains(' ')
        && model.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._:/".contains(&b));
    (model_like && !kind.trim().is_empty()).then(|| model.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_items_name_their_model_or_none() {
        assert_eq!(model_of_line_item("gpt-4.1-2025-04-14, input").as_deref(), Some("gpt-4.1-2025-04-14"));
        assert_eq!(model_of_line_item("o3, cached input").as_deref(), Some("o3"));
        assert_eq!(model_of_line_item("Image models"), None);
        assert_eq!(model_of_line_item("web search tool calls, gpt-4o"), None);
        assert_eq!(model_of_line_item(", input"), None);
    }
}

//! OpenAI's organization costs API: `GET /v1/organization/costs` with an admin key
//! (`Authorization: Bearer`), daily buckets between Unix seconds, only the configured
//! projects (`project_ids`, the key's scope), grouped by project and line item, paged
//! by `next_page` while `has_more`. Amounts are dollars; a line item of a model reads
//! `"<model>, <kind>"` (`"gpt-4.1-2025-04-14, input"`), anything else (`"Image models"`)
//! is a charge that is not for tokens.

use serde_json::Value;

use super::money::{NUSD_PER_USD, decimal_to_nusd};
use super::{BillingLine, MAX_PAGES, SourceConfig, Vendor};
use crate::events::partitions::Day;

/// Buckets per page: the API's maximum.
const PAGE_BUCKETS: &str = "180";

/// The bill of the UTC days `[from_day, to_day)` (`YYYY-MM-DD`), blocking.
pub fn fetch(config: &SourceConfig, from_day: &str, to_day: &str) -> Result<Vec<BillingLine>, String> {
    let seconds =
        |day: &str| Day::parse(day).map(|d| d.start_ms() / 1000).ok_or_else(|| format!("{day:?} is not a day"));
    let (start_time, end_time) = (seconds(from_day)?, seconds(to_day)?);
    let agent = super::agent();
    let url = format!("{}/v1/organization/costs", config.base_url);
    let authorization = format!("Bearer {}", config.admin_key);
    let mut lines = Vec::new();
    let mut page: Option<String> = None;
    for _ in 0..MAX_PAGES {
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
        if let Some(token) = &page {
            request = request.query("page", token);
        }
        let mut response = request.call().map_err(|err| format!("OpenAI costs at {url}: {err}"))?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        if status != 200 {
            return Err(format!("OpenAI costs answered {status}: {}", super::anthropic::error_message(&text)));
        }
        let answer: Value = serde_json::from_str(&text)
            .map_err(|err| format!("OpenAI costs answered with something not JSON: {err}"))?;
        for bucket in answer.get("data").and_then(Value::as_array).into_iter().flatten() {
            lines.extend(bucket_lines(bucket, (from_day, to_day))?);
        }
        let next = answer.get("next_page").and_then(Value::as_str).map(str::to_string);
        let more = answer.get("has_more").and_then(Value::as_bool).unwrap_or(false);
        if !more {
            return Ok(lines);
        }
        if next.is_none() || next == page {
            // A partial bill would be stored as the whole one and show as drift.
            return Err("OpenAI costs said has_more without a new next_page: the bill is incomplete".into());
        }
        page = next;
    }
    Err(format!("OpenAI costs did not end within {MAX_PAGES} pages"))
}

fn bucket_lines(bucket: &Value, (from_day, to_day): (&str, &str)) -> Result<Vec<BillingLine>, String> {
    let start = bucket.get("start_time").and_then(Value::as_i64);
    let day = start
        .and_then(|seconds| seconds.checked_mul(1000))
        .map(|ms| Day::of_ms(ms).to_string())
        .ok_or_else(|| format!("OpenAI costs: bucket start_time {:?} is not Unix seconds", bucket.get("start_time")))?;
    if day.as_str() < from_day || day.as_str() >= to_day {
        return Err(format!("OpenAI costs: a bucket of {day}, outside the days asked ({from_day} to {to_day})"));
    }
    // The reference names the list `results`; some of its examples `result`.
    let results = bucket.get("results").or_else(|| bucket.get("result"));
    let mut lines = Vec::new();
    for result in results.and_then(Value::as_array).into_iter().flatten() {
        let amount = result.get("amount").cloned().unwrap_or(Value::Null);
        let currency = amount.get("currency").and_then(Value::as_str).unwrap_or("usd");
        if !currency.eq_ignore_ascii_case("usd") {
            return Err(format!("OpenAI costs: a {currency} amount on {day}; only USD is reconciled"));
        }
        let value = match amount.get("value") {
            Some(Value::Number(number)) => number.to_string(),
            Some(Value::String(text)) => text.clone(),
            other => return Err(format!("OpenAI costs: amount value {other:?} on {day} is not a number")),
        };
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

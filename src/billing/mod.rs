//! Cost reconciliation with the vendors' own billing (docs/cost.md, `reconcile-cost`): each day the spend the server recomputed from its price
//! tables is set beside what Anthropic's Admin API cost report ([`anthropic`]) and
//! OpenAI's organization costs API ([`openai`]) billed, per day and model, and the
//! difference is kept as drift ([`drift`], stored by [`store`], which owns
//! `billing_lines`, `cost_drift` and `billing_sources`).
//!
//! Invariants: configured by the environment only (credentials never in files or the
//! database); a vendor is asked only when its own credentials exist, otherwise its
//! source is the null source and nothing is claimed for it; a run writes everything it
//! fetched or nothing (one failing source fails the run); drift is an
//! organisation-level figure (per day, vendor and model, never per person); drift on a
//! day an agent billed through the vendor reported events without token counts is
//! recorded as `uncaptured`, never as a pricing breach.

pub mod anthropic;
pub mod drift;
pub mod money;
pub mod openai;
pub mod run;
pub mod store;

use crate::model::AgentType;

/// The two vendors whose billing can be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Vendor {
    Anthropic,
    OpenAi,
}

impl Vendor {
    pub const ALL: [Vendor; 2] = [Vendor::Anthropic, Vendor::OpenAi];

    /// The name the price tables give it (`"vendor"` of a model entry).
    pub fn as_str(self) -> &'static str {
        match self {
            Vendor::Anthropic => "anthropic",
            Vendor::OpenAi => "openai",
        }
    }

    pub fn parse(text: &str) -> Option<Vendor> {
        Vendor::ALL.into_iter().find(|vendor| vendor.as_str() == text)
    }

    fn prefix(self) -> &'static str {
        match self {
            Vendor::Anthropic => "SIGHTLINE_BILLING_ANTHROPIC",
            Vendor::OpenAi => "SIGHTLINE_BILLING_OPENAI",
        }
    }

    /// Where the API is unless `<prefix>_URL` says otherwise.
    fn default_url(self) -> &'static str {
        match self {
            Vendor::Anthropic => "https://api.anthropic.com",
            Vendor::OpenAi => "https://api.openai.com",
        }
    }

    /// The agents that bill through this vendor's API keys unless `<prefix>_AGENTS` says.
    fn default_agents(self) -> Vec<AgentType> {
        match self {
            Vendor::Anthropic => vec![AgentType::ClaudeCode],
            Vendor::OpenAi => vec![AgentType::Codex],
        }
    }
}

/// One vendor's billing API: where, the admin key, and what of the organisation's
/// billing is the coding agents' (the scope).
#[derive(Clone, PartialEq, Eq)]
pub struct SourceConfig {
    pub vendor: Vendor,
    /// Without a trailing slash.
    pub base_url: String,
    pub admin_key: String,
    /// Anthropic: the workspace ids counted (empty: all). OpenAI: the project ids asked
    /// for (`project_ids`, required: the key's scope).
    pub scope: Vec<String>,
    /// The agents whose events this vendor bills (through the keys of the scope).
    pub agents: Vec<AgentType>,
}

impl std::fmt::Debug for SourceConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceConfig")
            .field("vendor", &self.vendor)
            .field("base_url", &self.base_url)
            .field("admin_key", &"<hidden>")
            .field("scope", &self.scope)
            .field("agents", &self.agents)
            .finish()
    }
}

/// What the environment configures.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// `SIGHTLINE_BILLING_RECONCILIATION_ENABLED=true`: the server runs `reconcile-cost` daily.
    pub enabled: bool,
    /// The sources with credentials; a vendor missing here is the null source.
    pub sources: Vec<SourceConfig>,
    /// Complete UTC days each run reconciles, ending yesterday (vendors revise recent days).
    pub days: u32,
    /// Drift beyond this share of the larger figure (and beyond [`drift::FLOOR_NUSD`]) is
    /// outside tolerance.
    pub tolerance_pct: f64,
}

impl Settings {
    /// The settings the `[billing]` section gives; an error names the variable that is
    /// wrong.
    pub fn from_config(billing: &crate::config::Billing) -> Result<Settings, String> {
        // Each vendor's keys by the variable that sets them, so one reading serves both
        // vendors and every error names what an operator sets.
        let text = |name: &str| -> Option<String> {
            let value = match name {
                "SIGHTLINE_BILLING_ANTHROPIC_ADMIN_KEY" => &billing.anthropic_admin_key.0,
                "SIGHTLINE_BILLING_ANTHROPIC_URL" => &billing.anthropic_url,
                "SIGHTLINE_BILLING_ANTHROPIC_WORKSPACES" => &billing.anthropic_workspaces,
                "SIGHTLINE_BILLING_ANTHROPIC_AGENTS" => &billing.anthropic_agents,
                "SIGHTLINE_BILLING_OPENAI_ADMIN_KEY" => &billing.openai_admin_key.0,
                "SIGHTLINE_BILLING_OPENAI_URL" => &billing.openai_url,
                "SIGHTLINE_BILLING_OPENAI_PROJECTS" => &billing.openai_projects,
                "SIGHTLINE_BILLING_OPENAI_AGENTS" => &billing.openai_agents,
                _ => return None,
            };
            Some(value.trim().to_string()).filter(|v| !v.is_empty())
        };
        let mut sources = Vec::new();
        for vendor in Vendor::ALL {
            if let Some(source) = source_from_env(vendor, &text)? {
                sources.push(source);
            }
        }
        let days = match u32::try_from(billing.reconcile_days) {
            Ok(days @ 1..=93) => days,
            _ => {
                return Err(format!(
                    "SIGHTLINE_BILLING_RECONCILE_DAYS must be 1 to 93, not {:?}",
                    billing.reconcile_days.to_string()
                ));
            }
        };
        let tolerance_pct = match billing.drift_tolerance_pct {
            pct if (0.0..=100.0).contains(&pct) => pct,
            pct => {
                return Err(format!(
                    "SIGHTLINE_BILLING_DRIFT_TOLERANCE_PCT must be 0 to 100, not {:?}",
                    pct.to_string()
                ));
            }
        };
        Ok(Settings { enabled: billing.reconciliation_enabled, sources, days, tolerance_pct })
    }

    /// The vendors that are the null source, for a run's summary.
    pub fn null_sources(&self) -> Vec<Vendor> {
        Vendor::ALL.into_iter().filter(|vendor| self.sources.iter().all(|s| s.vendor != *vendor)).collect()
    }
}

/// One vendor's source, if its admin key is set (and, for OpenAI, its project scope).
fn source_from_env(vendor: Vendor, text: &dyn Fn(&str) -> Option<String>) -> Result<Option<SourceConfig>, String> {
    let prefix = vendor.prefix();
    let key_name = format!("{prefix}_ADMIN_KEY");
    let scope_name = match vendor {
        Vendor::Anthropic => format!("{prefix}_WORKSPACES"),
        Vendor::OpenAi => format!("{prefix}_PROJECTS"),
    };
    let Some(admin_key) = text(&key_name) else {
        for other in [format!("{prefix}_URL"), scope_name.clone(), format!("{prefix}_AGENTS")] {
            if text(&other).is_some() {
                return Err(format!("{other} is set but {key_name} is not: the source needs its admin key"));
            }
        }
        return Ok(None);
    };
    let base_url = text(&format!("{prefix}_URL")).unwrap_or_else(|| vendor.default_url().to_string());
    if !crate::model::is_credential_safe_url(&base_url) {
        return Err(format!(
            "{prefix}_URL must be an https:// URL without credentials (http:// only on loopback), not {base_url:?}"
        ));
    }
    let scope: Vec<String> = text(&scope_name)
        .map(|list| list.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
        .unwrap_or_default();
    if let Some(bad) = scope.iter().find(|id| !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
    {
        return Err(format!(
            "{scope_name}: {bad:?} is not a {} id",
            if vendor == Vendor::OpenAi { "project" } else { "workspace" }
        ));
    }
    if vendor == Vendor::OpenAi && scope.is_empty() {
        return Err(format!(
            "{scope_name} must name the projects (proj_…) whose spend is the coding agents': the key's scope"
        ));
    }
    let agents = match text(&format!("{prefix}_AGENTS")) {
        None => vendor.default_agents(),
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(|name| {
                AgentType::parse_lenient(name).ok_or_else(|| format!("{prefix}_AGENTS: {name:?} is not an agent"))
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(Some(SourceConfig { vendor, base_url: base_url.trim_end_matches('/').to_string(), admin_key, scope, agents }))
}

/// A line of a vendor's bill for one UTC day, as the vendor gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BillingLine {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub vendor: Vendor,
    /// The workspace or project billed (`""` when the vendor names none).
    pub workspace: String,
    /// The model as the vendor names it (`None` for a charge that is not for tokens:
    /// web search, code execution, an image line).
    pub model: Option<String>,
    /// The vendor's own words for the line (its description or line item).
    pub description: String,
    pub billed_nusd: i64,
}

/// The HTTP client both sources use: statuses are answers, not errors; 30 s per request.
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(30)))
        .build()
        .new_agent()
}

/// Pages a fetch may take before it stops rather than loop on a vendor that pages badly.
const MAX_PAGES: usize = 100;

/// Both vendors' paging: asks `request(page)` (no page token first), hands each answer's
/// `data` buckets to `each`, and follows `next_page` while `has_more`. `what` names the
/// API in every error. A partial bill is never returned: `has_more` without a new
/// `next_page`, or more than [`MAX_PAGES`], is an error.
fn fetch_pages(
    what: &str,
    url: &str,
    request: &dyn Fn(Option<&str>) -> ureq::RequestBuilder<ureq::typestate::WithoutBody>,
    each: &mut dyn FnMut(&serde_json::Value) -> Result<(), String>,
) -> Result<(), String> {
    use serde_json::Value;
    let mut page: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut response = request(page.as_deref()).call().map_err(|err| format!("{what} at {url}: {err}"))?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        if status != 200 {
            return Err(format!("{what} answered {status}: {}", error_message(&text)));
        }
        let answer: Value =
            serde_json::from_str(&text).map_err(|err| format!("{what} answered with something not JSON: {err}"))?;
        // A page of another shape is an error, never an empty bill: read as one, it
        // would show the vendor's whole spend as drift.
        let buckets = answer.get("data").and_then(Value::as_array).ok_or_else(|| {
            format!("{what} answered a page without a data list (the documented shape is {{data: [...], has_more, next_page}})")
        })?;
        for bucket in buckets {
            each(bucket)?;
        }
        let next = answer.get("next_page").and_then(Value::as_str).map(str::to_string);
        let has_more = match answer.get("has_more") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(more)) => *more,
            Some(other) => return Err(format!("{what} answered has_more {other}, not true or false")),
        };
        if !has_more {
            return Ok(());
        }
        if next.is_none() || next == page {
            // A partial bill would be stored as the whole one and show as drift.
            return Err(format!("{what} said has_more without a new next_page: the bill is incomplete"));
        }
        page = next;
    }
    Err(format!("{what} did not end within {MAX_PAGES} pages"))
}

/// The `error.message` of an error answer (both vendors' shape), or its first 300
/// characters.
fn error_message(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.pointer("/error/message").and_then(serde_json::Value::as_str).map(str::to_string))
        .unwrap_or_else(|| text.chars().take(300).collect())
}

/// Refuses a bucket of a day outside `[from_day, to_day)`: its lines would escape the
/// window a run replaces.
fn in_window(what: &str, day: &str, (from_day, to_day): (&str, &str)) -> Result<(), String> {
    if day < from_day || day >= to_day {
        return Err(format!("{what}: a bucket of {day}, outside the days asked ({from_day} to {to_day})"));
    }
    Ok(())
}

/// An amount as decimal text, whether the vendor wrote a string or a JSON number.
fn decimal_text(value: Option<&serde_json::Value>) -> Option<String> {
    match value {
        Some(serde_json::Value::String(text)) => Some(text.clone()),
        Some(serde_json::Value::Number(number)) => Some(number.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests;

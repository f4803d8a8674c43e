//! One `reconcile-cost` run before it writes: the window of complete UTC days, each
//! configured source's bill for it, the events' recomputed cost for the same days (one
//! scan of each day's partition, every run kind), and the drift between them.
//!
//! Invariant: reads only; everything is gathered before anything is written, so a
//! source that fails leaves the stored figures as they were.

use std::collections::BTreeMap;
use std::path::Path;

use super::drift::{self, DriftRow, Sides};
use super::{BillingLine, Settings, SourceConfig, Vendor, anthropic, openai};
use crate::db::DbError;
use crate::events::days::{self, Day};
use crate::events::partitions::DailyModelCost;
use crate::model::AgentType;
use crate::pricing::PriceBook;

/// What one source said and how it compares.
#[derive(Debug)]
pub struct VendorRun {
    pub vendor: Vendor,
    /// The vendor's lines, each with the model as the price tables name it (`""` for a
    /// charge that is not for tokens), summed where the vendor repeats a line.
    pub lines: Vec<(BillingLine, String)>,
    pub drift: Vec<DriftRow>,
}

/// Everything a run stores.
#[derive(Debug)]
pub struct Reconciliation {
    /// `[from_day, to_day)`.
    pub from_day: String,
    pub to_day: String,
    pub vendors: Vec<VendorRun>,
    pub null_sources: Vec<Vendor>,
}

/// The window ending before `today`, `days` long.
pub fn window(today: Day, days: u32) -> (Day, Day) {
    let from = Day(today.0.checked_sub(time::Duration::days(i64::from(days))).unwrap_or(today.0));
    (from, today)
}

/// Gathers a run (blocking: HTTP to the configured vendors, then the partitions).
pub fn prepare(data_dir: &Path, book: &PriceBook, settings: &Settings, today: Day) -> Result<Reconciliation, String> {
    let (from, to) = window(today, settings.days);
    let mut bills = Vec::new();
    for source in &settings.sources {
        bills.push((source, fetch_from_vendor(source, &from.to_string(), &to.to_string())?));
    }
    let costs = DayCosts::read(data_dir, (from, to))?;
    Ok(compare_bills(book, settings, &costs, bills))
}

/// Compares bills already in hand (`prepare`'s, or the demo's) with the events' cost of
/// the same window.
pub fn compare_bills(
    book: &PriceBook,
    settings: &Settings,
    costs: &DayCosts,
    bills: Vec<(&SourceConfig, Vec<BillingLine>)>,
) -> Reconciliation {
    let vendors = bills
        .into_iter()
        .map(|(source, lines)| {
            let lines = canonical_lines(book, source, lines);
            let sides = sides(book, source, &costs.days, &lines);
            VendorRun {
                vendor: source.vendor,
                drift: drift::compare(source.vendor, &sides, settings.tolerance_pct),
                lines,
            }
        })
        .collect();
    let (from_day, to_day) = (costs.window.0.to_string(), costs.window.1.to_string());
    Reconciliation { from_day, to_day, vendors, null_sources: settings.null_sources() }
}

/// What the events of `costs`' window cost per day and model as `source` bills them: the
/// demo's starting point for a plausible bill.
pub fn recomputed(book: &PriceBook, source: &SourceConfig, costs: &DayCosts) -> BTreeMap<(String, String), i64> {
    sides(book, source, &costs.days, &[]).recomputed
}

/// One source's bill of `[from_day, to_day)`, from the vendor's own API.
fn fetch_from_vendor(source: &SourceConfig, from_day: &str, to_day: &str) -> Result<Vec<BillingLine>, String> {
    match source.vendor {
        Vendor::Anthropic => anthropic::fetch(source, from_day, to_day),
        Vendor::OpenAi => openai::fetch(source, from_day, to_day),
    }
}

/// Each day's events by agent and model over a window `[from, to)`: read once a run.
pub struct DayCosts {
    window: (Day, Day),
    days: Vec<(String, Vec<DailyModelCost>)>,
}

impl DayCosts {
    pub fn read(data_dir: &Path, (from, to): (Day, Day)) -> Result<DayCosts, String> {
        let scan = || -> Result<_, DbError> {
            let mut costs = Vec::new();
            let mut day = from;
            while day < to {
                if let Some(reader) = days::read(data_dir, day)? {
                    costs.push((day.to_string(), reader.model_costs()?));
                }
                day = day.next();
            }
            Ok(costs)
        };
        Ok(DayCosts { window: (from, to), days: scan().map_err(|err| format!("reading the events: {err}"))? })
    }
}

/// A model name as the price tables of the source's agents name it (then any table's
/// entry of the same vendor); the vendor's own name, lower-cased, when none knows it.
fn canonical_model(book: &PriceBook, source: &SourceConfig, name: &str) -> String {
    let of_vendor = |agent: AgentType| {
        book.table(agent).resolve(name).filter(|(_, vendor)| *vendor == source.vendor.as_str()).map(|(id, _)| id)
    };
    source
        .agents
        .iter()
        .copied()
        .chain(AgentType::ALL.iter().copied())
        .find_map(of_vendor)
        .map_or_else(|| name.trim().to_ascii_lowercase(), str::to_string)
}

/// The vendor's lines with canonical models, repeated lines summed.
fn canonical_lines(book: &PriceBook, source: &SourceConfig, lines: Vec<BillingLine>) -> Vec<(BillingLine, String)> {
    let mut summed: BTreeMap<(String, String, String, String), (BillingLine, String)> = BTreeMap::new();
    for line in lines {
        let model = line.model.as_deref().map_or_else(String::new, |name| canonical_model(book, source, name));
        let key = (line.day.clone(), line.workspace.clone(), model.clone(), line.description.clone());
        match summed.get_mut(&key) {
            Some((kept, _)) => kept.billed_nusd = kept.billed_nusd.saturating_add(line.billed_nusd),
            None => {
                summed.insert(key, (line, model));
            }
        }
    }
    summed.into_values().collect()
}

/// Both sides of one vendor: the recomputed cost of the events its agents priced with
/// its models, its bill for tokens, and the agents whose tokens went uncaptured.
fn sides(
    book: &PriceBook,
    source: &SourceConfig,
    costs: &[(String, Vec<DailyModelCost>)],
    lines: &[(BillingLine, String)],
) -> Sides {
    let mut sides = Sides::default();
    for (day, rows) in costs {
        let mut events_by_agent: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        for row in rows {
            let Some(agent) = AgentType::parse(&row.agent_type).filter(|agent| source.agents.contains(agent)) else {
                continue;
            };
            let seen = events_by_agent.entry(agent.as_str()).or_default();
            seen.0 += row.events;
            seen.1 += row.events_with_tokens;
            if let Some((id, vendor)) = book.table(agent).resolve(&row.model)
                && vendor == source.vendor.as_str()
                && row.cost_nusd != 0
            {
                *sides.recomputed.entry((day.clone(), id.to_string())).or_default() += row.cost_nusd;
            }
        }
        let uncaptured: std::collections::BTreeSet<String> = events_by_agent
            .into_iter()
            .filter(|(_, (events, with_tokens))| *events > 0 && *with_tokens == 0)
            .map(|(agent, _)| agent.to_string())
            .collect();
        if !uncaptured.is_empty() {
            sides.uncaptured.insert(day.clone(), uncaptured);
        }
    }
    for (line, model) in lines {
        if !model.is_empty() {
            *sides.billed.entry((line.day.clone(), model.clone())).or_default() += line.billed_nusd;
        }
    }
    sides
}

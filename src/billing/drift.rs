//! Drift: for each day, vendor and model, what the vendor billed minus what the server
//! recomputed from its price tables, and what the difference means.
//!
//! A difference within tolerance (the larger of [`Settings::tolerance_pct`] of the
//! larger figure and [`FLOOR_NUSD`]) is `within`. Beyond it, the cause decides:
//! - `uncaptured`: the vendor billed more on a day an agent billed through it reported
//!   events without token counts, so its spend could not be recomputed; recorded, never a
//!   breach (docs/cost.md);
//! - `unattributed`: the vendor billed a model none of the agents' priced events used
//!   (traffic outside the coding agents on the same keys, or a model no table knows);
//! - `breach`: the prices or the token counts disagree with the vendor's: a pricing
//!   breach, for the price tables' owner to look at.
//!
//! [`Settings::tolerance_pct`]: super::Settings

use std::collections::{BTreeMap, BTreeSet};

use super::Vendor;

/// Differences up to a dollar a day and model are never outside tolerance: rounding
/// and the vendors' own bucket edges make cents of noise.
pub const FLOOR_NUSD: i64 = 1_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Within,
    Uncaptured,
    Unattributed,
    Breach,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Within => "within",
            Status::Uncaptured => "uncaptured",
            Status::Unattributed => "unattributed",
            Status::Breach => "breach",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        [Status::Within, Status::Uncaptured, Status::Unattributed, Status::Breach]
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// One day, vendor and model of the comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriftRow {
    pub day: String,
    pub vendor: Vendor,
    pub model: String,
    pub recomputed_nusd: i64,
    pub billed_nusd: i64,
    /// Billed minus recomputed: positive when the vendor charged more.
    pub drift_nusd: i64,
    pub status: Status,
    /// The agents billed through this vendor that reported events without tokens that
    /// day (sorted, comma-separated; empty when none).
    pub uncaptured_agents: String,
}

/// What one vendor's side and ours say for a window of days.
#[derive(Debug, Default)]
pub struct Sides {
    /// (day, model) → cost recomputed from the events.
    pub recomputed: BTreeMap<(String, String), i64>,
    /// (day, model) → what the vendor billed for that model's tokens.
    pub billed: BTreeMap<(String, String), i64>,
    /// day → agents without captured tokens.
    pub uncaptured: BTreeMap<String, BTreeSet<String>>,
}

/// The drift rows of one vendor, in day and model order.
pub fn compare(vendor: Vendor, sides: &Sides, tolerance_pct: f64) -> Vec<DriftRow> {
    let keys: BTreeSet<&(String, String)> = sides.recomputed.keys().chain(sides.billed.keys()).collect();
    keys.into_iter()
        .map(|key @ (day, model)| {
            let recomputed_nusd = sides.recomputed.get(key).copied().unwrap_or(0);
            let billed_nusd = sides.billed.get(key).copied().unwrap_or(0);
            let drift_nusd = billed_nusd - recomputed_nusd;
            let uncaptured: Vec<&str> = sides.uncaptured.get(day).into_iter().flatten().map(String::as_str).collect();
            let larger = billed_nusd.abs().max(recomputed_nusd.abs()) as f64;
            let tolerance = ((larger * tolerance_pct / 100.0).round() as i64).max(FLOOR_NUSD);
            let status = if drift_nusd.abs() <= tolerance {
                Status::Within
            } else if drift_nusd > 0 && !uncaptured.is_empty() {
                // Missing tokens only make the recomputed figure too low: a vendor that
                // billed less than we priced is a breach whatever else happened that day.
                Status::Uncaptured
            } else if recomputed_nusd == 0 {
                Status::Unattributed
            } else {
                Status::Breach
            };
            DriftRow {
                day: day.clone(),
                vendor,
                model: model.clone(),
                recomputed_nusd,
                billed_nusd,
                drift_nusd,
                status,
                uncaptured_agents: uncaptured.join(","),
            }
        })
        .collect()
}

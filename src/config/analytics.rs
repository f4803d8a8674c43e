//! The `[analytics]` section: how many people a figure on a team or organisation page
//! must describe at least (`min_group_size`), and the evaluation results `/org/benchmarks`
//! lists (`results_db`, linked into the eval dashboard at `eval_dashboard_url`).
//! Validated with the rest in `Config::validate`.

use serde::Deserialize;

/// Team and organisation analytics. See `assets/sightline.default.toml`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Analytics {
    /// The fewest active people a figure on a team or organisation page (or its CSV) may
    /// describe: a smaller group is hidden or folded into "other".
    pub min_group_size: i64,
    /// A harness's `results.db` whose runs `/org/benchmarks` lists; empty for none.
    pub results_db: String,
    /// Where `sightline dashboard` answers for that file (its runs link there); empty
    /// for no links.
    pub eval_dashboard_url: String,
}

impl Default for Analytics {
    fn default() -> Self {
        Analytics { min_group_size: 5, results_db: String::new(), eval_dashboard_url: String::new() }
    }
}

//! The `[analytics]` section: how many people a figure on a team or organisation page
//! must describe at least (`min_group_size`). Validated with the rest in
//! `Config::validate`.

use serde::Deserialize;

/// Team and organisation analytics. See `assets/sightline.default.toml`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Analytics {
    /// The fewest active people a figure on a team or organisation page (or its CSV) may
    /// describe: a smaller group is hidden or folded into "other".
    pub min_group_size: i64,
}

impl Default for Analytics {
    fn default() -> Self {
        Analytics { min_group_size: 5 }
    }
}

//! The service-level objectives of docs/slo.md, each measured over the rolling 30 days
//! before now from `sli_daily`: its attainment, error budget (the bad events the target
//! allows), how much of it is spent, the burn rate of the last day, and what the budget
//! policy asks (more than half spent within 15 days: review; all spent: freeze).
//!
//! Invariant: an objective with no observations in the window spends nothing and says
//! so; it is never reported as met or broken on no data.

use rusqlite::Connection;

use super::Tally;
use super::store::{self, DAY_MS, DayRow};
use crate::db::DbError;

/// The window objectives are measured over.
pub const WINDOW_DAYS: i64 = 30;

/// What counts as a good observation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Good {
    /// The indicator's own good count (not a 5xx, written in time, delivered, …).
    Counted,
    /// Timed at most this many milliseconds (a bound of `slo::BOUNDS_MS`).
    Under(i64),
}

/// Which rows an objective reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keys {
    All,
    Only(&'static [&'static str]),
    /// Keys that start with this (e.g. every web route).
    Prefix(&'static str),
    /// Keys that start with this, but none of these.
    PrefixExcept(&'static str, &'static [&'static str]),
}

/// The web routes anyone may call without signing in (sign-in itself, the OAuth token
/// endpoints, health, and addresses no route serves): docs/slo.md's availability is of the
/// authenticated routes.
pub const PUBLIC_WEB_ROUTES: &[&str] = &[
    "web /login",
    "web /logout",
    "web /auth/github",
    "web /auth/github/callback",
    "web /oauth/token",
    "web /oauth/revoke",
    "web /oauth/device/code",
    "web /oauth/device/token",
    "web /health",
    "web unmatched",
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Objective {
    pub id: &'static str,
    pub service: &'static str,
    pub what: &'static str,
    pub indicator: &'static str,
    pub keys: Keys,
    pub good: Good,
    /// The share of observations that must be good.
    pub target: f64,
}

/// The objectives of docs/slo.md. The latency ones are stated as "p99 under 200 ms" and the
/// like, which is the same as "99 % of requests take at most 200 ms".
pub const OBJECTIVES: [Objective; 12] = [
    Objective {
        id: "ingest-availability",
        service: "ingest",
        what: "availability of /v1/events and /v1/transcripts (1 minus the 5xx share)",
        indicator: "route",
        keys: Keys::Only(&["ingest /v1/events", "ingest /v1/transcripts/{session_id}"]),
        good: Good::Counted,
        target: 0.995,
    },
    Objective {
        id: "ingest-latency-p99",
        service: "ingest",
        what: "POST /v1/events p99 under 200 ms",
        indicator: "route",
        keys: Keys::Only(&["ingest /v1/events"]),
        good: Good::Under(200),
        target: 0.99,
    },
    Objective {
        id: "ingest-latency-p50",
        service: "ingest",
        what: "POST /v1/events p50 under 50 ms",
        indicator: "route",
        keys: Keys::Only(&["ingest /v1/events"]),
        good: Good::Under(50),
        target: 0.50,
    },
    Objective {
        id: "event-loss",
        service: "ingest",
        what: "events written within 5 minutes of receipt (0 % loss)",
        indicator: "event_write",
        keys: Keys::All,
        good: Good::Counted,
        target: 1.0,
    },
    Objective {
        id: "web-availability",
        service: "web",
        what: "availability across the web app's authenticated routes",
        indicator: "route",
        keys: Keys::PrefixExcept("web ", PUBLIC_WEB_ROUTES),
        good: Good::Counted,
        target: 0.99,
    },
    Objective {
        id: "web-pages-p95",
        service: "web",
        what: "/me, /me/sessions and /team/<slug> p95 under 1 s",
        indicator: "route",
        keys: Keys::Only(&["web /me", "web /me/sessions", "web /team/{slug}"]),
        good: Good::Under(1000),
        target: 0.95,
    },
    Objective {
        id: "me-p50",
        service: "web",
        what: "/me p50 under 500 ms",
        indicator: "route",
        keys: Keys::Only(&["web /me"]),
        good: Good::Under(500),
        target: 0.50,
    },
    Objective {
        id: "org-p95",
        service: "web",
        what: "organisation dashboard p95 under 2 s",
        indicator: "route",
        keys: Keys::Only(&["web /org"]),
        good: Good::Under(2000),
        target: 0.95,
    },
    Objective {
        id: "search-time",
        service: "web",
        what: "transcript full-text queries under 500 ms (p95)",
        indicator: "route",
        keys: Keys::Only(&["web /api/search", "web /me/search", "web /org/search"]),
        good: Good::Under(500),
        target: 0.95,
    },
    Objective {
        id: "aggregate-lag",
        service: "web",
        what: "continuous-aggregate refresh lag under 2 h (minute samples)",
        indicator: "aggregate_lag",
        keys: Keys::All,
        good: Good::Counted,
        target: 0.99,
    },
    Objective {
        id: "github-delivery",
        service: "code-hosting app",
        what: "webhook delivery success",
        indicator: "github_delivery",
        keys: Keys::All,
        good: Good::Counted,
        target: 0.99,
    },
    Objective {
        id: "github-upsert",
        service: "code-hosting app",
        what: "receipt to pull-request upsert under 5 s (p99)",
        indicator: "github_delivery",
        keys: Keys::All,
        good: Good::Under(5000),
        target: 0.99,
    },
];

impl Objective {
    fn reads(&self, row: &DayRow) -> bool {
        row.indicator == self.indicator
            && match self.keys {
                Keys::All => true,
                Keys::Only(keys) => keys.contains(&row.key.as_str()),
                Keys::Prefix(prefix) => row.key.starts_with(prefix),
                Keys::PrefixExcept(prefix, except) => {
                    row.key.starts_with(prefix) && !except.contains(&row.key.as_str())
                }
            }
    }

    /// (observations, good ones) of a tally under this objective.
    fn count(&self, tally: &Tally) -> (i64, i64) {
        match self.good {
            Good::Counted => (tally.total, tally.good),
            Good::Under(bound) => (tally.timed(), tally.under(bound)),
        }
    }
}

/// What the budget policy of docs/slo.md asks now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    NoData,
    Healthy,
    /// More than half the budget spent within 15 days: a platform review.
    Review,
    /// The budget is spent: freeze non-critical deploys, post-mortem within 3 business days.
    Freeze,
}

impl Policy {
    pub fn says(self) -> &'static str {
        match self {
            Policy::NoData => "no observations in the window",
            Policy::Healthy => "within budget",
            Policy::Review => "over half the budget spent within 15 days: platform review",
            Policy::Freeze => "budget exhausted: freeze non-critical deploys; post-mortem within 3 business days",
        }
    }
}

/// One objective over the window.
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    pub objective: Objective,
    pub total: i64,
    pub good: i64,
    /// Bad observations the target allows over the window's observations.
    pub budget: f64,
    /// Spent share of the budget (1.0 = all; above 1 = overspent).
    pub spent: f64,
    /// Spent share from the last 15 days' bad observations alone.
    pub spent_last_15_days: f64,
    /// The last day's bad share over the allowed bad share (1.0 spends the budget in
    /// exactly 30 days).
    pub burn_rate: f64,
    pub policy: Policy,
    /// Per day of the window, oldest first: (day start, observations, good).
    pub days: Vec<(i64, i64, i64)>,
}

fn spent_of(bad: i64, budget: f64) -> f64 {
    if bad == 0 {
        0.0
    } else if budget <= 0.0 {
        // A 100 % target has no budget: any bad observation spends it all.
        f64::INFINITY
    } else {
        bad as f64 / budget
    }
}

/// Every objective over the 30 days before `now_ms` (today included).
pub fn statuses(conn: &Connection, now_ms: i64) -> Result<Vec<Status>, DbError> {
    Ok(statuses_of(&window_rows(conn, now_ms)?, now_ms))
}

/// The `sli_daily` rows of the window ending with the day of `now_ms`.
pub fn window_rows(conn: &Connection, now_ms: i64) -> Result<Vec<DayRow>, DbError> {
    let today = now_ms.div_euclid(DAY_MS) * DAY_MS;
    store::rows(conn, today - (WINDOW_DAYS - 1) * DAY_MS, today + DAY_MS)
}

/// Every objective over the window's rows (as [`window_rows`] reads them).
pub fn statuses_of(rows: &[DayRow], now_ms: i64) -> Vec<Status> {
    let today = now_ms.div_euclid(DAY_MS) * DAY_MS;
    let from = today - (WINDOW_DAYS - 1) * DAY_MS;
    OBJECTIVES.iter().map(|objective| status(*objective, rows, from, today)).collect()
}

fn status(objective: Objective, rows: &[DayRow], from: i64, today: i64) -> Status {
    let mut days: Vec<(i64, i64, i64)> = (0..WINDOW_DAYS).map(|i| (from + i * DAY_MS, 0, 0)).collect();
    for row in rows.iter().filter(|row| objective.reads(row)) {
        let at = ((row.day_start_ms - from) / DAY_MS) as usize;
        if let Some(day) = days.get_mut(at) {
            let (total, good) = objective.count(&row.tally);
            day.1 += total;
            day.2 += good;
        }
    }
    let (total, good) = days.iter().fold((0, 0), |(t, g), day| (t + day.1, g + day.2));
    let allowed_share = 1.0 - objective.target;
    let budget = allowed_share * total as f64;
    let spent = spent_of(total - good, budget);
    let recent_bad: i64 = days.iter().filter(|day| day.0 > today - 15 * DAY_MS).map(|day| day.1 - day.2).sum();
    let spent_last_15_days = spent_of(recent_bad, budget);
    let (last_total, last_good) = days.last().map_or((0, 0), |day| (day.1, day.2));
    let burn_rate = if last_total == 0 {
        0.0
    } else if allowed_share <= 0.0 {
        if last_good < last_total { f64::INFINITY } else { 0.0 }
    } else {
        ((last_total - last_good) as f64 / last_total as f64) / allowed_share
    };
    let policy = if total == 0 {
        Policy::NoData
    } else if spent >= 1.0 {
        Policy::Freeze
    } else if spent_last_15_days > 0.5 {
        Policy::Review
    } else {
        Policy::Healthy
    };
    Status { objective, total, good, budget, spent, spent_last_15_days, burn_rate, policy, days }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(day: i64, key: &str, total: i64, good: i64, fast: i64) -> DayRow {
        let mut buckets = vec![0; super::super::BOUNDS_MS.len() + 1];
        buckets[0] = fast;
        buckets[7] = total - fast; // at most 1 s
        DayRow { day_start_ms: day, indicator: "route".into(), key: key.into(), tally: Tally { total, good, buckets } }
    }

    #[test]
    fn budgets_are_spent_by_bad_observations_and_the_policy_follows() {
        let today = 100 * DAY_MS;
        let from = today - 29 * DAY_MS;
        let availability = OBJECTIVES[0];
        // 10,000 requests, 99.5 % target: 50 bad allowed.
        let healthy = status(availability, &[row(from, "ingest /v1/events", 10_000, 9_990, 0)], from, today);
        assert_eq!((healthy.total, healthy.good), (10_000, 9_990));
        assert!((healthy.budget - 50.0).abs() < 1e-9);
        assert!((healthy.spent - 0.2).abs() < 1e-9);
        assert_eq!(healthy.policy, Policy::Healthy, "bad observations older than 15 days do not ask for a review");

        let recent = status(availability, &[row(today - DAY_MS, "ingest /v1/events", 10_000, 9_960, 0)], from, today);
        assert_eq!(recent.policy, Policy::Review);
        let exhausted = status(availability, &[row(today, "ingest /v1/events", 10_000, 9_900, 0)], from, today);
        assert_eq!(exhausted.policy, Policy::Freeze);
        assert!((exhausted.burn_rate - 2.0).abs() < 1e-9, "1 % bad against 0.5 % allowed");

        let other_route = status(availability, &[row(today, "web /me", 10, 0, 0)], from, today);
        assert_eq!((other_route.total, other_route.policy), (0, Policy::NoData));

        let latency = OBJECTIVES[1];
        let slow = status(latency, &[row(today, "ingest /v1/events", 100, 100, 90)], from, today);
        assert_eq!((slow.total, slow.good), (100, 90), "10 of 100 took up to 1 s, over 200 ms");
        assert_eq!(slow.policy, Policy::Freeze, "10 % slow against 1 % allowed");
    }

    #[test]
    fn web_availability_counts_only_authenticated_routes() {
        let today = 100 * DAY_MS;
        let web = OBJECTIVES.iter().copied().find(|o| o.id == "web-availability").unwrap();
        let rows =
            [row(today, "web /me", 10, 9, 0), row(today, "web /login", 50, 0, 0), row(today, "web unmatched", 7, 7, 0)];
        let counted = status(web, &rows, today - 29 * DAY_MS, today);
        assert_eq!((counted.total, counted.good), (10, 9), "sign-in and unmatched addresses are not counted");
    }
}

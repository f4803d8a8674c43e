//! `/admin/health`, an administrator's landing: what needs them now, each item linked to
//! where it is fixed. Open alerts by severity; jobs whose last run failed, breached its
//! service level or has not succeeded for too long; service levels burning their error
//! budget; notification channels (none configured is a problem: nobody is told); people
//! whose adapter went silent; the data directory's size, the disk's free space and how
//! long it lasts at the last week's growth; the last backup's age.
//!
//! Invariants: read-only; reads only summaries (the stores' own status functions and
//! file sizes), never events; an item that is fine says so in a word, so the page reads
//! as a checklist.

use std::path::Path;
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use super::{AdminPage, Flash, Row, Section, when};
use crate::alerts::rules::Rule;
use crate::db::DbError;
use crate::http::errors::PageError;
use crate::http::extract::Query;
use crate::jobs::runs::Outcome;
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

const DAY_MS: i64 = 86_400_000;
/// A backup older than this is a problem (the default schedule backs up daily).
const BACKUP_STALE_MS: i64 = 2 * DAY_MS;

/// One line of the checklist: what, its state, the detail, where to fix it.
fn item(what: &str, problem: bool, detail: String, fix: &str) -> Row {
    Row::new(vec![
        Cell::text(what.to_string()).link(fix.to_string()),
        Cell::text(if problem { "problem" } else { "ok" }),
        Cell::text(detail),
    ])
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    let now_ms = state.clock.now_ms();
    let config = state.config.clone();
    let (alerts, jobs, slos, channels, silent, backup, unpriced) = state
        .read(move |conn| {
            Ok::<_, DbError>((
                crate::alerts::store::events(conn)?,
                crate::jobs::status::all(conn, &config, now_ms)?,
                crate::slo::objectives::statuses(conn, now_ms)?,
                crate::alerts::channel_configs::in_use(conn, &config.alerts)?,
                crate::sessions::adapters::stopped_reporting(conn, now_ms)?,
                crate::backup::history::last(conn)?,
                crate::sessions::unpriced::all(conn)?,
            ))
        })
        .await?;

    let mut open: Vec<_> = alerts.into_iter().filter(|event| event.resolved_at_ms.is_none()).collect();
    let severity = |rule_id: &str| Rule::parse(rule_id).map_or("warning", Rule::severity);
    open.sort_by_key(|event| (severity(&event.rule_id) != "critical", -event.opened_at_ms));
    let mut alerts_section = Section::new("alerts", "Open alerts")
        .columns(vec!["Severity", "Rule", "Subject", "Opened", "What"])
        .empty("No alert is open.");
    alerts_section.rows = open
        .iter()
        .map(|event| {
            Row::new(vec![
                Cell::text(severity(&event.rule_id)),
                Cell::text(event.rule_id.clone()).link("/admin/alerts"),
                Cell::text(event.subject.clone()),
                when(Some(event.opened_at_ms)),
                Cell::text(event.detail.clone()),
            ])
        })
        .collect();

    let mut checks = Section::new("checks", "Checks")
        .intro("Each line links to the page where it is fixed.")
        .columns(vec!["What", "State", "Detail"]);
    let failing: Vec<String> = jobs
        .iter()
        .filter(|job| job.effective.enabled)
        .filter_map(|job| {
            let last = job.last.as_ref()?;
            let failed = last.outcome == Outcome::Failed;
            (failed || job.breach.is_some()).then(|| match &job.breach {
                Some(breach) => format!("{} ({}: {})", job.job.name, breach.severity, breach.reason),
                None => format!("{} (last run failed)", job.job.name),
            })
        })
        .collect();
    checks.rows.push(item(
        "Jobs",
        !failing.is_empty(),
        if failing.is_empty() { format!("{} jobs; none failing or late", jobs.len()) } else { failing.join("; ") },
        "/admin/jobs",
    ));
    let burning: Vec<String> = slos
        .iter()
        .filter(|status| status.spent >= 0.5 || status.burn_rate > 1.0)
        .map(|status| {
            format!(
                "{}: {:.0}% of the 30-day budget spent, burning at {:.1}×",
                status.objective.id,
                status.spent * 100.0,
                status.burn_rate
            )
        })
        .collect();
    checks.rows.push(item(
        "Service levels",
        !burning.is_empty(),
        if burning.is_empty() { format!("{} objectives within budget", slos.len()) } else { burning.join("; ") },
        "/admin/slo",
    ));
    let channel_detail = match &channels {
        Ok(list) if list.is_empty() => {
            (true, "no notification channel is configured: when an alert opens, nobody is told".to_string())
        }
        Ok(list) => (false, format!("{} channel(s) on", list.len())),
        Err(why) => (true, format!("the channels' settings are wrong: {why}")),
    };
    checks.rows.push(item("Notification channels", channel_detail.0, channel_detail.1, "/admin/alerts"));
    checks.rows.push(item(
        "Adapters",
        !silent.is_empty(),
        match silent.len() {
            0 => "everyone who reported before still does".to_string(),
            n => format!(
                "{n} people stopped reporting in the last 7 days ({})",
                silent.iter().take(3).map(|s| s.email.as_str()).collect::<Vec<_>>().join(", ")
            ),
        },
        "/admin/adapters#stopped",
    ));
    let disk = disk_use(&state.config.data_dir, now_ms);
    checks.rows.push(item("Disk", disk.0, disk.1, "/admin/retention"));
    let (stale, backup_detail) = match &backup {
        None => (true, "no backup has been taken (sightline backup, or the backup job)".to_string()),
        Some(last) => {
            let age = now_ms - last.finished_at_ms;
            (
                age > BACKUP_STALE_MS,
                format!(
                    "last finished {} ({:.1} days ago) to {}",
                    crate::model::instants::exact_utc(last.finished_at_ms),
                    age as f64 / DAY_MS as f64,
                    last.location
                ),
            )
        }
    };
    checks.rows.push(item("Last backup", stale, backup_detail, "/admin/jobs"));
    let unpriced_now: Vec<_> = super::prices::still_unpriced(&unpriced, &state.prices).collect();
    let tokens: i64 = unpriced_now.iter().map(|model| model.tokens()).sum();
    checks.rows.push(item(
        "Prices",
        !unpriced_now.is_empty(),
        match unpriced_now.len() {
            0 => "every model seen has a price".to_string(),
            n => format!(
                "{n} model(s) without a price, {} tokens counted at $0 ({})",
                crate::model::count(tokens),
                unpriced_now.iter().take(3).map(|m| m.model.as_str()).collect::<Vec<_>>().join(", ")
            ),
        },
        "/admin/price-tables#unpriced",
    ));

    Ok(AdminPage::new("/admin/health", "Health", "What needs an administrator now, and where to fix it.", flash)
        .section(checks)
        .section(alerts_section)
        .section(super::prices::unpriced_section(&unpriced, &state.prices, now_ms))
        .respond())
}

/// The data directory's size, the file system's free space, and the days that lasts at
/// the last 7 days' growth of the event store (one file per day); a problem under 14
/// days or 10% free.
fn disk_use(data_dir: &Path, now_ms: i64) -> (bool, String) {
    let used = dir_bytes(data_dir);
    let free = fs4::statvfs(data_dir).ok().map(|stat| (stat.available_space(), stat.total_space()));
    let week: u64 = (1..=7)
        .filter_map(|back| {
            let day = crate::model::rfc3339_ms(now_ms - back * DAY_MS);
            std::fs::metadata(data_dir.join("events").join(format!("{}.db", &day[..10]))).ok().map(|m| m.len())
        })
        .sum();
    let per_day = week as f64 / 7.0;
    let mb = |bytes: f64| bytes / 1e6;
    match free {
        Some((free, total)) => {
            let days = if per_day > 0.0 { free as f64 / per_day } else { f64::INFINITY };
            let problem = days < 14.0 || (free as f64) < total as f64 * 0.1;
            let lasts =
                if days.is_finite() { format!("{days:.0} days at that rate") } else { "no growth measured".into() };
            (
                problem,
                format!(
                    "data {:.1} MB, growing {:.1} MB a day (last 7 days); {:.1} GB free: {lasts}",
                    mb(used as f64),
                    mb(per_day),
                    free as f64 / 1e9
                ),
            )
        }
        None => (
            false,
            format!(
                "data {:.1} MB, growing {:.1} MB a day (last 7 days); free space unknown",
                mb(used as f64),
                mb(per_day)
            ),
        ),
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => dir_bytes(&entry.path()),
            Ok(_) => entry.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

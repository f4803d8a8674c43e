//! The overview of a group of people, shared by `/team/<slug>` and `/org`: headline
//! figures against the period before, spend per day (a chart and its table), agents,
//! models, tools and the teams below, over 7, 30 or 90 days, and every table as CSV
//! (`?format=csv&table=days|agents|models|tools|teams`).
//!
//! Invariants: every figure comes from `analytics::query::groups`, so none describes fewer
//! than `analytics.min_group_size` active people (the whole page says so when the group
//! itself is smaller, and small rows are folded into "other"); figures are of interactive
//! runs only; the page reads aggregates, never raw events.

use axum::response::Response;

use super::shown::{count, hours, share, tokens, trend, usd};
use crate::analytics::query::groups::{self, GroupRow, Guarded, TeamGroup};
use crate::analytics::query::{self, Activity, Figures, Period, Subject};
use crate::db::DbError;
use crate::http::errors::{AppError, PageError};
use crate::model::nusd_to_usd;
use crate::web::overview::Headline;

/// The periods team and organisation pages offer.
pub const PERIODS: [i64; 3] = [7, 30, 90];
const TOP: usize = 10;

/// `?days=` as one of [`PERIODS`] (30 when absent), or a 400 naming it.
pub fn days_param(days: Option<&str>) -> Result<i64, PageError> {
    match days {
        None | Some("") => Ok(30),
        Some(text) => {
            text.parse().ok().filter(|days| PERIODS.contains(days)).ok_or_else(|| {
                PageError(AppError::bad_request("days", format!("days must be 7, 30 or 90, not {text:?}")))
            })
        }
    }
}

/// `?days=` and the period it names, ending with the day of `now_ms`.
pub fn period_param(days: Option<&str>, now_ms: i64) -> Result<(i64, Period), PageError> {
    let days = days_param(days)?;
    Ok((days, Period::last_days(now_ms, days)))
}

/// What the overview reads, once the group is known to be large enough.
pub struct Read {
    pub people: i64,
    pub now: Figures,
    pub before: Figures,
    pub activity: Activity,
    pub activity_before: Activity,
    pub by_day: Vec<GroupRow<Figures>>,
    pub agents: Vec<GroupRow<Figures>>,
    pub models: Vec<GroupRow<Figures>>,
    pub tools: Vec<GroupRow<query::ToolFigures>>,
    pub teams: Vec<GroupRow<Figures>>,
}

/// Reads the subject's overview, or why it is not shown. `teams` are the groups below it.
pub fn read(
    conn: &rusqlite::Connection,
    subject: &Subject,
    teams: &[TeamGroup],
    period: Period,
    min_people: i64,
) -> Result<Guarded<Read>, DbError> {
    let overview = groups::overview(conn, subject, period, teams, min_people)?;
    if overview.people < min_people {
        return Ok(Guarded::TooFew { people: overview.people, min_people });
    }
    if !overview.disclosed {
        return Ok(Guarded::Withheld { min_people });
    }
    Ok(Guarded::Shown(Read {
        people: overview.people,
        now: overview.totals,
        before: query::totals(conn, subject, period.previous())?,
        activity: query::activity(conn, subject, period)?,
        activity_before: query::activity(conn, subject, period.previous())?,
        by_day: overview.by_day,
        agents: overview.agents,
        models: overview.models,
        tools: groups::tools(conn, subject, period, TOP, min_people)?,
        teams: overview.teams,
    }))
}

/// A row of a breakdown as the page shows it.
pub struct Line {
    pub name: String,
    pub cost: String,
    pub share: String,
    pub tokens: String,
    pub sessions: i64,
    pub people: i64,
}

pub struct ToolLine {
    pub tool: String,
    pub server: String,
    pub calls: i64,
    pub errors: i64,
    pub denials: i64,
    pub people: i64,
}

/// The overview as the template shows it.
pub struct Shown {
    pub headlines: Vec<Headline>,
    pub chart: String,
    pub per_day: Vec<(String, String)>,
    pub agents: Vec<Line>,
    pub models: Vec<Line>,
    pub tools: Vec<ToolLine>,
    pub teams: Vec<Line>,
}

use super::report::OTHER;

fn lines(rows: &[GroupRow<Figures>], total: i64, empty_name: &str) -> Vec<Line> {
    rows.iter()
        .map(|row| Line {
            name: match row.key.as_deref() {
                None => OTHER.into(),
                Some("") => empty_name.into(),
                Some(name) => name.into(),
            },
            cost: usd(row.figures.cost_nusd),
            share: share(row.figures.cost_nusd, total),
            tokens: count(tokens(&row.figures)),
            sessions: row.figures.sessions_started,
            people: row.people,
        })
        .collect()
}

pub fn shown(read: &Read, days: i64, period: Period) -> Shown {
    let ratio = |f: &Figures| f.cache_hit_ratio().map_or("—".to_string(), |r| format!("{:.0}%", r * 100.0));
    let (now, before) = (&read.now, &read.before);
    let headlines = vec![
        Headline { label: "Active people", value: count(read.people), trend: "with interactive sessions".into() },
        Headline { label: "Spend", value: usd(now.cost_nusd), trend: trend(now.cost_nusd, before.cost_nusd, days) },
        Headline { label: "Tokens", value: count(tokens(now)), trend: trend(tokens(now), tokens(before), days) },
        Headline {
            label: "Cache hits",
            value: ratio(now),
            trend: format!("{} the previous {days} days", ratio(before)),
        },
        Headline {
            label: "Sessions",
            value: count(now.sessions_started),
            trend: trend(now.sessions_started, before.sessions_started, days),
        },
        Headline {
            label: "Active time",
            value: hours(read.activity.active_ms),
            trend: trend(read.activity.active_ms, read.activity_before.active_ms, days),
        },
    ];
    // Every day of the period; a day of fewer people than the minimum is in "other".
    let spent: std::collections::HashMap<String, i64> =
        read.by_day.iter().filter_map(|row| row.key.as_ref().map(|day| (day.clone(), row.figures.cost_nusd))).collect();
    let (mut bars, mut per_day) = (Vec::new(), Vec::new());
    let mut day = period.from_ms;
    while day < period.to_ms {
        let date = crate::model::rfc3339_ms(day)[..10].to_string();
        let cost = spent.get(&day.to_string()).copied();
        bars.push(crate::charts::Bar {
            label: date[5..].to_string(),
            hover: format!("{date}: {}", cost.map_or("too few people to show".into(), usd)),
            value: cost.map_or(0.0, nusd_to_usd),
        });
        per_day.push((date, cost.map_or("—".into(), usd)));
        day += 86_400_000;
    }
    if let Some(other) = read.by_day.iter().find(|row| row.key.is_none()) {
        per_day.push(("days with too few people, together".into(), usd(other.figures.cost_nusd)));
    }
    let chart = crate::charts::bars("Spend per day (USD)", &bars, |v| format!("${v:.2}"), 900, 220);
    Shown {
        headlines,
        chart,
        per_day,
        agents: lines(&read.agents, now.cost_nusd, "(no agent)"),
        models: lines(&read.models, now.cost_nusd, "(no model)"),
        tools: read
            .tools
            .iter()
            .map(|row| ToolLine {
                tool: if row.key.is_none() { OTHER.into() } else { row.figures.tool.clone() },
                server: row.figures.tool_server.clone(),
                calls: row.figures.calls,
                errors: row.figures.errors,
                denials: row.figures.denials,
                people: row.people,
            })
            .collect(),
        teams: lines(&read.teams, now.cost_nusd, "(no team)"),
    }
}

/// One table of the overview as CSV (`table` names it), or a 400 naming `table`.
pub fn csv(shown: &Shown, table: &str, file: &str) -> Result<Response, PageError> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let line_rows = |writer: &mut csv::Writer<Vec<u8>>, what: &str, lines: &[Line]| {
        let _ = writer.write_record(crate::model::csv_cells::record([
            what,
            "spend_usd",
            "share",
            "tokens",
            "sessions",
            "people",
        ]));
        for l in lines {
            let cost = l.cost.replace(['$', ','], "");
            let _ = writer.write_record(crate::model::csv_cells::record([
                l.name.as_str(),
                &cost,
                &l.share,
                &l.tokens.replace(',', ""),
                &l.sessions.to_string(),
                &l.people.to_string(),
            ]));
        }
    };
    match table {
        "days" => {
            let _ = writer.write_record(crate::model::csv_cells::record(["day", "spend_usd"]));
            for (day, cost) in &shown.per_day {
                let _ =
                    writer.write_record(crate::model::csv_cells::record([day.as_str(), &cost.replace(['$', ','], "")]));
            }
        }
        "agents" => line_rows(&mut writer, "agent", &shown.agents),
        "models" => line_rows(&mut writer, "model", &shown.models),
        "teams" => line_rows(&mut writer, "team", &shown.teams),
        "tools" => {
            let _ = writer.write_record(crate::model::csv_cells::record([
                "tool", "server", "calls", "errors", "denials", "people",
            ]));
            for t in &shown.tools {
                let _ = writer.write_record(crate::model::csv_cells::record([
                    t.tool.as_str(),
                    &t.server,
                    &t.calls.to_string(),
                    &t.errors.to_string(),
                    &t.denials.to_string(),
                    &t.people.to_string(),
                ]));
            }
        }
        other => {
            return Err(PageError(AppError::bad_request(
                "table",
                format!("table must be one of days, agents, models, tools, teams, not {other:?}"),
            )));
        }
    }
    Ok(super::report::csv_download(&format!("{file}-{table}.csv"), writer.into_inner().unwrap_or_default()))
}

//! The calendar month, for finance: a subject's (the organisation's or a team's) spend
//! month to date (UTC), the forecast to the month's end two ways (linear on the month
//! so far; and on the weekday pattern, each remaining day costing what that weekday
//! cost on average over the last eight weeks), the people active this month, for the
//! cost per active developer; and past calendar months side by side ([`past_months`]).
//!
//! Invariants: read from the aggregates only (`query::totals`,
//! `query::active_people`), interactive runs only as every figure of `/org`; the
//! caller applies the minimum group size to `active_people` before showing anything.

use chrono::{Datelike, TimeZone, Utc};
use rusqlite::Connection;

use super::query::{self, Period, Subject};
use crate::db::DbError;

const DAY_MS: i64 = 86_400_000;
/// Weeks of history the weekday pattern averages.
const PATTERN_WEEKS: i64 = 8;

#[derive(Clone, Debug, PartialEq)]
pub struct MonthToDate {
    /// `2026-11`.
    pub month: String,
    pub spent_nusd: i64,
    /// Days of the month gone, with the part of today.
    pub days_elapsed: f64,
    pub days_in_month: i64,
    /// `spent / days_elapsed × days_in_month`.
    pub linear_nusd: i64,
    /// `spent` plus each remaining day at its weekday's mean of the last 8 weeks.
    pub weekday_nusd: i64,
    /// People with interactive activity this month.
    pub active_people: usize,
}

impl MonthToDate {
    /// The forecast's range: the lower and higher of the two ways.
    pub fn range_nusd(&self) -> (i64, i64) {
        (self.linear_nusd.min(self.weekday_nusd), self.linear_nusd.max(self.weekday_nusd))
    }
}

/// The first millisecond of the UTC month of `now_ms`, and of the next.
pub fn month_bounds(now_ms: i64) -> (i64, i64) {
    let now = Utc.timestamp_millis_opt(now_ms).single().unwrap_or_default();
    let first = Utc.with_ymd_and_hms(now.year(), now.month(), 1, 0, 0, 0).single().unwrap_or(now);
    let (year, month) = if now.month() == 12 { (now.year() + 1, 1) } else { (now.year(), now.month() + 1) };
    let next = Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0).single().unwrap_or(now);
    (first.timestamp_millis(), next.timestamp_millis())
}

/// The organisation's month to date at `now_ms`.
pub fn organisation(conn: &Connection, now_ms: i64) -> Result<MonthToDate, DbError> {
    to_date(conn, &Subject::Organisation, now_ms)
}

/// The subject's month to date at `now_ms`.
pub fn to_date(conn: &Connection, subject: &Subject, now_ms: i64) -> Result<MonthToDate, DbError> {
    let (start_ms, end_ms) = month_bounds(now_ms);
    let so_far = Period { from_ms: start_ms, to_ms: now_ms.max(start_ms + 1) };
    let spent = query::totals(conn, subject, so_far)?.cost_nusd;
    let days_in_month = (end_ms - start_ms) / DAY_MS;
    let days_elapsed = ((now_ms - start_ms) as f64 / DAY_MS as f64).max(1.0 / 24.0);
    let linear = (spent as f64 / days_elapsed * days_in_month as f64).round() as i64;

    // Each weekday's mean over the last eight weeks of whole days before today.
    let today_ms = now_ms.div_euclid(DAY_MS) * DAY_MS;
    let mut by_weekday = [(0i64, 0i64); 7];
    for back in 1..=PATTERN_WEEKS * 7 {
        let day = today_ms - back * DAY_MS;
        let cost = query::totals(conn, subject, Period { from_ms: day, to_ms: day + DAY_MS })?.cost_nusd;
        let slot = &mut by_weekday[weekday(day)];
        *slot = (slot.0 + cost, slot.1 + 1);
    }
    let mean = |day: i64| {
        let (sum, n) = by_weekday[weekday(day)];
        if n > 0 { sum as f64 / n as f64 } else { 0.0 }
    };
    let rest_of_today = (today_ms + DAY_MS - now_ms) as f64 / DAY_MS as f64;
    let mut remaining = mean(today_ms) * rest_of_today;
    let mut day = today_ms + DAY_MS;
    while day < end_ms {
        remaining += mean(day);
        day += DAY_MS;
    }
    let active_people = query::active_people(conn, subject, so_far)? as usize;
    Ok(MonthToDate {
        month: Utc.timestamp_millis_opt(start_ms).single().unwrap_or_default().format("%Y-%m").to_string(),
        spent_nusd: spent,
        days_elapsed,
        days_in_month,
        linear_nusd: linear,
        weekday_nusd: spent + remaining.round() as i64,
        active_people,
    })
}

/// One calendar month of a subject, as finance compares months.
#[derive(Clone, Debug, PartialEq)]
pub struct MonthFigures {
    /// `2026-11`.
    pub month: String,
    pub period: Period,
    /// The month is not over: its figures are to date.
    pub to_date: bool,
    pub spent_nusd: i64,
    pub active_people: i64,
}

/// The last `count` calendar months of the subject, the current one (to date) first.
pub fn past_months(
    conn: &Connection,
    subject: &Subject,
    now_ms: i64,
    count: usize,
) -> Result<Vec<MonthFigures>, DbError> {
    let mut months = Vec::with_capacity(count);
    let (mut start_ms, mut end_ms) = month_bounds(now_ms);
    for index in 0..count {
        let period = Period { from_ms: start_ms, to_ms: if index == 0 { now_ms.max(start_ms + 1) } else { end_ms } };
        months.push(MonthFigures {
            month: Utc.timestamp_millis_opt(start_ms).single().unwrap_or_default().format("%Y-%m").to_string(),
            period,
            to_date: index == 0,
            spent_nusd: query::totals(conn, subject, period)?.cost_nusd,
            active_people: query::active_people(conn, subject, period)?,
        });
        (start_ms, end_ms) = (month_bounds(start_ms - 1).0, start_ms);
    }
    Ok(months)
}

/// 0 for Monday … 6 for Sunday, of the UTC day containing `ms`.
fn weekday(ms: i64) -> usize {
    // 1970-01-01 was a Thursday (3).
    ((ms.div_euclid(DAY_MS) + 3).rem_euclid(7)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_are_bounded_in_utc_and_weekdays_counted_from_monday() {
        // 2026-11-27T12:00:00Z, a Friday.
        let now = 1_795_780_800_000;
        let (start, end) = month_bounds(now);
        assert_eq!(crate::model::rfc3339_ms(start), "2026-11-01T00:00:00.000Z");
        assert_eq!(crate::model::rfc3339_ms(end), "2026-12-01T00:00:00.000Z");
        assert_eq!(weekday(now), 4);
        let (_, after_december) = month_bounds(now + 30 * DAY_MS);
        assert_eq!(crate::model::rfc3339_ms(after_december), "2027-01-01T00:00:00.000Z");
    }

    #[test]
    fn past_months_step_back_through_the_year_boundary() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::db::migrations::SCHEMA_SQL).unwrap();
        // 2026-02-10T00:00:00Z.
        let now = 1_770_681_600_000;
        let months = past_months(&conn, &Subject::Organisation, now, 3).unwrap();
        let labels: Vec<_> = months.iter().map(|m| (m.month.as_str(), m.to_date)).collect();
        assert_eq!(labels, [("2026-02", true), ("2026-01", false), ("2025-12", false)]);
        assert_eq!(months[0].period.to_ms, now, "the current month ends now");
        assert_eq!(crate::model::rfc3339_ms(months[2].period.to_ms), "2026-01-01T00:00:00.000Z");
        assert_eq!(crate::model::rfc3339_ms(months[2].period.from_ms), "2025-12-01T00:00:00.000Z");
    }
}

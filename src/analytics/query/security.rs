//! Security figures: from the daily sessions aggregate, how much of the agents' work ran
//! in the permission modes that skip the person's approval (`bypass`, `auto`, and the
//! others beside them), over a subject or per team group; from the redactions aggregate,
//! the secrets taken out of event metadata by rule, at the hook and at ingest.
//! Interactive runs only.
//!
//! Invariants: a count of people below `min_people` is [`PeopleCount::FewerThan`]; per
//! team, groups of fewer people fold into "other" (`groups::fold`); a person in several
//! teams counts once in a subject's figures.

use std::collections::BTreeSet;

use rusqlite::{Connection, params_from_iter};

use super::adoption::PeopleCount;
use super::disclosure::Disclosure;
use super::groups::{GroupRow, TeamGroup, fold, members_of};
use super::{Period, Subject, parameters, subject_filter};
use crate::db::DbError;

/// The permission modes, in the aggregate's column order.
pub const MODES: [&str; 6] = ["normal", "plan", "accept_edits", "auto", "dont_ask", "bypass"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Modes {
    /// Events in each mode.
    pub events: [i64; 6],
    /// People with any event in each mode.
    pub people: [PeopleCount; 6],
}

/// Each person's day once (the aggregate repeats a person for each of their teams).
fn per_person_day(filter: &str) -> String {
    format!(
        "SELECT user_id, max(mode_normal) AS m0, max(mode_plan) AS m1, max(mode_accept_edits) AS m2,
                max(mode_auto) AS m3, max(mode_dont_ask) AS m4, max(mode_bypass) AS m5
         FROM agg_sessions_daily WHERE {filter} AND day_start_ms >= ? AND day_start_ms < ?
         GROUP BY day_start_ms, user_id"
    )
}

pub fn modes(conn: &Connection, subject: &Subject, period: Period, min_people: i64) -> Result<Modes, DbError> {
    let (filter, values) = subject_filter(subject);
    let sql = format!(
        "SELECT coalesce(sum(m0), 0), coalesce(sum(m1), 0), coalesce(sum(m2), 0), coalesce(sum(m3), 0),
                coalesce(sum(m4), 0), coalesce(sum(m5), 0),
                count(DISTINCT CASE WHEN m0 > 0 THEN user_id END), count(DISTINCT CASE WHEN m1 > 0 THEN user_id END),
                count(DISTINCT CASE WHEN m2 > 0 THEN user_id END), count(DISTINCT CASE WHEN m3 > 0 THEN user_id END),
                count(DISTINCT CASE WHEN m4 > 0 THEN user_id END), count(DISTINCT CASE WHEN m5 > 0 THEN user_id END)
         FROM ({})",
        per_person_day(filter)
    );
    Ok(conn.query_row(&sql, params_from_iter(parameters(values, period)), |row| {
        let mut events = [0i64; 6];
        let mut people = [PeopleCount::Shown(0); 6];
        for i in 0..6 {
            events[i] = row.get(i)?;
            people[i] = PeopleCount::of(row.get(6 + i)?, min_people);
        }
        Ok(Modes { events, people })
    })?)
}

/// Events in each mode per team group, the most first: only the groups `disclosure`
/// lets be shown for the people with mode events in the period, and no "other" row.
pub fn modes_per_team(
    conn: &Connection,
    groups: &[TeamGroup],
    period: Period,
    min_people: i64,
) -> Result<Vec<GroupRow<[i64; 6]>>, DbError> {
    let members = members_of(conn, groups)?;
    let mut tallies: Vec<([i64; 6], BTreeSet<String>)> = members.iter().map(|_| Default::default()).collect();
    let mut active = BTreeSet::new();
    let sql = format!("SELECT user_id, m0, m1, m2, m3, m4, m5 FROM ({})", per_person_day("1 = 1"));
    let mut stmt = conn.prepare(&sql)?;
    let mut found = stmt.query(params_from_iter(parameters(Vec::new(), period)))?;
    while let Some(row) = found.next()? {
        let user: String = row.get(0)?;
        let mut events = [0i64; 6];
        for (i, value) in events.iter_mut().enumerate() {
            *value = row.get(1 + i)?;
        }
        for ((_, ids), (sum, people)) in members.iter().zip(tallies.iter_mut()) {
            if ids.contains(&user) {
                sum.iter_mut().zip(events).for_each(|(into, more)| *into += more);
                people.insert(user.clone());
            }
        }
        active.insert(user);
    }
    let disclosure = Disclosure::of_people(conn, &active, min_people)?;
    let mut rows: Vec<GroupRow<[i64; 6]>> = groups
        .iter()
        .zip(members)
        .zip(tallies)
        .filter(|((group, _), (_, people))| !people.is_empty() && disclosure.allows_group(group))
        .map(|((_, (label, _)), (events, people))| GroupRow {
            key: Some(label),
            figures: events,
            people: people.len() as i64,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.figures.iter().sum::<i64>().cmp(&a.figures.iter().sum::<i64>()).then_with(|| a.key.cmp(&b.key))
    });
    Ok(rows)
}

/// Secrets redacted by rule: (caught at the hook, caught at ingest), the most first,
/// rules of fewer than `min_people` people folded into the last row.
pub fn redactions(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    min_people: i64,
) -> Result<Vec<GroupRow<(i64, i64)>>, DbError> {
    let (filter, values) = subject_filter(subject);
    let sql = format!(
        "SELECT rule, user_id, hook_hits, ingest_hits FROM agg_redactions_daily
         WHERE {filter} AND day_start_ms >= ? AND day_start_ms < ?"
    );
    let mut rules: std::collections::HashMap<String, ((i64, i64), BTreeSet<String>)> = Default::default();
    let mut stmt = conn.prepare(&sql)?;
    let mut found = stmt.query(params_from_iter(parameters(values, period)))?;
    while let Some(row) = found.next()? {
        let (rule, user): (String, String) = (row.get(0)?, row.get(1)?);
        let ((hook, ingest), people) = rules.entry(rule).or_default();
        *hook += row.get::<_, i64>(2)?;
        *ingest += row.get::<_, i64>(3)?;
        people.insert(user);
    }
    let mut rows: Vec<(String, (i64, i64), BTreeSet<String>)> =
        rules.into_iter().map(|(rule, (hits, people))| (rule, hits, people)).collect();
    rows.sort_by(|a, b| (b.1.0 + b.1.1).cmp(&(a.1.0 + a.1.1)).then_with(|| a.0.cmp(&b.0)));
    let add = |into: &mut (i64, i64), more: &(i64, i64)| {
        into.0 += more.0;
        into.1 += more.1;
    };
    Ok(fold(rows, min_people, add, |hits| hits.0 + hits.1))
}

//! Adoption: how many people use agents, week by week, how many came to them in the
//! period, and how many agents each uses, for a team (with the teams below it) or the
//! organisation. Read from the daily aggregates (`agg_sessions_daily`, `agg_tools_daily`),
//! interactive runs only.
//!
//! Invariants: every figure is a count of people or of their sessions; a count of fewer
//! than `min_people` people is returned as [`PeopleCount::FewerThan`], never as its
//! number, so a page cannot show it; the user ids stay in this module.

use rusqlite::{Connection, params_from_iter};

use super::{Period, Subject, parameters, subject_filter};
use crate::db::DbError;

const WEEK_MS: i64 = 7 * 86_400_000;

/// A count of people, or that it is too small to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeopleCount {
    Shown(i64),
    /// Fewer than this many (but possibly none).
    FewerThan(i64),
    /// Not small itself, but withheld beside one that is (see [`partition`]).
    Withheld,
}

impl PeopleCount {
    pub fn of(people: i64, min_people: i64) -> PeopleCount {
        if people >= min_people { PeopleCount::Shown(people) } else { PeopleCount::FewerThan(min_people) }
    }
}

/// One week of the period (the last may be shorter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Week {
    pub start_ms: i64,
    pub people: PeopleCount,
    /// Sessions of the week, each person's counted once whatever their teams.
    pub sessions: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adoption {
    /// People in the subject (team members below it, or every enabled account).
    pub members: i64,
    pub active: PeopleCount,
    pub weeks: Vec<Week>,
    /// People whose first interactive session ever falls in the period.
    pub newcomers: PeopleCount,
    /// People active in at least half the period's weeks.
    pub steady: PeopleCount,
    /// People by how many agents they used: one, two, three or more.
    pub by_agent_count: [PeopleCount; 3],
}

/// Counts of people that split one shown whole (each person in exactly one): a count of
/// fewer than `min_people` is withheld, and so are the smallest shown ones until what is
/// withheld together is none or at least `min_people`, so the whole minus the shown counts
/// never gives a small one away.
pub fn partition<const N: usize>(counts: [i64; N], min_people: i64) -> [PeopleCount; N] {
    // None is withheld too (as `PeopleCount::of` does), though it isolates nobody.
    let mut withheld: [bool; N] = counts.map(|people| people < min_people);
    loop {
        let hidden: i64 = counts.iter().zip(&withheld).filter(|(_, w)| **w).map(|(c, _)| c).sum();
        if hidden == 0 || hidden >= min_people {
            break;
        }
        let smallest_shown = (0..N).filter(|&i| !withheld[i] && counts[i] > 0).min_by_key(|&i| (counts[i], i));
        match smallest_shown {
            Some(i) => withheld[i] = true,
            None => break,
        }
    }
    std::array::from_fn(|i| {
        if !withheld[i] {
            PeopleCount::Shown(counts[i])
        } else if counts[i] < min_people {
            PeopleCount::FewerThan(min_people)
        } else {
            PeopleCount::Withheld
        }
    })
}

/// Who is in the subject: its members' count.
fn members(conn: &Connection, subject: &Subject) -> Result<i64, DbError> {
    let (filter, values) = subject_filter(subject);
    let sql =
        format!("SELECT count(*) FROM users WHERE disabled_at_ms IS NULL AND {}", filter.replacen("user_id", "id", 1));
    Ok(conn.query_row(&sql, params_from_iter(values), |row| row.get(0))?)
}

pub fn read(conn: &Connection, subject: &Subject, period: Period, min_people: i64) -> Result<Adoption, DbError> {
    let (filter, values) = subject_filter(subject);
    // Each person's days, once (the aggregate repeats a person for each of their teams).
    let sql = format!(
        "SELECT user_id, day_start_ms, max(sessions) FROM agg_sessions_daily
         WHERE {filter} AND day_start_ms >= ? AND day_start_ms < ? AND sessions > 0
         GROUP BY user_id, day_start_ms"
    );
    let mut stmt = conn.prepare(&sql)?;
    let days: Vec<(String, i64, i64)> = stmt
        .query_map(params_from_iter(parameters(values.clone(), period)), |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })?
        .collect::<Result<_, _>>()?;
    let week_count = ((period.to_ms - period.from_ms) + WEEK_MS - 1) / WEEK_MS;
    let mut week_people = vec![std::collections::BTreeSet::<&str>::new(); week_count as usize];
    let mut week_sessions = vec![0i64; week_count as usize];
    let mut weeks_of: std::collections::BTreeMap<&str, std::collections::BTreeSet<i64>> = Default::default();
    for (user, day, sessions) in &days {
        let week = ((day - period.from_ms) / WEEK_MS).clamp(0, week_count - 1);
        week_people[week as usize].insert(user);
        week_sessions[week as usize] += sessions;
        weeks_of.entry(user).or_default().insert(week);
    }
    let weeks = (0..week_count)
        .map(|w| Week {
            start_ms: period.from_ms + w * WEEK_MS,
            people: PeopleCount::of(week_people[w as usize].len() as i64, min_people),
            sessions: week_sessions[w as usize],
        })
        .collect();
    let steady = weeks_of.values().filter(|weeks| weeks.len() as i64 * 2 >= week_count).count() as i64;

    // Newcomers: first day ever within the period.
    let sql = format!(
        "SELECT count(*) FROM (SELECT min(day_start_ms) AS first FROM agg_sessions_daily
                                WHERE {filter} AND sessions > 0 GROUP BY user_id)
         WHERE first >= ? AND first < ?"
    );
    let newcomers: i64 =
        conn.query_row(&sql, params_from_iter(parameters(values.clone(), period)), |row| row.get(0))?;

    // Agents per person, from the tool calls of the period.
    let sql = format!(
        "SELECT n, count(*) FROM (SELECT count(DISTINCT agent_type) AS n FROM agg_tools_daily
                                  WHERE {filter} AND day_start_ms >= ? AND day_start_ms < ? GROUP BY user_id)
         GROUP BY n"
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut by_agents = [0i64; 3];
    for row in stmt.query_map(params_from_iter(parameters(values, period)), |row| {
        Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
    })? {
        let (agents, people) = row?;
        by_agents[(agents.clamp(1, 3) - 1) as usize] += people;
    }
    Ok(Adoption {
        members: members(conn, subject)?,
        active: PeopleCount::of(weeks_of.len() as i64, min_people),
        weeks,
        newcomers: PeopleCount::of(newcomers, min_people),
        steady: PeopleCount::of(steady, min_people),
        by_agent_count: partition(by_agents, min_people),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_count_beside_shown_ones_takes_the_smallest_shown_with_it() {
        use PeopleCount::*;
        // 40 people: 30 + 8 + 2. The 2 alone would be 40 − 30 − 8.
        assert_eq!(partition([30, 8, 2], 5), [Shown(30), Withheld, FewerThan(5)]);
        // Two small ones together are enough on their own.
        assert_eq!(partition([30, 3, 3], 5), [Shown(30), FewerThan(5), FewerThan(5)]);
        assert_eq!(partition([30, 8, 0], 5), [Shown(30), Shown(8), FewerThan(5)], "none isolates nobody");
        assert_eq!(partition([3, 0, 0], 5), [FewerThan(5), FewerThan(5), FewerThan(5)]);
    }

    proptest::proptest! {
        /// The whole minus the shown counts is none or at least the minimum.
        #[test]
        fn the_whole_minus_what_is_shown_never_isolates_a_small_count(
            counts in proptest::array::uniform3(0i64..20),
            min in 2i64..7,
        ) {
            // A whole of fewer is itself withheld on the page.
            proptest::prop_assume!(counts.iter().sum::<i64>() >= min);
            let shown = partition(counts, min);
            let visible: i64 = shown.iter().map(|c| if let PeopleCount::Shown(n) = c { *n } else { 0 }).sum();
            let left = counts.iter().sum::<i64>() - visible;
            proptest::prop_assert!(left == 0 || left >= min, "{:?} -> {:?}", counts, shown);
            for (count, shown) in counts.iter().zip(shown) {
                if let PeopleCount::Shown(n) = shown {
                    proptest::prop_assert!(n == *count && n >= min);
                }
            }
        }
    }
}

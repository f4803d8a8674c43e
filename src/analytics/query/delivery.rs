//! Delivery and return on spend, from the GitHub app's tables (`pull_requests`,
//! `pr_rollups`; read here, written only by `github`): pull requests merged in the period,
//! those with linked interactive agent sessions beside those with CI agent runs only and
//! those with neither, per repository or team; and cost per merged pull request, per
//! changed line and per unit of business value (the Jira issue's), per team or agent.
//!
//! Invariants: a row describes the pull requests of at least `min_people` distinct
//! authors (the fold of `groups`); within a shown row, a kind of pull request by fewer
//! authors is withheld ([`Kind::withheld`]), and no total is returned beside the kinds,
//! so a withheld figure cannot be had by subtraction. A pull request's author is its
//! Sightline account, else its GitHub login. Figures of agent sessions are interactive
//! runs only (the rollups keep CI runs apart).

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{Connection, params_from_iter};

use super::disclosure::Disclosure;
use super::groups::{GroupRow, TeamGroup, fold, members_of};
use super::{Period, Subject, parameters, subject_filter};
use crate::db::DbError;

mod returns;
pub use returns::{Outcome, Return};

/// The kinds of merged pull request, by the agent sessions linked to them.
pub const KINDS: [&str; 3] = ["with agent sessions", "CI agent runs only", "without agent sessions"];

/// The figures of one kind of pull request in a row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kind {
    pub merged: i64,
    pub median_time_to_merge_ms: Option<i64>,
    pub check_failures: i64,
    pub reverted: i64,
    /// True when fewer than the minimum number of authors merged pull requests of this
    /// kind: its figures are zero and must be shown as withheld.
    pub withheld: bool,
}

/// A delivery row: the three kinds side by side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub kinds: [Kind; 3],
}

/// One merged pull request as the figures need it.
struct Merged {
    repo: String,
    author: String,
    user_id: Option<String>,
    kind: usize,
    time_to_merge_ms: i64,
    check_failures: i64,
    reverted: bool,
    agents: Vec<String>,
    cost_nusd: i64,
    changed_lines: i64,
    /// The business value of its Jira issue, when it has one.
    value: Option<f64>,
}

/// The pull requests merged in the period, of the subject's authors (a team's: those
/// with a Sightline account in it).
fn merged(conn: &Connection, subject: &Subject, period: Period) -> Result<Vec<Merged>, DbError> {
    let (filter, values) = subject_filter(subject);
    let filter = filter.replacen("user_id", "p.user_id", 1);
    let sql = format!(
        "SELECT r.full_name, coalesce(p.user_id, 'github:' || coalesce(p.author_login, '?')), p.user_id,
                coalesce(ro.sessions, 0), coalesce(ro.ci_sessions, 0), p.merged_at_ms - p.created_at_ms,
                p.check_failures_count, p.reverted_by_number IS NOT NULL OR coalesce(ro.reverted, 0) = 1,
                coalesce(ro.agents, ''), coalesce(ro.cost_nusd, 0), p.additions + p.deletions, j.business_value
         FROM pull_requests p JOIN repos r ON r.id = p.repo_id LEFT JOIN pr_rollups ro ON ro.pr_id = p.id
         LEFT JOIN jira_issues j ON j.key = upper(p.issue_key) AND j.found = 1
         WHERE p.state = 'merged' AND {filter} AND p.merged_at_ms >= ? AND p.merged_at_ms < ?"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(parameters(values, period)), |row| {
        let (sessions, ci_sessions): (i64, i64) = (row.get(3)?, row.get(4)?);
        let agents: String = row.get(8)?;
        Ok(Merged {
            repo: row.get(0)?,
            author: row.get(1)?,
            user_id: row.get(2)?,
            kind: if sessions > 0 {
                0
            } else if ci_sessions > 0 {
                1
            } else {
                2
            },
            time_to_merge_ms: row.get::<_, i64>(5)?.max(0),
            check_failures: row.get(6)?,
            reverted: row.get(7)?,
            agents: agents.split(',').filter(|a| !a.is_empty()).map(str::to_string).collect(),
            cost_nusd: row.get(9)?,
            changed_lines: row.get(10)?,
            value: row.get::<_, Option<f64>>(11)?.filter(|v| v.is_finite() && *v > 0.0),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// What a row adds up before it is folded and shown.
#[derive(Clone, Default)]
struct KindSum {
    merged: i64,
    times: Vec<i64>,
    check_failures: i64,
    reverted: i64,
    authors: BTreeSet<String>,
}

fn median(values: &mut [i64]) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2 })
}

fn deliveries(groups: BTreeMap<String, Vec<&Merged>>, min_people: i64) -> Vec<GroupRow<Delivery>> {
    let rows = groups
        .into_iter()
        .map(|(key, prs)| {
            let mut sums: [KindSum; 3] = Default::default();
            for pr in &prs {
                let sum = &mut sums[pr.kind];
                sum.merged += 1;
                sum.times.push(pr.time_to_merge_ms);
                sum.check_failures += pr.check_failures;
                sum.reverted += i64::from(pr.reverted);
                sum.authors.insert(pr.author.clone());
            }
            let authors = prs.iter().map(|pr| pr.author.clone()).collect::<BTreeSet<_>>();
            (key, sums, authors)
        })
        .collect::<Vec<_>>();
    let mut rows = rows;
    rows.sort_by(|a, b| {
        let merged = |s: &[KindSum; 3]| s.iter().map(|k| k.merged).sum::<i64>();
        merged(&b.1).cmp(&merged(&a.1)).then_with(|| a.0.cmp(&b.0))
    });
    let add = |into: &mut [KindSum; 3], more: &[KindSum; 3]| {
        for (into, more) in into.iter_mut().zip(more) {
            into.merged += more.merged;
            into.times.extend_from_slice(&more.times);
            into.check_failures += more.check_failures;
            into.reverted += more.reverted;
            into.authors.extend(more.authors.iter().cloned());
        }
    };
    let folded = fold(rows, min_people, add, |sums| sums.iter().map(|k| k.merged).sum());
    folded
        .into_iter()
        .map(|row| GroupRow {
            key: row.key,
            people: row.people,
            figures: Delivery {
                kinds: row.figures.map(|mut sum| {
                    if sum.merged > 0 && (sum.authors.len() as i64) < min_people {
                        return Kind { withheld: true, ..Kind::default() };
                    }
                    Kind {
                        merged: sum.merged,
                        median_time_to_merge_ms: median(&mut sum.times),
                        check_failures: sum.check_failures,
                        reverted: sum.reverted,
                        withheld: false,
                    }
                }),
            },
        })
        .collect()
}

/// The pull requests of the subject's authors merged in a period, read once for every
/// table a page makes of them. The authors stay inside: the tables give counts.
pub struct MergedPulls(Vec<Merged>);

impl MergedPulls {
    pub fn read(conn: &Connection, subject: &Subject, period: Period) -> Result<MergedPulls, DbError> {
        Ok(MergedPulls(merged(conn, subject, period)?))
    }

    /// Per team group, the pull requests of its members (a person in two groups counts
    /// in both; authors without a Sightline account are in none); only those with agent
    /// sessions when `with_sessions_only`. Only the groups `disclosure` lets be shown for
    /// these authors are there, so the breakdown needs no "other" row.
    fn per_team(
        &self,
        conn: &Connection,
        teams: &[TeamGroup],
        with_sessions_only: bool,
        min_people: i64,
    ) -> Result<BTreeMap<String, Vec<&Merged>>, DbError> {
        let members = members_of(conn, teams)?;
        let counted: Vec<&Merged> = self.0.iter().filter(|pr| !with_sessions_only || pr.kind == 0).collect();
        let authors: BTreeSet<String> = counted.iter().filter_map(|pr| pr.user_id.clone()).collect();
        let disclosure = Disclosure::of_people(conn, &authors, min_people)?;
        let mut groups: BTreeMap<String, Vec<&Merged>> = BTreeMap::new();
        for pr in counted {
            for (group, (label, ids)) in teams.iter().zip(&members) {
                if disclosure.allows_group(group) && pr.user_id.as_ref().is_some_and(|id| ids.contains(id)) {
                    groups.entry(label.clone()).or_default().push(pr);
                }
            }
        }
        Ok(groups)
    }

    /// Merged pull requests per repository, the kinds side by side, the busiest first.
    pub fn by_repository(&self, min_people: i64) -> Vec<GroupRow<Delivery>> {
        let mut groups: BTreeMap<String, Vec<&Merged>> = BTreeMap::new();
        for pr in &self.0 {
            groups.entry(pr.repo.clone()).or_default().push(pr);
        }
        deliveries(groups, min_people)
    }

    /// Merged pull requests per team group, the kinds side by side.
    pub fn by_team(
        &self,
        conn: &Connection,
        teams: &[TeamGroup],
        min_people: i64,
    ) -> Result<Vec<GroupRow<Delivery>>, DbError> {
        Ok(deliveries(self.per_team(conn, teams, false, min_people)?, min_people))
    }
}

/// One pull request of a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullRequestLine {
    pub repo: String,
    pub number: i64,
    pub title: String,
    pub state: String,
    pub author_user_id: String,
    pub updated_at_ms: i64,
    pub merged_at_ms: Option<i64>,
    pub sessions: i64,
    pub cost_nusd: i64,
}

/// The pull requests of these authors opened, merged or updated in the period, the
/// newest first (at most `limit`). The caller decides whose it may list.
pub fn pull_requests_of(
    conn: &Connection,
    authors: &[String],
    period: Period,
    limit: i64,
) -> Result<Vec<PullRequestLine>, DbError> {
    if authors.is_empty() {
        return Ok(Vec::new());
    }
    let marks = vec!["?"; authors.len()].join(", ");
    let sql = format!(
        "SELECT r.full_name, p.number, p.title, p.state, p.user_id, p.updated_at_ms, p.merged_at_ms,
                coalesce(ro.sessions, 0), coalesce(ro.cost_nusd, 0)
         FROM pull_requests p JOIN repos r ON r.id = p.repo_id LEFT JOIN pr_rollups ro ON ro.pr_id = p.id
         WHERE p.user_id IN ({marks}) AND p.updated_at_ms >= ? AND p.created_at_ms < ?
         ORDER BY p.updated_at_ms DESC LIMIT {limit}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(parameters(authors.to_vec(), period)), |row| {
        Ok(PullRequestLine {
            repo: row.get(0)?,
            number: row.get(1)?,
            title: row.get(2)?,
            state: row.get(3)?,
            author_user_id: row.get(4)?,
            updated_at_ms: row.get(5)?,
            merged_at_ms: row.get(6)?,
            sessions: row.get(7)?,
            cost_nusd: row.get(8)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr(repo: &str, author: &str, kind: usize) -> Merged {
        Merged {
            repo: repo.into(),
            author: author.into(),
            user_id: Some(author.into()),
            kind,
            time_to_merge_ms: 3_600_000,
            check_failures: 1,
            reverted: false,
            agents: vec!["claude_code".into()],
            cost_nusd: 1_000,
            changed_lines: 10,
            value: None,
        }
    }

    /// A kind of pull request by fewer authors than the minimum is withheld inside a
    /// shown row, and no row covers fewer authors than the minimum.
    #[test]
    fn small_kinds_are_withheld_and_small_rows_fold() {
        let prs: Vec<Merged> = (0..5)
            .map(|i| pr("big", &format!("u{i}"), 0))
            .chain((5..10).map(|i| pr("big2", &format!("u{i}"), 0)))
            .chain([pr("big", "u0", 2), pr("small", "u10", 0)])
            .collect();
        let mut groups: BTreeMap<String, Vec<&Merged>> = BTreeMap::new();
        for p in &prs {
            groups.entry(p.repo.clone()).or_default().push(p);
        }
        let rows = deliveries(groups, 5);
        // The small repository alone could not make an "other" row of five authors: the
        // smaller of the two others joins it.
        assert_eq!(rows.iter().map(|r| r.key.as_deref()).collect::<Vec<_>>(), [Some("big"), None]);
        assert_eq!((rows[1].people, rows[1].figures.kinds[0].merged), (6, 6));
        let big = &rows[0];
        assert_eq!(big.key.as_deref(), Some("big"));
        assert_eq!(big.figures.kinds[0].merged, 5);
        assert_eq!(big.figures.kinds[0].median_time_to_merge_ms, Some(3_600_000));
        assert!(big.figures.kinds[2].withheld);
        assert_eq!(big.figures.kinds[2].merged, 0);
        assert!(!big.figures.kinds[1].withheld, "an empty kind is zero, not withheld");
    }

    /// Business value comes from the pull request's Jira issue when Jira knows it and
    /// gives a value; cost per unit of value counts only those pull requests.
    #[test]
    fn cost_per_unit_of_value_counts_only_valued_pull_requests() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::db::migrations::SCHEMA_SQL).unwrap();
        conn.execute("INSERT INTO repos (id, full_name, created_at_ms) VALUES ('r', 'acme/shop', 0)", []).unwrap();
        let values = [("PAY-1", Some(10.0), 1), ("PAY-2", Some(30.0), 1), ("PAY-3", Some(99.0), 0), ("PAY-4", None, 1)];
        for (key, value, found) in values {
            conn.execute(
                "INSERT INTO jira_issues (key, found, summary, business_value, fetched_at_ms) VALUES (?1, ?2, '', ?3, 0)",
                rusqlite::params![key, found, value],
            )
            .unwrap();
        }
        for i in 0..5_i64 {
            let user = format!("u{i}");
            conn.execute(
                "INSERT INTO users (id, email, name, created_at_ms) VALUES (?1, ?1 || '@x.example', ?1, 0)",
                [&user],
            )
            .unwrap();
            let id = format!("acme/shop#{i}");
            conn.execute(
                "INSERT INTO pull_requests (id, repo_id, number, title, user_id, state, base_ref, head_ref,
                                            created_at_ms, updated_at_ms, merged_at_ms, issue_key)
                 VALUES (?1, 'r', ?2, 't', ?3, 'merged', 'main', 'b', 1000, 2000, 2000, ?4)",
                rusqlite::params![id, i, user, format!("pay-{}", i + 1)],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO pr_rollups (pr_id, computed_at_ms, sessions, people, agents, cost_nusd, tokens, ci_sessions,
                                         ci_cost_nusd, check_failures_count, review_rounds, reverted)
                 VALUES (?1, 0, 1, 1, 'claude_code', ?2, 0, 0, 0, 0, 0, 0)",
                rusqlite::params![id, (i + 1) * 1_000_000_000],
            )
            .unwrap();
        }
        let merged = MergedPulls::read(&conn, &Subject::Organisation, Period { from_ms: 0, to_ms: 10_000 }).unwrap();
        // A minimum of two: the two valued authors may be shown.
        let rows = merged.return_by_agent(2);
        let r = &rows[0].figures;
        assert_eq!(
            (r.merged, r.valued, r.value_milli),
            (5, 2, 40_000),
            "PAY-3 is unknown to Jira, PAY-4 and PAY-5 have no value"
        );
        assert_eq!(r.valued_cost_nusd, 3_000_000_000, "$1 and $2 of the valued two");
        assert_eq!(r.per_unit_of_value(), Some(75_000_000), "$3 over 40 units: 7.5 cents a unit");
        assert_eq!(Return::default().per_unit_of_value(), None);
        // Two valued authors are fewer than a minimum of three: the value is withheld.
        let withheld = &merged.return_by_agent(3)[0].figures;
        assert!(withheld.value_withheld && withheld.value_milli == 0 && withheld.valued_cost_nusd == 0);
        assert_eq!((withheld.merged, withheld.cost_nusd), (5, 15_000_000_000), "the row's other figures stay");
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(median(&mut [3, 1, 2]), Some(2));
        assert_eq!(median(&mut [4, 1, 2, 3]), Some(2));
        assert_eq!(median(&mut []), None);
    }
}

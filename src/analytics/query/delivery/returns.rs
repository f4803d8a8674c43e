//! Return on spend: the cost of merged pull requests with linked interactive agent
//! sessions, per merged pull request, changed line and unit of business value (the Jira
//! issue's), per team or agent ([`MergedPulls::return_by_team`], `return_by_agent`), and
//! summed for the organisation ([`MergedPulls::outcome`], what projections are graded on).
//!
//! Invariant: as for delivery, a row describes at least `min_people` authors; inside a
//! row, the value figures are withheld when fewer authors than that have valued pull
//! requests.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Connection;

use super::super::groups::{GroupRow, TeamGroup, fold};
use super::{Merged, MergedPulls};
use crate::db::DbError;

/// Cost of the merged pull requests that had agent sessions, and the business value of
/// those whose Jira issue has one (`jira_issues`, from `sync-jira`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Return {
    pub merged: i64,
    pub cost_nusd: i64,
    pub changed_lines: i64,
    /// How many of them name an issue with a business value.
    pub valued: i64,
    /// Their business value, in thousandths of a unit (exact sums).
    pub value_milli: i64,
    /// The cost of those valued pull requests alone.
    pub valued_cost_nusd: i64,
    /// The authors of the valued pull requests (never shown; the minimum group size).
    pub valued_authors: BTreeSet<String>,
    /// True when fewer authors than the minimum have valued pull requests in the row: the
    /// three value figures are zero and must be shown as withheld.
    pub value_withheld: bool,
}

impl Return {
    pub fn per_pull_request(&self) -> Option<i64> {
        (self.merged > 0).then(|| self.cost_nusd / self.merged)
    }

    pub fn per_changed_line(&self) -> Option<i64> {
        (self.changed_lines > 0).then(|| self.cost_nusd / self.changed_lines)
    }

    /// Cost per unit of business value, over the pull requests that have one.
    pub fn per_unit_of_value(&self) -> Option<i64> {
        (self.value_milli > 0).then(|| (self.valued_cost_nusd as i128 * 1000 / self.value_milli as i128) as i64)
    }
}

impl MergedPulls {
    /// Cost per merged pull request with agent sessions, per team group.
    pub fn return_by_team(
        &self,
        conn: &Connection,
        teams: &[TeamGroup],
        min_people: i64,
    ) -> Result<Vec<GroupRow<Return>>, DbError> {
        Ok(returns(self.per_team(conn, teams, true, min_people)?, min_people))
    }

    /// Cost per merged pull request with agent sessions, per agent (a pull request worked
    /// on with two agents counts in both, with its whole cost).
    pub fn return_by_agent(&self, min_people: i64) -> Vec<GroupRow<Return>> {
        let mut groups: BTreeMap<String, Vec<&Merged>> = BTreeMap::new();
        for pr in self.0.iter().filter(|pr| pr.kind == 0) {
            for agent in &pr.agents {
                groups.entry(agent.clone()).or_default().push(pr);
            }
        }
        returns(groups, min_people)
    }
}

/// The organisation's merged pull requests with interactive agent sessions, summed:
/// what a projection is graded on (never shown per person).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub merged: i64,
    /// Their distinct authors (never shown; the minimum group size).
    pub authors: i64,
    pub reverted: i64,
    pub cost_nusd: i64,
    pub value_milli: i64,
    pub valued_cost_nusd: i64,
}

impl MergedPulls {
    /// All of them together, the pull requests with agent sessions only.
    pub fn outcome(&self) -> Outcome {
        let mut outcome = Outcome::default();
        let mut authors = BTreeSet::new();
        for pr in self.0.iter().filter(|pr| pr.kind == 0) {
            authors.insert(pr.author.as_str());
            outcome.merged += 1;
            outcome.reverted += i64::from(pr.reverted);
            outcome.cost_nusd += pr.cost_nusd;
            if let Some(value) = pr.value {
                outcome.value_milli += (value * 1000.0).round() as i64;
                outcome.valued_cost_nusd += pr.cost_nusd;
            }
        }
        outcome.authors = authors.len() as i64;
        outcome
    }
}

fn returns(groups: BTreeMap<String, Vec<&Merged>>, min_people: i64) -> Vec<GroupRow<Return>> {
    let mut rows: Vec<(String, Return, BTreeSet<String>)> = groups
        .into_iter()
        .map(|(key, prs)| {
            let valued: Vec<&&Merged> = prs.iter().filter(|pr| pr.value.is_some()).collect();
            let figures = Return {
                merged: prs.len() as i64,
                cost_nusd: prs.iter().map(|pr| pr.cost_nusd).sum(),
                changed_lines: prs.iter().map(|pr| pr.changed_lines).sum(),
                valued: valued.len() as i64,
                value_milli: valued.iter().map(|pr| (pr.value.unwrap_or(0.0) * 1000.0).round() as i64).sum(),
                valued_cost_nusd: valued.iter().map(|pr| pr.cost_nusd).sum(),
                valued_authors: valued.iter().map(|pr| pr.author.clone()).collect(),
                value_withheld: false,
            };
            (key, figures, prs.iter().map(|pr| pr.author.clone()).collect())
        })
        .collect();
    rows.sort_by(|a, b| b.1.cost_nusd.cmp(&a.1.cost_nusd).then_with(|| a.0.cmp(&b.0)));
    let add = |into: &mut Return, more: &Return| {
        into.merged += more.merged;
        into.cost_nusd += more.cost_nusd;
        into.changed_lines += more.changed_lines;
        into.valued += more.valued;
        into.value_milli += more.value_milli;
        into.valued_cost_nusd += more.valued_cost_nusd;
        into.valued_authors.extend(more.valued_authors.iter().cloned());
    };
    let mut folded = fold(rows, min_people, add, |r| r.cost_nusd);
    // Value of fewer authors than the minimum would give one author's cost away (value
    // times cost per unit), so it is withheld inside a shown row.
    for row in &mut folded {
        let r = &mut row.figures;
        if r.valued > 0 && (r.valued_authors.len() as i64) < min_people {
            r.value_withheld = true;
            r.valued = 0;
            r.value_milli = 0;
            r.valued_cost_nusd = 0;
        }
    }
    folded
}

//! Which team groups a page may show, decided once for every page, table, CSV and
//! period: complementary suppression over groups that overlap (a team includes the teams
//! below it; a person may be in several teams). The universe is every group any page
//! shows a figure of: the organisation, each team with the teams below it, each parent
//! team's direct members, and the people in no team, each taken as the people active in
//! the figures' period (for usage, or for the metric a table counts).
//!
//! A group of fewer than the minimum is withheld, and so is enough else that no
//! **subtraction** isolates it: for every shown group `A` and every set of shown groups
//! that lie inside `A` and do not overlap one another, the people of `A` left over are
//! none or at least the minimum. Where a subtraction would leave fewer, the smallest
//! group taking part is withheld too, and the check runs again. The organisation is
//! never withheld (its own page says when it is too small). A breakdown over team groups
//! therefore never has an "other" row: a folded row over overlapping groups could be the
//! whole organisation, and "other" minus two shown teams was a three-person team.
//!
//! Invariant: the user ids stay in this module and `groups`; callers ask about groups.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rusqlite::Connection;

use super::Subject;
use super::groups::TeamGroup;
use crate::db::DbError;

/// A group of the universe.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GroupKey {
    Organisation,
    /// A team with every team below it.
    Subtree(String),
    /// A team's own members (a row only for teams with teams below them).
    Direct(String),
    /// The people in no team.
    NoTeam,
}

impl GroupKey {
    /// The universe's key of a breakdown's group.
    pub fn of(group: &TeamGroup) -> GroupKey {
        match group {
            TeamGroup::Team { id, .. } => GroupKey::Subtree(id.clone()),
            TeamGroup::Rest { team_id: Some(id), .. } => GroupKey::Direct(id.clone()),
            TeamGroup::Rest { team_id: None, .. } => GroupKey::NoTeam,
        }
    }
}

/// Most candidate sets one search walks before it gives up and withholds the smallest
/// group inside (withholding more is always safe).
const SEARCH_BUDGET: usize = 100_000;

/// Which groups may be shown for one metric and period.
#[derive(Clone, Debug, Default)]
pub struct Disclosure {
    shown: BTreeSet<GroupKey>,
}

impl Disclosure {
    /// The groups people active in `active` make, decided by [`suppress`].
    pub fn of_people(conn: &Connection, active: &BTreeSet<String>, min_people: i64) -> Result<Disclosure, DbError> {
        let universe = universe(conn)?;
        let (keys, sets): (Vec<GroupKey>, Vec<BTreeSet<String>>) = universe
            .into_iter()
            .map(|(key, members)| (key, members.intersection(active).cloned().collect::<BTreeSet<String>>()))
            .unzip();
        let always: Vec<bool> = keys.iter().map(|key| *key == GroupKey::Organisation).collect();
        let shown = suppress(&sets, &always, min_people);
        Ok(Disclosure { shown: keys.into_iter().zip(shown).filter(|(_, shown)| *shown).map(|(key, _)| key).collect() })
    }

    /// The groups of interactive usage in the period (people with hourly usage rows).
    pub fn of_usage(conn: &Connection, period: super::Period, min_people: i64) -> Result<Disclosure, DbError> {
        // One index probe per person (the usage table's `_by_user` index), not a scan of the period.
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT u.id FROM users u WHERE EXISTS (SELECT 1 FROM {} a
                 WHERE a.user_id = u.id AND a.bucket_start_ms >= ?1 AND a.bucket_start_ms < ?2)",
            crate::analytics::usage::table_for(period)
        ))?;
        let active = stmt
            .query_map([period.from_ms, period.to_ms], |row| row.get(0))?
            .collect::<Result<BTreeSet<String>, _>>()?;
        Disclosure::of_people(conn, &active, min_people)
    }

    pub fn allows(&self, key: &GroupKey) -> bool {
        self.shown.contains(key)
    }

    pub fn allows_group(&self, group: &TeamGroup) -> bool {
        self.allows(&GroupKey::of(group))
    }

    /// Whether a subject's own figures may be shown (a person's, to themselves, always).
    pub fn allows_subject(&self, subject: &Subject) -> bool {
        match subject {
            Subject::Person(_) => true,
            Subject::Team(id) => self.allows(&GroupKey::Subtree(id.clone())),
            Subject::Organisation => self.allows(&GroupKey::Organisation),
        }
    }
}

/// Every group of the universe with its members (enabled or not: activity decides).
fn universe(conn: &Connection) -> Result<Vec<(GroupKey, BTreeSet<String>)>, DbError> {
    let mut stmt = conn.prepare_cached("SELECT id, parent_id FROM teams")?;
    let parents: Vec<(String, Option<String>)> =
        stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?.collect::<Result<_, _>>()?;
    let mut stmt = conn.prepare_cached("SELECT team_id, user_id FROM team_members")?;
    let mut direct: HashMap<String, BTreeSet<String>> = HashMap::new();
    for row in stmt.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))? {
        let (team, user) = row?;
        direct.entry(team).or_default().insert(user);
    }
    let mut stmt = conn.prepare_cached("SELECT id FROM users")?;
    let everyone = stmt.query_map([], |row| row.get(0))?.collect::<Result<BTreeSet<String>, _>>()?;
    let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (id, parent) in &parents {
        if let Some(parent) = parent {
            children.entry(parent.clone()).or_default().push(id.clone());
        }
    }
    let subtree = |root: &str| {
        let (mut members, mut stack, mut seen) = (BTreeSet::new(), vec![root.to_string()], BTreeSet::new());
        while let Some(team) = stack.pop() {
            if !seen.insert(team.clone()) {
                continue; // a cycle in the data must not loop forever
            }
            members.extend(direct.get(&team).into_iter().flatten().cloned());
            stack.extend(children.get(&team).into_iter().flatten().cloned());
        }
        members
    };
    let in_some_team: BTreeSet<String> = direct.values().flatten().cloned().collect();
    let mut groups = vec![
        (GroupKey::Organisation, everyone.clone()),
        (GroupKey::NoTeam, everyone.difference(&in_some_team).cloned().collect()),
    ];
    for (id, _) in &parents {
        groups.push((GroupKey::Subtree(id.clone()), subtree(id)));
        if children.contains_key(id) {
            groups.push((GroupKey::Direct(id.clone()), direct.get(id).cloned().unwrap_or_default()));
        }
    }
    Ok(groups)
}

/// Complementary suppression: which of `sets` may be shown so that no set, nor any
/// subtraction of shown sets inside a shown set, describes between 1 and `min_people`
/// − 1 people. `always[i]` sets are shown whatever their size (and never withheld).
pub fn suppress(sets: &[BTreeSet<String>], always: &[bool], min_people: i64) -> Vec<bool> {
    let min = min_people.max(1) as usize;
    let mut shown: Vec<bool> = sets.iter().zip(always).map(|(set, always)| *always || set.len() >= min).collect();
    loop {
        let leak = (0..sets.len()).filter(|&a| shown[a]).find_map(|a| {
            let inside: Vec<usize> = (0..sets.len())
                .filter(|&b| b != a && shown[b] && !sets[b].is_empty() && sets[b].len() < sets[a].len())
                .filter(|&b| sets[b].is_subset(&sets[a]))
                .collect();
            leaking_subtraction(sets, a, &inside, min)
        });
        let Some(family) = leak else { return shown };
        let victim = family.into_iter().filter(|&b| !always[b]).min_by_key(|&b| (sets[b].len(), b));
        match victim {
            Some(victim) => shown[victim] = false,
            None => return shown, // only always-shown sets take part: nothing can be withheld
        }
    }
}

/// A set of pairwise disjoint `inside` sets whose removal from `sets[a]` leaves between
/// 1 and `min` − 1 people, if there is one. When the search runs past its budget, the
/// smallest inside set is answered, so that withholding it shrinks the search.
fn leaking_subtraction(sets: &[BTreeSet<String>], a: usize, inside: &[usize], min: usize) -> Option<Vec<usize>> {
    // Teams whose people are in one team each nest or keep apart: then the leftovers of
    // every subtraction are found exactly, without trying each family one by one.
    if let Some(found) = laminar_leak(sets, a, inside, min) {
        return found;
    }
    let whole = sets[a].len();
    let mut order = inside.to_vec();
    order.sort_by_key(|&b| std::cmp::Reverse(sets[b].len()));
    let mut budget = SEARCH_BUDGET;
    let mut chosen = Vec::new();
    let mut covered = BTreeSet::new();
    match search(sets, &order, 0, whole, min, &mut chosen, &mut covered, &mut budget) {
        Found::Leak => Some(chosen),
        Found::Nothing => None,
        Found::OutOfBudget => order.iter().copied().min_by_key(|&b| sets[b].len()).map(|b| vec![b]),
    }
}

/// [`leaking_subtraction`] when the sets inside `sets[a]` are laminar (any two nested or
/// apart); `None` when they are not. Bottom up over the nesting, each set's reachable
/// "covered" sizes are: the set whole, or any sum of its children's reachable sizes (or
/// nothing of a child); a leak is a reachable size of `sets[a]` leaving 1 to `min` − 1.
#[allow(clippy::type_complexity)]
fn laminar_leak(sets: &[BTreeSet<String>], a: usize, inside: &[usize], min: usize) -> Option<Option<Vec<usize>>> {
    // One of each distinct set; bitsets over the people of `sets[a]`.
    let people: Vec<&String> = sets[a].iter().collect();
    let bit = |set: &BTreeSet<String>| -> Vec<u64> {
        let mut words = vec![0u64; people.len().div_ceil(64)];
        for (i, person) in people.iter().enumerate() {
            if set.contains(*person) {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        words
    };
    let mut nodes: Vec<(usize, Vec<u64>, usize)> = Vec::new();
    for &b in inside {
        let bits = bit(&sets[b]);
        if !nodes.iter().any(|(_, other, _)| *other == bits) {
            nodes.push((b, bits, sets[b].len()));
        }
    }
    nodes.sort_by_key(|(b, _, size)| (std::cmp::Reverse(*size), *b));
    let subset = |x: &[u64], y: &[u64]| x.iter().zip(y).all(|(x, y)| x & !y == 0);
    let disjoint = |x: &[u64], y: &[u64]| x.iter().zip(y).all(|(x, y)| x & y == 0);
    // The parent of each node: the smallest set that holds it (sorted largest first, so
    // the last one found).
    let mut parent: Vec<Option<usize>> = vec![None; nodes.len()];
    for i in 0..nodes.len() {
        for j in 0..i {
            let (inner, outer) = (&nodes[i].1, &nodes[j].1);
            if subset(inner, outer) {
                parent[i] = Some(j);
            } else if !disjoint(inner, outer) {
                return None; // overlapping without nesting: not laminar
            }
        }
    }
    // Reachable covered sizes of each node, with one family reaching each, children first.
    let whole = sets[a].len();
    let combine = |reach: &mut BTreeMap<usize, Vec<usize>>, child: &BTreeMap<usize, Vec<usize>>, cap: usize| {
        let before: Vec<(usize, Vec<usize>)> = reach.iter().map(|(s, f)| (*s, f.clone())).collect();
        for (s, family) in &before {
            for (t, more) in child {
                if s + t <= cap && !reach.contains_key(&(s + t)) {
                    let mut joined = family.clone();
                    joined.extend(more.iter().copied());
                    reach.insert(s + t, joined);
                }
            }
        }
    };
    let mut reachable: Vec<BTreeMap<usize, Vec<usize>>> = vec![BTreeMap::new(); nodes.len()];
    for i in (0..nodes.len()).rev() {
        let mut reach: BTreeMap<usize, Vec<usize>> = BTreeMap::from([(0, Vec::new())]);
        for child in (i + 1..nodes.len()).filter(|&c| parent[c] == Some(i)) {
            let child_reach = std::mem::take(&mut reachable[child]);
            combine(&mut reach, &child_reach, nodes[i].2);
        }
        reach.remove(&0);
        reach.insert(nodes[i].2, vec![nodes[i].0]);
        reachable[i] = reach;
    }
    let mut top: BTreeMap<usize, Vec<usize>> = BTreeMap::from([(0, Vec::new())]);
    for root in (0..nodes.len()).filter(|&i| parent[i].is_none()) {
        let root_reach = std::mem::take(&mut reachable[root]);
        combine(&mut top, &root_reach, whole);
    }
    let leak = top.into_iter().find(|(covered, family)| {
        let left = whole - covered;
        !family.is_empty() && left > 0 && left < min
    });
    Some(leak.map(|(_, family)| family))
}

enum Found {
    Leak,
    Nothing,
    OutOfBudget,
}

#[allow(clippy::too_many_arguments)]
fn search(
    sets: &[BTreeSet<String>],
    order: &[usize],
    from: usize,
    whole: usize,
    min: usize,
    chosen: &mut Vec<usize>,
    covered: &mut BTreeSet<String>,
    budget: &mut usize,
) -> Found {
    let left = whole - covered.len();
    if !chosen.is_empty() && left > 0 && left < min {
        return Found::Leak;
    }
    for next in from..order.len() {
        if *budget == 0 {
            return Found::OutOfBudget;
        }
        *budget -= 1;
        let set = &sets[order[next]];
        if !set.is_disjoint(covered) {
            continue;
        }
        chosen.push(order[next]);
        covered.extend(set.iter().cloned());
        match search(sets, order, next + 1, whole, min, chosen, covered, budget) {
            Found::Nothing => {}
            found => return found,
        }
        chosen.pop();
        for person in set {
            covered.remove(person);
        }
    }
    Found::Nothing
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn set(ids: &[u8]) -> BTreeSet<String> {
        ids.iter().map(|id| id.to_string()).collect()
    }

    /// Every shown set minus every family of disjoint shown sets inside it leaves none or
    /// at least `min` people: the brute-force check of what `suppress` promises.
    pub(crate) fn no_subtraction_isolates_a_small_group(shown: &[BTreeSet<String>], min: usize) -> Result<(), String> {
        for a in shown {
            let inside: Vec<&BTreeSet<String>> =
                shown.iter().filter(|b| b.len() < a.len() && !b.is_empty() && b.is_subset(a)).collect();
            for mask in 1u32..(1u32 << inside.len().min(16)) {
                let family: Vec<&&BTreeSet<String>> =
                    inside.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, b)| b).collect();
                let mut union = BTreeSet::new();
                let mut disjoint = true;
                for b in &family {
                    disjoint &= b.is_disjoint(&union);
                    union.extend(b.iter().cloned());
                }
                let left = a.len() - union.len();
                if disjoint && left > 0 && left < min {
                    return Err(format!("{a:?} minus {family:?} leaves {left}"));
                }
            }
        }
        Ok(())
    }

    #[test]
    fn a_parent_minus_a_shown_child_never_leaves_a_small_one() {
        // Platform (8) = Core (5) + Tiny (3). Core alone would give Tiny away.
        let sets = vec![set(&[1, 2, 3, 4, 5, 6, 7, 8]), set(&[1, 2, 3, 4, 5]), set(&[6, 7, 8])];
        let shown = suppress(&sets, &[true, false, false], 5);
        assert_eq!(shown, [true, false, false]);
        // With a third child big enough, Core and Big stay: Platform − Core − Big is Tiny.
        let sets =
            vec![set(&(1..=13).collect::<Vec<_>>()), set(&[1, 2, 3, 4, 5]), set(&[6, 7, 8, 9, 10]), set(&[11, 12, 13])];
        let shown = suppress(&sets, &[true, false, false, false], 5);
        assert_eq!(shown.iter().filter(|s| **s).count(), 2, "one of the children goes: {shown:?}");
        let kept: Vec<BTreeSet<String>> =
            sets.iter().zip(&shown).filter(|(_, s)| **s).map(|(s, _)| s.clone()).collect();
        assert!(no_subtraction_isolates_a_small_group(&kept, 5).is_ok());
    }

    /// Seventeen teams of five side by side: nothing can be isolated, so nothing is
    /// withheld (a search that tried every family would run out of time here).
    #[test]
    fn many_teams_side_by_side_are_all_shown() {
        let teams: Vec<BTreeSet<String>> = (0..17u8).map(|t| (0..5u8).map(|p| format!("{t}-{p}")).collect()).collect();
        let mut sets = vec![teams.iter().flatten().cloned().collect::<BTreeSet<String>>()];
        sets.extend(teams);
        let mut always = vec![false; sets.len()];
        always[0] = true;
        assert!(suppress(&sets, &always, 5).iter().all(|shown| *shown));
        // One of them of three people: it goes, and so does one more, no more.
        let mut small = sets.clone();
        small[17] = ["a", "b", "c"].iter().map(|p| p.to_string()).collect();
        small[0] = small[1..].iter().flatten().cloned().collect();
        let shown = suppress(&small, &always, 5);
        assert_eq!(shown.iter().filter(|s| !**s).count(), 2, "{shown:?}");
    }

    proptest::proptest! {
        #[test]
        fn whatever_the_groups_no_subtraction_isolates_fewer_than_the_minimum(
            groups in proptest::collection::vec(proptest::collection::btree_set(0u8..14, 0..10), 1..9),
            min in 2i64..6,
        ) {
            let everyone: BTreeSet<String> = groups.iter().flatten().map(|id| id.to_string()).collect();
            let mut sets = vec![everyone];
            sets.extend(groups.iter().map(|ids| ids.iter().map(|id| id.to_string()).collect::<BTreeSet<String>>()));
            let mut always = vec![false; sets.len()];
            always[0] = true;
            let shown = suppress(&sets, &always, min);
            let kept: Vec<BTreeSet<String>> = sets.iter().zip(&shown).filter(|(_, s)| **s).map(|(s, _)| s.clone()).collect();
            proptest::prop_assert!(kept.iter().skip(1).all(|s| s.len() >= min as usize));
            let checked = no_subtraction_isolates_a_small_group(&kept, min as usize);
            proptest::prop_assert!(checked.is_ok(), "{:?}", checked);
        }
    }
}

//! The subtraction property over the query layer itself: a random organisation (teams
//! under teams, people in several teams or none, some active in the period) in a
//! migrated in-memory main.db; every team table a page shows (the organisation's
//! top-level teams and people in none, every team with the teams below it, each team's
//! sub-teams and direct members) and every team total a page shows; then every
//! subtraction of shown rows from a shown row or total must leave none or at least the
//! minimum of people.

use std::collections::BTreeSet;

use rusqlite::{Connection, params};

use super::disclosure::tests::no_subtraction_isolates_a_small_group;
use super::groups::{self, TeamGroup};
use super::{Period, Subject};

const DAY: i64 = 20_000 * 86_400_000;

/// Builds the organisation: `parents[i]` is team i's parent (an earlier team) or none;
/// `memberships` are (person, team); `active` people have an hour of usage in the period.
fn organisation(parents: &[Option<usize>], memberships: &[(u8, usize)], active: &BTreeSet<u8>) -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    crate::db::migrations::migrate(&mut conn, std::path::Path::new(":memory:")).unwrap();
    for person in 0..16u8 {
        conn.execute(
            "INSERT INTO users (id, email, name, created_at_ms) VALUES (?1, ?2, ?1, 0)",
            params![format!("u{person}"), format!("u{person}@x")],
        )
        .unwrap();
    }
    for (team, parent) in parents.iter().enumerate() {
        conn.execute(
            "INSERT INTO teams (id, slug, name, parent_id, created_at_ms) VALUES (?1, ?1, ?1, ?2, 0)",
            params![format!("t{team}"), parent.map(|p| format!("t{p}"))],
        )
        .unwrap();
    }
    for (person, team) in memberships {
        conn.execute(
            "INSERT OR IGNORE INTO team_members (team_id, user_id, added_at_ms) VALUES (?1, ?2, 0)",
            params![format!("t{team}"), format!("u{person}")],
        )
        .unwrap();
    }
    for person in active {
        let row = crate::events::partitions::HourlyUsage {
            bucket_start_ms: DAY + 3_600_000,
            user_id: format!("u{person}"),
            agent_type: "claude_code".into(),
            model: "opus".into(),
            events: 2,
            prompts: 1,
            sessions_started: 1,
            usage: crate::model::Usage { input_tokens: 10, output_tokens: 10, ..Default::default() },
            cost_nusd: 100 + i64::from(*person),
        };
        crate::analytics::usage::add_rows(&conn, &[row]).unwrap();
    }
    conn
}

fn team_groups(parents: &[Option<usize>], team: usize) -> Vec<TeamGroup> {
    let mut groups: Vec<TeamGroup> = (0..parents.len())
        .filter(|&t| parents[t] == Some(team))
        .map(|t| TeamGroup::Team { id: format!("t{t}"), label: format!("t{t}") })
        .collect();
    if !groups.is_empty() {
        groups.push(TeamGroup::Rest { team_id: Some(format!("t{team}")), label: format!("t{team} (direct members)") });
    }
    groups
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn no_subtraction_of_shown_team_rows_isolates_a_small_group(
        raw_parents in proptest::collection::vec(proptest::option::of(0usize..6), 1..7),
        memberships in proptest::collection::vec((0u8..16, 0usize..6), 0..24),
        active in proptest::collection::btree_set(0u8..16, 0..16),
        min in 2i64..6,
    ) {
        // A parent is an earlier team, so the teams form a forest.
        let parents: Vec<Option<usize>> =
            raw_parents.iter().enumerate().map(|(i, p)| p.filter(|p| *p < i)).collect();
        let memberships: Vec<(u8, usize)> = memberships.into_iter().filter(|(_, t)| *t < parents.len()).collect();
        let conn = organisation(&parents, &memberships, &active);
        let period = Period { from_ms: DAY, to_ms: DAY + 86_400_000 };
        // Who each group is, as the test knows it (not as the code reads it).
        let subtree = |root: usize| -> BTreeSet<String> {
            let mut teams = vec![root];
            let mut i = 0;
            while i < teams.len() {
                let t = teams[i];
                teams.extend((0..parents.len()).filter(|&c| parents[c] == Some(t)));
                i += 1;
            }
            memberships.iter().filter(|(p, t)| teams.contains(t) && active.contains(p)).map(|(p, _)| format!("u{p}")).collect()
        };
        let of_label = |label: &str| -> BTreeSet<String> {
            if let Some(team) = label.strip_suffix(" (direct members)") {
                let t: usize = team[1..].parse().unwrap();
                memberships.iter().filter(|(p, tm)| *tm == t && active.contains(p)).map(|(p, _)| format!("u{p}")).collect()
            } else if label == "(in no team)" {
                active.iter().filter(|p| !memberships.iter().any(|(m, _)| m == *p)).map(|p| format!("u{p}")).collect()
            } else {
                subtree(label[1..].parse().unwrap())
            }
        };
        let everyone: BTreeSet<String> = active.iter().map(|p| format!("u{p}")).collect();
        let mut shown: Vec<BTreeSet<String>> = Vec::new();
        if everyone.len() as i64 >= min {
            shown.push(everyone.clone());
        }
        let mut tables: Vec<Vec<TeamGroup>> = Vec::new();
        let mut top: Vec<TeamGroup> = (0..parents.len())
            .filter(|&t| parents[t].is_none())
            .map(|t| TeamGroup::Team { id: format!("t{t}"), label: format!("t{t}") })
            .collect();
        top.push(TeamGroup::Rest { team_id: None, label: "(in no team)".into() });
        tables.push(top);
        tables.push((0..parents.len()).map(|t| TeamGroup::Team { id: format!("t{t}"), label: format!("t{t}") }).collect());
        for team in 0..parents.len() {
            let subject = Subject::Team(format!("t{team}"));
            let total = groups::guarded(&conn, &subject, period, min, |_| Ok(())).unwrap();
            if total.shown().is_some() {
                shown.push(subtree(team));
                tables.push(team_groups(&parents, team));
            }
        }
        let disclosure = super::disclosure::Disclosure::of_usage(&conn, period, min).unwrap();
        for table in &tables {
            for row in groups::per_team(&conn, table, period, &disclosure).unwrap() {
                let label = row.key.clone().expect("a team table has no \"other\" row");
                let people = of_label(&label);
                proptest::prop_assert_eq!(row.people, people.len() as i64, "{}", label);
                proptest::prop_assert!(row.people >= min, "{} has {} people", label, row.people);
                shown.push(people);
            }
        }
        let checked = no_subtraction_isolates_a_small_group(&shown, min as usize);
        proptest::prop_assert!(checked.is_ok(), "{:?}", checked);
    }
}

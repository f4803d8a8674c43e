//! The demo organisation's people and teams: a team tree (two departments with two
//! teams each, and a research team), a lead in each team, developers spread over the
//! teams, and one person in each organisation role (an administrator, an investigator, a
//! viewer of aggregates), all with one password. Written straight into `main.db` with the
//! same functions `sightline user add` and `sightline team add` use.

use rusqlite::Connection;

use crate::access::teams;
use crate::auth::{tokens, users};
use crate::db::DbError;

/// One demo person: who they are and the hook token their agents send events with.
#[derive(Clone, Debug)]
pub struct Person {
    pub email: String,
    pub name: String,
    pub org_role: &'static str,
    /// The team slug they work in (`None` for the organisation roles).
    pub team: Option<&'static str>,
    pub lead: bool,
    pub hook_token: String,
    /// Their GitHub account (id, login), as sign-in with GitHub would have recorded it.
    pub github: (i64, String),
}

/// The evaluation harness's machine account (`demo::evals`).
pub const HARNESS: &str = "harness@demo.example";

/// The teams: (slug, name, parent, retention days).
pub const TEAMS: [(&str, &str, Option<&str>, Option<i64>); 7] = [
    ("platform", "Platform", None, None),
    ("platform-infra", "Infrastructure", Some("platform"), None),
    ("platform-data", "Data", Some("platform"), None),
    ("product", "Product", None, None),
    ("product-web", "Web", Some("product"), None),
    ("product-mobile", "Mobile", Some("product"), None),
    ("research", "Research", None, Some(180)),
];

/// The teams developers work in (the leaves of the tree, and research).
pub const WORK_TEAMS: [&str; 5] = ["platform-infra", "platform-data", "product-web", "product-mobile", "research"];

const FIRST: [&str; 24] = [
    "Ada", "Bo", "Chen", "Dara", "Eli", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kemi", "Lars", "Mira", "Noor", "Otto",
    "Priya", "Quin", "Rosa", "Sami", "Tess", "Umar", "Vera", "Wen", "Yusuf",
];
const LAST: [&str; 20] = [
    "Okafor", "Lind", "Wang", "Murphy", "Cohen", "Haddad", "Berg", "Sato", "Petrov", "Park", "Adeyemi", "Nilsson",
    "Rossi", "Rahman", "Weber", "Iyer", "Byrne", "Garcia", "Kaya", "Novak",
];

/// Adds the teams and `developers` developers plus the three organisation roles, each
/// with the password hash `password_hash` and a hook token; returns them, developers
/// first. Fails if the directory already has people (a demo never mixes with real data).
pub fn add_people(
    conn: &Connection,
    developers: usize,
    password_hash: &str,
    now_ms: i64,
) -> Result<Vec<Person>, DbError> {
    crate::db::side_door::write(conn, |tx| {
        let existing: i64 = tx.query_row("SELECT count(*) FROM users", [], |row| row.get(0))?;
        if existing > 0 {
            return Err(DbError::Io {
                context: "this data directory already has people".into(),
                source: std::io::Error::other("sightline demo fills an empty one; give it another --data-dir"),
            });
        }
        let mut team_ids = std::collections::HashMap::new();
        for (slug, name, parent, retention) in TEAMS {
            let team = teams::add(tx, slug, name, parent, retention, now_ms).map_err(other)?;
            team_ids.insert(slug, team.id);
        }
        let mut people = Vec::new();
        let mut add = |email: String, name: String, role: &'static str, team: Option<&'static str>, lead: bool| {
            let user = users::add(tx, &email, &name, role, now_ms).map_err(other)?;
            users::set_password_hash(tx, &user.email, password_hash).map_err(other)?;
            if let Some(slug) = team {
                teams::add_member(tx, &team_ids[slug], &user.id, if lead { "lead" } else { "member" }, now_ms)
                    .map_err(other)?;
            }
            let token = tokens::create(tx, &user.id, tokens::TokenKind::Hook, Some("demo laptop"), now_ms)?;
            let github = (700_000 + people.len() as i64, email.split('@').next().unwrap_or("dev").replace('.', "-"));
            users::link_github(tx, &user.id, github.0, &github.1)?;
            people.push(Person { email, name, org_role: role, team, lead, hook_token: token.secret.clone(), github });
            Ok::<_, DbError>(token.id)
        };
        for i in 0..developers.max(1) {
            // Every (first, last) pair once, then numbered.
            let (first, last) = (FIRST[i % FIRST.len()], LAST[(i / FIRST.len()) % LAST.len()]);
            let number = if i >= FIRST.len() * LAST.len() { i.to_string() } else { String::new() };
            let email = format!("{}.{}{number}@demo.example", first.to_lowercase(), last.to_lowercase());
            let team = WORK_TEAMS[i % WORK_TEAMS.len()];
            add(email, format!("{first} {last}"), "MEMBER", Some(team), i < WORK_TEAMS.len())?;
        }
        add("admin@demo.example".into(), "Alex Admin".into(), "ADMIN", None, false)?;
        add("investigator@demo.example".into(), "Ines Investigator".into(), "INVESTIGATOR", None, false)?;
        add("finance@demo.example".into(), "Fin Viewer".into(), "VIEWER_AGGREGATE", None, false)?;
        add("eve@demo.example".into(), "Eve Evals".into(), "EVAL_ENGINEER", None, false)?;
        // The evaluation harness's machine account: its hook token makes every run EVAL.
        let harness_token = add(HARNESS.into(), "Eval Harness".into(), "MEMBER", None, false)?;
        tokens::fix_run_kind(tx, &harness_token, crate::model::RunKind::Eval)?;
        Ok(people)
    })
}

fn other(err: impl std::fmt::Display) -> DbError {
    DbError::Io { context: "the demo organisation".into(), source: std::io::Error::other(err.to_string()) }
}

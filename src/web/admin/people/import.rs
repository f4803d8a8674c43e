//! `POST /admin/people/import`: a CSV of people (columns `email` and `name`, optional
//! `role` and `team`, in any order) added in one transaction, each with a one-time
//! link, or nobody and the first bad line named (a 400 that writes nothing). People
//! already here are left as they are and listed.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;

use super::{Addition, MOST_LINES, MadeLinks, add_person, link_url, people_page};
use crate::access::teams;
use crate::auth::users;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::Form;
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::admin::{Flash, change};

#[derive(Deserialize)]
pub struct Import {
    csv: Option<String>,
}

/// Reads an import CSV into additions, or the first bad line as a 400.
fn parse_import(text: &str, known_teams: &HashSet<String>) -> Result<Vec<(usize, Addition)>, AppError> {
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).flexible(true).from_reader(text.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .map_err(|err| AppError::bad_request("csv", format!("the header line cannot be read: {err}")))?
        .iter()
        .map(|h| h.to_ascii_lowercase())
        .collect();
    let column = |name: &str| headers.iter().position(|h| h == name);
    let (Some(email_at), Some(name_at)) = (column("email"), column("name")) else {
        return Err(AppError::bad_request(
            "csv",
            format!(
                "the header line must name the columns email and name (and may name role and team), not {headers:?}"
            ),
        ));
    };
    let (role_at, team_at) = (column("role"), column("team"));
    let mut seen = HashSet::new();
    let mut additions = Vec::new();
    for (index, record) in reader.records().enumerate() {
        let line = index + 2;
        let record = record.map_err(|err| AppError::bad_request("csv", format!("line {line}: {err}")))?;
        if record.iter().all(str::is_empty) {
            continue;
        }
        if additions.len() == MOST_LINES {
            return Err(AppError::bad_request("csv", format!("more than {MOST_LINES} people: split the file")));
        }
        let get = |at: Option<usize>| at.and_then(|at| record.get(at)).unwrap_or("").to_string();
        let bad = |field: &str, why: String| AppError::bad_request("csv", format!("line {line}, {field}: {why}"));
        let email = users::validate_email(&get(Some(email_at))).map_err(|err| bad("email", err.to_string()))?;
        if !seen.insert(email.to_ascii_lowercase()) {
            return Err(bad("email", format!("{email} is on an earlier line too")));
        }
        let role = match get(role_at) {
            role if role.is_empty() => "MEMBER".to_string(),
            role => users::parse_role(&role).map_err(|err| bad("role", err.to_string()))?,
        };
        let team = Some(get(team_at)).filter(|team| !team.is_empty());
        if let Some(team) = &team
            && !known_teams.contains(team)
        {
            return Err(bad("team", format!("there is no team {team:?} (teams are named by slug)")));
        }
        let name = get(Some(name_at));
        if name.is_empty() {
            return Err(bad("name", "a name is required".into()));
        }
        additions.push((line, Addition { email, name, role, team }));
    }
    if additions.is_empty() {
        return Err(AppError::bad_request("csv", "the CSV names nobody below its header line"));
    }
    Ok(additions)
}

/// `POST /admin/people/import`: everyone in the CSV, answered with their links.
pub async fn import(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Form(form): Form<Import>,
) -> Result<Response, PageError> {
    let text = form.csv.unwrap_or_default();
    let known: HashSet<String> =
        state.read(|conn| Ok(teams::list(conn)?.into_iter().map(|(team, _)| team.slug).collect())).await?;
    let additions = parse_import(&text, &known)?;
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let (made, kept) = change(&state, move |tx| {
        let mut made = BTreeMap::new();
        let mut kept = Vec::new();
        for (line, person) in &additions {
            if users::find_by_email(tx, &person.email)?.is_some() {
                kept.push(person.email.clone());
                continue;
            }
            match add_person(tx, person, &actor, &format!("csv line {line}: "), now_ms)? {
                Ok(link) => made.insert(person.email.clone(), link),
                // Nothing is committed: the whole import is refused.
                Err(refused) => return Ok(Err(refused)),
            };
        }
        Ok(Ok((made, kept)))
    })
    .await?;
    let kept_note = match kept.len() {
        0 => String::new(),
        _ => format!(" Already here and left as they are: {}.", kept.join(", ")),
    };
    let result = MadeLinks {
        heading: "People added",
        intro: format!(
            "{} added. Give each their link to choose a password; the links are shown only now.{kept_note}",
            made.len()
        ),
        links: made
            .into_iter()
            .map(|(email, link)| {
                let url = link_url(&state, &link.secret);
                (email, url, link.expires_at_ms)
            })
            .collect(),
        tokens: None,
    };
    Ok(people_page(&state, Flash::default(), Some(result)).await?.respond())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn teams() -> HashSet<String> {
        ["web".to_string()].into_iter().collect()
    }

    #[test]
    fn an_import_reads_optional_columns_in_any_order() {
        let text = "Name,Email,Team,Role\nAda Okafor, ada@example.com ,web,ADMIN\nBo,bo@example.com,,\n\n";
        let people = parse_import(text, &teams()).unwrap();
        let read: Vec<_> =
            people.iter().map(|(line, p)| (*line, p.email.as_str(), p.role.as_str(), p.team.as_deref())).collect();
        assert_eq!(read, vec![(2, "ada@example.com", "ADMIN", Some("web")), (3, "bo@example.com", "MEMBER", None)]);
    }

    #[test]
    fn an_import_names_its_first_bad_line() {
        let said = |text: &str| parse_import(text, &teams()).err().unwrap().to_string();
        assert!(said("email\nada@example.com\n").contains("must name the columns email and name"));
        assert!(said("email,name\nada@example.com,Ada\nnot-an-address,Bo\n").contains("line 3, email"));
        assert!(said("email,name,role\nada@example.com,Ada,OWNER\n").contains("line 2, role"));
        assert!(said("email,name,team\nada@example.com,Ada,ops\n").contains("no team \"ops\""));
        assert!(said("email,name\nada@example.com,Ada\nADA@example.com,Ada\n").contains("earlier line"));
        assert!(said("email,name\n").contains("names nobody"));
    }
}

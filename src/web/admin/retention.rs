//! `/admin/retention`: the organisation's raw-event retention (`jobs.retention_days`,
//! set in the configuration), each team's own (a form sets or clears it), and what the
//! next `sweep-retention` will remove under each, with when it runs.
//!
//! Invariants: a team's change commits with its `RETENTION_CHANGED` audit row; the
//! preview only reads (`deletion::retention_preview`); session rows and aggregates are
//! never removed by retention, and the page says so.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::{AdminPage, Field, Flash, Row, Section, change, done, team_refusal, when};
use crate::access::teams;
use crate::audit::{self, Action, Entry};
use crate::db::DbError;
use crate::deletion::retention_preview::{self, PreviewLine};
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path, Query};
use crate::jobs::{registry, status};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

const PATH: &str = "/admin/retention";

pub async fn page(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    let (now_ms, config) = (state.clock.now_ms(), state.config.clone());
    let (data_dir, org_days) = (state.config.data_dir.clone(), state.config.jobs.retention_days);
    let counted = state.retention_counted.clone();
    let (all_teams, preview, next_sweep) = state
        .read(move |conn| {
            let sweep =
                registry::find("sweep-retention").map(|job| status::one(conn, &config, job, now_ms)).transpose()?;
            Ok::<_, DbError>((
                teams::list(conn)?,
                {
                    let mut counted = counted.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    retention_preview::preview(conn, &data_dir, org_days, now_ms, &mut counted)?
                },
                sweep.and_then(|s| if s.effective.enabled { s.next_run_ms } else { None }),
            ))
        })
        .await?;

    let mut org =
        Section::new("organisation", "The organisation's retention").columns(vec!["Raw events kept", "Set in"]);
    org.rows.push(Row::new(vec![
        Cell::text(format!("{org_days} days")),
        Cell::text("the configuration (jobs.retention_days, or SIGHTLINE_JOBS_RETENTION_DAYS); restart to change it"),
    ]));

    let mut per_team = Section::new("teams", "Teams")
        .intro("A team's own retention applies to its members and the teams below it; a person in several teams keeps the shortest. Leave the field empty to inherit.")
        .columns(vec!["Team", "Own retention", "In force"])
        .empty("There is no team yet.");
    let by_id: teams::RetentionTree =
        all_teams.iter().map(|(t, _)| (t.id.clone(), (t.parent_id.clone(), t.retention_days))).collect();
    for (team, _) in &all_teams {
        let in_force = teams::retention_in_force(&by_id, &team.id)
            .map_or(format!("{org_days} days (organisation)"), |d| format!("{d} days"));
        per_team.rows.push(
            Row::new(vec![
                Cell::text(format!("{} ({})", team.name, team.slug)),
                Cell::text(team.retention_days.map_or("—".into(), |d| format!("{d} days"))),
                Cell::text(in_force),
            ])
            .action(super::Form::new(format!("{PATH}/{}", team.slug), "Set").field(Field::number(
                "days",
                "Days",
                team.retention_days.map(|d| d.to_string()).unwrap_or_default(),
            ))),
        );
    }

    let mut next = Section::new("next-sweep", "What the next sweep removes")
        .intro(format!(
            "Next sweep-retention run: {}. It removes raw events and transcripts past retention; sessions, pull-request links and every aggregate stay, so the history pages keep their figures.",
            next_sweep.map_or("not scheduled (the job is off)".to_string(), crate::model::instants::exact_utc)
        ))
        .columns(vec!["Retention", "Set by", "People", "Removes events before", "Events", "Day files", "Transcripts"]);
    next.rows = preview.into_iter().map(preview_row).collect();

    Ok(AdminPage::new(PATH, "Retention", "How long raw events and transcripts are kept.", flash)
        .section(org)
        .section(per_team)
        .section(next)
        .respond())
}

fn preview_row(line: PreviewLine) -> Row {
    Row::new(vec![
        Cell::text(format!("{} days", line.days)),
        Cell::text(if line.teams.is_empty() { "organisation".into() } else { line.teams.join(", ") }),
        Cell::count(line.people),
        when(Some(line.cutoff_ms)),
        Cell::count(line.events),
        Cell::count(line.partitions),
        Cell::count(line.transcripts),
    ])
}

#[derive(Deserialize)]
pub struct RetentionForm {
    days: Option<String>,
}

/// `POST /admin/retention/{slug}`: a team's own retention, or none.
pub async fn set_team(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(slug): Path<String>,
    Form(form): Form<RetentionForm>,
) -> Result<Redirect, PageError> {
    let days = match form.days.as_deref().map(str::trim).unwrap_or("") {
        "" => None,
        text => match text.parse::<i64>() {
            Ok(days) if days >= 1 => Some(days),
            _ => {
                return Err(AppError::bad_request(
                    "days",
                    format!("days must be a whole number of at least 1, not {text:?}"),
                )
                .into());
            }
        },
    };
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let target = slug.clone();
    change(&state, move |tx| {
        let before = match teams::set_retention(tx, &target, days) {
            Ok(before) => before,
            Err(err) => return Ok(Err(team_refusal(err, "days")?)),
        };
        let detail = serde_json::json!({ "team": target, "from": before, "to": days });
        let entry = Entry {
            actor_id: Some(&actor),
            action: Action::RetentionChanged,
            subject_user_id: None,
            target: Some(&target),
            detail,
        };
        audit::record(tx, &entry, now_ms)?;
        Ok(Ok(()))
    })
    .await?;
    Ok(done(
        PATH,
        &match days {
            Some(days) => format!("{slug} now keeps raw events {days} days"),
            None => format!("{slug} now inherits its retention"),
        },
    ))
}

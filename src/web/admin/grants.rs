//! `/admin/access-grants`: the queue of requests waiting for a decision (approve or deny,
//! with a note), the grants in force with when each expires (revoke ends one early), and
//! the latest decided ones. The forms post to `/admin/access-grants/{id}/{act}` and use
//! the same `access::grants` functions as the JSON API.
//!
//! Invariants: a grant is decided by an administrator other than its requester and its
//! subject (`access::grants` refuses otherwise, and the page says so); every decision is
//! audited there, with the subject told in their own audit.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::{AdminPage, Field, Flash, Row, Section, done, when};
use crate::access::grants::{self, Decision, Grant};
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path, Query};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::grants::on_writer;
use crate::web::report::Cell;

const PATH: &str = "/admin/access-grants";

fn who_and_what(grant: &Grant) -> Vec<Cell> {
    vec![
        Cell::text(&grant.requester_email),
        Cell::text(&grant.subject_email),
        Cell::text(match &grant.session_id {
            Some(session) => format!("session {session}"),
            None => "all their sessions".into(),
        }),
        Cell::text(&grant.justification),
    ]
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    let now_ms = state.clock.now_ms();
    let actor = caller.clone();
    let all = state.read(move |conn| grants::visible_to(conn, actor.actor())).await?;

    let mut queue = Section::new("queue", "Waiting for a decision")
        .intro("Approving starts the grant now for the duration asked. You cannot decide a grant you asked for or one on your own data.")
        .columns(vec!["Asked by", "On", "Scope", "Why", "For", "Asked at"])
        .empty("No request is waiting.");
    let mut active = Section::new("active", "In force")
        .columns(vec!["Asked by", "On", "Scope", "Why", "Approved by note", "Expires"])
        .empty("No grant is in force.");
    let mut decided = Section::new("decided", "Decided, expired or revoked (latest 100)")
        .columns(vec!["Asked by", "On", "Scope", "Why", "Outcome", "Decided at", "Note"])
        .empty("None yet.");
    for grant in all {
        if grant.status == "REQUESTED" {
            let mut cells = who_and_what(&grant);
            cells.extend([Cell::hours(Some(grant.duration_ms)), when(Some(grant.requested_at_ms))]);
            queue.rows.push(
                Row::new(cells)
                    .action(
                        super::Form::new(format!("{PATH}/{}/approve", grant.id), "Approve")
                            .field(Field::text("note", "Note", "")),
                    )
                    .action(
                        super::Form::new(format!("{PATH}/{}/deny", grant.id), "Deny")
                            .field(Field::text("note", "Note", ""))
                            .danger(),
                    ),
            );
        } else if grant.is_active(now_ms) {
            let mut cells = who_and_what(&grant);
            cells.extend([Cell::text(grant.decision_note.clone().unwrap_or_default()), when(grant.expires_at_ms)]);
            active.rows.push(
                Row::new(cells).action(super::Form::new(format!("{PATH}/{}/revoke", grant.id), "Revoke").danger()),
            );
        } else if decided.rows.len() < 100 {
            let outcome = if grant.status == "APPROVED" { "EXPIRED".to_string() } else { grant.status.clone() };
            let mut cells = who_and_what(&grant);
            cells.extend([
                Cell::text(outcome),
                when(grant.decided_at_ms.or(grant.revoked_at_ms)),
                Cell::text(grant.decision_note.clone().unwrap_or_default()),
            ]);
            decided.rows.push(Row::new(cells));
        }
    }
    Ok(AdminPage::new(
        PATH,
        "Access grants",
        "Time-boxed access to one person's sessions, asked for by an investigator with a reason. Every use of a grant is recorded in the subject's audit.",
        flash,
    )
    .section(queue)
    .section(active)
    .section(decided)
    .respond())
}

#[derive(Deserialize)]
pub struct NoteForm {
    note: Option<String>,
}

/// `POST /admin/access-grants/{id}/{approve|deny|revoke}`.
pub async fn act(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path((id, act)): Path<(String, String)>,
    Form(form): Form<NoteForm>,
) -> Result<Redirect, PageError> {
    let note = form.note.map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
    let now_ms = state.clock.now_ms();
    let decision = match act.as_str() {
        "approve" => Some(Decision::Approve),
        "deny" => Some(Decision::Deny),
        "revoke" => None,
        _ => return Err(AppError::NotFound.into()),
    };
    let grant = on_writer(&state, move |tx| match decision {
        Some(decision) => grants::decide(tx, caller.actor(), &id, decision, note.as_deref(), now_ms),
        None => grants::revoke(tx, caller.actor(), &id, now_ms),
    })
    .await?;
    // The flash travels in the URL: it names no one.
    let message = format!("the grant is now {}", grant.status);
    Ok(done(PATH, &message))
}

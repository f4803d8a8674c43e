//! `/sessions/{id}`: one session as a timeline — prompts (with the time to the first
//! response), tool calls with their duration and outcome, denials, notifications
//! (permission waits), compactions, subagents, model switches, and each turn's tokens and
//! cost — under the session's totals and git context. 500 events a page
//! (`?after=<cursor>`). The owner also gets their sharing switch and feedback form; any
//! other reader the access rules allow (their team lead through drill-in, an
//! investigator or administrator with a grant) gets a banner saying on what ground they
//! read it and that the read is audited (`web::reading_ground`). `/me/sessions/{id}`,
//! the old address, redirects here.
//!
//! Invariants: every read goes through `sessions::read` (the owner's own, or `authorize`,
//! which audits a cross-user read in the same transaction); anyone else's session is a
//! 404, as an unknown one is; the owner's controls are rendered for the owner only; this
//! is the one page that reads raw events, and only this session's.

use std::sync::Arc;

use askama::Template;
use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;

use super::login::render;
use super::session_timeline::{Step, TurnRow, timeline, timeline_csv};
use super::trace;
use crate::db::DbError;
use crate::events::reads;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path, Query};
use crate::model::wire::Event;
use crate::scoring::feedback::{Answer, Feedback, NOTE_MAX_CHARS};
use crate::sessions::read::{Basis, Reading};
use crate::sessions::sharing;
use crate::sessions::views::{self, SessionView};
use crate::state::AppState;
use crate::state::caller::PageCaller;

const PAGE_EVENTS: usize = 500;

#[derive(Deserialize, Default)]
pub struct TimelineParams {
    #[serde(default)]
    after: String,
    /// `csv`: the page's events as the flat table, one row each.
    #[serde(default)]
    format: String,
}

#[derive(Template)]
#[template(path = "web/me_session.html")]
struct SessionPage {
    /// The caller's org role (`OrgRole::as_str`), "" when nobody is signed in: the navigation follows it.
    nav_role: &'static str,
    session: SessionView,
    /// Its name (`web::session_name`): its transcript's title for the owner, where it
    /// worked for anyone else; `titled` says which.
    name: String,
    titled: bool,
    /// Why a reader who is not the owner may read it (`None` for the owner).
    ground: Option<String>,
    /// Where the owner's own list is, for the owner's back link.
    is_owner: bool,
    cost: String,
    duration: String,
    /// When it started, relative to now, and exactly (the hover).
    started_ago: String,
    started_exact: String,
    /// Its repository as lists show it (`owner/name` linked when the remote reads as one).
    repository: super::session_name::Repository,
    steps: Vec<Step>,
    /// The page's turns on the session's time axis (a waterfall), then each turn's own.
    trace: String,
    turns: Vec<TurnRow>,
    /// This page's events as CSV.
    csv_href: String,
    next: Option<String>,
    transcript_stored: bool,
    /// Whether this reader may open the transcript (the owner always; others when shared).
    transcript_open: bool,
    /// The eval dashboard's page of this session's evaluation cell, when it is one and the
    /// dashboard's address is configured.
    eval_cell_href: Option<String>,
    /// `follow`, `share` or `private`.
    sharing: &'static str,
    /// The owner's own flag, to say what "follow" means.
    shares_by_default: bool,
    /// Pull requests the session is linked to, with the evidence.
    pull_requests: Vec<(crate::github::pulls::StoredPr, String)>,
    /// Commits the session reported that landed on their default branch.
    landed: Vec<(String, String)>,
    /// Its scores (current versions) in words and in context (`web::session_scores`).
    scores: Vec<super::session_scores::ScoreLine>,
    /// The owner's feedback, to fill the form.
    feedback: FeedbackForm,
}

/// The feedback form's fields (`thumbs`: up, down or empty; the rubric's answers: yes,
/// partly, no or empty).
#[derive(Deserialize, Default)]
pub struct FeedbackForm {
    #[serde(default)]
    thumbs: String,
    #[serde(default)]
    note: String,
    #[serde(default)]
    done: String,
    #[serde(default)]
    unsteered: String,
}

impl FeedbackForm {
    fn of(feedback: Option<Feedback>) -> FeedbackForm {
        let Some(f) = feedback else { return FeedbackForm::default() };
        FeedbackForm {
            thumbs: match f.thumbs {
                Some(1) => "up".into(),
                Some(-1) => "down".into(),
                _ => String::new(),
            },
            note: f.note.unwrap_or_default(),
            done: f.done.map(|a| a.as_str().to_string()).unwrap_or_default(),
            unsteered: f.unsteered.map(|a| a.as_str().to_string()).unwrap_or_default(),
        }
    }

    fn parse(&self) -> Result<Feedback, AppError> {
        let answer = |field: &str, text: &str| match text {
            "" => Ok(None),
            other => Answer::parse(other).map(Some).ok_or_else(|| {
                AppError::bad_request(field, format!("{field} must be yes, partly or no, not {other:?}"))
            }),
        };
        let thumbs = match self.thumbs.as_str() {
            "" => None,
            "up" => Some(1),
            "down" => Some(-1),
            other => return Err(AppError::bad_request("thumbs", format!("thumbs must be up or down, not {other:?}"))),
        };
        if self.note.chars().count() > NOTE_MAX_CHARS {
            return Err(AppError::bad_request("note", format!("the note is longer than {NOTE_MAX_CHARS} characters")));
        }
        Ok(Feedback {
            thumbs,
            note: Some(self.note.clone()),
            done: answer("done", &self.done)?,
            unsteered: answer("unsteered", &self.unsteered)?,
        })
    }
}

/// `GET /me/sessions/{id}[/transcript]`: the old addresses, kept for links already
/// given out; a permanent redirect to `/sessions/…` with the query kept.
pub async fn moved(uri: axum::http::Uri) -> axum::response::Redirect {
    let path_and_query = uri.path_and_query().map_or(uri.path(), |pq| pq.as_str());
    axum::response::Redirect::permanent(path_and_query.strip_prefix("/me").unwrap_or(path_and_query))
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(session_id): Path<String>,
    Query(params): Query<TimelineParams>,
) -> Result<Response, PageError> {
    let cursor = match params.after.as_str() {
        "" => None,
        text => Some(reads::parse_event_cursor(text).ok_or_else(|| {
            PageError(AppError::bad_request("after", "after must be a cursor this page gave (its Next link)"))
        })?),
    };
    let (proof, basis) = super::sessions::authorize(&state, &caller, &session_id, Reading::Session).await?;
    let is_owner = basis == Basis::Own;
    let data_dir = state.config.data_dir.clone();
    let host_prefix = crate::github::links::host_prefix(&state.config.auth.github_url);
    let min_people = state.config.analytics.min_group_size;
    let reader_id = caller.user.id.clone();
    let read = state
        .read(move |conn| {
            let Some(view) = views::session_view(conn, &proof)? else { return Ok(None) };
            let page = reads::session_events_page(
                &data_dir,
                &proof,
                view.first_event_ms,
                view.last_event_ms,
                cursor,
                PAGE_EVENTS,
            )?;
            let transcript_stored = crate::transcripts::store::stored_upload(conn, &view.id)?.is_some();
            let switch = sharing::get(conn, proof.owner_id(), &view.id)?.flatten();
            let policy = crate::access::policies::get(conn, proof.owner_id())?;
            // A reader other than the owner is offered the transcript only where the
            // rules would let them open it (the owner shares it).
            // (An eval engineer reads a linked evaluation run's transcript: `sessions::read`.)
            let transcript_open = transcript_stored
                && (is_owner
                    || switch.unwrap_or(policy.share_transcripts)
                    || (basis == crate::sessions::read::Basis::EvalEngineer && switch != Some(false)));
            let ground = super::reading_ground::describe(conn, &basis, proof.owner_id())?;
            let pull_requests = crate::github::pulls::of_session(conn, &view.id)?;
            let landed = crate::github::pulls::landed_commits(conn, &view.id, &host_prefix)?;
            let scores = crate::scoring::store::of_session(conn, &view.id)?;
            let owner = is_owner.then(|| proof.owner_id());
            let scores = super::session_scores::lines(conn, &scores, owner, min_people)?;
            let feedback = if is_owner { crate::scoring::feedback::get(conn, &view.id)? } else { None };
            // The title is transcript content: named so for the owner only.
            let title = crate::transcripts::store::titles(conn, &reader_id, &[&view.id])?.remove(&view.id);
            Ok::<_, DbError>(Some((
                (view, ground, title),
                page,
                (transcript_stored, transcript_open),
                switch,
                policy.share_transcripts,
                (pull_requests, landed, scores, feedback),
            )))
        })
        .await?;
    let Some((
        (session, ground, title),
        page,
        (transcript_stored, transcript_open),
        switch,
        shares_by_default,
        (pull_requests, landed, scores, feedback),
    )) = read
    else {
        return Err(PageError(AppError::NotFound));
    };
    let events: Vec<Event> = page.events.into_iter().map(|stored| stored.event).collect();
    let steps = timeline(session.first_event_ms, &events);
    match params.format.as_str() {
        "" | "html" => {}
        "csv" => return Ok(timeline_csv(&session.id, &steps)),
        other => {
            return Err(PageError(AppError::bad_request(
                "format",
                format!("format must be html or csv, not {other:?}"),
            )));
        }
    }
    let turns = trace::turns(&events);
    let (from_ms, to_ms) = match (turns.first(), turns.last()) {
        (Some(first), Some(last)) => (first.start_ms, last.end_ms.max(first.start_ms + 1)),
        _ => (session.first_event_ms, session.last_event_ms.max(session.first_event_ms + 1)),
    };
    let turn_spans: Vec<crate::charts::Span> = turns.iter().filter_map(|turn| turn.spans.first().cloned()).collect();
    let trace_chart = crate::charts::waterfall("Turns of this page of the session", &turn_spans, from_ms, to_ms, 900);
    let turn_rows: Vec<TurnRow> = turns.iter().map(|turn| TurnRow::of(turn, session.first_event_ms)).collect();
    let csv_href = match params.after.as_str() {
        "" => format!("/sessions/{}?format=csv", session.id),
        after => format!("/sessions/{}?format=csv&after={}", session.id, crate::model::percent_encode(after)),
    };
    let titled = title.is_some();
    let (remote, branch) = match &session.git {
        Some(git) => (git.remote.as_deref(), git.branch.as_deref()),
        None => (None, None),
    };
    let name = title.unwrap_or_else(|| super::session_name::neutral(&session.agent_type, remote, branch));
    let repository = super::session_name::Repository::of(remote);
    let eval_cell_href = session.eval.as_ref().and_then(|tag| {
        let dashboard = state.config.analytics.eval_dashboard_url.trim_end_matches('/');
        let run = tag.run_name.as_deref().filter(|_| !dashboard.is_empty())?;
        Some(format!(
            "{dashboard}/run/{}/cell/{}",
            crate::model::percent_encode(run),
            crate::model::percent_encode(&tag.cell_id)
        ))
    });
    Ok(render(&SessionPage {
        nav_role: caller.role.as_str(),
        name,
        titled,
        cost: format!("${:.4}", session.cost_usd),
        duration: crate::charts::offset(session.last_event_ms - session.first_event_ms),
        started_ago: crate::model::instants::relative(session.first_event_ms, state.clock.now_ms()),
        started_exact: crate::model::instants::exact_utc(session.first_event_ms),
        repository,
        next: page
            .next_cursor
            .map(|cursor| format!("/sessions/{}?after={}", session.id, crate::model::percent_encode(&cursor))),
        session,
        ground,
        is_owner,
        steps,
        trace: trace_chart,
        turns: turn_rows,
        csv_href,
        transcript_stored,
        transcript_open,
        eval_cell_href,
        sharing: match switch {
            None => "follow",
            Some(true) => "share",
            Some(false) => "private",
        },
        shares_by_default,
        pull_requests,
        landed,
        scores,
        feedback: FeedbackForm::of(feedback),
    }))
}

#[derive(Deserialize)]
pub struct SharingForm {
    transcript: String,
}

/// `POST /me/sessions/{id}/sharing`: the owner's switch for this session's transcript
/// (`follow` their flag, `share`, or `private`); back to the session page.
pub async fn set_sharing(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(session_id): Path<String>,
    Form(form): Form<SharingForm>,
) -> Result<axum::response::Redirect, PageError> {
    let shared = match form.transcript.as_str() {
        "follow" => None,
        "share" => Some(true),
        "private" => Some(false),
        other => {
            return Err(PageError(AppError::bad_request(
                "transcript",
                format!("transcript must be follow, share or private, not {other:?}"),
            )));
        }
    };
    let (user_id, id) = (caller.user.id.clone(), session_id.clone());
    let theirs = state.write(move |tx| sharing::set(tx, &user_id, &id, shared)).await?;
    if !theirs {
        return Err(PageError(AppError::NotFound));
    }
    Ok(axum::response::Redirect::to(&format!("/sessions/{session_id}")))
}

/// `POST /me/sessions/{id}/feedback`: the owner's thumbs, note and rubric answers.
pub async fn set_feedback(
    State(state): State<Arc<AppState>>,
    PageCaller(caller): PageCaller,
    Path(session_id): Path<String>,
    Form(form): Form<FeedbackForm>,
) -> Result<axum::response::Redirect, PageError> {
    let feedback = form.parse().map_err(PageError)?;
    let (user_id, id, now_ms) = (caller.user.id.clone(), session_id.clone(), state.clock.now_ms());
    let theirs = state.write(move |tx| crate::scoring::feedback::save(tx, &user_id, &id, &feedback, now_ms)).await?;
    if !theirs {
        return Err(PageError(AppError::NotFound));
    }
    Ok(axum::response::Redirect::to(&format!("/sessions/{session_id}#feedback")))
}

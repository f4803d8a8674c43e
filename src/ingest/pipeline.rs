//! The one path by which events reach the event store, whatever carried them: the
//! hook's batches (`/v1/events`) and the events mapped from the agents' OTLP exports
//! (HTTP and gRPC) arrive here as drafts (`model::wire::Draft`) and leave as a count.
//! In order: each draft checked against wire contract v1 (one bad event is reported by
//! index and field and never blocks its batch), its metadata and git remote redacted,
//! its cost priced by the server's own table, the run kind a harness's token fixes
//! applied, the evaluation links only a harness may make kept, the good events written,
//! and the answer counted.
//!
//! Invariants: nothing here knows a transport (no axum or gRPC type; refusals are
//! [`IngestError`]); the answer is given only after the writer's COMMIT, and a storage
//! failure is [`IngestError::Unavailable`], never an acceptance without a commit.

use serde::Serialize;

use super::error::IngestError;
use crate::events::writer::WriteRequest;
use crate::model::RunKind;
use crate::model::wire::{self, ClientInfo, Draft, Event, Rejection};
use crate::state::AppState;

/// One batch of drafts for one person. A draft that could not even be decoded (a
/// field of the wrong JSON type) arrives as its rejection, so its index is kept. The
/// drafts are taken one at a time (the hook's listener decodes each as it is checked,
/// so a batch is never held twice, as drafts and as events).
pub struct Batch<'a, Drafts> {
    pub user_id: &'a str,
    /// The run kind a harness's token fixes (it replaces every event's own).
    pub fixed_run_kind: Option<RunKind>,
    pub client: &'a ClientInfo,
    pub drafts: Drafts,
    /// When the request arrived (the ingest SLI's latency).
    pub received: std::time::Instant,
}

/// What became of a batch: the answer of `POST /v1/events`.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Accepted {
    pub accepted: usize,
    pub duplicates: usize,
    pub rejected: Vec<RejectedEvent>,
    /// Events that named an evaluation cell and were stored without the link: only a
    /// harness's token (fixed to EVAL) links a session to a cell.
    #[serde(skip_serializing_if = "is_zero")]
    pub unlinked_eval_events: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct RejectedEvent {
    pub index: usize,
    pub field: String,
    pub reason: String,
}

/// Checks, redacts and prices a batch's drafts and stores the good ones; answers after
/// the writer's commit.
pub async fn accept<Drafts>(state: &AppState, batch: Batch<'_, Drafts>) -> Result<Accepted, IngestError>
where
    Drafts: IntoIterator<Item = Result<Draft, Rejection>>,
    Drafts::IntoIter: ExactSizeIterator,
{
    let Batch { user_id, fixed_run_kind, client, drafts, received } = batch;
    let mut prepared = prepare(state, drafts.into_iter());
    if let Some(kind) = fixed_run_kind {
        prepared.events.iter_mut().for_each(|event| event.run_kind = kind);
    }
    // A cell's link is the harness's to make: a person's token (or a collector's, for
    // anyone it maps) naming a cell would hand that session to every eval engineer.
    let mut unlinked_eval_events = 0;
    if fixed_run_kind != Some(RunKind::Eval) {
        for event in prepared.events.iter_mut().filter(|event| event.eval.is_some()) {
            event.eval = None;
            unlinked_eval_events += 1;
        }
    }
    let stored = prepared.events.len();
    let (mut accepted, mut duplicates) = (0, 0);
    if stored > 0 {
        let (events, known_models, redactions) = (prepared.events, prepared.known_models, prepared.redactions);
        let request =
            WriteRequest { user_id: user_id.to_string(), client: client.clone(), events, known_models, redactions };
        let written = state.writer.write(request).await;
        state.slis.event_write(stored, written.is_ok(), received.elapsed().as_millis() as i64);
        let outcome = written?;
        accepted = outcome.inserted.iter().filter(|inserted| **inserted).count();
        duplicates = outcome.inserted.len() - accepted;
    }
    debug_assert_eq!(stored, accepted + duplicates);
    state.metrics.count_events(accepted as u64, duplicates as u64, prepared.rejected.len() as u64);
    for rejected in &prepared.rejected {
        state.metrics.count_rejected_event(&rejected.field);
    }
    Ok(Accepted { accepted, duplicates, rejected: prepared.rejected, unlinked_eval_events })
}

/// A batch's events, checked, redacted and priced, and the ones refused.
struct Prepared {
    events: Vec<Event>,
    /// Per event: whether the price table knew its model.
    known_models: Vec<bool>,
    redactions: Vec<crate::redact::Hits>,
    rejected: Vec<RejectedEvent>,
}

fn prepare(state: &AppState, drafts: impl ExactSizeIterator<Item = Result<Draft, Rejection>>) -> Prepared {
    let now_ms = state.clock.now_ms();
    let mut prepared = Prepared {
        events: Vec::with_capacity(drafts.len()),
        known_models: Vec::with_capacity(drafts.len()),
        redactions: Vec::with_capacity(drafts.len()),
        rejected: Vec::new(),
    };
    for (index, draft) in drafts.enumerate() {
        match draft.and_then(|draft| wire::validate(draft, &state.event_limits, now_ms)) {
            Ok(parsed) => {
                let (mut event, hits) = redacted(parsed);
                prepared.redactions.push(hits);
                let priced = state.prices.price(event.agent_type, event.model.as_deref(), &event.usage);
                event.cost_nusd = priced.cost_nusd;
                prepared.known_models.push(priced.known_model);
                prepared.events.push(event);
            }
            Err(Rejection { field, reason }) => prepared.rejected.push(RejectedEvent { index, field, reason }),
        }
    }
    prepared
}

/// The event with its metadata and git remote and branch redacted: the hook strips
/// secrets before sending, and ingest does not trust it to. With the metadata's secrets
/// by rule, the hook's apart from ingest's.
fn redacted(parsed: wire::ParsedEvent) -> (Event, crate::redact::Hits) {
    let mut event = parsed.event;
    let mut hits = crate::redact::Hits::default();
    if let Some(mut metadata) = parsed.unredacted_metadata {
        hits = crate::redact::redact_json_counted(&mut metadata);
        event.metadata = Some(metadata.to_string());
    }
    if let Some(git) = &mut event.git {
        for field in [&mut git.remote, &mut git.branch] {
            if let Some(text) = field.as_deref()
                && let std::borrow::Cow::Owned(redacted) = crate::redact::redact_text(text)
            {
                *field = Some(redacted);
            }
        }
    }
    (event, hits)
}

//! Who sent an OTLP export, and how its records reach their people. A person's token
//! (OTLP or hook) makes every record that person's. A service account's token (a
//! collector forwarding many people's exports) makes each record the person its
//! exported identity is mapped to (`auth::otlp_identities`): the export is split by
//! identity (`otlp::identity`), each known part stored as its person's, and the records
//! of identities nobody mapped are refused in `partial_success` and counted for
//! administrators (`/admin/adapters`), never stored under a guess.

use std::sync::Arc;

use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsPartialSuccess, ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsPartialSuccess, ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};

use super::error::IngestError;
use super::otlp_exports::{agent_of, store_logs, store_traces};
use super::otlp_metrics::store_metrics;
use crate::auth::otlp_identities::{self, Named};
use crate::auth::tokens::{self, TokenKind};
use crate::db;
use crate::metrics::Signal;
use crate::model::RunKind;
use crate::otlp::identity::{self, Identity};
use crate::state::AppState;

/// Whose an export's records are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Sender {
    /// A person's own OTLP or hook token, and the run kind a harness's hook token fixes.
    Person(String, Option<RunKind>),
    /// A service account's OTLP token: each record names its person.
    Service { token_id: String },
}

/// The sender an OTLP or hook token's secret belongs to.
pub(crate) async fn sender_of(state: &Arc<AppState>, secret: String) -> Result<Sender, IngestError> {
    let pool = state.readers.clone();
    let now_ms = state.clock.now_ms();
    let sender = db::blocking(move || {
        let conn = pool.get()?;
        if let Some(owner) = tokens::verify(&conn, &secret, TokenKind::Otlp, now_ms)? {
            return Ok(Some(match otlp_identities::is_service(&conn, &owner.token_id)? {
                true => Sender::Service { token_id: owner.token_id },
                false => Sender::Person(owner.user_id, None),
            }));
        }
        let owner = tokens::verify(&conn, &secret, TokenKind::Hook, now_ms)?;
        Ok(owner.map(|owner| Sender::Person(owner.user_id, owner.run_kind)))
    })
    .await?;
    sender.ok_or(IngestError::Unauthorized)
}

/// A logs export from `sender`, stored and answered.
pub(crate) async fn logs(
    state: &Arc<AppState>,
    sender: &Sender,
    request: &ExportLogsServiceRequest,
    received: std::time::Instant,
) -> Result<ExportLogsServiceResponse, IngestError> {
    let token_id = match sender {
        Sender::Person(user_id, fixed) => return store_logs(state, user_id, *fixed, request, received).await,
        Sender::Service { token_id } => token_id,
    };
    let parts = identity::split_logs(request);
    let people = resolve(state, token_id, parts.iter().map(|(identity, _, count)| (identity, *count))).await?;
    let mut refused = Refused::default();
    for ((_, part, count), person) in parts.iter().zip(people) {
        let agent =
            || agent_of(part.resource_logs.first().and_then(|r| r.resource.as_ref()).map_or(&[], |r| &r.attributes));
        match person {
            Some(Named::Person(user_id)) => {
                let answer = store_logs(state, &user_id, None, part, received).await?;
                refused.add_answer(answer.partial_success.map(|p| (p.rejected_log_records, p.error_message)));
            }
            Some(Named::Disabled(_)) => refused.add_disabled(state, Signal::Logs, agent(), *count),
            None => refused.add_unknown(state, Signal::Logs, agent(), *count),
        }
    }
    Ok(ExportLogsServiceResponse {
        partial_success: refused.message("log records").map(|(rejected_log_records, error_message)| {
            ExportLogsPartialSuccess { rejected_log_records, error_message }
        }),
    })
}

/// A traces export from `sender`, stored and answered.
pub(crate) async fn traces(
    state: &Arc<AppState>,
    sender: &Sender,
    request: &ExportTraceServiceRequest,
    received: std::time::Instant,
) -> Result<ExportTraceServiceResponse, IngestError> {
    let token_id = match sender {
        Sender::Person(user_id, fixed) => return store_traces(state, user_id, *fixed, request, received).await,
        Sender::Service { token_id } => token_id,
    };
    let parts = identity::split_traces(request);
    let people = resolve(state, token_id, parts.iter().map(|(identity, _, count)| (identity, *count))).await?;
    let mut refused = Refused::default();
    for ((_, part, count), person) in parts.iter().zip(people) {
        let agent =
            || agent_of(part.resource_spans.first().and_then(|r| r.resource.as_ref()).map_or(&[], |r| &r.attributes));
        match person {
            Some(Named::Person(user_id)) => {
                let answer = store_traces(state, &user_id, None, part, received).await?;
                refused.add_answer(answer.partial_success.map(|p| (p.rejected_spans, p.error_message)));
            }
            Some(Named::Disabled(_)) => refused.add_disabled(state, Signal::Traces, agent(), *count),
            None => refused.add_unknown(state, Signal::Traces, agent(), *count),
        }
    }
    Ok(ExportTraceServiceResponse {
        partial_success: refused
            .message("spans")
            .map(|(rejected_spans, error_message)| ExportTracePartialSuccess { rejected_spans, error_message }),
    })
}

/// A metrics export from `sender`, stored and answered.
pub(crate) async fn metrics(
    state: &Arc<AppState>,
    sender: &Sender,
    request: &ExportMetricsServiceRequest,
) -> Result<ExportMetricsServiceResponse, IngestError> {
    let token_id = match sender {
        Sender::Person(user_id, _) => return store_metrics(state, user_id, request).await,
        Sender::Service { token_id } => token_id,
    };
    let parts = identity::split_metrics(request);
    let people = resolve(state, token_id, parts.iter().map(|(identity, _, count)| (identity, *count))).await?;
    let mut refused = Refused::default();
    for ((_, part, count), person) in parts.iter().zip(people) {
        let agent =
            || agent_of(part.resource_metrics.first().and_then(|r| r.resource.as_ref()).map_or(&[], |r| &r.attributes));
        match person {
            Some(Named::Person(user_id)) => {
                let answer = store_metrics(state, &user_id, part).await?;
                refused.add_answer(answer.partial_success.map(|p| (p.rejected_data_points, p.error_message)));
            }
            Some(Named::Disabled(_)) => refused.add_disabled(state, Signal::Metrics, agent(), *count),
            None => refused.add_unknown(state, Signal::Metrics, agent(), *count),
        }
    }
    Ok(ExportMetricsServiceResponse {
        partial_success: refused.message("data points").map(|(rejected_data_points, error_message)| {
            ExportMetricsPartialSuccess { rejected_data_points, error_message }
        }),
    })
}

/// Whom each identity names (the first of its attributes that is mapped), in order;
/// the identities mapped to nobody are counted, under their first attribute (or
/// `(none)` for records that carry no identity at all), for administrators.
async fn resolve(
    state: &Arc<AppState>,
    token_id: &str,
    identities: impl Iterator<Item = (&Identity, u64)>,
) -> Result<Vec<Option<Named>>, IngestError> {
    let identities: Vec<(Identity, u64)> = identities.map(|(identity, count)| (identity.clone(), count)).collect();
    let pool = state.readers.clone();
    let asked = identities.clone();
    let people = db::blocking(move || {
        let conn = pool.get()?;
        asked
            .iter()
            .map(|(identity, _)| {
                for (attribute, value) in identity {
                    if let Some(person) = otlp_identities::person_of(&conn, attribute, value)? {
                        return Ok(Some(person));
                    }
                }
                Ok(None)
            })
            .collect::<Result<Vec<_>, db::DbError>>()
    })
    .await?;
    let unknown: Vec<(String, String, u64)> = identities
        .iter()
        .zip(&people)
        .filter(|(_, person)| person.is_none())
        .map(|((identity, count), _)| match identity.first() {
            Some((attribute, value)) => (attribute.to_string(), value.clone(), *count),
            None => ("(none)".to_string(), String::new(), *count),
        })
        .collect();
    if !unknown.is_empty() {
        let (token_id, now_ms) = (token_id.to_string(), state.clock.now_ms());
        state
            .writer
            .transact(move |tx| {
                for (attribute, value, count) in &unknown {
                    otlp_identities::count_unknown(tx, attribute, value, *count, &token_id, now_ms)?;
                }
                otlp_identities::bound_unknown(tx)?;
                Ok(())
            })
            .await?;
    }
    Ok(people)
}

/// The records an export refused: those its people's parts refused, and those of
/// identities no mapping names.
#[derive(Default)]
struct Refused {
    rejected: i64,
    unknown: u64,
    disabled: u64,
    reasons: Vec<String>,
}

impl Refused {
    fn add_answer(&mut self, refused: Option<(i64, String)>) {
        if let Some((rejected, message)) = refused {
            self.rejected += rejected;
            if self.reasons.len() < 3 {
                self.reasons.push(message);
            }
        }
    }

    /// Records of an identity nobody mapped: refused, and counted so in `/metrics`.
    fn add_unknown(&mut self, state: &AppState, signal: Signal, agent: &str, count: u64) {
        self.rejected += count as i64;
        self.unknown += count;
        state.metrics.count_otlp_records(signal, agent, 0, 0, count);
    }

    /// Records mapped to a disabled person: refused, and counted so in `/metrics`.
    fn add_disabled(&mut self, state: &AppState, signal: Signal, agent: &str, count: u64) {
        self.rejected += count as i64;
        self.disabled += count;
        state.metrics.count_otlp_records(signal, agent, 0, 0, count);
    }

    fn message(self, what: &str) -> Option<(i64, String)> {
        let mut reasons = self.reasons;
        if self.disabled > 0 {
            reasons.insert(
                0,
                format!(
                    "{} {what} from identities mapped to a disabled person (enable them, or map the \
                     identity to someone else, in /admin/adapters)",
                    self.disabled
                ),
            );
        }
        if self.unknown > 0 {
            reasons.insert(
                0,
                format!(
                    "{} {what} from identities no administrator has mapped to a person \
                     (user.email, user.account_uuid or user.id; map them in /admin/adapters)",
                    self.unknown
                ),
            );
        }
        (self.rejected > 0).then(|| (self.rejected, reasons.join("; ")))
    }
}

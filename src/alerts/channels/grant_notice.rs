//! An access-grant request told to the alert channels, so an administrator decides it
//! while the investigator still needs it. It rides the alert notice's delivery (retries,
//! every channel on its own) with payloads of its own kind (`grant.requested`).
//!
//! Invariant: the notice names nobody (a chat channel is often a shared room).

use std::time::Duration;

use super::{Attempt, Channel, Notice, deliver};
use crate::alerts::machine::Step;
use crate::alerts::store::Transition;

/// What a notice of a grant request is called in attempts and payloads.
pub const GRANT_REQUESTED: &str = "grant_requested";

/// Tells the channels that an access grant waits for an administrator's decision, each
/// with its retries. The notice names nobody (a chat channel is often a shared room):
/// `detail` says what was asked and where to decide, and the console says who.
pub fn grant_requested(
    channels: &[Channel],
    grant_id: &str,
    detail: String,
    now_ms: &dyn Fn() -> i64,
    pause: &dyn Fn(Duration),
) -> Vec<Attempt> {
    let transition = Transition {
        // Not an alert: no payload of a grant request says a rule.
        rule: crate::alerts::rules::Rule::JobSlo,
        subject: String::new(),
        step: Step::Open { notify: true },
        event_id: Some(grant_id.to_string()),
        value: 0.0,
        threshold: 0.0,
        detail,
    };
    let notice = Notice { transition: &transition, event_id: grant_id, what: GRANT_REQUESTED };
    deliver(channels, &[notice], now_ms, pause)
}

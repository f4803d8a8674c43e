//! The run kind a CI job or an evaluation harness gives its agent's runs: it sets
//! `SIGHTLINE_RUN_KIND` in the agent's environment, and the hook puts it on every event it
//! records, so those sessions are stored under their kind and never reach a figure of
//! developer behaviour. Unset, events carry no `run_kind` (the server's default,
//! `INTERACTIVE`).
//!
//! Invariant: a value that is set but not understood never makes a machine's run count as
//! a person's. Someone set it to say the run is not interactive, so it is recorded as
//! `CI` (kept out of developer figures like every machine run) and the hook's log says
//! why; the agent is never stopped over it.

use crate::model::RunKind;
use crate::model::wire::Draft;

/// What `SIGHTLINE_RUN_KIND` says: the kind to stamp, and a warning for the log when the
/// value was not understood.
pub fn read(value: Option<&str>) -> (Option<RunKind>, Option<String>) {
    let Some(value) = value.map(str::trim).filter(|value| !value.is_empty()) else { return (None, None) };
    match RunKind::parse(&value.to_ascii_uppercase()) {
        Some(kind) => (Some(kind), None),
        None => (
            Some(RunKind::Ci),
            Some(format!(
                "SIGHTLINE_RUN_KIND={value:?} is not INTERACTIVE, CI or EVAL; the run is recorded as CI so it stays out of developer figures"
            )),
        ),
    }
}

/// Stamps `kind` on every event.
pub fn stamp(events: &mut [Draft], kind: RunKind) {
    for event in events {
        event.set_run_kind(kind);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_names_a_run_kind_in_any_case() {
        assert_eq!(read(None), (None, None));
        assert_eq!(read(Some("  ")), (None, None));
        assert_eq!(read(Some("EVAL")), (Some(RunKind::Eval), None));
        assert_eq!(read(Some("eval")), (Some(RunKind::Eval), None));
        assert_eq!(read(Some(" ci ")), (Some(RunKind::Ci), None));
        assert_eq!(read(Some("Interactive")), (Some(RunKind::Interactive), None));
    }

    #[test]
    fn a_value_not_understood_keeps_the_run_out_of_developer_figures_and_says_why() {
        let (kind, warning) = read(Some("EVALS"));
        assert_eq!(kind, Some(RunKind::Ci));
        let warning = warning.unwrap();
        assert!(warning.contains("SIGHTLINE_RUN_KIND=\"EVALS\"") && warning.contains("recorded as CI"), "{warning}");
    }

    #[test]
    fn every_event_is_stamped() {
        let mut events = vec![Draft::default(), Draft::default()];
        stamp(&mut events, RunKind::Eval);
        assert!(events.iter().all(|event| event.run_kind() == Some(RunKind::Eval)), "{events:?}");
    }
}

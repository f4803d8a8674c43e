//! The evaluation cell a harness runs its agent for: it sets `SIGHTLINE_EVAL_CELL`
//! (`<harness>__<model>__<task_id>__r<repeat>`, the results database's cell id) and, if it
//! likes, `SIGHTLINE_EVAL_RUN` and `SIGHTLINE_EVAL_PHASE` in the agent's environment; the
//! hook puts them on every event as the `eval` object, and the server links the session
//! to its cell.
//!
//! Invariant: naming a cell makes the run an evaluation run (`EVAL`) unless
//! `SIGHTLINE_RUN_KIND` says otherwise, so it never reaches developer figures. A cell id
//! of another shape is not sent (the server would refuse the events): the run is still
//! recorded under its kind and the hook's log says why. The agent is never stopped over it.

use crate::model::eval_cell::{self, MAX_PHASE_CHARS, MAX_RUN_NAME_CHARS};
use crate::model::wire::{Draft, DraftEval};

/// What the three variables say: the `eval` object to stamp, and warnings for the log.
pub fn read(cell: Option<&str>, run: Option<&str>, phase: Option<&str>) -> (Option<DraftEval>, Vec<String>) {
    let set = |value: Option<&str>| value.map(str::trim).filter(|value| !value.is_empty()).map(str::to_string);
    let Some(cell) = set(cell) else { return (None, Vec::new()) };
    let mut warnings = Vec::new();
    if let Err(reason) = eval_cell::parse_cell_id(&cell) {
        warnings.push(format!("SIGHTLINE_EVAL_CELL={cell:?} {reason}; the session is not linked to a cell"));
        return (None, warnings);
    }
    let mut checked = |name: &str, value: Option<String>, max: usize| {
        let value = value?;
        match eval_cell::check_name(&value, max) {
            Ok(()) => Some(value),
            Err(reason) => {
                warnings.push(format!("{name}={value:?} {reason}; it is left out"));
                None
            }
        }
    };
    let run_name = checked("SIGHTLINE_EVAL_RUN", set(run), MAX_RUN_NAME_CHARS);
    let phase = checked("SIGHTLINE_EVAL_PHASE", set(phase), MAX_PHASE_CHARS);
    (Some(DraftEval { cell_id: Some(cell), run_name, phase }), warnings)
}

/// Puts the `eval` object on every event.
pub fn stamp(events: &mut [Draft], tag: &DraftEval) {
    for event in events {
        event.eval = Some(tag.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_named_cell_becomes_the_eval_object_with_its_run_and_phase() {
        let (tag, warnings) = read(Some(" h__m__django__django-1__r0 "), Some("nightly"), Some("review"));
        assert_eq!(
            serde_json::to_value(tag.unwrap()).unwrap(),
            json!({"cell_id": "h__m__django__django-1__r0", "run_name": "nightly", "phase": "review"})
        );
        assert!(warnings.is_empty());
        assert_eq!(read(None, Some("nightly"), None), (None, Vec::new()));
        assert_eq!(read(Some(""), None, None), (None, Vec::new()));
    }

    #[test]
    fn a_cell_of_another_shape_is_not_sent_and_the_log_says_why() {
        let (tag, warnings) = read(Some("task-7"), Some("nightly"), None);
        assert!(tag.is_none());
        assert!(
            warnings[0].contains("SIGHTLINE_EVAL_CELL=\"task-7\"") && warnings[0].contains("shape"),
            "{warnings:?}"
        );
        let (tag, warnings) = read(Some("h__m__t__r1"), Some("a\u{1b}b"), None);
        assert_eq!(serde_json::to_value(tag.unwrap()).unwrap(), json!({"cell_id": "h__m__t__r1"}));
        assert!(warnings[0].contains("SIGHTLINE_EVAL_RUN"), "{warnings:?}");
    }

    #[test]
    fn every_event_is_stamped() {
        let mut events = vec![Draft::default(), Draft::default()];
        let tag = DraftEval { cell_id: Some("h__m__t__r0".into()), ..DraftEval::default() };
        stamp(&mut events, &tag);
        assert!(events.iter().all(|event| event.eval.as_ref() == Some(&tag)), "{events:?}");
    }
}

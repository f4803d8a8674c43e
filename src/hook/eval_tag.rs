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

use serde_json::{Value, json};

use crate::model::eval_cell::{self, MAX_PHASE_CHARS, MAX_RUN_NAME_CHARS};

/// What the three variables say: the `eval` object to stamp, and warnings for the log.
pub fn read(cell: Option<&str>, run: Option<&str>, phase: Option<&str>) -> (Option<Value>, Vec<String>) {
    let set = |value: Option<&str>| value.map(str::trim).filter(|value| !value.is_empty()).map(str::to_string);
    let Some(cell) = set(cell) else { return (None, Vec::new()) };
    let mut warnings = Vec::new();
    if let Err(reason) = eval_cell::parse_cell_id(&cell) {
        warnings.push(format!("SIGHTLINE_EVAL_CELL={cell:?} {reason}; the session is not linked to a cell"));
        return (None, warnings);
    }
    let mut tag = json!({ "cell_id": cell });
    for (name, key, value, max) in [
        ("SIGHTLINE_EVAL_RUN", "run_name", set(run), MAX_RUN_NAME_CHARS),
        ("SIGHTLINE_EVAL_PHASE", "phase", set(phase), MAX_PHASE_CHARS),
    ] {
        let Some(value) = value else { continue };
        match eval_cell::check_name(&value, max) {
            Ok(()) => tag[key] = Value::from(value),
            Err(reason) => warnings.push(format!("{name}={value:?} {reason}; it is left out")),
        }
    }
    (Some(tag), warnings)
}

/// Puts the `eval` object on every event.
pub fn stamp(events: &mut [Value], tag: &Value) {
    for event in events {
        event["eval"] = tag.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_cell_becomes_the_eval_object_with_its_run_and_phase() {
        let (tag, warnings) = read(Some(" h__m__django__django-1__r0 "), Some("nightly"), Some("review"));
        assert_eq!(
            tag.unwrap(),
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
        assert_eq!(tag.unwrap(), json!({"cell_id": "h__m__t__r1"}));
        assert!(warnings[0].contains("SIGHTLINE_EVAL_RUN"), "{warnings:?}");
    }

    #[test]
    fn every_event_is_stamped() {
        let mut events = vec![json!({"type": "session_start"}), json!({"type": "tool_start"})];
        stamp(&mut events, &json!({"cell_id": "h__m__t__r0"}));
        assert!(events.iter().all(|event| event["eval"]["cell_id"] == "h__m__t__r0"), "{events:?}");
    }
}

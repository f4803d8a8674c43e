//! The evaluation cell an agent's session was run for: what a harness names in the
//! agent's environment (`SIGHTLINE_EVAL_CELL`, `SIGHTLINE_EVAL_RUN`,
//! `SIGHTLINE_EVAL_PHASE`) or in its OpenTelemetry resource (`sightline.eval.cell`, …),
//! carried on the wire as an event's `eval` object and kept on the session.
//!
//! Invariant: a cell id has the shape of the results database's,
//! `<harness>__<model>__<task_id>__r<repeat>`, where the task id may itself hold `__`
//! (SWE-bench's `django__django-11099`): the harness is the first part, the model the
//! second, the repeat the last (`r` and digits), the task everything between. Anything
//! else is refused by name, so a link never points at a cell that cannot exist.

use serde::Serialize;

pub const MAX_CELL_ID_CHARS: usize = 400;
pub const MAX_RUN_NAME_CHARS: usize = 200;
pub const MAX_PHASE_CHARS: usize = 100;

/// What a session says about the evaluation it was run for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EvalTag {
    pub cell_id: String,
    /// The harness's run name, when it said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_name: Option<String>,
    /// The phase of a multi-phase cell this session was (`harness_metadata.phases[].name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// A cell id's parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellParts<'a> {
    pub harness: &'a str,
    pub model: &'a str,
    pub task_id: &'a str,
    pub repeat: u32,
}

/// Splits a cell id into its parts, or says what is wrong with it.
pub fn parse_cell_id(cell_id: &str) -> Result<CellParts<'_>, String> {
    const SHAPE: &str = "must have the shape <harness>__<model>__<task_id>__r<repeat>";
    if cell_id.is_empty() {
        return Err("must not be empty".into());
    }
    if cell_id.chars().count() > MAX_CELL_ID_CHARS {
        return Err(format!("is longer than {MAX_CELL_ID_CHARS} characters"));
    }
    if cell_id.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("must not contain spaces or control characters".into());
    }
    let (harness, rest) = cell_id.split_once("__").ok_or(SHAPE)?;
    let (model, rest) = rest.split_once("__").ok_or(SHAPE)?;
    let (task_id, repeat) = rest.rsplit_once("__").ok_or(SHAPE)?;
    let repeat = repeat
        .strip_prefix('r')
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|digits| digits.parse::<u32>().ok())
        .ok_or_else(|| format!("{SHAPE} (the repeat is r and a number)"))?;
    if harness.is_empty() || model.is_empty() || task_id.is_empty() {
        return Err(format!("{SHAPE} (no part may be empty)"));
    }
    Ok(CellParts { harness, model, task_id, repeat })
}

/// Checks a run or phase name: present, not too long, no control characters.
pub fn check_name(value: &str, max_chars: usize) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if value.chars().count() > max_chars {
        return Err(format!("is longer than {max_chars} characters"));
    }
    if value.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_id_splits_into_harness_model_task_and_repeat() {
        let parts = parse_cell_id("claude-code__claude-sonnet-4-5__django__django-11099__r2").unwrap();
        assert_eq!(
            parts,
            CellParts {
                harness: "claude-code",
                model: "claude-sonnet-4-5",
                task_id: "django__django-11099",
                repeat: 2
            }
        );
        assert_eq!(parse_cell_id("h__m__t__r0").unwrap().task_id, "t");
    }

    #[test]
    fn a_cell_id_of_another_shape_is_refused_saying_why() {
        for (bad, says) in [
            ("", "empty"),
            ("h__m__t", "shape"),
            ("h__m__t__2", "repeat"),
            ("h__m__t__r", "repeat"),
            ("h__m__t__rx", "repeat"),
            ("__m__t__r1", "empty"),
            ("h____t__r1", "empty"),
            ("h__m__t x__r1", "spaces"),
            ("h__m__t\n__r1", "control"),
        ] {
            let err = parse_cell_id(bad).unwrap_err();
            assert!(err.contains(says), "{bad:?}: {err}");
        }
        assert!(parse_cell_id(&format!("h__m__{}__r1", "t".repeat(MAX_CELL_ID_CHARS))).is_err());
    }

    #[test]
    fn names_must_be_short_printable_text() {
        assert!(check_name("nightly-2026-11-27", MAX_RUN_NAME_CHARS).is_ok());
        assert!(check_name(" ", MAX_RUN_NAME_CHARS).is_err());
        assert!(check_name("a\u{7}", MAX_RUN_NAME_CHARS).is_err());
        assert!(check_name(&"a".repeat(MAX_PHASE_CHARS + 1), MAX_PHASE_CHARS).is_err());
    }
}

//! Feedback on a session, from its owner only: thumbs up or down, a note (redacted like
//! everything else a person types that we keep), and the rubric's two questions, whose
//! answers are stored as `HUMAN` scores with `rubric_version` on the feedback row.
//!
//! Invariants: only the session's owner gives feedback (anyone else's id is "not
//! found"); giving it again replaces it; the note never holds a secret the redaction
//! rules recognise.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::registry::{self, Scorer};
use crate::db::DbError;

/// The rubric's version, written on each feedback row.
pub const RUBRIC_VERSION: i64 = 1;
/// Longest note kept (characters).
pub const NOTE_MAX_CHARS: usize = 2_000;

/// An answer to one of the rubric's questions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Yes,
    Partly,
    No,
}

impl Answer {
    pub fn parse(text: &str) -> Option<Answer> {
        match text {
            "yes" => Some(Answer::Yes),
            "partly" => Some(Answer::Partly),
            "no" => Some(Answer::No),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Yes => "yes",
            Answer::Partly => "partly",
            Answer::No => "no",
        }
    }

    fn value(self) -> f64 {
        match self {
            Answer::Yes => 1.0,
            Answer::Partly => 0.5,
            Answer::No => 0.0,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Feedback {
    /// 1 up, -1 down.
    pub thumbs: Option<i64>,
    pub note: Option<String>,
    /// "Did the agent get the task done?"
    pub done: Option<Answer>,
    /// "Could you leave it to work without steering?"
    pub unsteered: Option<Answer>,
}

fn put_answer(
    tx: &Transaction<'_>,
    session_id: &str,
    scorer: &Scorer,
    answer: Option<Answer>,
    now_ms: i64,
) -> Result<(), DbError> {
    match answer {
        Some(answer) => tx.execute(
            "INSERT INTO scores (subject_type, subject_id, scorer_name, scorer_version, period_start_ms, value, label,
               source, created_at_ms)
             VALUES ('session', ?1, ?2, ?3, 0, ?4, ?5, 'HUMAN', ?6)
             ON CONFLICT (subject_type, subject_id, scorer_name, scorer_version, period_start_ms) DO UPDATE SET
               value = excluded.value, label = excluded.label, created_at_ms = excluded.created_at_ms",
            params![session_id, scorer.name, scorer.version, answer.value(), answer.as_str(), now_ms],
        )?,
        None => tx.execute(
            "DELETE FROM scores WHERE subject_type = 'session' AND subject_id = ?1 AND scorer_name = ?2
               AND scorer_version = ?3",
            params![session_id, scorer.name, scorer.version],
        )?,
    };
    Ok(())
}

/// Stores the owner's feedback on their session; false when the session is not theirs.
pub fn save(
    tx: &Transaction<'_>,
    user_id: &str,
    session_id: &str,
    feedback: &Feedback,
    now_ms: i64,
) -> Result<bool, DbError> {
    let owner: Option<String> =
        tx.query_row("SELECT user_id FROM sessions WHERE id = ?1", [session_id], |r| r.get(0)).optional()?;
    if owner.as_deref() != Some(user_id) {
        return Ok(false);
    }
    let note = feedback
        .note
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| crate::redact::redact_text(&n.chars().take(NOTE_MAX_CHARS).collect::<String>()).into_owned());
    tx.execute(
        "INSERT INTO session_feedback (session_id, user_id, thumbs, note, rubric_version, created_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (session_id) DO UPDATE SET thumbs = excluded.thumbs, note = excluded.note,
           rubric_version = excluded.rubric_version, created_at_ms = excluded.created_at_ms",
        params![session_id, user_id, feedback.thumbs, note, RUBRIC_VERSION, now_ms],
    )?;
    put_answer(tx, session_id, &registry::FEEDBACK_DONE, feedback.done, now_ms)?;
    put_answer(tx, session_id, &registry::FEEDBACK_UNSTEERED, feedback.unsteered, now_ms)?;
    Ok(true)
}

/// The feedback on a session, if its owner gave any.
pub fn get(conn: &Connection, session_id: &str) -> Result<Option<Feedback>, DbError> {
    let row: Option<(Option<i64>, Option<String>)> = conn
        .query_row("SELECT thumbs, note FROM session_feedback WHERE session_id = ?1", [session_id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let Some((thumbs, note)) = row else { return Ok(None) };
    let answer = |scorer: &Scorer| -> Result<Option<Answer>, DbError> {
        let label: Option<String> = conn
            .query_row(
                "SELECT label FROM scores WHERE subject_type = 'session' AND subject_id = ?1 AND scorer_name = ?2
                   AND scorer_version = ?3",
                params![session_id, scorer.name, scorer.version],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        Ok(label.as_deref().and_then(Answer::parse))
    };
    Ok(Some(Feedback {
        thumbs,
        note,
        done: answer(&registry::FEEDBACK_DONE)?,
        unsteered: answer(&registry::FEEDBACK_UNSTEERED)?,
    }))
}

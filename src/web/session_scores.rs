//! A session's scores as its page shows them: each in words, with what it means, the
//! scorer and version on hover, and in context: the organisation's middle half of the
//! same score over the last 90 days, and, for the owner only, their own usual (median).
//!
//! Invariants: a person's usual is read only when the reader is that person; the
//! organisation's band only when it covers at least `analytics.min_group_size` people
//! (`scoring::bands`); a yes/no score gets no band (a range of 0 and 1 says nothing).

use rusqlite::Connection;

use crate::db::DbError;
use crate::scoring::bands::{self, Band};
use crate::scoring::store::ShownScore;

/// One row of the page's scores table.
pub struct ScoreLine {
    /// The scorer's name in words, and its key and version (the hover).
    pub name: &'static str,
    pub version: String,
    pub value: String,
    pub meaning: &'static str,
    /// The owner's median of this score ("—" when they have too few sessions); `None`
    /// for any other reader.
    pub usual: Option<String>,
    /// The organisation's middle half ("40%–70%"), or why there is none.
    pub band: String,
}

/// A score's value in its unit, compactly ("55%", "3", "12.5"), for the bands.
fn amount(name: &str, value: f64) -> Option<String> {
    Some(match name {
        "step_efficiency" | "denial_retry_success" | "effectiveness" | "judge" => format!("{:.0}%", value * 100.0),
        "friction" => format!("{value:.1}"),
        "retry_loops" | "edit_thrash" | "redundant_reads" => format!("{value:.0}"),
        _ => return None,
    })
}

fn range(band: &Band) -> Option<String> {
    let (low, high) = (amount(&band.scorer_name, band.low)?, amount(&band.scorer_name, band.high)?);
    Some(if low == high { low } else { format!("{low}–{high}") })
}

/// A score as the page writes it: a count, a share, a label, or why there is none.
pub fn shown(score: &ShownScore) -> String {
    let label = score.label.as_deref().unwrap_or("").replace('_', " ");
    let times = |v: f64, one: &str, many: &str| {
        let n = v.round() as i64;
        if n == 1 { format!("1 {one}") } else { format!("{n} {many}") }
    };
    match (score.scorer.name, score.value) {
        ("step_efficiency", Some(v)) => format!("{:.0}% of tool calls ({label})", v * 100.0),
        ("denial_retry_success", Some(v)) => format!("{:.0}% of denied calls", v * 100.0),
        ("tests_before_merge", Some(v)) => format!("{} ({label})", if v > 0.0 { "yes" } else { "no" }),
        ("friction", Some(v)) => format!("{v:.1} of 100 (higher: more friction)"),
        ("retry_loops", Some(v)) => times(v, "loop", "loops"),
        ("edit_thrash", Some(v)) => times(v, "return to a file", "returns to files"),
        ("redundant_reads", Some(v)) => times(v, "read", "reads"),
        ("feedback_done" | "feedback_unsteered", Some(v)) => match v {
            v if v >= 1.0 => "yes".into(),
            v if v > 0.0 => "partly".into(),
            _ => "no".into(),
        },
        ("effectiveness" | "judge", Some(v)) => format!("{:.0}%", v * 100.0),
        (_, Some(v)) => format!("{v}"),
        (_, None) => label,
    }
}

/// The lines of `scores`; `owner` is the reader's own user id when they own the session.
pub fn lines(
    conn: &Connection,
    scores: &[ShownScore],
    owner: Option<&str>,
    min_people: i64,
) -> Result<Vec<ScoreLine>, DbError> {
    let mut lines = Vec::with_capacity(scores.len());
    for score in scores {
        let (name, version) = (score.scorer.name, score.scorer.version);
        let comparable = amount(name, 0.0).is_some();
        let band = match comparable {
            false => String::new(),
            true => match bands::organisation(conn, name, version, min_people)? {
                Some(band) => range(&band).unwrap_or_default(),
                None => "not enough people yet".into(),
            },
        };
        let usual = match owner {
            Some(user_id) if comparable => Some(
                bands::own(conn, user_id, name, version)?
                    .and_then(|band| amount(name, band.middle))
                    .unwrap_or_else(|| "—".into()),
            ),
            Some(_) => Some(String::new()),
            None => None,
        };
        lines.push(ScoreLine {
            name: score.scorer.plain_name(),
            version: format!("{name} version {version}"),
            value: shown(score),
            meaning: score.scorer.definition,
            usual,
            band,
        });
    }
    Ok(lines)
}

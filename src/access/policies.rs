//! Visibility policies: four flags per user, each widening who may see their data.
//!
//! - `share_transcripts` (default **off**): anyone otherwise allowed to open one of my
//!   sessions (a team lead through drill-in, a grant holder) may also read its
//!   transcript. Off, nobody but me reads my transcripts.
//! - `team_drill_in` (default on): leads of my teams may open my individual sessions
//!   (audited).
//! - `named_in_team_views` (default on): my name appears in team rosters and per-person
//!   breakdowns; off, I am shown as an anonymous member.
//! - `judge_opt_in` (default off): the LLM judge may score my sessions.
//!
//! Invariants: a user may set their own flags either way; an administrator may only
//! clear flags (never opt anyone up), and every administrator change is audited.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::audit::{self, Action, Entry};
use crate::db::DbError;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Visibility {
    pub share_transcripts: bool,
    pub team_drill_in: bool,
    pub named_in_team_views: bool,
    pub judge_opt_in: bool,
}

impl Default for Visibility {
    fn default() -> Self {
        Visibility { share_transcripts: false, team_drill_in: true, named_in_team_views: true, judge_opt_in: false }
    }
}

/// A partial update: absent flags stay as they are.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisibilityChange {
    pub share_transcripts: Option<bool>,
    pub team_drill_in: Option<bool>,
    pub named_in_team_views: Option<bool>,
    pub judge_opt_in: Option<bool>,
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("an administrator can only turn {0} off, never on")]
    WouldRaise(&'static str),
    #[error("no such user")]
    NoSuchUser,
    #[error(transparent)]
    Db(#[from] DbError),
}

impl Visibility {
    fn apply(self, change: VisibilityChange) -> Visibility {
        Visibility {
            share_transcripts: change.share_transcripts.unwrap_or(self.share_transcripts),
            team_drill_in: change.team_drill_in.unwrap_or(self.team_drill_in),
            named_in_team_views: change.named_in_team_views.unwrap_or(self.named_in_team_views),
            judge_opt_in: change.judge_opt_in.unwrap_or(self.judge_opt_in),
        }
    }

    /// The first flag `next` turns on that `self` has off.
    fn first_raised(self, next: Visibility) -> Option<&'static str> {
        [
            ("share_transcripts", self.share_transcripts, next.share_transcripts),
            ("team_drill_in", self.team_drill_in, next.team_drill_in),
            ("named_in_team_views", self.named_in_team_views, next.named_in_team_views),
            ("judge_opt_in", self.judge_opt_in, next.judge_opt_in),
        ]
        .into_iter()
        .find(|(_, before, after)| !before && *after)
        .map(|(name, _, _)| name)
    }
}

pub fn get(conn: &Connection, user_id: &str) -> Result<Visibility, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT share_transcripts, team_drill_in, named_in_team_views, judge_opt_in
         FROM visibility_policies WHERE user_id = ?1",
    )?;
    Ok(stmt
        .query_row([user_id], |row| {
            Ok(Visibility {
                share_transcripts: row.get(0)?,
                team_drill_in: row.get(1)?,
                named_in_team_views: row.get(2)?,
                judge_opt_in: row.get(3)?,
            })
        })
        .optional()?
        .unwrap_or_default())
}

fn store(conn: &Connection, user_id: &str, policy: Visibility, by: &str, now_ms: i64) -> Result<(), DbError> {
    conn.execute(
        "INSERT INTO visibility_policies
             (user_id, share_transcripts, team_drill_in, named_in_team_views, judge_opt_in, updated_at_ms, updated_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (user_id) DO UPDATE SET share_transcripts = excluded.share_transcripts,
             team_drill_in = excluded.team_drill_in, named_in_team_views = excluded.named_in_team_views,
             judge_opt_in = excluded.judge_opt_in, updated_at_ms = excluded.updated_at_ms,
             updated_by = excluded.updated_by",
        params![
            user_id,
            policy.share_transcripts,
            policy.team_drill_in,
            policy.named_in_team_views,
            policy.judge_opt_in,
            now_ms,
            by
        ],
    )?;
    Ok(())
}

/// The user changes their own flags, either way.
pub fn set_own(conn: &Connection, user_id: &str, change: VisibilityChange, now_ms: i64) -> Result<Visibility, DbError> {
    let next = get(conn, user_id)?.apply(change);
    store(conn, user_id, next, user_id, now_ms)?;
    Ok(next)
}

/// An administrator lowers another user's flags; raising any flag is refused and
/// nothing is written.
pub fn lower(
    conn: &Connection,
    admin_id: &str,
    user_id: &str,
    change: VisibilityChange,
    now_ms: i64,
) -> Result<Visibility, PolicyError> {
    if crate::auth::users::by_id(conn, user_id)?.is_none() {
        return Err(PolicyError::NoSuchUser);
    }
    let current = get(conn, user_id)?;
    let next = current.apply(change);
    if let Some(flag) = current.first_raised(next) {
        return Err(PolicyError::WouldRaise(flag));
    }
    store(conn, user_id, next, admin_id, now_ms)?;
    audit::record(
        conn,
        &Entry {
            actor_id: Some(admin_id),
            action: Action::PolicyLowered,
            subject_user_id: Some(user_id),
            target: Some(user_id),
            detail: serde_json::json!({ "before": current, "after": next }),
        },
        now_ms,
    )?;
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_keep_transcripts_private() {
        let policy = Visibility::default();
        assert!(!policy.share_transcripts);
        assert!(!policy.judge_opt_in);
    }

    #[test]
    fn raising_is_detected_flag_by_flag() {
        let all_off = Visibility {
            share_transcripts: false,
            team_drill_in: false,
            named_in_team_views: false,
            judge_opt_in: false,
        };
        assert_eq!(Visibility::default().first_raised(all_off), None);
        let raise = VisibilityChange { share_transcripts: Some(true), ..Default::default() };
        assert_eq!(Visibility::default().first_raised(Visibility::default().apply(raise)), Some("share_transcripts"));
        let raise = VisibilityChange { team_drill_in: Some(true), ..Default::default() };
        assert_eq!(all_off.first_raised(all_off.apply(raise)), Some("team_drill_in"));
    }
}

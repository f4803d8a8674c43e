//! Governance: how the organisation's privacy controls are used over a period: access
//! grants by outcome, audited reads of other people's data, how many people share
//! transcripts or allow drill-in, and deletion requests. Counts of acts and of people,
//! never who.
//!
//! Invariants: a count of people below `min_people` is returned as
//! [`PeopleCount::FewerThan`]; counts of acts (grants, reads, requests) are about the
//! process, not about anyone's work, and are shown as they are.

use rusqlite::{Connection, params};

use super::Period;
use super::adoption::PeopleCount;
use crate::db::DbError;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    pub requested: i64,
    pub approved: i64,
    pub denied: i64,
    pub revoked: i64,
    /// Approved grants whose time ran out in the period.
    pub expired: i64,
    /// Approved, unexpired and unrevoked at the end of the period.
    pub active: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sharing {
    pub people: i64,
    pub share_transcripts: PeopleCount,
    pub drill_in_off: PeopleCount,
    pub unnamed: PeopleCount,
    pub judge_opt_in: PeopleCount,
    /// Interactive sessions of the period with a stored transcript, and of those, shared.
    pub sessions_with_transcript: i64,
    pub sessions_shared: i64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Governance {
    pub grants: Grants,
    /// Audited acts of the period by action, the most frequent first.
    pub audited: Vec<(String, i64)>,
    pub sharing: Sharing,
}

pub fn read(conn: &Connection, period: Period, min_people: i64) -> Result<Governance, DbError> {
    let (from, to) = (period.from_ms, period.to_ms);
    let grants = conn.query_row(
        "SELECT count(*) FILTER (WHERE requested_at_ms >= ?1 AND requested_at_ms < ?2),
                count(*) FILTER (WHERE decided_at_ms >= ?1 AND decided_at_ms < ?2 AND status IN ('APPROVED', 'REVOKED')),
                count(*) FILTER (WHERE decided_at_ms >= ?1 AND decided_at_ms < ?2 AND status = 'DENIED'),
                count(*) FILTER (WHERE revoked_at_ms >= ?1 AND revoked_at_ms < ?2),
                count(*) FILTER (WHERE status = 'APPROVED' AND expires_at_ms >= ?1 AND expires_at_ms < ?2),
                count(*) FILTER (WHERE status = 'APPROVED' AND expires_at_ms >= ?2 AND decided_at_ms < ?2)
         FROM access_grants",
        params![from, to],
        |row| {
            Ok(Grants {
                requested: row.get(0)?,
                approved: row.get(1)?,
                denied: row.get(2)?,
                revoked: row.get(3)?,
                expired: row.get(4)?,
                active: row.get(5)?,
            })
        },
    )?;
    let mut stmt = conn.prepare_cached(
        "SELECT action, count(*) FROM audit_log WHERE at_ms >= ?1 AND at_ms < ?2 GROUP BY action ORDER BY 2 DESC, 1",
    )?;
    let audited = stmt.query_map(params![from, to], |row| Ok((row.get(0)?, row.get(1)?)))?.collect::<Result<_, _>>()?;
    let (people, share, drill_off, unnamed, judge): (i64, i64, i64, i64, i64) = conn.query_row(
        "SELECT count(*), coalesce(sum(coalesce(v.share_transcripts, 0)), 0),
                coalesce(sum(1 - coalesce(v.team_drill_in, 1)), 0), coalesce(sum(1 - coalesce(v.named_in_team_views, 1)), 0),
                coalesce(sum(coalesce(v.judge_opt_in, 0)), 0)
         FROM users u LEFT JOIN visibility_policies v ON v.user_id = u.id WHERE u.disabled_at_ms IS NULL",
        [],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?)),
    )?;
    let (with_transcript, shared): (i64, i64) = conn.query_row(
        "SELECT count(*), coalesce(sum(coalesce(s.transcript_shared, v.share_transcripts, 0)), 0)
         FROM sessions s LEFT JOIN visibility_policies v ON v.user_id = s.user_id
         WHERE s.first_event_ms >= ?1 AND s.first_event_ms < ?2 AND s.run_kind = 'INTERACTIVE'
           AND s.transcript_path IS NOT NULL",
        params![from, to],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    Ok(Governance {
        grants,
        audited,
        sharing: Sharing {
            people,
            share_transcripts: PeopleCount::of(share, min_people),
            drill_in_off: PeopleCount::of(drill_off, min_people),
            unnamed: PeopleCount::of(unnamed, min_people),
            judge_opt_in: PeopleCount::of(judge, min_people),
            sessions_with_transcript: with_transcript,
            sessions_shared: shared,
        },
    })
}

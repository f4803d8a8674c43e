//! The audit log: append-only rows of who did what to whose data. Written in the
//! same transaction as the act it records, so an act without its row cannot commit.
//!
//! Invariants: rows are never updated or deleted (not even by the deletion runner:
//! the record that someone read your data outlives the data); `detail` is a small
//! JSON object of ids and reasons, never content.

use rusqlite::{Connection, params};
use serde::Serialize;

use crate::db::DbError;

/// Every action the log knows. `GRANT_*` follow a grant's life; `SESSION_READ` and
/// `TRANSCRIPT_READ` are privileged reads by someone other than the owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Action {
    GrantRequested,
    GrantApproved,
    GrantDenied,
    GrantRevoked,
    GrantUsed,
    SessionRead,
    TranscriptRead,
    RefreshTokenReused,
    UserRoleChanged,
    UserDisabled,
    PolicyLowered,
    DeletionRequested,
    DeletionCompleted,
    /// The LLM judge read an opted-in owner's transcript.
    JudgeRead,
    /// A team page showed a member's own sessions, pull requests or figures to someone
    /// else (a team lead, or a grant holder).
    MemberViewed,
    /// An administrator acknowledged an alert event.
    AlertAcknowledged,
    /// An administrator silenced an alert event until a time.
    AlertSilenced,
    /// An administrator changed a job's schedule or switched it on or off.
    JobConfigured,
    /// An administrator started a job from the console or the API.
    JobRunRequested,
    /// An administrator made a member a team lead, or a lead a member.
    TeamRoleChanged,
    /// An administrator uploaded an operator price table.
    PriceTableUploaded,
    /// An administrator changed a team's raw-event retention.
    RetentionChanged,
    /// An administrator changed an alert rule's threshold or switched it on or off.
    AlertRuleChanged,
    /// An administrator set or removed a team's or a person's monthly budget.
    AlertBudgetChanged,
    /// An administrator switched an alert channel on or off.
    AlertChannelChanged,
    /// An administrator sent a test notice through an alert channel.
    AlertChannelTested,
    /// An administrator recorded a projection (a predicted saving).
    ProjectionRecorded,
    /// An administrator removed a projection.
    ProjectionRemoved,
    /// An administrator made a service-account OTLP token (a collector's).
    OtlpServiceTokenCreated,
    /// An administrator mapped an exported identity (`user.email`, …) to a person.
    OtlpIdentityMapped,
    /// An administrator removed such a mapping.
    OtlpIdentityUnmapped,
    /// An administrator added a person (one by one or from a CSV).
    UserAdded,
    /// An administrator enabled a disabled person again.
    UserEnabled,
    /// An administrator made a one-time link for a person to set their password.
    PasswordLinkMade,
    /// A person set their password with a one-time link.
    PasswordSetByLink,
    /// An administrator revoked every sign-in and token of a person.
    TokensRevoked,
    /// An administrator created a team.
    TeamCreated,
    /// An administrator renamed a team or moved it under another.
    TeamChanged,
    /// An administrator removed a person from a team.
    TeamMemberRemoved,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::GrantRequested => "GRANT_REQUESTED",
            Action::GrantApproved => "GRANT_APPROVED",
            Action::GrantDenied => "GRANT_DENIED",
            Action::GrantRevoked => "GRANT_REVOKED",
            Action::GrantUsed => "GRANT_USED",
            Action::SessionRead => "SESSION_READ",
            Action::TranscriptRead => "TRANSCRIPT_READ",
            Action::RefreshTokenReused => "REFRESH_TOKEN_REUSED",
            Action::UserRoleChanged => "USER_ROLE_CHANGED",
            Action::UserDisabled => "USER_DISABLED",
            Action::PolicyLowered => "POLICY_LOWERED",
            Action::DeletionRequested => "DELETION_REQUESTED",
            Action::DeletionCompleted => "DELETION_COMPLETED",
            Action::JudgeRead => "JUDGE_READ",
            Action::MemberViewed => "MEMBER_VIEWED",
            Action::AlertAcknowledged => "ALERT_ACKNOWLEDGED",
            Action::AlertSilenced => "ALERT_SILENCED",
            Action::JobConfigured => "JOB_CONFIGURED",
            Action::JobRunRequested => "JOB_RUN_REQUESTED",
            Action::TeamRoleChanged => "TEAM_ROLE_CHANGED",
            Action::PriceTableUploaded => "PRICE_TABLE_UPLOADED",
            Action::RetentionChanged => "RETENTION_CHANGED",
            Action::AlertRuleChanged => "ALERT_RULE_CHANGED",
            Action::AlertBudgetChanged => "ALERT_BUDGET_CHANGED",
            Action::AlertChannelChanged => "ALERT_CHANNEL_CHANGED",
            Action::AlertChannelTested => "ALERT_CHANNEL_TESTED",
            Action::ProjectionRecorded => "PROJECTION_RECORDED",
            Action::ProjectionRemoved => "PROJECTION_REMOVED",
            Action::OtlpServiceTokenCreated => "OTLP_SERVICE_TOKEN_CREATED",
            Action::OtlpIdentityMapped => "OTLP_IDENTITY_MAPPED",
            Action::OtlpIdentityUnmapped => "OTLP_IDENTITY_UNMAPPED",
            Action::UserAdded => "USER_ADDED",
            Action::UserEnabled => "USER_ENABLED",
            Action::PasswordLinkMade => "PASSWORD_LINK_MADE",
            Action::PasswordSetByLink => "PASSWORD_SET_BY_LINK",
            Action::TokensRevoked => "TOKENS_REVOKED",
            Action::TeamCreated => "TEAM_CREATED",
            Action::TeamChanged => "TEAM_CHANGED",
            Action::TeamMemberRemoved => "TEAM_MEMBER_REMOVED",
        }
    }
}

/// What an action did, in words addressed to the person it was about ("read your
/// transcript"), for their "Who read my data" page; `None` for an action not shown there
/// in words (the page then shows its code alone).
pub fn said_to_subject(action: &str) -> Option<&'static str> {
    Some(match action {
        "GRANT_REQUESTED" => "asked for access to your sessions",
        "GRANT_APPROVED" => "approved access to your sessions",
        "GRANT_DENIED" => "refused access to your sessions",
        "GRANT_REVOKED" => "ended access to your sessions",
        "GRANT_USED" => "read your session under an access grant",
        "SESSION_READ" => "read your session as your team lead",
        "TRANSCRIPT_READ" => "read your session's transcript as your team lead",
        "MEMBER_VIEWED" => "looked at your figures on a team page",
        "JUDGE_READ" => "read a judge's verdict on your session",
        "USER_ROLE_CHANGED" => "changed your role",
        "USER_DISABLED" => "disabled your account",
        "USER_ENABLED" => "enabled your account",
        "USER_ADDED" => "added you",
        "PASSWORD_LINK_MADE" => "made a link to set your password",
        "PASSWORD_SET_BY_LINK" => "set your password with a one-time link",
        "TOKENS_REVOKED" => "signed you out everywhere and revoked your tokens",
        "POLICY_LOWERED" => "lowered your privacy settings",
        "DELETION_REQUESTED" => "asked for your data to be deleted",
        "DELETION_COMPLETED" => "deleted your data",
        "TEAM_ROLE_CHANGED" => "changed your role in a team",
        "TEAM_MEMBER_REMOVED" => "removed you from a team",
        "REFRESH_TOKEN_REUSED" => "reused an old sign-in token (all your sign-ins were ended)",
        _ => return None,
    })
}

/// One row to append.
pub struct Entry<'a> {
    pub actor_id: Option<&'a str>,
    pub action: Action,
    pub subject_user_id: Option<&'a str>,
    pub target: Option<&'a str>,
    pub detail: serde_json::Value,
}

pub fn record(conn: &Connection, entry: &Entry<'_>, now_ms: i64) -> Result<String, DbError> {
    let id = uuid::Uuid::now_v7().to_string();
    conn.execute(
        "INSERT INTO audit_log (id, at_ms, actor_id, action, subject_user_id, target, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            id,
            now_ms,
            entry.actor_id,
            entry.action.as_str(),
            entry.subject_user_id,
            entry.target,
            entry.detail.to_string()
        ],
    )?;
    Ok(id)
}

/// A row as the subject sees it on `/me/settings/audit`.
#[derive(Clone, Debug, Serialize)]
pub struct AuditRow {
    pub id: String,
    pub at_ms: i64,
    pub actor_id: Option<String>,
    /// Filled by a caller that may read `users` (this module sits below `auth`).
    pub actor_email: Option<String>,
    pub action: String,
    pub target: Option<String>,
    pub detail: serde_json::Value,
}

/// Audit rows about `subject_user_id`'s data, newest first (`actor_email` unset).
pub fn about_subject(conn: &Connection, subject_user_id: &str, limit: usize) -> Result<Vec<AuditRow>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT a.id, a.at_ms, a.actor_id, NULL, a.action, a.target, a.detail
         FROM audit_log a
         WHERE a.subject_user_id = ?1 ORDER BY a.at_ms DESC, a.id DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![subject_user_id, limit as i64], |row| {
        let detail: Option<String> = row.get(6)?;
        Ok(AuditRow {
            id: row.get(0)?,
            at_ms: row.get(1)?,
            actor_id: row.get(2)?,
            actor_email: row.get(3)?,
            action: row.get(4)?,
            target: row.get(5)?,
            detail: detail.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or(serde_json::Value::Null),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// How many rows carry `action` (tests and the matrix's "no unaudited read" check).
pub fn count(conn: &Connection, action: Action) -> Result<i64, DbError> {
    Ok(conn.query_row("SELECT count(*) FROM audit_log WHERE action = ?1", [action.as_str()], |row| row.get(0))?)
}

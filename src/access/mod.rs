//! Who may see what: org roles, visibility policies, teams and access grants. The audit
//! log is `crate::audit`, deletion requests are `crate::deletion`.
//!
//! Invariant: every read of another person's session data passes through
//! `crate::sessions::read::authorize`, which decides with these rules, writes the audit
//! row in one transaction and returns the proof the data functions require.

pub mod drill_in;
pub mod grants;
pub mod policies;
pub mod roles;
pub mod team_edits;
pub mod teams;

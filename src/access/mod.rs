//! Who may see what: org roles, visibility policies, teams, access grants, the audit
//! log, the audited read and deletion requests.
//!
//! Invariant: every read of another person's session data passes through
//! [`read::authorize`], which decides and writes the audit row in one transaction and
//! returns the proof the data functions require.

pub mod grants;
pub mod policies;
pub mod roles;
pub mod teams;

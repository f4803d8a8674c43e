//! Org roles and what each may do. The table in `docs/access.md` is this file in
//! prose; change them together.
//!
//! | role | own data | org aggregates | request grants | decide grants | manage people |
//! |---|---|---|---|---|---|
//! | `ADMIN` | yes | yes | yes | yes (not their own request, not about themselves) | yes |
//! | `INVESTIGATOR` | yes | yes | yes | no | no |
//! | `MEMBER` | yes | yes | no | no | no |
//! | `VIEWER_AGGREGATE` | yes | yes | no | no | no, and never an individual session |
//! | `EVAL_ENGINEER` | yes | yes | no | no | no |
//!
//! No role has standing access to another person's sessions: that takes a grant or,
//! for a team lead, the member's `team_drill_in` policy. The one standing read is the
//! eval engineer's of evaluation runs: an `EVAL` session a harness linked to a cell
//! (`sessions.eval_cell_id`), with its transcript, audited like every cross-user read.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrgRole {
    Admin,
    Investigator,
    Member,
    ViewerAggregate,
    /// Reads the evaluation runs harnesses linked to their cells (the eval dashboard).
    EvalEngineer,
}

impl OrgRole {
    /// Parses a stored role; an unknown value is treated as the least privileged role
    /// that still sees its own data, never as more.
    pub fn parse(text: &str) -> OrgRole {
        match text {
            "ADMIN" => OrgRole::Admin,
            "INVESTIGATOR" => OrgRole::Investigator,
            "MEMBER" => OrgRole::Member,
            "EVAL_ENGINEER" => OrgRole::EvalEngineer,
            _ => OrgRole::ViewerAggregate,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OrgRole::Admin => "ADMIN",
            OrgRole::Investigator => "INVESTIGATOR",
            OrgRole::Member => "MEMBER",
            OrgRole::ViewerAggregate => "VIEWER_AGGREGATE",
            OrgRole::EvalEngineer => "EVAL_ENGINEER",
        }
    }

    pub fn may_request_grants(self) -> bool {
        matches!(self, OrgRole::Admin | OrgRole::Investigator)
    }

    pub fn may_decide_grants(self) -> bool {
        self == OrgRole::Admin
    }

    pub fn may_manage_people(self) -> bool {
        self == OrgRole::Admin
    }

    /// Whether this role sees every team's aggregate pages (a `MEMBER` sees their own
    /// teams' and those below a team they lead).
    pub fn sees_every_team(self) -> bool {
        !matches!(self, OrgRole::Member | OrgRole::EvalEngineer)
    }

    /// Whether this role reads the evaluation runs harnesses linked to their cells.
    pub fn reads_eval_runs(self) -> bool {
        self == OrgRole::EvalEngineer
    }

    /// Whether any path (grant, team lead) may ever lead this role to another
    /// person's individual session.
    pub fn may_reach_individual_sessions(self) -> bool {
        self != OrgRole::ViewerAggregate
    }
}

//! The scorer registry: every scorer's name, version, source, subject and definition.
//! A score row names its scorer and version; a change of definition is a version bump
//! here and one rescoring run, and pages read the current version.

/// Where a score comes from (the `scores.source` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Heuristic,
    Deterministic,
    Human,
    Judge,
    Outcome,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Heuristic => "HEURISTIC",
            Source::Deterministic => "DETERMINISTIC",
            Source::Human => "HUMAN",
            Source::Judge => "JUDGE",
            Source::Outcome => "OUTCOME",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scorer {
    pub name: &'static str,
    pub version: &'static str,
    pub source: Source,
    /// `session`, `pull_request`, `skill` or `tool_server`.
    pub subject: &'static str,
    /// One line: what the value means (the full definition is in `docs/scoring.md`).
    pub definition: &'static str,
}

/// The trajectory scorers' version: bumped whenever any of their definitions changes
/// (they are computed together, from the same pass over a session's events).
/// Version 2: shell calls after the last edit are judged by their command line when the
/// session's transcript holds them (`cargo build` is no longer a test run).
pub const TRAJECTORY_VERSION: &str = "2";

const fn trajectory(name: &'static str, source: Source, definition: &'static str) -> Scorer {
    Scorer { name, version: TRAJECTORY_VERSION, source, subject: "session", definition }
}

pub const RETRY_LOOPS: Scorer =
    trajectory("retry_loops", Source::Deterministic, "runs of three or more identical calls, each failed but the last");
pub const EDIT_THRASH: Scorer = trajectory(
    "edit_thrash",
    Source::Deterministic,
    "edits returning to a file already edited twice, after editing another one",
);
pub const REDUNDANT_READS: Scorer =
    trajectory("redundant_reads", Source::Deterministic, "reads of a file already read and not edited since");
pub const DENIAL_RETRY_SUCCESS: Scorer = trajectory(
    "denial_retry_success",
    Source::Deterministic,
    "share of denied calls followed, before the next prompt, by a successful call of the same tool",
);
pub const TESTS_BEFORE_MERGE: Scorer =
    trajectory("tests_before_merge", Source::Deterministic, "1 if a test run succeeded after the last edit, else 0");
pub const STEP_EFFICIENCY: Scorer = trajectory(
    "step_efficiency",
    Source::Deterministic,
    "share of tool calls that were productive, labelled with the session's shape",
);
pub const SHAPE: Scorer = trajectory("shape", Source::Heuristic, "the session's shape, from a closed set of six");
pub const FRICTION: Scorer =
    trajectory("friction", Source::Heuristic, "0-100 from denials, retries, thrash, permission waits and errors");

/// The rubric's two questions, answered by the session's owner (yes 1, partly 0.5, no 0).
pub const FEEDBACK_DONE: Scorer = Scorer {
    name: "feedback_done",
    version: "1",
    source: Source::Human,
    subject: "session",
    definition: "the owner's answer to \"did the agent get the task done?\"",
};
pub const FEEDBACK_UNSTEERED: Scorer = Scorer {
    name: "feedback_unsteered",
    version: "1",
    source: Source::Human,
    subject: "session",
    definition: "the owner's answer to \"could you leave it to work without steering?\"",
};

/// Outcome scores (docs/scoring.md, "Outcomes").
pub const EFFECTIVENESS: Scorer = Scorer {
    name: "effectiveness",
    version: "1",
    source: Source::Outcome,
    subject: "session",
    definition: "what became of its pull requests: 1 a clean merge, less for failed checks and extra review rounds, 0 closed or reverted",
};
pub const PR_EFFECTIVENESS: Scorer = Scorer {
    name: "pr_effectiveness",
    version: "1",
    source: Source::Outcome,
    subject: "pull_request",
    definition: "1 a clean merge, less for failed checks and extra review rounds, 0 reverted",
};
pub const PR_COST_PER_LINE: Scorer = Scorer {
    name: "pr_cost_per_line",
    version: "1",
    source: Source::Deterministic,
    subject: "pull_request",
    definition: "agent cost of its interactive sessions per changed line, in USD",
};

pub const FAILURE_RATE: Scorer = Scorer {
    name: "failure_rate",
    version: "1",
    source: Source::Deterministic,
    subject: "skill or tool_server",
    definition: "share of its calls that failed or were denied over 30 days (used by five people or more)",
};

pub const JUDGE: Scorer = Scorer {
    name: "judge",
    version: "1",
    source: Source::Judge,
    subject: "session",
    definition: "an LLM judge's verdict on the transcript (owners who opted in), 1 to 5 as a share",
};

impl Scorer {
    /// The scorer's name in words, for pages (its `name` stays the key in data and CSV).
    pub fn plain_name(&self) -> &'static str {
        match self.name {
            "retry_loops" => "Retry loops",
            "edit_thrash" => "Files edited back and forth",
            "redundant_reads" => "Files read again unchanged",
            "denial_retry_success" => "Recovered after a denial",
            "tests_before_merge" => "Tests passed after the last edit",
            "step_efficiency" => "Productive tool calls",
            "shape" => "Session shape",
            "friction" => "Friction",
            "feedback_done" => "Task done (the owner's answer)",
            "feedback_unsteered" => "Worked without steering (the owner's answer)",
            "effectiveness" => "What became of its pull requests",
            "pr_effectiveness" => "Pull request outcome",
            "pr_cost_per_line" => "Cost per changed line",
            "failure_rate" => "Failure rate",
            "judge" => "Judge's verdict",
            other => other,
        }
    }
}

/// Every scorer this build knows.
pub const ALL: &[Scorer] = &[
    RETRY_LOOPS,
    EDIT_THRASH,
    REDUNDANT_READS,
    DENIAL_RETRY_SUCCESS,
    TESTS_BEFORE_MERGE,
    STEP_EFFICIENCY,
    SHAPE,
    FRICTION,
    FEEDBACK_DONE,
    FEEDBACK_UNSTEERED,
    EFFECTIVENESS,
    PR_EFFECTIVENESS,
    PR_COST_PER_LINE,
    FAILURE_RATE,
    JUDGE,
];

pub fn find(name: &str) -> Option<&'static Scorer> {
    ALL.iter().find(|scorer| scorer.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_score_has_a_definition() {
        let mut names: Vec<&str> = ALL.iter().map(|s| s.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        assert!(ALL.iter().all(|s| !s.definition.is_empty() && !s.version.is_empty()));
        assert_eq!(find("friction").map(|s| s.source), Some(Source::Heuristic));
    }
}

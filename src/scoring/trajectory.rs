//! The six deterministic trajectory scorers, the session's shape and its friction,
//! computed from one session's events alone (`docs/scoring.md` has each definition with
//! worked examples).
//!
//! Invariants: a scorer sees the events sorted by (time, event id) with duplicates
//! removed, so the order events arrived in and a replayed event change nothing; an empty
//! session has defined values (zero counts, no rate, shape `question`, friction 0).

use std::collections::{BTreeSet, HashMap};

use super::commands::Commands;
use crate::model::wire::Event;
use crate::model::{EventType, NotificationKind, ToolStatus};

/// What a scorer needs of one event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub ts_ms: i64,
    pub id: [u8; 16],
    pub kind: EventType,
    pub tool: Option<StepTool>,
    pub notification: Option<NotificationKind>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepTool {
    pub name: String,
    /// The adapter's action class: read, write, edit, exec, search, fetch, delegate, plan, mcp, other.
    pub action: String,
    pub status: Option<ToolStatus>,
    pub input: Option<[u8; 32]>,
    /// The file (or, for a command, the program) the call targets, as a digest.
    pub target: Option<[u8; 32]>,
    /// The agent's id of the call, when it gives one (the transcript's too).
    pub use_id: Option<String>,
}

impl Step {
    pub fn of(event: &Event) -> Step {
        Step {
            ts_ms: event.ts_ms,
            id: *event.event_id.as_bytes(),
            kind: event.event_type,
            tool: event.tool.as_ref().map(|tool| StepTool {
                name: tool.name.clone(),
                action: tool.action.clone().unwrap_or_else(|| "other".into()),
                status: tool.status,
                input: tool.input_sha256,
                target: tool.target_hash,
                use_id: tool.use_id.clone(),
            }),
            notification: event.notification_kind,
        }
    }
}

/// The closed set of session shapes, decided in this order (the first that fits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shape {
    /// Handed most of its work to subagents.
    Delegation,
    /// Ran commands that failed, edited, and ran them again.
    Debugging,
    /// Edited three or more files.
    Feature,
    /// Edited one or two files.
    SingleEdit,
    /// Read or searched ten or more times without editing.
    Exploration,
    /// Little tool work and no edits: a question answered.
    Question,
}

impl Shape {
    pub const ALL: [Shape; 6] =
        [Shape::Delegation, Shape::Debugging, Shape::Feature, Shape::SingleEdit, Shape::Exploration, Shape::Question];

    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Delegation => "delegation",
            Shape::Debugging => "debugging",
            Shape::Feature => "feature",
            Shape::SingleEdit => "single_edit",
            Shape::Exploration => "exploration",
            Shape::Question => "question",
        }
    }
}

/// Every trajectory figure of one session.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    pub tool_calls: i64,
    pub retry_loops: i64,
    pub edit_thrash: i64,
    pub redundant_reads: i64,
    /// Denied calls followed, before the next prompt, by a successful call of the same
    /// tool, as a share of denials (None without a denial).
    pub denial_retry_success: Option<f64>,
    /// Whether a test run succeeded after the last edit (None without an edit).
    pub tests_before_merge: Option<bool>,
    /// How the shell calls after the last edit were judged.
    pub tests_evidence: TestsEvidence,
    /// Share of tool calls that were productive (not failed, denied, retried, redundant
    /// or thrashing): 1 for a session without tool calls.
    pub step_efficiency: f64,
    pub shape: Shape,
    pub friction: f64,
    pub denials: i64,
    pub errors: i64,
    pub permission_waits: i64,
}

/// What decided `tests_before_merge`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestsEvidence {
    /// No successful shell call after the last edit (or no edit): nothing to judge.
    NoShellCalls,
    /// At least one call was judged by its program's name alone (`cargo`).
    ProgramName,
    /// Every call was found in the transcript and judged by its command line.
    Transcript,
}

fn is_edit(action: &str) -> bool {
    matches!(action, "edit" | "write")
}

/// Programs that run tests (their names as the hook digests them: the first word of the
/// command). Without the transcript a build with the same program counts too: the digest
/// cannot tell `cargo build` from `cargo test` (the definition says so).
const TEST_RUNNERS: [&str; 22] = [
    "pytest",
    "py.test",
    "tox",
    "nox",
    "jest",
    "vitest",
    "mocha",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "npx",
    "cargo",
    "go",
    "make",
    "mvn",
    "gradle",
    "./gradlew",
    "rspec",
    "phpunit",
    "dotnet",
    "ctest",
];

fn test_runner_digests() -> BTreeSet<[u8; 32]> {
    TEST_RUNNERS.iter().map(|name| crate::model::sha256(name.as_bytes())).collect()
}

/// Sorts by (time, id) and drops repeated ids.
pub fn normalise(mut steps: Vec<Step>) -> Vec<Step> {
    steps.sort_by_key(|step| (step.ts_ms, step.id));
    let mut seen = BTreeSet::new();
    steps.retain(|step| seen.insert(step.id));
    steps
}

/// Scores one session from its events alone.
pub fn score(steps: Vec<Step>) -> Trajectory {
    score_with(steps, &Commands::default())
}

/// Scores one session, reading the command lines of its shell calls from its transcript
/// where it holds them.
pub fn score_with(steps: Vec<Step>, commands: &Commands) -> Trajectory {
    let steps = normalise(steps);
    let calls: Vec<&StepTool> =
        steps.iter().filter(|s| s.kind == EventType::ToolEnd).filter_map(|s| s.tool.as_ref()).collect();
    let status = |tool: &StepTool, wanted: ToolStatus| tool.status == Some(wanted);

    // Retry loops: a run of three or more consecutive identical calls (same tool, same
    // input) in which every call but the last failed.
    let mut retry_loops = 0;
    let mut run = 1;
    for pair in calls.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        let same = before.name == after.name && before.input.is_some() && before.input == after.input;
        if same && status(before, ToolStatus::Error) {
            run += 1;
            if run == 3 {
                retry_loops += 1;
            }
        } else {
            run = 1;
        }
    }

    // Edit thrash: an edit that returns to a file after editing another one in between,
    // when that file had already been edited twice.
    let mut edits_per_target: HashMap<[u8; 32], i64> = HashMap::new();
    let mut last_edited: Option<[u8; 32]> = None;
    let mut edit_thrash = 0;
    let mut edited_targets = BTreeSet::new();
    for call in calls.iter().filter(|c| is_edit(&c.action) && !status(c, ToolStatus::Denied)) {
        let Some(target) = call.target else { continue };
        let before = edits_per_target.get(&target).copied().unwrap_or(0);
        if before >= 2 && last_edited.is_some_and(|last| last != target) {
            edit_thrash += 1;
        }
        *edits_per_target.entry(target).or_insert(0) += 1;
        last_edited = Some(target);
        edited_targets.insert(target);
    }

    // Redundant reads: reading a file already read, with no edit of it in between.
    let mut read_since_edit = BTreeSet::new();
    let mut redundant_reads = 0;
    for call in calls.iter().filter(|c| status(c, ToolStatus::Success) || c.status.is_none()) {
        let Some(target) = call.target else { continue };
        if call.action == "read" {
            if !read_since_edit.insert(target) {
                redundant_reads += 1;
            }
        } else if is_edit(&call.action) {
            read_since_edit.remove(&target);
        }
    }

    // Denial-retry success: after a denial, a successful call of the same tool before
    // the next prompt.
    let mut denials = 0;
    let mut recovered = 0;
    for (i, step) in steps.iter().enumerate() {
        let Some(tool) = step.tool.as_ref().filter(|_| step.kind == EventType::ToolEnd) else { continue };
        if !status(tool, ToolStatus::Denied) {
            continue;
        }
        denials += 1;
        let later = steps[i + 1..].iter().take_while(|s| s.kind != EventType::PromptSubmit);
        if later
            .filter(|s| s.kind == EventType::ToolEnd)
            .filter_map(|s| s.tool.as_ref())
            .any(|t| t.name == tool.name && status(t, ToolStatus::Success))
        {
            recovered += 1;
        }
    }
    let denial_retry_success = (denials > 0).then(|| recovered as f64 / denials as f64);

    // Tests before merge: a successful test run after the last edit. A shell call found
    // in the transcript is judged by its command line, any other by its program's name.
    let runners = test_runner_digests();
    let last_edit = calls.iter().rposition(|c| is_edit(&c.action) && status(c, ToolStatus::Success));
    let shell_after_edit: Vec<&&StepTool> = last_edit
        .map(|at| calls[at + 1..].iter().filter(|c| c.action == "exec" && status(c, ToolStatus::Success)).collect())
        .unwrap_or_default();
    let judged: Vec<(bool, bool)> = shell_after_edit
        .iter()
        .map(|c| match commands.runs_tests(c.use_id.as_deref(), c.input.as_ref()) {
            Some(runs) => (runs, true),
            None => (c.target.is_some_and(|t| runners.contains(&t)), false),
        })
        .collect();
    let tests_before_merge = last_edit.map(|_| judged.iter().any(|(runs, _)| *runs));
    let tests_evidence = if judged.is_empty() {
        TestsEvidence::NoShellCalls
    } else if judged.iter().all(|(_, from_transcript)| *from_transcript) {
        TestsEvidence::Transcript
    } else {
        TestsEvidence::ProgramName
    };

    let errors = calls.iter().filter(|c| status(c, ToolStatus::Error)).count() as i64;
    let tool_calls = calls.len() as i64;
    let unproductive = (errors + denials + redundant_reads + edit_thrash).min(tool_calls);
    let step_efficiency = if tool_calls == 0 { 1.0 } else { 1.0 - unproductive as f64 / tool_calls as f64 };
    // A retried call failed, so it is already among the errors.

    let permission_waits = steps
        .iter()
        .filter(|s| s.kind == EventType::Notification && s.notification == Some(NotificationKind::Permission))
        .count() as i64;
    let points = 3.0 * denials as f64
        + 2.0 * retry_loops as f64
        + 2.0 * edit_thrash as f64
        + permission_waits as f64
        + errors as f64
        + 0.5 * redundant_reads as f64;
    let friction = 100.0 * (1.0 - (-points / 20.0).exp());

    let count_action = |action: &str| calls.iter().filter(|c| c.action == action).count();
    let subagents = steps.iter().filter(|s| s.kind == EventType::SubagentEnd).count();
    let delegated = count_action("delegate") + subagents;
    let execs_failed = calls.iter().filter(|c| c.action == "exec" && status(c, ToolStatus::Error)).count();
    let reads = count_action("read") + count_action("search");
    let shape = if delegated > 0 && delegated * 10 >= (calls.len() + subagents) * 3 {
        Shape::Delegation
    } else if execs_failed >= 2 && !edited_targets.is_empty() && count_action("exec") >= 3 {
        Shape::Debugging
    } else if edited_targets.len() >= 3 {
        Shape::Feature
    } else if !edited_targets.is_empty() {
        Shape::SingleEdit
    } else if reads >= 10 {
        Shape::Exploration
    } else {
        Shape::Question
    };

    Trajectory {
        tool_calls,
        retry_loops,
        edit_thrash,
        redundant_reads,
        denial_retry_success,
        tests_before_merge,
        tests_evidence,
        step_efficiency,
        shape,
        friction: (friction * 10.0).round() / 10.0,
        denials,
        errors,
        permission_waits,
    }
}

#[cfg(test)]
mod tests;

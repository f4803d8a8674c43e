//! Fixtures in the shapes the agents' adapters produce (tool names and action classes as
//! Claude Code, Codex and Gemini CLI report them; targets are the digests of file paths
//! or programs, as the hook makes them), with hand-worked expected values, and the
//! property tests: order, duplicates, empty.

use proptest::prelude::*;

use super::*;

struct Session {
    steps: Vec<Step>,
    clock: i64,
}

impl Session {
    fn new() -> Session {
        Session { steps: Vec::new(), clock: 1_000 }
    }

    fn push(&mut self, kind: EventType, tool: Option<StepTool>, notification: Option<NotificationKind>) -> &mut Self {
        self.clock += 1_000;
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&(self.steps.len() as u64 + 1).to_be_bytes());
        self.steps.push(Step { ts_ms: self.clock, id, kind, tool, notification });
        self
    }

    fn prompt(&mut self) -> &mut Self {
        self.push(EventType::PromptSubmit, None, None)
    }

    /// A finished call: the agent's tool name, its action class, what it targets (a path
    /// or a program), its input (same text, same digest), and how it ended.
    fn call(&mut self, name: &str, action: &str, target: &str, input: &str, status: ToolStatus) -> &mut Self {
        let tool = StepTool {
            name: name.into(),
            action: action.into(),
            status: Some(status),
            input: Some(crate::model::sha256(input.as_bytes())),
            target: Some(crate::model::sha256(target.as_bytes())),
            use_id: None,
        };
        self.push(EventType::ToolEnd, Some(tool), None)
    }

    fn wait_for_permission(&mut self) -> &mut Self {
        self.push(EventType::Notification, None, Some(NotificationKind::Permission))
    }

    fn score(&self) -> Trajectory {
        score(self.steps.clone())
    }
}

use ToolStatus::{Denied, Error, Success};

/// The sessions list filters by the labels written here.
#[test]
fn the_sessions_list_knows_every_shape() {
    let labels: Vec<&str> = Shape::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(labels, crate::sessions::listing::SHAPES);
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// Claude Code fixing a failing test: it reads, runs the tests (they fail three times
/// with the same command), edits, is refused one Bash call, then runs them again.
#[test]
fn claude_code_debugging_a_failing_test() {
    let mut s = Session::new();
    s.prompt()
        .call("claude_code:Read", "read", "src/invoice.rs", "{\"file_path\":\"src/invoice.rs\"}", Success)
        .call("claude_code:Bash", "exec", "cargo", "cargo test invoice", Error)
        .call("claude_code:Bash", "exec", "cargo", "cargo test invoice", Error)
        .call("claude_code:Bash", "exec", "cargo", "cargo test invoice", Error)
        .call("claude_code:Read", "read", "src/invoice.rs", "{\"file_path\":\"src/invoice.rs\"}", Success)
        .call("claude_code:Edit", "edit", "src/invoice.rs", "round half up", Success)
        .wait_for_permission()
        .call("claude_code:Bash", "exec", "rm", "rm -rf target", Denied)
        .call("claude_code:Bash", "exec", "cargo", "cargo test invoice --release", Success);
    let t = s.score();
    // Worked by hand:
    // - three identical failing `cargo test invoice` calls in a row: one retry loop;
    // - the second Read of src/invoice.rs comes with no edit in between: one redundant read;
    // - the denied `rm` is followed (same tool, before the next prompt) by a successful Bash: 1/1;
    // - after the last edit, `cargo` (a test runner) succeeded: tests before merge;
    // - 8 calls; unproductive = 3 errors + 1 denial + 1 redundant read = 5: efficiency 3/8;
    // - three execs, three failed, one file edited: debugging;
    // - friction points = 3·1 denial + 2·1 loop + 1 wait + 3 errors + 0.5·1 read = 9.5:
    //   100·(1 − e^(−9.5/20)) = 37.8.
    assert_eq!((t.tool_calls, t.retry_loops, t.redundant_reads, t.edit_thrash), (8, 1, 1, 0));
    assert_eq!(t.denial_retry_success, Some(1.0));
    assert_eq!(t.tests_before_merge, Some(true));
    assert!(close(t.step_efficiency, 3.0 / 8.0));
    assert_eq!(t.shape, Shape::Debugging);
    assert_eq!(t.friction, 37.8);
}

/// Codex building a feature with `apply_patch` across four files, going back and forth
/// between two of them, and never running the tests afterwards.
#[test]
fn codex_feature_with_edit_thrash_and_no_tests_after() {
    let mut s = Session::new();
    s.prompt()
        .call("codex:shell", "exec", "rg", "rg -n paginate", Success)
        .call("codex:shell", "exec", "pytest", "pytest -q", Success)
        .call("codex:apply_patch", "edit", "api/orders.py", "patch 1", Success)
        .call("codex:apply_patch", "edit", "api/orders.py", "patch 2", Success)
        .call("codex:apply_patch", "edit", "api/serializers.py", "patch 3", Success)
        .call("codex:apply_patch", "edit", "api/orders.py", "patch 4", Success)
        .call("codex:apply_patch", "edit", "api/serializers.py", "patch 5", Success)
        .call("codex:apply_patch", "edit", "api/orders.py", "patch 6", Success)
        .call("codex:apply_patch", "edit", "tests/test_orders.py", "patch 7", Success)
        .call("codex:apply_patch", "edit", "docs/api.md", "patch 8", Success);
    let t = s.score();
    // Worked by hand: orders.py is edited at 3, 4, 6 and 8; the edit at 6 returns to it
    // after serializers.py, with two edits already: thrash 1; at 8, again after
    // serializers.py, with three: thrash 2. serializers.py has only one edit before its
    // return at 7: not thrash. pytest ran before the edits only: no tests after.
    // 10 calls, 2 unproductive (thrash): efficiency 0.8. Four files edited: feature.
    // Friction points = 2·2 = 4: 100·(1 − e^(−0.2)) = 18.1.
    assert_eq!((t.edit_thrash, t.retry_loops, t.redundant_reads), (2, 0, 0));
    assert_eq!(t.tests_before_merge, Some(false));
    assert_eq!(t.denial_retry_success, None);
    assert!(close(t.step_efficiency, 0.8));
    assert_eq!(t.shape, Shape::Feature);
    assert_eq!(t.friction, 18.1);
}

/// Gemini CLI answering a question about the code: reads and searches, one file read
/// twice, no edits.
#[test]
fn gemini_cli_exploring_without_edits() {
    let mut s = Session::new();
    s.prompt();
    for (i, file) in ["a.ts", "b.ts", "c.ts", "d.ts", "e.ts", "f.ts", "g.ts", "h.ts", "a.ts"].iter().enumerate() {
        let tool = if i % 3 == 0 { "gemini_cli:search_file_content" } else { "gemini_cli:read_file" };
        let action = if i % 3 == 0 { "search" } else { "read" };
        s.call(tool, action, file, &format!("{{\"path\":\"{file}\"}}"), Success);
    }
    s.call("gemini_cli:read_file", "read", "b.ts", "{\"path\":\"b.ts\"}", Success);
    s.prompt().call("gemini_cli:google_web_search", "fetch", "web", "feature flags", Success);
    let t = s.score();
    // Worked by hand: only `read` calls count as reads (a search is not one): b.ts is
    // read at the second call and again at the end with no edit in between, so one
    // redundant read (a.ts was searched, then read once). Reads and searches: 7 + 3 =
    // 10, no edit: exploration. No edit: tests None. Efficiency 10/11. Friction points
    // 0.5: 100·(1 − e^(−0.025)) = 2.5.
    assert_eq!(t.redundant_reads, 1);
    assert_eq!(t.shape, Shape::Exploration);
    assert_eq!(t.tests_before_merge, None);
    assert!(close(t.step_efficiency, 10.0 / 11.0));
    assert_eq!(t.friction, 2.5);
}

#[test]
fn delegation_and_the_empty_session() {
    let mut s = Session::new();
    s.prompt()
        .call("claude_code:Task", "delegate", "Task", "review the diff", Success)
        .push(EventType::SubagentEnd, None, None)
        .call("claude_code:Read", "read", "README.md", "r", Success)
        .call("claude_code:Task", "delegate", "Task", "write tests", Success);
    assert_eq!(s.score().shape, Shape::Delegation);

    let empty = score(Vec::new());
    assert_eq!(
        (empty.tool_calls, empty.retry_loops, empty.edit_thrash, empty.redundant_reads, empty.denial_retry_success),
        (0, 0, 0, 0, None)
    );
    assert_eq!(
        (empty.tests_before_merge, empty.step_efficiency, empty.shape, empty.friction),
        (None, 1.0, Shape::Question, 0.0)
    );
}

fn arbitrary_session() -> impl Strategy<Value = Vec<Step>> {
    let call = (0u8..5, 0u8..4, 0u8..3, 0u8..4, 0u8..6).prop_map(|(name, target, status, input, action)| {
        let status = [ToolStatus::Success, ToolStatus::Error, ToolStatus::Denied][status as usize];
        let action = ["read", "edit", "exec", "search", "write", "delegate"][action as usize];
        (EventType::ToolEnd, Some((name, action, status, target, input)))
    });
    let other = prop_oneof![
        Just((EventType::PromptSubmit, None)),
        Just((EventType::Notification, None)),
        Just((EventType::SubagentEnd, None)),
        Just((EventType::TurnEnd, None)),
    ];
    prop::collection::vec(prop_oneof![3 => call, 1 => other], 0..60).prop_map(|items| {
        items
            .into_iter()
            .enumerate()
            .map(|(i, (kind, tool))| {
                let mut id = [0u8; 16];
                id[..8].copy_from_slice(&(i as u64).to_be_bytes());
                Step {
                    ts_ms: 1_000 * i as i64,
                    id,
                    kind,
                    notification: (kind == EventType::Notification).then_some(NotificationKind::Permission),
                    tool: tool.map(|(name, action, status, target, input)| StepTool {
                        name: format!("claude_code:T{name}"),
                        action: action.into(),
                        status: Some(status),
                        input: Some([input; 32]),
                        target: Some(crate::model::sha256(&[target])),
                        use_id: None,
                    }),
                }
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn arrival_order_does_not_matter(steps in arbitrary_session(), seed in any::<u64>()) {
        let mut shuffled = steps.clone();
        fastrand::Rng::with_seed(seed).shuffle(&mut shuffled);
        prop_assert_eq!(score(steps), score(shuffled));
    }

    #[test]
    fn replayed_events_change_nothing(steps in arbitrary_session(), every in 1usize..5) {
        let mut doubled = steps.clone();
        doubled.extend(steps.iter().step_by(every).cloned());
        prop_assert_eq!(score(steps), score(doubled));
    }

    #[test]
    fn figures_stay_in_range(steps in arbitrary_session()) {
        let t = score(steps);
        prop_assert!((0.0..=1.0).contains(&t.step_efficiency));
        prop_assert!((0.0..100.0).contains(&t.friction));
        prop_assert!(t.denial_retry_success.is_none_or(|r| (0.0..=1.0).contains(&r)));
        prop_assert!(t.retry_loops * 3 <= t.tool_calls);
    }
}

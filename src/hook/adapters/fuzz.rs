//! Generated hook payloads for every adapter (`fuzz_*`, see `model::arbitrary`): each
//! agent's documented payloads (`tests/fixtures/agents/*/hooks.jsonl`) bent by edits.
//! Whatever an agent sends, mapping it never panics, and what it maps to is wire events
//! (objects with a type and a session). `cwd` is taken out of the payloads: with it the
//! adapter asks `git`, a process, not a decoder.

use proptest::prelude::*;
use serde_json::Value;

use super::{Context, map};
use crate::hook::queue::Queue;
use crate::model::AgentType;
use crate::model::arbitrary::{edited, edits};
use crate::model::wire::{EventLimits, validate};

const FIXTURES: &[(AgentType, &str)] = &[
    (AgentType::ClaudeCode, include_str!("../../../tests/fixtures/agents/claude_code/hooks.jsonl")),
    (AgentType::Codex, include_str!("../../../tests/fixtures/agents/codex/hooks.jsonl")),
    (AgentType::GeminiCli, include_str!("../../../tests/fixtures/agents/gemini_cli/hooks.jsonl")),
    (AgentType::CopilotCli, include_str!("../../../tests/fixtures/agents/copilot_cli/hooks.jsonl")),
    (AgentType::Droid, include_str!("../../../tests/fixtures/agents/droid/hooks.jsonl")),
    (AgentType::Opencode, include_str!("../../../tests/fixtures/agents/opencode/hooks.jsonl")),
    (AgentType::Cline, include_str!("../../../tests/fixtures/agents/cline/hooks.jsonl")),
];

/// Every (agent, hook event, payload) of the fixtures, `cwd` removed.
fn steps() -> Vec<(AgentType, String, Value)> {
    let mut steps = Vec::new();
    for (agent, script) in FIXTURES {
        for line in script.lines().skip(1).filter(|line| !line.trim().is_empty()) {
            let step: Value = serde_json::from_str(line).expect("the fixtures are JSON");
            let (Some(event), Some(payload)) = (step["event"].as_str(), step.get("payload")) else { continue };
            let mut payload = payload.clone();
            strip_cwd(&mut payload);
            steps.push((*agent, event.to_string(), payload));
        }
    }
    steps
}

fn strip_cwd(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.retain(|key, _| {
                !key.eq_ignore_ascii_case("cwd") && key != "workspace_roots" && key != "workspaceRoots"
            });
            fields.values_mut().for_each(strip_cwd);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cwd),
        _ => {}
    }
}

#[test]
fn fuzz_hook_payloads() {
    let steps = steps();
    assert!(steps.len() > 50, "every agent's steps: {}", steps.len());
    let dir = tempfile::tempdir().unwrap();
    let queue = std::cell::RefCell::new(Queue::open(&dir.path().join("queue.db")).unwrap());
    let mut runner = proptest::test_runner::TestRunner::default();
    runner
        .run(&(any::<usize>(), edits()), |(which, edits)| {
            let (agent, event, payload) = &steps[which % steps.len()];
            let payload = edited(payload, &edits);
            let mut queue = queue.borrow_mut();
            let tx = queue.begin().unwrap();
            let mapped = map(*agent, event, &payload, &mut Context { now_ms: 1_795_000_000_000, state: &tx });
            if let Ok(events) = mapped {
                let limits = EventLimits {
                    max_age_ms: i64::MAX / 4,
                    max_future_skew_ms: i64::MAX / 4,
                    ..EventLimits::default()
                };
                for event in events {
                    prop_assert!(event.event_id.is_some() && event.event_type.is_some(), "{agent:?} {event:?}");
                    if let Err(rejection) = validate(event.clone(), &limits, 1_795_000_000_000) {
                        prop_assert!(!rejection.field.is_empty() && !rejection.reason.is_empty(), "{rejection:?}");
                    }
                }
            }
            Ok(())
        })
        .unwrap();
}

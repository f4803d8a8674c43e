//! Generated events for storage benchmarks: the shape and mix a Claude Code session
//! produces (tool calls dominate, one turn with usage per ten events), with
//! metadata of the size and kind hooks attach.

use crate::events::partitions::Day;
use crate::model::wire::{Event, ToolFields};
use crate::model::{AgentType, EventType, PermissionMode, RunKind, ToolStatus, Usage};

fn digest() -> [u8; 32] {
    let mut out = [0u8; 32];
    for chunk in out.chunks_mut(8) {
        chunk.copy_from_slice(&fastrand::u64(..).to_le_bytes());
    }
    out
}

const TOOLS: &[(&str, &str)] =
    &[("Read", "read"), ("Edit", "edit"), ("Bash", "exec"), ("Grep", "search"), ("Write", "write")];

pub fn realistic_event(day: Day, index: usize, developer: usize) -> Event {
    let ts_ms = day.start_ms() + (index as i64 * 86_400_000 / 1_000_000) % 86_400_000 + fastrand::i64(0..1000);
    let (tool_name, action) = TOOLS[(index / 2) % TOOLS.len()];
    let event_type = match index % 10 {
        0 => EventType::PromptSubmit,
        9 => EventType::TurnEnd,
        i if i % 2 == 1 => EventType::ToolStart,
        _ => EventType::ToolEnd,
    };
    let tool = matches!(event_type, EventType::ToolStart | EventType::ToolEnd).then(|| ToolFields {
        name: format!("claude_code:{tool_name}"),
        use_id: Some(format!("toolu_01{:022x}", fastrand::u128(..) >> 40)),
        status: (event_type == EventType::ToolEnd).then_some(ToolStatus::Success),
        duration_ms: (event_type == EventType::ToolEnd).then(|| fastrand::i64(5..5000)),
        input_sha256: Some(digest()),
        input_bytes: Some(fastrand::i64(20..4000)),
        output_sha256: (event_type == EventType::ToolEnd).then(digest),
        output_bytes: (event_type == EventType::ToolEnd).then(|| fastrand::i64(0..50_000)),
        target_hash: Some(digest()),
        action: Some(action.to_string()),
        ..ToolFields::default()
    });
    let usage = if event_type == EventType::TurnEnd {
        Usage {
            input_tokens: fastrand::i64(10..3000),
            output_tokens: fastrand::i64(50..2000),
            cache_read_tokens: fastrand::i64(0..80_000),
            cache_write_5m_tokens: fastrand::i64(0..4000),
            ..Usage::default()
        }
    } else {
        Usage::default()
    };
    let hook_event = match event_type {
        EventType::PromptSubmit => "UserPromptSubmit",
        EventType::ToolStart => "PreToolUse",
        EventType::ToolEnd => "PostToolUse",
        _ => "Stop",
    };
    let metadata = serde_json::json!({
        "hook_event": hook_event,
        "cli_version": "2.0.31",
        "cwd_hash": format!("{:016x}", developer as u64 * 0x9e37_79b9_7f4a_7c15),
        "transcript_offset": index * 1800,
        "permission_mode": "acceptEdits",
    });
    Event {
        event_id: uuid::Uuid::now_v7(),
        event_type,
        ts_ms,
        agent_type: AgentType::ClaudeCode,
        session_id: format!("{:08x}-5d2c-4f7e-9a1b-{:012x}", developer, index / 500),
        run_kind: RunKind::Interactive,
        model: (event_type == EventType::TurnEnd).then(|| "claude-sonnet-4-5-20250929".to_string()),
        agent_version: None,
        permission_mode: Some(PermissionMode::AcceptEdits),
        notification_kind: None,
        tool,
        usage,
        cost_nusd: fastrand::i64(0..50_000_000),
        client_cost_nusd: None,
        response_ms: (event_type == EventType::PromptSubmit).then(|| fastrand::i64(2000..60_000)),
        git: None,
        eval: None,
        metadata: Some(metadata.to_string()),
    }
}

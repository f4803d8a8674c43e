//! The mappings over fixtures written from each vendor's documentation
//! (`tests/fixtures/otlp/`): which records become which events, with which fields, and
//! what is never taken from a record.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use serde_json::Value;

use super::logs::{Mapped, map};

mod gemini_cli;

/// One attribute as an exporter writes it (for the tests that edit a fixture's records).
pub(super) fn attribute(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue { key: key.into(), value: Some(AnyValue { value: Some(value) }), ..Default::default() }
}

fn fixture(name: &str) -> ExportLogsServiceRequest {
    let text = match name {
        "claude_code" => include_str!("../../tests/fixtures/otlp/claude_code_logs.json"),
        "claude_code_numeric" => include_str!("../../tests/fixtures/otlp/claude_code_logs_numeric.json"),
        "codex" => include_str!("../../tests/fixtures/otlp/codex_logs.json"),
        "gemini_cli" => include_str!("../../tests/fixtures/otlp/gemini_cli_logs.json"),
        "qwen_code" => include_str!("../../tests/fixtures/otlp/qwen_code_logs.json"),
        other => panic!("no fixture {other}"),
    };
    serde_json::from_str(text).expect("the fixture is OTLP/JSON")
}

/// The mapped events as the wire's JSON (what the hook would have sent).
pub(super) fn as_json(mapped: &Mapped) -> Vec<Value> {
    mapped.events.iter().map(|event| serde_json::to_value(event).unwrap()).collect()
}

fn of_type(mapped: &Mapped, kind: &str) -> Vec<Value> {
    as_json(mapped).into_iter().filter(|event| event["type"] == kind).collect()
}

#[test]
fn claude_code_events_map_field_by_field() {
    let mapped = map(&fixture("claude_code"), "user-1");
    assert_eq!(mapped.refused, 0, "{:?}", mapped.reasons);
    assert_eq!(mapped.skipped, 2, "the accepted tool_decision and plugin_loaded are not events");
    let prompt = &of_type(&mapped, "prompt_submit")[0];
    assert_eq!(prompt["metadata"]["prompt_length"], 52);
    let text = serde_json::to_string(&mapped.events).unwrap();
    for content in ["AKIAIOSFODNN7EXAMPLE", "fix the flaky", "npm test", "ENOENT"] {
        assert!(!text.contains(content), "{content} is content and must not become event data");
    }

    let turn = &of_type(&mapped, "turn_end")[0];
    assert_eq!(turn["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(
        turn["usage"],
        serde_json::json!({"input_tokens": 1200, "output_tokens": 350, "cache_read_tokens": 9000, "cache_write_5m_tokens": 400})
    );
    assert_eq!(turn["client_cost_usd"], 0.0123);
    assert_eq!(turn["response_ms"], 2500);
    assert_eq!(turn["metadata"]["request_id"], "req_011CVzqR8T3u1fNcP7Y6AbcD");

    let tools: Vec<(String, String, Option<String>)> = of_type(&mapped, "tool_end")
        .iter()
        .map(|event| {
            let tool = &event["tool"];
            (
                tool["name"].as_str().unwrap().to_string(),
                tool["status"].as_str().unwrap().to_string(),
                tool["use_id"].as_str().map(str::to_string),
            )
        })
        .collect();
    let expected = [
        ("claude_code:Bash", "success", Some("toolu_01A9bQ")),
        ("claude_code:Read", "error", Some("toolu_01Fail")),
        ("claude_code:Edit", "denied", Some("toolu_01Reject")),
        ("claude_code:Grep", "success", None),
        ("claude_code:mcp__github__create_issue", "success", Some("toolu_01Mcp")),
    ];
    let expected: Vec<_> =
        expected.iter().map(|(n, s, u)| (n.to_string(), s.to_string(), u.map(str::to_string))).collect();
    assert_eq!(tools, expected);
    let bash = &of_type(&mapped, "tool_end")[0]["tool"];
    assert_eq!(
        (bash["duration_ms"].as_i64(), bash["input_bytes"].as_i64(), bash["output_bytes"].as_i64()),
        (Some(1830), Some(96), Some(2048))
    );
    assert_eq!(bash["action"], "exec");
    let mcp = &of_type(&mapped, "tool_end")[4]["tool"];
    assert_eq!((mcp["server"].as_str(), mcp["action"].as_str()), (Some("github"), Some("mcp")));
    assert_eq!(
        of_type(&mapped, "tool_end")[3]["metadata"]["decision_source"],
        "user_temporary",
        "the 2025 name `source`"
    );
    assert_eq!(of_type(&mapped, "compact")[0]["metadata"]["trigger"], "auto");
    for event in &as_json(&mapped) {
        assert_eq!(event["agent_type"], "claude_code");
        assert_eq!(event["session_id"], "3c1d2f4e-8a7b-4c6d-9e0f-1a2b3c4d5e6f");
        assert_eq!(event["run_kind"], "INTERACTIVE");
        assert_eq!(event["metadata"]["source"], "otlp");
    }
}

#[test]
fn claude_code_numbers_sent_as_numbers_read_the_same() {
    let mapped = map(&fixture("claude_code_numeric"), "user-1");
    let turns = of_type(&mapped, "turn_end");
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["usage"]["input_tokens"], 3000);
    assert_eq!(turns[0]["client_cost_usd"], 0.5, "cost_usd_micros is preferred and agrees");
    assert_eq!(turns[0]["metadata"]["effort"], "high");
    assert_eq!(turns[1]["client_cost_usd"], 0.0, "a whole-number cost sent as an integer");
}

#[test]
fn codex_tokens_are_split_into_the_contracts_kinds() {
    let mapped = map(&fixture("codex"), "user-1");
    assert_eq!(mapped.refused, 0, "{:?}", mapped.reasons);
    assert_eq!(mapped.skipped, 3, "api_request, a streamed delta and the approval are not events");
    let start = &of_type(&mapped, "session_start")[0];
    assert_eq!(
        (start["model"].as_str(), start["metadata"]["approval_policy"].as_str()),
        (Some("gpt-5.4"), Some("on-request"))
    );
    let turn = &of_type(&mapped, "turn_end")[0];
    // OpenAI counts cached input inside input and reasoning inside output.
    assert_eq!(
        turn["usage"],
        serde_json::json!({"input_tokens": 634, "output_tokens": 300, "cache_read_tokens": 9600, "reasoning_tokens": 512})
    );
    let tools = of_type(&mapped, "tool_end");
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["tool"]["name"], "codex:shell");
    assert_eq!(tools[0]["tool"]["use_id"], "call_Xy12");
    assert_eq!(tools[0]["tool"]["input_bytes"], r#"{"command": ["bash", "-lc", "cargo test"]}"#.len());
    assert!(!serde_json::to_string(&tools[0]).unwrap().contains("cargo test"), "arguments are content");
    assert_eq!(
        (tools[1]["tool"]["status"].as_str(), tools[1]["tool"]["action"].as_str()),
        (Some("denied"), Some("edit"))
    );
    assert!(as_json(&mapped).iter().all(|event| event["session_id"] == "0199a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b"));
}

#[test]
fn event_ids_are_the_same_for_a_replay_and_differ_between_people() {
    let first = map(&fixture("claude_code"), "user-1");
    let again = map(&fixture("claude_code"), "user-1");
    let other = map(&fixture("claude_code"), "user-2");
    let ids = |mapped: &Mapped| {
        as_json(mapped).iter().map(|e| e["event_id"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    assert_eq!(ids(&first), ids(&again));
    let unique: std::collections::BTreeSet<_> = ids(&first).into_iter().collect();
    assert_eq!(unique.len(), first.events.len(), "each record its own id");
    assert!(
        ids(&first).iter().zip(ids(&other)).all(|(a, b)| *a != b),
        "one person's replay never meets another's event"
    );
    for id in ids(&first) {
        assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 7, "time-ordered like the hook's ids");
    }
}

#[test]
fn automation_is_told_apart_and_an_explicit_kind_wins() {
    let mut request = fixture("codex");
    let set = |request: &mut ExportLogsServiceRequest, key: &str, value: &str| {
        let resource = request.resource_logs[0].resource.as_mut().unwrap();
        resource.attributes.push(attribute(key, any_value::Value::StringValue(value.into())));
    };
    // `codex exec` names itself in every record's `originator`.
    for record in &mut request.resource_logs[0].scope_logs[0].log_records {
        for pair in &mut record.attributes {
            if pair.key == "originator" {
                pair.value = Some(opentelemetry_proto::tonic::common::v1::AnyValue {
                    value: Some(opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(
                        "codex_exec".into(),
                    )),
                });
            }
        }
    }
    assert!(as_json(&map(&request, "u")).iter().all(|event| event["run_kind"] == "CI"));
    set(&mut request, "sightline.run_kind", "eval");
    assert!(as_json(&map(&request, "u")).iter().all(|event| event["run_kind"] == "EVAL"));
}

/// `claude -p` of 2.1.332 sends no `app.entrypoint`, only `terminal.type` =
/// `non-interactive` on each record: a run nobody sits at.
#[test]
fn claude_codes_print_mode_is_told_apart_by_its_terminal_type() {
    let mut request = fixture("claude_code");
    assert!(as_json(&map(&request, "u")).iter().all(|event| event["run_kind"] == "INTERACTIVE"));
    for record in &mut request.resource_logs[0].scope_logs[0].log_records {
        record.attributes.retain(|pair| pair.key != "app.entrypoint" && pair.key != "terminal.type");
        record.attributes.push(attribute("terminal.type", any_value::Value::StringValue("non-interactive".into())));
    }
    let mapped = map(&request, "u");
    assert!(!mapped.events.is_empty() && as_json(&mapped).iter().all(|event| event["run_kind"] == "CI"));
}

/// From a terminal, 2.1.332's `claude -p` has `terminal.type` = `xterm`; only its
/// `api_request` records say `query_source` = `sdk`, and that is the whole session's kind
/// in the export, prompts and tool calls included.
#[test]
fn claude_codes_print_mode_from_a_terminal_is_told_apart_by_its_requests() {
    let mut request = fixture("claude_code");
    let records = &mut request.resource_logs[0].scope_logs[0].log_records;
    let name_of = |record: &opentelemetry_proto::tonic::logs::v1::LogRecord| {
        record.attributes.iter().find(|pair| pair.key == "event.name").and_then(|pair| match &pair.value {
            Some(AnyValue { value: Some(any_value::Value::StringValue(name)) }) => Some(name.clone()),
            _ => None,
        })
    };
    let mut marked = 0;
    for record in records.iter_mut() {
        record.attributes.retain(|pair| pair.key != "app.entrypoint" && pair.key != "terminal.type");
        if name_of(record).is_some_and(|name| name.ends_with("api_request")) {
            record.attributes.push(attribute("query_source", any_value::Value::StringValue("sdk".into())));
            marked += 1;
        }
    }
    assert!(marked > 0, "the fixture has an api_request");
    let mapped = map(&request, "u");
    let kinds: std::collections::BTreeSet<String> =
        as_json(&mapped).iter().map(|e| e["type"].as_str().unwrap().to_string()).collect();
    assert!(kinds.len() > 2, "prompts and tool calls too: {kinds:?}");
    assert!(as_json(&mapped).iter().all(|event| event["run_kind"] == "CI"), "{:?}", mapped.events);
    // An explicit kind still wins.
    let resource = request.resource_logs[0].resource.as_mut().unwrap();
    resource.attributes.push(attribute("sightline.run_kind", any_value::Value::StringValue("INTERACTIVE".into())));
    assert!(as_json(&map(&request, "u")).iter().all(|event| event["run_kind"] == "INTERACTIVE"));
}

#[test]
fn a_harness_names_its_cell_in_the_resource_and_every_event_carries_it() {
    let with = |pairs: &[(&str, &str)]| {
        let mut request = fixture("claude_code");
        let resource = request.resource_logs[0].resource.as_mut().unwrap();
        for (key, value) in pairs {
            resource.attributes.push(attribute(key, any_value::Value::StringValue((*value).into())));
        }
        as_json(&map(&request, "u"))
    };
    let events = with(&[
        ("sightline.eval.cell", "claude-code__sonnet__django__django-1__r0"),
        ("sightline.eval.run", "nightly"),
        ("sightline.eval.phase", "implement"),
    ]);
    assert!(!events.is_empty());
    for event in &events {
        assert_eq!(event["run_kind"], "EVAL", "naming a cell makes the run an evaluation");
        assert_eq!(
            event["eval"],
            serde_json::json!({"cell_id": "claude-code__sonnet__django__django-1__r0", "run_name": "nightly", "phase": "implement"})
        );
    }
    // A cell id of another shape is left out; the records are kept, as an evaluation run.
    let events = with(&[("sightline.eval.cell", "not-a-cell")]);
    assert!(!events.is_empty());
    assert!(events.iter().all(|event| event.get("eval").is_none() && event["run_kind"] == "EVAL"));
    assert!(with(&[]).iter().all(|event| event.get("eval").is_none() && event["run_kind"] == "INTERACTIVE"));
}

#[test]
fn a_record_without_its_session_is_refused_by_name_and_the_rest_kept() {
    let mut request = fixture("gemini_cli");
    request.resource_logs[0].resource.as_mut().unwrap().attributes.retain(|pair| pair.key != "session.id");
    request.resource_logs[0].scope_logs[0].log_records[1].attributes.retain(|pair| pair.key != "session.id");
    let mapped = map(&request, "u");
    assert_eq!(mapped.refused, 1);
    assert_eq!(mapped.reasons, ["user_prompt: session.id is missing"]);
    assert_eq!(mapped.events.len(), 5);
}

fn spans(name: &str) -> opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest {
    let text = match name {
        "copilot_cli" => include_str!("../../tests/fixtures/otlp/copilot_cli_traces.json"),
        "opencode" => include_str!("../../tests/fixtures/otlp/opencode_traces.json"),
        other => panic!("no fixture {other}"),
    };
    serde_json::from_str(text).expect("the fixture is OTLP/JSON")
}

#[test]
fn copilot_spans_map_each_call_and_never_the_agents_totals() {
    let mapped = super::traces::map(&spans("copilot_cli"), "user-1", &mut Default::default());
    assert_eq!((mapped.refused, mapped.skipped), (0, 0), "{:?}", mapped.reasons);
    let kinds: Vec<String> = as_json(&mapped).iter().map(|event| event["type"].as_str().unwrap().to_string()).collect();
    assert_eq!(kinds, ["turn_end", "tool_end", "turn_end", "tool_end", "session_start"]);
    let turn = &of_type(&mapped, "turn_end")[0];
    assert_eq!(
        turn["usage"],
        serde_json::json!({"input_tokens": 3000, "output_tokens": 700, "cache_read_tokens": 10000,
                           "cache_write_5m_tokens": 1000, "reasoning_tokens": 0}),
        "the count sent as text is read; cached input is counted apart"
    );
    assert_eq!(turn["response_ms"], 4000);
    let failed = &of_type(&mapped, "tool_end")[1];
    assert_eq!(failed["tool"]["status"], "error");
    assert_eq!(failed["tool"]["use_id"], "toolu_01B19r01rx01mr028946mr0");
    assert!(of_type(&mapped, "session_start")[0].get("usage").is_none(), "invoke_agent's totals are never read");
}

#[test]
fn opencode_spans_map_each_step_and_skip_the_outer_call() {
    let mapped = super::traces::map(&spans("opencode"), "user-1", &mut Default::default());
    assert_eq!((mapped.refused, mapped.skipped), (0, 1), "{:?}", mapped.reasons);
    let turns = of_type(&mapped, "turn_end");
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["usage"]["input_tokens"], 1034);
    assert_eq!(turns[0]["usage"]["cache_read_tokens"], 11000);
    assert_eq!(turns[0]["response_ms"], 4150);
    assert_eq!(turns[0]["session_id"], "ses_01JXK4Q9P2M7N3R8T5V6W0Y1Z2");
    let text = serde_json::to_string(&mapped.events).unwrap();
    assert!(!text.contains("export const app"), "a tool's result is content");
}

#[test]
fn a_tool_span_finds_its_session_through_its_trace_in_an_earlier_export() {
    let mut whole = spans("copilot_cli");
    let all = std::mem::take(&mut whole.resource_spans[0].scope_spans[0].spans);
    let (mut chats, mut tools) = (whole.clone(), whole);
    chats.resource_spans[0].scope_spans[0].spans = all.iter().filter(|s| s.name.starts_with("chat")).cloned().collect();
    tools.resource_spans[0].scope_spans[0].spans =
        all.iter().filter(|s| s.name.starts_with("execute_tool")).cloned().collect();
    let mut traces = super::traces::TraceSessions::default();
    let conversation = "0c4d3e2f-1a2b-4c5d-8e9f-a0b1c2d3e4f5";
    let alone = super::traces::map(&tools, "user-1", &mut traces);
    assert_ne!(as_json(&alone)[0]["session_id"], conversation, "without its sibling, the trace is the session");
    super::traces::map(&chats, "user-1", &mut traces);
    let later = super::traces::map(&tools, "user-1", &mut traces);
    assert_eq!(as_json(&later)[0]["session_id"], conversation);
    let other = super::traces::map(&tools, "user-2", &mut traces);
    assert_ne!(as_json(&other)[0]["session_id"], conversation, "a trace names a session of its own person only");
}

#[test]
fn what_no_mapping_uses_is_counted_per_version_and_inventory_is_kept_apart() {
    use crate::model::sightings::UnmappedKind as Kind;
    let mapped = map(&fixture("claude_code"), "user-1");
    assert!(as_json(&mapped).iter().all(|event| event["agent_version"] == "2.1.112"), "the resource's service.version");
    // plugin_loaded is a capability sighting, with only the fields kept as detail.
    assert_eq!(mapped.capabilities.len(), 1, "{:?}", mapped.capabilities);
    let plugin = &mapped.capabilities[0];
    assert_eq!((plugin.kind.as_str(), plugin.name.as_str()), ("plugin", "superpowers"));
    assert_eq!(
        Value::Object(plugin.detail.clone()),
        serde_json::json!({"plugin.name": "superpowers", "plugin.scope": "user"})
    );
    assert_eq!(plugin.agent_version.as_deref(), Some("2.1.112"));
    // The accepted tool_decision is skipped: an unmapped event name of 2.1.112.
    let skipped: Vec<_> = mapped.unmapped.iter().filter(|(u, _)| u.kind == Kind::Event).collect();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert_eq!(
        (skipped[0].0.name.as_str(), skipped[0].0.version.as_str(), skipped[0].1),
        ("tool_decision", "2.1.112", 1)
    );
    // Attributes a mapped record carried and no mapping read: prompt.id, never the
    // model or the tokens an api_request mapping takes.
    let unread = |event: &str| -> Vec<&str> {
        mapped
            .unmapped
            .iter()
            .filter(|(u, _)| u.kind == Kind::Attribute && u.event == event)
            .map(|(u, _)| u.name.as_str())
            .collect()
    };
    let api = unread("api_request");
    assert!(api.contains(&"prompt.id"), "{api:?}");
    for taken in ["model", "input_tokens", "session.id", "event.name", "request_id"] {
        assert!(!api.contains(&taken), "{taken} is read by the mapping: {api:?}");
    }
}

#[test]
fn a_built_in_slash_command_is_no_prompt_and_a_custom_one_is() {
    // Claude Code 2.1.332's user_prompt for `/compact` (run for real), beside one for a
    // command of the project's own, which expands into a prompt to the model.
    let prompt = |length: &str, command: Option<(&str, &str)>| {
        let mut attributes = vec![
            serde_json::json!({"key": "event.name", "value": {"stringValue": "user_prompt"}}),
            serde_json::json!({"key": "session.id", "value": {"stringValue": "b0900232-1b0e-49ad-a012-551a3441bc30"}}),
            serde_json::json!({"key": "event.timestamp", "value": {"stringValue": "2026-12-03T12:06:53.844Z"}}),
            serde_json::json!({"key": "prompt_length", "value": {"stringValue": length}}),
            serde_json::json!({"key": "prompt", "value": {"stringValue": "<REDACTED>"}}),
        ];
        if let Some((name, source)) = command {
            attributes.push(serde_json::json!({"key": "command_name", "value": {"stringValue": name}}));
            attributes.push(serde_json::json!({"key": "command_source", "value": {"stringValue": source}}));
        }
        serde_json::json!({"timeUnixNano": "1796299613844000000", "body": {"stringValue": "claude_code.user_prompt"},
                           "attributes": attributes})
    };
    let request = serde_json::json!({"resourceLogs": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "claude-code"}},
                                    {"key": "service.version", "value": {"stringValue": "2.1.332"}}]},
        "scopeLogs": [{"scope": {"name": "com.anthropic.claude_code.events", "version": "2.1.332"},
                       "logRecords": [prompt("48", None), prompt("8", Some(("compact", "builtin"))),
                                      prompt("9", Some(("review", "projectSettings")))]}]}]});
    let mapped = map(&serde_json::from_value(request).unwrap(), "user-1");
    let lengths: Vec<Value> =
        of_type(&mapped, "prompt_submit").iter().map(|e| e["metadata"]["prompt_length"].clone()).collect();
    assert_eq!(lengths, [48, 9], "the person's prompt and the custom command, not `/compact`");
    assert_eq!(mapped.skipped, 1);
}

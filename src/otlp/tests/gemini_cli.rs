//! Gemini CLI's log records (and Qwen Code's, its fork's) over the fixtures written from
//! `docs/cli/telemetry.md`, and over records edited to what 0.61.0 sends where the
//! fixture has no such record: a compression, a call its policy engine denied, Node's
//! version in `service.version`.

use opentelemetry_proto::tonic::common::v1::any_value;

use super::{as_json, attribute, fixture, map, of_type};

#[test]
fn gemini_cli_tokens_and_tool_calls() {
    let mapped = map(&fixture("gemini_cli"), "user-1");
    assert_eq!(mapped.refused, 0, "{:?}", mapped.reasons);
    assert_eq!(mapped.skipped, 1, "the GenAI semantic-convention twin of a response is not counted again");
    let turn = &of_type(&mapped, "turn_end")[0];
    assert_eq!(
        turn["usage"],
        serde_json::json!({"input_tokens": 1000, "output_tokens": 600, "cache_read_tokens": 4000, "reasoning_tokens": 300})
    );
    let statuses: Vec<String> =
        of_type(&mapped, "tool_end").iter().map(|e| e["tool"]["status"].as_str().unwrap().to_string()).collect();
    assert_eq!(statuses, ["success", "denied", "success"]);
    assert_eq!(of_type(&mapped, "tool_end")[2]["tool"]["server"], "github");
    assert!(!serde_json::to_string(&mapped.events).unwrap().contains("dark mode"), "the prompt is content");
}

#[test]
fn qwen_code_events_map_as_gemini_clis_under_their_own_agent() {
    let mapped = map(&fixture("qwen_code"), "user-1");
    assert_eq!((mapped.refused, mapped.skipped), (0, 1), "the api_request is not an event: {:?}", mapped.reasons);
    assert!(as_json(&mapped).iter().all(|event| event["agent_type"] == "qwen_code"));
    let turn = &of_type(&mapped, "turn_end")[0];
    assert_eq!(turn["usage"]["input_tokens"], 3000, "cached input is counted apart");
    let tools = of_type(&mapped, "tool_end");
    assert_eq!(tools[0]["tool"]["name"], "qwen_code:read_file");
    assert_eq!(tools[0]["tool"]["action"], "read");
    assert_eq!(tools[1]["tool"]["status"], "denied");
    assert!(!serde_json::to_string(&mapped.events).unwrap().contains("secret_plan"), "arguments are content");
}

/// Gemini CLI's `chat_compression` (as 0.61.0 sends it when it did compress: the only
/// sign, `PreCompress` fires before every turn) is one compaction with its token counts.
#[test]
fn a_gemini_compression_is_a_compaction_with_its_counts() {
    let mut request = fixture("gemini_cli");
    let records = &mut request.resource_logs[0].scope_logs[0].log_records;
    let mut compression = records[0].clone();
    compression.attributes.retain(|pair| pair.key == "session.id");
    compression.attributes.extend([
        attribute("event.name", any_value::Value::StringValue("gemini_cli.chat_compression".into())),
        attribute("tokens_before", any_value::Value::IntValue(1300)),
        attribute("tokens_after", any_value::Value::IntValue(152)),
    ]);
    records.push(compression);
    let mapped = map(&request, "user-1");
    let compactions = of_type(&mapped, "compact");
    assert_eq!(compactions.len(), 1, "{:?}", mapped.reasons);
    assert_eq!(compactions[0]["metadata"]["tokens_before"], 1300);
    assert_eq!(compactions[0]["metadata"]["tokens_after"], 152);
    assert_eq!(compactions[0]["metadata"]["trigger"], "auto");
}

/// A call Gemini CLI 0.61.0's policy engine denied (a `deny` rule in
/// `~/.gemini/policies/`) has no `decision`, only `success` false and `error_type`
/// `policy_violation`: denied, as its hook says, not an error.
#[test]
fn a_gemini_call_its_policy_denied_is_denied_not_an_error() {
    let mut request = fixture("gemini_cli");
    let records = &mut request.resource_logs[0].scope_logs[0].log_records;
    let is_call = |record: &opentelemetry_proto::tonic::logs::v1::LogRecord| {
        record.attributes.iter().any(|pair| {
            pair.key == "event.name"
                && pair.value.as_ref().and_then(|v| v.value.as_ref())
                    == Some(&any_value::Value::StringValue("gemini_cli.tool_call".into()))
        })
    };
    let mut denied = records.iter().find(|record| is_call(record)).unwrap().clone();
    denied.attributes.retain(|pair| !matches!(pair.key.as_str(), "decision" | "success"));
    denied.attributes.extend([
        attribute("success", any_value::Value::BoolValue(false)),
        attribute("error", any_value::Value::StringValue("Tool execution denied by policy.".into())),
        attribute("error_type", any_value::Value::StringValue("policy_violation".into())),
    ]);
    let mut failed = denied.clone();
    failed.attributes.retain(|pair| pair.key != "error_type");
    failed.attributes.push(attribute("error_type", any_value::Value::StringValue("execution_failed".into())));
    records.retain(|record| !is_call(record));
    records.extend([denied, failed]);
    let mapped = map(&request, "user-1");
    let statuses: Vec<String> =
        of_type(&mapped, "tool_end").iter().map(|e| e["tool"]["status"].as_str().unwrap().to_string()).collect();
    assert_eq!(statuses, ["denied", "error"], "{:?}", mapped.reasons);
}

#[test]
fn gemini_cli_puts_node_s_version_where_its_own_would_be_and_it_is_not_taken() {
    let mut request = fixture("gemini_cli");
    let resource = request.resource_logs[0].resource.get_or_insert_with(Default::default);
    resource.attributes.push(attribute("service.version", any_value::Value::StringValue("v20.20.2".into())));
    let mapped = map(&request, "user-1");
    assert!(!mapped.events.is_empty());
    assert!(as_json(&mapped).iter().all(|event| event.get("agent_version").is_none()), "{:?}", mapped.events[0]);
}

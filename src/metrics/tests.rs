//! The registry's text as Prometheus reads it: every family with HELP and TYPE, counters
//! named `_total`, no OpenMetrics-only line, and label values only from the fixed sets.

use super::*;

/// The families of a 0.0.4 text: name -> (help, type), and every sample's name.
fn families(text: &str) -> (std::collections::BTreeMap<String, (String, String)>, Vec<String>) {
    let mut families = std::collections::BTreeMap::<String, (String, String)>::new();
    let mut samples = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap();
            families.entry(name.to_string()).or_default().0 = help.to_string();
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            families.entry(name.to_string()).or_default().1 = kind.to_string();
        } else {
            assert!(!line.starts_with('#'), "only HELP and TYPE comments: {line}");
            samples.push(line.split(['{', ' ']).next().unwrap().to_string());
        }
    }
    (families, samples)
}

#[test]
fn metrics_render_as_prometheus_text_with_help_and_type_for_every_sample() {
    let metrics = Metrics::new();
    metrics.observe_request("ingest", "/v1/events", 200, 0.003);
    metrics.count_events(3, 1, 1);
    metrics.count_batch(BatchOutcome::Accepted);
    metrics.count_export(Signal::Logs, BatchOutcome::TooLarge);
    metrics.count_otlp_records(Signal::Traces, "copilot", 2, 0, 1);
    metrics.job_ran("run-deletions", "succeeded", 0.5);
    metrics.job_refused("sweep-retention");
    metrics.set_job(JobLabels { job_name: "run-deletions", severity: "critical" }, false, Some(1_700_000_000_000));
    let text = metrics.render();
    let (families, samples) = families(&text);
    for sample in &samples {
        let family = [sample.as_str(), sample.trim_end_matches("_bucket"), sample.trim_end_matches("_sum")]
            .into_iter()
            .chain([sample.trim_end_matches("_count")])
            .find(|name| families.contains_key(*name))
            .unwrap_or_else(|| panic!("{sample} has no HELP or TYPE in\n{text}"));
        let (help, kind) = &families[family];
        assert!(!help.is_empty() && !kind.is_empty(), "{family}: help {help:?}, type {kind:?}");
    }
    for (name, (_, kind)) in &families {
        assert_eq!(kind == "counter", name.ends_with("_total"), "{name} is a {kind}");
        assert!(!name.ends_with("_total_total"), "{name}");
        assert!(name.starts_with("sightline_") || name.starts_with("process_"), "{name}");
    }
    for expected in [
        "# TYPE sightline_http_requests_total counter",
        r#"sightline_http_requests_total{listener="ingest",route="/v1/events",status="200"} 1"#,
        r#"sightline_ingest_events_total{outcome="accepted"} 3"#,
        r#"sightline_ingest_events_total{outcome="duplicate"} 1"#,
        r#"sightline_ingest_batches_total{outcome="accepted"} 1"#,
        r#"sightline_ingest_batches_total{outcome="storage_unavailable"} 0"#,
        r#"sightline_otlp_exports_total{signal="logs",outcome="too_large"} 1"#,
        r#"sightline_otlp_records_total{signal="traces",agent="copilot",outcome="accepted"} 2"#,
        r#"sightline_otlp_records_total{signal="traces",agent="copilot",outcome="refused"} 1"#,
        r#"sightline_job_runs_total{job_name="run-deletions",outcome="succeeded"} 1"#,
        r#"sightline_job_runs_total{job_name="sweep-retention",outcome="refused"} 1"#,
        r#"sightline_job_run_duration_seconds_count{job_name="run-deletions"} 1"#,
        r#"sightline_job_last_success_timestamp_seconds{job_name="run-deletions",severity="critical"} 1700000000"#,
        "# TYPE process_cpu_seconds_total counter",
        "# TYPE process_resident_memory_bytes gauge",
        "process_open_fds ",
        "process_max_fds ",
        "process_start_time_seconds ",
        "process_virtual_memory_bytes ",
    ] {
        assert!(text.contains(expected), "{expected} in\n{text}");
    }
    assert!(text.contains(&format!("sightline_build_info{{version=\"{VERSION}\",commit=\"{COMMIT}\"}} 1\n")), "{text}");
}

#[test]
fn metrics_labels_from_clients_map_onto_fixed_lists() {
    assert_eq!(otlp_agent("claude-code"), "claude_code");
    assert_eq!(otlp_agent("codex_cli_rs"), "codex");
    assert_eq!(otlp_agent("gemini-cli"), "gemini_cli");
    assert_eq!(otlp_agent("github-copilot"), "copilot");
    assert_eq!(otlp_agent("opencode"), "opencode");
    assert_eq!(otlp_agent("my-service-4711"), "other");
    assert_eq!(otlp_agent(""), "other");
    let metrics = Metrics::new();
    let before = metrics.render().lines().count();
    for n in 0..50 {
        metrics.count_otlp_records(Signal::Logs, &format!("agent-{n}"), 1, 1, 1);
        metrics.count_rejected_event(&format!("metadata.key{n}"));
        metrics.count_rejected_event(&format!("field{n}"));
    }
    let text = metrics.render();
    assert_eq!(text.lines().count(), before, "no new series:\n{text}");
    assert!(text.contains(r#"sightline_otlp_records_total{signal="logs",agent="other",outcome="skipped"} 50"#));
    assert!(text.contains(r#"sightline_ingest_rejected_events_total{field="metadata"} 50"#));
    assert!(text.contains(r#"sightline_ingest_rejected_events_total{field="other"} 50"#));
    assert_eq!(EVENT_FIELDS[event_field("tool.name")], "tool");
    assert_eq!(EVENT_FIELDS[event_field("event")], "event");
}

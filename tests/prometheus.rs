//! `/metrics` as an operator's Prometheus reads it: the real `sightline serve` takes some
//! ingest traffic (hook batches, an OTLP export, refused ones, random paths), then a real
//! Prometheus server (Debian's `prometheus` package, `scripts/test` installs it) scrapes
//! it every second and answers queries of its series; `promtool` finds nothing to say of
//! a scrape and accepts the alerting rules; the Grafana dashboard parses and queries only
//! metrics the server exposes.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

const RULES: &str = "packaging/prometheus/sightline-rules.yml";
const DASHBOARD: &str = "packaging/grafana/sightline.json";

/// A program of the `prometheus` package; the test fails, never skips, without it.
fn program(name: &str) -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/bin")])
        .map(|dir| dir.join(name))
        .find(|path| path.is_file());
    found.unwrap_or_else(|| {
        panic!(
            "{name} is not installed: this test runs a real Prometheus. Install Debian's `prometheus` package \
             (apt-get install prometheus; scripts/test does it) and run it again"
        )
    })
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// One scrape: the Content-Type and the text.
fn scrape(server: &TestServer) -> (String, String) {
    let mut response = agent().get(&format!("{}/metrics", server.ingest)).call().expect("/metrics answers");
    assert_eq!(response.status().as_u16(), 200);
    let kind = response.headers().get("content-type").unwrap().to_str().unwrap().to_string();
    (kind, response.body_mut().read_to_string().unwrap())
}

/// The names a scrape declares (`# TYPE`) and the names of its samples.
fn names(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| match line.strip_prefix("# TYPE ") {
            Some(rest) => rest.split(' ').next(),
            None if !line.starts_with('#') => line.split(['{', ' ']).next(),
            None => None,
        })
        .map(str::to_string)
        .collect()
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A Prometheus server of the test's own, stopped (by its pid) when dropped.
struct Prometheus {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    /// Scrapes `target` (host:port) every second as job `sightline`, with our rules loaded.
    fn start(target: &str) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {}\n\
                 scrape_configs:\n  - job_name: sightline\n    static_configs:\n      - targets: ['{target}']\n",
                repo(RULES).display()
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new(program("prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--log.level=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start prometheus");
        Prometheus { child, base: format!("http://127.0.0.1:{port}"), _dir: dir }
    }

    /// An instant query's result vector (empty while Prometheus is not up yet).
    fn query(&mut self, promql: &str) -> Vec<Value> {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("prometheus exited: {status}");
        }
        let query: String = form_urlencoded::Serializer::new(String::new()).append_pair("query", promql).finish();
        let (status, body) = get(&format!("{}/api/v1/query?{query}", self.base));
        if status != 200 {
            return Vec::new();
        }
        assert_eq!(body["status"], "success", "{promql}: {body}");
        body["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// Waits until `promql` has a series whose value passes `check`; answers it.
    fn wait_for(&mut self, promql: &str, check: impl Fn(f64) -> bool) -> Value {
        let mut found = Value::Null;
        wait_until(Duration::from_secs(60), promql, || {
            let result = self.query(promql);
            match result.into_iter().find(|series| check(series["value"][1].as_str().unwrap().parse().unwrap())) {
                Some(series) => {
                    found = series;
                    true
                }
                None => {
                    std::thread::sleep(Duration::from_millis(200));
                    false
                }
            }
        });
        found
    }
}

/// Some of everything ingest counts: batches taken and refused, events rejected, an OTLP
/// export, and requests of paths no route serves.
fn traffic(server: &TestServer) {
    let now = now_ms();
    let (status, body) = server.post_events(&server.token, &envelope(session_events("prom-session", now - 60_000, 6)));
    assert_eq!(status, 200, "{body}");
    let mut bad = event("prompt_submit", "prom-session", now);
    bad["ts"] = json!("yesterday");
    let (status, body) = server.post_events(&server.token, &envelope(vec![bad]));
    assert_eq!((status, body["rejected"][0]["field"].as_str()), (200, Some("ts")), "{body}");
    let (status, _) = post_raw(&format!("{}/v1/events", server.ingest), &server.token, &[], b"{not json".to_vec());
    assert_eq!(status, 400);
    let (status, _) = server.post_events("not-a-token", &envelope(vec![event("prompt_submit", "x", now)]));
    assert_eq!(status, 401);
    let token = crate::otlp::otlp_token(server);
    let claude = crate::otlp::fixture("claude_code_logs");
    let (status, _, _) = crate::otlp::send(
        &format!("{}/v1/logs", server.ingest),
        &token,
        "application/json",
        &[],
        serde_json::to_vec(&claude).unwrap(),
    );
    assert_eq!(status, 200);
    // An attacker's random paths and service names make no series of their own.
    for n in 0..20 {
        let (status, _) = get(&format!("{}/random-{n}/{}", server.ingest, uuid::Uuid::new_v4()));
        assert_eq!(status, 404);
    }
    let mut other = crate::otlp::fixture("claude_code_logs");
    other["resourceLogs"][0]["resource"]["attributes"] =
        json!([{"key": "service.name", "value": {"stringValue": "evil-7d1e"}}]);
    let (status, _, _) = crate::otlp::send(
        &format!("{}/v1/logs", server.ingest),
        &token,
        "application/json",
        &[],
        serde_json::to_vec(&other).unwrap(),
    );
    assert_eq!(status, 200);
}

#[test]
fn prometheus_scrapes_the_server_and_promtool_accepts_its_metrics_and_rules() {
    let (promtool, _) = (program("promtool"), program("prometheus"));
    let server = TestServer::spawn();
    traffic(&server);
    // A run `sightline jobs run` recorded beside the server shows at the next scrape.
    server
        .main_db()
        .execute(
            "INSERT INTO job_runs (id, job, trigger, started_at_ms, ended_at_ms, outcome)
             VALUES ('cli-run', 'run-deletions', 'cli', ?1, ?1 + 5, 'succeeded')",
            [now_ms() - 1_000],
        )
        .unwrap();

    let (kind, text) = scrape(&server);
    assert_eq!(kind, "text/plain; version=0.0.4; charset=utf-8");
    for expected in [
        r#"sightline_ingest_batches_total{outcome="accepted"} 2"#,
        r#"sightline_ingest_batches_total{outcome="malformed"} 1"#,
        r#"sightline_ingest_batches_total{outcome="unauthorized"} 1"#,
        // The hook's 6 and the OTLP exports' events: one path stores both.
        r#"sightline_ingest_events_total{outcome="accepted"} "#,
        r#"sightline_ingest_events_total{outcome="rejected"} 1"#,
        r#"sightline_ingest_rejected_events_total{field="ts"} 1"#,
        r#"sightline_otlp_exports_total{signal="logs",outcome="accepted"} 2"#,
        r#"sightline_otlp_records_total{signal="logs",agent="claude_code",outcome="accepted"} "#,
        r#"sightline_otlp_records_total{signal="logs",agent="other",outcome="skipped"} "#,
        r#"sightline_http_requests_total{listener="ingest",route="unmatched",status="404"} 20"#,
        "sightline_writer_queue_capacity ",
        r#"sightline_job_runs_total{job_name="run-deletions",outcome="failed"} 0"#,
        r#"sightline_job_last_success_timestamp_seconds{job_name="run-deletions",severity="critical"} "#,
        "sightline_transcript_index_pending 0",
        "sightline_transcript_index_lag_seconds 0",
        "sightline_build_info{version=",
        "process_resident_memory_bytes ",
        "process_cpu_seconds_total ",
        "process_open_fds ",
        "process_max_fds ",
        "process_start_time_seconds ",
        "process_virtual_memory_bytes ",
    ] {
        assert!(text.contains(expected), "{expected} in\n{text}");
    }
    assert!(!text.contains("random-") && !text.contains("evil-7d1e"), "a client made a series:\n{text}");
    assert!(!text.contains("# EOF") && !text.contains("# UNIT"), "{text}");

    // promtool reads the scrape as Prometheus does and has nothing to say.
    let mut check = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut check.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(
        checked.status.success() && checked.stdout.is_empty() && checked.stderr.is_empty(),
        "promtool check metrics: {}{}",
        stdout(&checked),
        stderr(&checked)
    );
    let rules = Command::new(&promtool).args(["check", "rules"]).arg(repo(RULES)).output().unwrap();
    assert!(rules.status.success(), "promtool check rules: {}{}", stdout(&rules), stderr(&rules));
    assert!(stdout(&rules).contains("SUCCESS"), "{}", stdout(&rules));

    // A real Prometheus scrapes it, with the rules loaded, and answers for its series.
    let target = server.ingest.trim_start_matches("http://").to_string();
    let mut prometheus = Prometheus::start(&target);
    let up = prometheus.wait_for(r#"up{job="sightline"}"#, |v| v == 1.0);
    assert_eq!(up["metric"]["instance"], target.as_str());
    let build = prometheus.wait_for("sightline_build_info", |v| v == 1.0);
    assert_eq!(build["metric"]["version"], env!("CARGO_PKG_VERSION"), "{build}");
    prometheus.wait_for(r#"sightline_ingest_events_total{outcome="accepted"}"#, |v| v > 0.0);
    prometheus.wait_for(r#"sum(sightline_otlp_records_total{signal="logs",outcome="accepted"})"#, |v| v > 0.0);
    prometheus.wait_for("process_resident_memory_bytes", |v| v > 0.0);
    let rules: Value = get(&format!("{}/api/v1/rules", prometheus.base)).1;
    let groups = rules["data"]["groups"].as_array().cloned().unwrap_or_default();
    assert!(!groups.is_empty(), "Prometheus loaded the rules: {rules}");
    for rule in groups.iter().flat_map(|g| g["rules"].as_array().unwrap().clone()) {
        assert_ne!(rule["health"], "err", "a rule Prometheus cannot evaluate: {rule}");
    }

    // The dashboard parses and asks only for metrics the server exposes.
    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(repo(DASHBOARD)).unwrap()).expect("the dashboard is JSON");
    let mut expressions = Vec::new();
    collect_exprs(&dashboard, &mut expressions);
    assert!(expressions.len() >= 12, "{expressions:?}");
    let exposed = names(&text);
    let metric = regex::Regex::new(r"\b((?:sightline|process)_[a-z0-9_]+)").unwrap();
    let mut asked = BTreeSet::new();
    for expression in &expressions {
        for found in metric.captures_iter(expression) {
            asked.insert(found[1].to_string());
        }
    }
    // A histogram's `_bucket` series come with its first observation (a job's first run):
    // its declared family is enough.
    let declared = |name: &str| {
        exposed.contains(name)
            || ["_bucket", "_sum", "_count"].iter().any(|suffix| {
                name.strip_suffix(suffix).is_some_and(|family| text.contains(&format!("# TYPE {family} histogram")))
            })
    };
    let missing: Vec<_> = asked.iter().filter(|name| !declared(name)).collect();
    assert!(missing.is_empty(), "the dashboard asks for {missing:?}, which /metrics does not expose");
    for family in [
        "sightline_http_requests_total",
        "sightline_http_request_duration_seconds_bucket",
        "sightline_ingest_batches_total",
        "sightline_otlp_records_total",
        "sightline_writer_queue_depth",
        "sightline_writer_commit_duration_seconds_bucket",
        "sightline_job_runs_total",
        "sightline_aggregate_refresh_lag_seconds",
        "sightline_transcript_index_lag_seconds",
        "process_resident_memory_bytes",
        "process_cpu_seconds_total",
        "process_open_fds",
        "sightline_build_info",
    ] {
        assert!(asked.contains(family), "the dashboard has a panel on {family}");
    }
    // Every query of the dashboard runs in Prometheus (with its variables filled in).
    for expression in &expressions {
        let promql = expression
            .replace("$__rate_interval", "1m")
            .replace("$__range", "1h")
            .replace("$job", "sightline")
            .replace("$instance", ".*");
        let query: String = form_urlencoded::Serializer::new(String::new()).append_pair("query", &promql).finish();
        let (status, body) = get(&format!("{}/api/v1/query?{query}", prometheus.base));
        assert_eq!((status, &body["status"]), (200, &json!("success")), "{promql}: {body}");
    }
}

/// Every `expr` of the dashboard's panels and variables' `query`.
fn collect_exprs(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("expr", Value::String(expr)) => found.push(expr.clone()),
                    _ => collect_exprs(inner, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_exprs(item, found)),
        _ => {}
    }
}

//! `sightline dashboard` over loopback HTTP: every API endpoint and page, errors,
//! escaping of hostile strings, authentication, cookies, Host checks and headers.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::results::{self, HOSTILE_ERROR_MARK, HOSTILE_RUN};
use common::{BIN, get, get_auth};
use serde_json::Value;

struct Dashboard {
    _server: results::RunningDashboard,
    base: String,
    _dir: tempfile::TempDir,
}

fn start(token: Option<&str>) -> Dashboard {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    results::hostile(&db);
    let server = results::RunningDashboard::start(&db, token);
    Dashboard { base: server.base.clone(), _server: server, _dir: dir }
}

fn enc(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The body as text, with askama's numeric character references in named form.
fn text_of(response: (u16, Value)) -> (u16, String) {
    match response {
        (status, Value::String(text)) => (status, results::named_entities(&text)),
        (status, other) => (status, other.to_string()),
    }
}

#[test]
fn api_endpoints_have_the_spec_shapes() {
    let d = start(None);
    let (status, runs) = get(&format!("{}/api/runs", d.base));
    assert_eq!(status, 200);
    let plain = runs["runs"].as_array().unwrap().iter().find(|r| r["run_name"] == "plain-run").unwrap();
    for key in ["run_name", "total_cells", "passed", "failed", "total_cost", "avg_success"] {
        assert!(plain.get(key).is_some(), "{key}: {plain}");
    }
    assert_eq!((plain["total_cells"].as_i64(), plain["completed_cells"].as_i64()), (Some(38), Some(36)));

    let (status, page) =
        get(&format!("{}/api/run/plain-run?per_page=10&page=2&model=m-one&sort=success&order=desc", d.base));
    assert_eq!(status, 200, "{page}");
    for key in ["run_name", "page", "per_page", "total", "total_pages", "count", "results"] {
        assert!(page.get(key).is_some(), "{key}");
    }
    assert_eq!(
        (page["page"].clone(), page["per_page"].clone(), page["total"].clone()),
        (2.into(), 10.into(), 24.into())
    );
    assert_eq!(page["total_pages"], 3);
    assert_eq!(page["count"], 10);
    assert!(page["results"].as_array().unwrap().iter().all(|r| r["model"] == "m-one"));
    let (_, filtered) = get(&format!("{}/api/run/plain-run?min_success=1&per_page=500", d.base));
    assert!(filtered["results"].as_array().unwrap().iter().all(|r| r["success"].as_f64().unwrap() >= 1.0));

    let (status, boards) = get(&format!("{}/api/run/plain-run/leaderboard", d.base));
    assert_eq!(status, 200);
    let rows = boards["leaderboards"]["m-one"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let rates: Vec<f64> = rows.iter().map(|r| r["success_pct"].as_str().unwrap().parse().unwrap()).collect();
    assert!(rates[0] >= rates[1], "sorted by success descending: {rates:?}");

    let (status, state) = get(&format!("{}/api/run/plain-run/status", d.base));
    assert_eq!(status, 200);
    assert_eq!(state["state"]["running"], 1);
    assert_eq!(state["state"]["skipped"], 1);

    let (status, errors) = get(&format!("{}/api/run/plain-run/errors", d.base));
    assert_eq!(status, 200);
    let failed = errors["failed_cells"].as_array().unwrap();
    assert!(failed.iter().any(|f| f["status"] == "skipped" && f["error"] == "budget exhausted <b>"));
    assert!(failed.iter().any(|f| f["status"] == "fail"));
    let mut ids: Vec<&str> = failed.iter().map(|f| f["cell_id"].as_str().unwrap()).collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "deduplicated by cell id");
}

#[test]
fn unknown_runs_are_404_and_bad_parameters_422_naming_them() {
    let d = start(None);
    for path in [
        "/api/run/nope",
        "/api/run/nope/leaderboard",
        "/api/run/nope/status",
        "/api/run/nope/errors",
        "/run/nope/export/csv",
    ] {
        assert_eq!(get(&format!("{}{path}", d.base)).0, 404, "{path}");
    }
    assert_eq!(text_of(get(&format!("{}/run/nope", d.base))).0, 404);
    for (query, parameter) in [
        ("per_page=0", "per_page"),
        ("per_page=501", "per_page"),
        ("page=0", "page"),
        ("per_page=ten", "per_page"),
        ("min_success=high", "min_success"),
        ("sort=password", "sort"),
        ("sort=success&order=up", "order"),
    ] {
        let (status, body) = get(&format!("{}/api/run/plain-run?{query}", d.base));
        assert_eq!((status, body["error"]["parameter"].clone()), (422, parameter.into()), "{query}: {body}");
    }
    let (status, body) = get(&format!("{}/run/plain-run/export/xml", d.base));
    assert_eq!((status, body["error"]["parameter"].clone()), (422, "format".into()));
    // An address with no route: JSON on the API, the dashboard's error page elsewhere.
    let (status, body) = get(&format!("{}/api/nowhere", d.base));
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("not_found")), "{body}");
    let (status, html) = text_of(get(&format!("{}/nowhere", d.base)));
    assert!(status == 404 && html.contains("</html>") && html.contains("not found"), "{html}");
}

#[test]
fn exports_carry_the_filtered_rows() {
    let d = start(None);
    let agent = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
    let mut csv_response = agent.get(format!("{}/run/plain-run/export/csv?harness=beta", d.base)).call().unwrap();
    assert!(csv_response.headers().get("content-disposition").unwrap().to_str().unwrap().contains("attachment"));
    let csv = csv_response.body_mut().read_to_string().unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(reader.headers().unwrap().len(), 28);
    let rows: Vec<_> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 12);
    assert!(rows.iter().all(|r| &r[2] == "beta"));
    let (_, json) = get(&format!("{}/run/plain-run/export/json?harness=beta&sort=success&order=desc", d.base));
    assert_eq!(json.as_array().unwrap().len(), 12);
}

#[test]
fn pages_render_and_escape_every_hostile_string() {
    let d = start(None);
    let (status, overview) = text_of(get(&format!("{}/", d.base)));
    assert_eq!(status, 200);
    assert!(overview.contains("plain-run"));
    assert!(!overview.contains("<script>alert('run')"), "run name unescaped on /");
    let (status, run) = text_of(get(&format!("{}/run/{}", d.base, enc(HOSTILE_RUN))));
    assert_eq!(status, 200, "{run}");
    assert!(
        !run.contains("<script>alert") && !run.contains(HOSTILE_ERROR_MARK) && !run.contains("<b>"),
        "raw markup on run page"
    );
    assert!(run.contains("&lt;script&gt;"));
    let (status, plain) = text_of(get(&format!("{}/run/plain-run?per_page=25", d.base)));
    assert_eq!(status, 200);
    for needle in [
        "Live progress",
        "Failed and skipped cells",
        "Leaderboards",
        "<svg",
        "Export CSV",
        "Page 1 of 2",
        "budget exhausted &lt;b&gt;",
    ] {
        assert!(plain.contains(needle), "{needle} missing on run page");
    }
    let cell_id = "h<b>__m\"q__t&<script>__r0";
    let (status, cell) = text_of(get(&format!("{}/run/{}/cell/{}", d.base, enc(HOSTILE_RUN), enc(cell_id))));
    assert_eq!(status, 200, "{cell}");
    assert!(!cell.contains("<script>alert") && !cell.contains(HOSTILE_ERROR_MARK), "raw markup on cell page");
    assert!(!cell.contains("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"), "secret not redacted in harness output");
    assert!(!cell.contains('\u{1b}'), "control characters kept");
    assert!(cell.contains("<details open id=\"stderr\">") && cell.contains("<details id=\"stdout\">"));
    let (status, _) = text_of(get(&format!("{}/run/plain-run/cell/{}", d.base, enc("nope__x__y__r0"))));
    assert_eq!(status, 404);
}

#[test]
fn compare_reports_wins_losses_and_regressions() {
    let d = start(None);
    let (status, body) = get(&format!(
        "{}/api/compare?a=plain-run&a_harness=alpha&a_model=m-one&b=plain-run&b_harness=beta&b_model=m-one",
        d.base
    ));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["shared_tasks"], 6);
    let total = body["candidate_wins"].as_u64().unwrap()
        + body["candidate_losses"].as_u64().unwrap()
        + body["ties"].as_u64().unwrap();
    assert_eq!(total, 6);
    assert!(body["mcnemar_p"].as_f64().unwrap() <= 1.0);
    assert_eq!(get(&format!("{}/api/compare?a=plain-run", d.base)).1["error"]["parameter"], "b");
    assert_eq!(get(&format!("{}/api/compare?a=plain-run&b=nope", d.base)).0, 404);
    let (status, page) =
        text_of(get(&format!("{}/compare?a=plain-run&b=plain-run&a_harness=alpha&b_harness=beta", d.base)));
    assert_eq!(status, 200);
    assert!(page.contains("Shared tasks") && page.contains("McNemar"));
    // The page offers the names that exist, and picks the chosen ones.
    assert!(page.contains(r#"<option value="alpha" selected>alpha</option>"#), "{page}");
    assert!(page.contains(r#"<option value="m-one">m-one</option>"#), "{page}");

    // A name that matches nothing is refused with the names that exist, never "+0.0 pts".
    let (status, body) = get(&format!("{}/api/compare?a=plain-run&a_harness=gamma&b=plain-run", d.base));
    assert_eq!((status, body["error"]["parameter"].as_str()), (422, Some("a_harness")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("alpha, beta"), "{body}");
    let (status, page) = text_of(get(&format!("{}/compare?a=plain-run&b=plain-run&b_model=m-nine", d.base)));
    assert_eq!(status, 200, "the form comes back with why");
    assert!(page.contains("has no model") && page.contains("m-nine") && page.contains("m-one, m-two"), "{page}");
    assert!(!page.contains("McNemar"), "no statistics without a comparison: {page}");
}

#[test]
fn without_a_token_openapi_is_served_and_foreign_hosts_are_refused() {
    let d = start(None);
    let (status, spec) = get(&format!("{}/openapi.json", d.base));
    assert_eq!(status, 200);
    assert_eq!(spec["openapi"], "3.1.0");
    assert_eq!(text_of(get(&format!("{}/docs", d.base))).0, 200);
    let agent = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
    let rebound = agent.get(format!("{}/api/runs", d.base)).header("Host", "evil.example:8700").call().unwrap();
    assert_eq!(rebound.status(), 421, "DNS rebinding: a foreign Host is refused");
    // Names that merely start like a loopback address resolve wherever their owner says.
    for host in ["127.attacker.example", "127.0.0.1.nip.io", "127.0.0.1.nip.io:8700", "localhost.attacker.example"] {
        let rebound = agent.get(format!("{}/api/runs", d.base)).header("Host", host).call().unwrap();
        assert_eq!(rebound.status(), 421, "Host {host} is refused");
    }
    let origin = agent.get(format!("{}/api/runs", d.base)).header("Origin", "http://evil.example").call().unwrap();
    assert_eq!(origin.status(), 421);
    let ok = agent.get(format!("{}/api/runs", d.base)).call().unwrap();
    assert_eq!(ok.headers().get("x-frame-options").unwrap(), "DENY");
    assert_eq!(ok.headers().get("x-content-type-options").unwrap(), "nosniff");
    assert!(ok.headers().get("content-security-policy").unwrap().to_str().unwrap().contains("frame-ancestors 'none'"));
}

#[test]
fn with_a_token_api_needs_bearer_and_browsers_sign_in_for_a_cookie() {
    let token = "correct horse battery staple";
    let d = start(Some(token));
    assert_eq!(get(&format!("{}/api/runs", d.base)).0, 401);
    assert_eq!(get(&format!("{}/api/runs?token={}", d.base, enc(token))).0, 401, "never from the query string");
    assert_eq!(get_auth(&format!("{}/api/runs", d.base), "wrong").0, 401);
    assert_eq!(get_auth(&format!("{}/api/runs", d.base), token).0, 200);
    assert_eq!(get_auth(&format!("{}/openapi.json", d.base), token).0, 404, "docs are off with auth");
    assert_eq!(get_auth(&format!("{}/docs", d.base), token).0, 404);

    let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
    let page = agent.get(format!("{}/run/plain-run", d.base)).call().unwrap();
    assert_eq!(page.status(), 303);
    assert!(page.headers().get("location").unwrap().to_str().unwrap().starts_with("/login?next="));
    let bad = agent
        .post(format!("{}/login", d.base))
        .content_type("application/x-www-form-urlencoded")
        .send("token=nope&next=%2F")
        .unwrap();
    assert_eq!(bad.status(), 401);
    assert!(bad.headers().get("set-cookie").is_none());
    let good = agent
        .post(format!("{}/login", d.base))
        .content_type("application/x-www-form-urlencoded")
        .send(format!("token={}&next=%2Frun%2Fplain-run", enc(token)))
        .unwrap();
    assert_eq!(good.status(), 303);
    assert_eq!(good.headers().get("location").unwrap(), "/run/plain-run");
    let cookie = good.headers().get("set-cookie").unwrap().to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().unwrap().to_string();
    let after = agent.get(format!("{}/run/plain-run", d.base)).header("Cookie", &pair).call().unwrap();
    assert_eq!(after.status(), 200, "the cookie alone signs the browser in");
    let tampered = pair.replace("v1.", "v1.9");
    assert_eq!(agent.get(format!("{}/api/runs", d.base)).header("Cookie", &tampered).call().unwrap().status(), 401);
    let evil = agent
        .post(format!("{}/login", d.base))
        .content_type("application/x-www-form-urlencoded")
        .send(format!("token={}&next=%2F%2Fevil.example", enc(token)))
        .unwrap();
    assert_eq!(evil.headers().get("location").unwrap(), "/", "open redirect refused");
    // A browser drops the tab and reads `/\t/evil.example` as `//evil.example`.
    for next in ["%2F%09%2Fevil.example", "%2F%0A%2Fevil.example", "%2F%5Cevil.example"] {
        let evil = agent
            .post(format!("{}/login", d.base))
            .content_type("application/x-www-form-urlencoded")
            .send(format!("token={}&next={next}", enc(token)))
            .unwrap();
        assert_eq!(evil.headers().get("location").unwrap(), "/", "next={next} refused");
    }
}

/// L8 of issue 52: a one-character token is refused at start, and wrong tokens are
/// throttled per address, by bearer and by the login form alike; past the limit even the
/// right token waits (429, Retry-After), so guessing gains nothing by going on.
#[test]
fn a_short_token_is_refused_and_wrong_tokens_are_throttled() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    results::hostile(&db);
    let mut short = Command::new(BIN)
        .args(["dashboard", "--db", db.to_str().unwrap(), "--port", "0"])
        .env("SIGHTLINE_DASHBOARD_TOKEN", "x")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let exited = loop {
        if let Some(status) = short.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            let _ = short.kill();
            panic!("the dashboard started with a one-character token");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut said = String::new();
    std::io::Read::read_to_string(short.stderr.as_mut().unwrap(), &mut said).unwrap();
    assert!(!exited.success() && said.contains("at least 16"), "{said}");

    let token = "a-proper-dashboard-token-0123";
    let d = start(Some(token));
    let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
    for guess in 0..5 {
        assert_eq!(get_auth(&format!("{}/api/runs", d.base), &format!("guess-{guess}")).0, 401);
        let form = agent
            .post(format!("{}/login", d.base))
            .content_type("application/x-www-form-urlencoded")
            .send(format!("token=guess-form-{guess}&next=%2F"))
            .unwrap();
        assert_eq!(form.status(), 401);
    }
    let refused =
        agent.get(format!("{}/api/runs", d.base)).header("Authorization", format!("Bearer {token}")).call().unwrap();
    assert_eq!(refused.status(), 429, "past ten wrong tokens even the right one waits");
    let wait: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(wait > 0 && wait <= 15 * 60, "{wait}");
    let form = agent
        .post(format!("{}/login", d.base))
        .content_type("application/x-www-form-urlencoded")
        .send(format!("token={}&next=%2F", enc(token)))
        .unwrap();
    assert_eq!(form.status(), 429);
    assert!(form.headers().get("set-cookie").is_none());
}

#[test]
fn cached_aggregates_follow_the_harness_writes() {
    let d = start(None);
    let url = format!("{}/api/run/plain-run?per_page=1", d.base);
    assert_eq!(get(&url).1["total"], 36);
    let db = d._dir.path().join("results.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    results::insert(
        &conn,
        "plain-run",
        &results::CellSpec {
            harness: "gamma",
            model: "m-one",
            task: "swe/task-0",
            repeat: 0,
            track: "swe",
            success: 1.0,
            error: None,
            cost: 0.1,
        },
    );
    common::wait_until(std::time::Duration::from_secs(20), "the new cell to be counted", || get(&url).1["total"] == 37);
    let (_, page) = text_of(get(&format!("{}/run/plain-run", d.base)));
    assert!(page.contains("gamma"), "the run page's leaderboards include the new harness");
}

#[test]
fn phases_come_from_the_phase_table_or_else_from_harness_metadata() {
    let d = start(None);
    let conn = rusqlite::Connection::open(d._dir.path().join("results.db")).unwrap();
    for (task, in_table) in [("mp/with-table", true), ("mp/metadata-only", false)] {
        results::insert(
            &conn,
            "plain-run",
            &results::CellSpec {
                harness: "alpha",
                model: "m-one",
                task,
                repeat: 0,
                track: "multi_phase",
                success: 1.0,
                error: None,
                cost: 0.3,
            },
        );
        let cell = format!("alpha__m-one__{task}__r0");
        let phases = r#"{"phases": [
            {"name": "plan", "trace_id": "t1", "model": "m-one", "model_role": "worker", "exit_code": 0, "duration_ms": 1200, "timed_out": false, "usage": {"input_tokens": 10, "output_tokens": 5}, "total_cost": 0.01, "num_api_calls": 1},
            {"name": "review", "trace_id": "t2", "model": "m-two", "model_role": "reviewer", "exit_code": 124, "duration_ms": 60000, "timed_out": true, "usage": {"input_tokens": 20, "output_tokens": 2}, "total_cost": 0.02, "num_api_calls": 2}],
            "review_model": "m-two"}"#;
        conn.execute("UPDATE run_results SET harness_metadata = ?1 WHERE cell_id = ?2", [phases, &cell]).unwrap();
        if in_table {
            conn.execute(
                "INSERT INTO run_phases (run_name, cell_id, phase_index, name, model, model_role, exit_code, timed_out, error)
                 VALUES ('plain-run', ?1, 0, 'from-table', 'm-one', 'worker', 3, 0, 'lint failed')",
                [&cell],
            )
            .unwrap();
        }
    }
    let (_, with_table) = get(&format!("{}/api/run/plain-run/cell/{}", d.base, enc("alpha__m-one__mp/with-table__r0")));
    let names: Vec<&str> =
        with_table["phases"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["from-table"], "the phase table wins when it has rows");
    let (_, metadata_only) =
        get(&format!("{}/api/run/plain-run/cell/{}", d.base, enc("alpha__m-one__mp/metadata-only__r0")));
    let phases = metadata_only["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[1]["timed_out"], true);
    assert_eq!(phases[1]["model_role"], "reviewer");
    let (_, page) =
        text_of(get(&format!("{}/run/plain-run/cell/{}", d.base, enc("alpha__m-one__mp/metadata-only__r0"))));
    assert!(page.contains("Adversarial reviewer model") && page.contains("m-two"));
}

#[test]
fn binding_every_interface_without_a_token_warns() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    results::hostile(&db);
    let mut child = Command::new(BIN)
        .args(["dashboard", "--db", db.to_str().unwrap(), "--host", "0.0.0.0", "--port", "0"])
        .env_remove("SIGHTLINE_DASHBOARD_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.starts_with("warning:") && line.contains("without a token"), "{line}");
}

/// Without a token the dashboard logs each request; with one the access log stays off,
/// since a URL could carry what a token protects.
#[test]
fn the_access_log_is_on_only_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    results::hostile(&db);
    let logged = |token: Option<&str>| -> String {
        let log = dir.path().join(format!("stderr-{}.log", token.is_some()));
        let mut command = Command::new(BIN);
        command
            .args(["dashboard", "--db", db.to_str().unwrap(), "--port", "0"])
            .env_remove("SIGHTLINE_DASHBOARD_TOKEN")
            .env("SIGHTLINE_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap());
        if let Some(token) = token {
            command.env("SIGHTLINE_DASHBOARD_TOKEN", token);
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let base = line.split_whitespace().nth(1).unwrap().trim_end_matches('/').to_string();
        let agent = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
        let mut request = agent.get(format!("{base}/api/runs"));
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        assert_eq!(request.call().unwrap().status().as_u16(), 200);
        child.kill().unwrap();
        child.wait().unwrap();
        std::fs::read_to_string(&log).unwrap()
    };
    let open = logged(None);
    assert!(open.contains("/api/runs") && open.contains("status=200"), "the access log: {open}");
    let guarded = logged(Some("a-long-enough-dashboard-token-0123456789"));
    assert!(!guarded.contains("/api/runs"), "no access log with a token: {guarded}");
}

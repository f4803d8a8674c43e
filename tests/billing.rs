//! `reconcile-cost` (issue 21) against loopback stand-ins of Anthropic's Admin API cost
//! report and OpenAI's organization costs API, each speaking its documented request and
//! response (admin key headers, daily buckets, grouping, `has_more`/`next_page` paging),
//! with events ingested by the real server: drift per day and model is stored as worked
//! by hand, an agent without captured tokens never makes a pricing breach, a failing
//! source leaves what was stored untouched, and without credentials the null source says
//! so.

use crate::common;

use std::collections::BTreeMap;

use common::receiver::Receiver;
use common::*;
use serde_json::{Value, json};
use sightline::events::partitions::Day;

const DAY_MS: i64 = 86_400_000;

/// The UTC day `back` days before today, and a time at its noon.
fn day(back: i64) -> (String, i64) {
    let midnight = now_ms() - now_ms().rem_euclid(DAY_MS) - back * DAY_MS;
    (Day::of_ms(midnight).to_string(), midnight + DAY_MS / 2)
}

fn query(headers: &[(String, String)]) -> Vec<(String, String)> {
    let path = &headers.iter().find(|(n, _)| n == ":path").unwrap().1;
    let query = path.split_once('?').map_or("", |(_, q)| q);
    form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

fn one(query: &[(String, String)], name: &str) -> Option<String> {
    query.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

fn all(query: &[(String, String)], name: &str) -> Vec<String> {
    query.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone()).collect()
}

/// Anthropic's cost report, three daily buckets a page. `bill`: day → results.
fn anthropic_stand_in(bill: BTreeMap<String, Vec<Value>>) -> Receiver {
    Receiver::answering(move |headers, _, _| {
        let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default();
        let path = header(":path");
        assert!(path.starts_with("/v1/organizations/cost_report?"), "{path}");
        if header("x-api-key") != "sk-ant-admin01-test" {
            return (
                401,
                json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
                    .to_string(),
            );
        }
        assert_eq!(header("anthropic-version"), "2023-06-01");
        let q = query(headers);
        assert_eq!(one(&q, "bucket_width").as_deref(), Some("1d"));
        assert_eq!(all(&q, "group_by[]"), ["workspace_id", "description"]);
        let limit: usize = one(&q, "limit").unwrap().parse().unwrap();
        assert!((1..=31).contains(&limit), "{limit}");
        let from = one(&q, "starting_at").unwrap();
        let to = one(&q, "ending_at").unwrap();
        let days: Vec<String> = {
            let (mut d, end) = (Day::parse(&from[..10]).unwrap(), Day::parse(&to[..10]).unwrap());
            let mut days = Vec::new();
            while d < end {
                days.push(d.to_string());
                d = d.next();
            }
            days
        };
        let start: usize = one(&q, "page").map_or(0, |p| p.trim_start_matches("page_").parse().unwrap());
        let page: Vec<Value> = days
            .iter()
            .skip(start)
            .take(3)
            .map(|d| {
                json!({"starting_at": format!("{d}T00:00:00Z"), "ending_at": format!("{}T00:00:00Z", Day::parse(d).unwrap().next()),
                       "results": bill.get(d).cloned().unwrap_or_default()})
            })
            .collect();
        let more = start + 3 < days.len();
        (200, json!({"data": page, "has_more": more, "next_page": if more { json!(format!("page_{}", start + 3)) } else { Value::Null }}).to_string())
    })
}

/// A token cost line of Anthropic's report, cents as a decimal string.
fn tokens(workspace: &str, model: &str, token_type: &str, cents: &str) -> Value {
    json!({"amount": cents, "currency": "USD", "cost_type": "tokens", "model": model, "token_type": token_type,
           "description": format!("Claude {model} Usage - {token_type}"), "workspace_id": workspace,
           "context_window": "0-200k", "service_tier": "standard"})
}

/// OpenAI's costs, two daily buckets a page. `bill`: day → results; `status` answers.
fn openai_stand_in(bill: BTreeMap<String, Vec<Value>>, status: u16) -> Receiver {
    Receiver::answering(move |headers, _, _| {
        let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default();
        assert!(header(":path").starts_with("/v1/organization/costs?"), "{}", header(":path"));
        if status != 200 || header("authorization") != "Bearer sk-admin-test" {
            return (
                401,
                json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
                    .to_string(),
            );
        }
        let q = query(headers);
        assert_eq!(all(&q, "project_ids"), ["proj_agents"], "only the key's scope is asked");
        assert_eq!(all(&q, "group_by"), ["project_id", "line_item"]);
        assert_eq!(one(&q, "bucket_width").as_deref(), Some("1d"));
        let (from, to): (i64, i64) =
            (one(&q, "start_time").unwrap().parse().unwrap(), one(&q, "end_time").unwrap().parse().unwrap());
        assert_eq!((to - from) % 86_400, 0);
        let start: usize = one(&q, "page").map_or(0, |p| p.parse().unwrap());
        let days: Vec<i64> = (from..to).step_by(86_400).collect();
        let page: Vec<Value> = days
            .iter()
            .skip(start)
            .take(2)
            .map(|s| {
                let d = Day::of_ms(s * 1000).to_string();
                json!({"object": "bucket", "start_time": s, "end_time": s + 86_400, "results": bill.get(&d).cloned().unwrap_or_default()})
            })
            .collect();
        let more = start + 2 < days.len();
        (200, json!({"object": "page", "data": page, "has_more": more, "next_page": if more { json!((start + 2).to_string()) } else { Value::Null }}).to_string())
    })
}

fn line_item(item: &str, dollars: f64) -> Value {
    json!({"object": "organization.costs.result", "amount": {"value": dollars, "currency": "usd"}, "line_item": item, "project_id": "proj_agents"})
}

/// A turn of `agent` on `model` at `ts`.
fn turn(agent: &str, session: &str, ts: i64, model: &str, input: i64, output: i64) -> Value {
    let mut turn = event("turn_end", session, ts);
    turn["agent_type"] = json!(agent);
    turn["model"] = json!(model);
    turn["usage"] = json!({"input_tokens": input, "output_tokens": output});
    turn
}

/// A stored drift row: day, vendor, model, recomputed, billed, drift, status, uncaptured agents.
type DriftRow = (String, String, String, i64, i64, i64, String, String);

fn drift(server: &TestServer) -> Vec<DriftRow> {
    let conn = server.main_db();
    let mut stmt = conn
        .prepare(
            "SELECT day, vendor, model, recomputed_nusd, billed_nusd, drift_nusd, status, uncaptured_agents
             FROM cost_drift ORDER BY vendor, day, model",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn reconcile(server: &TestServer, env: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["jobs", "run", "--data-dir", server.data_dir.to_str().unwrap(), "reconcile-cost"])
        .env_remove("SIGHTLINE_CONFIG")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

const USD: i64 = 1_000_000_000;

#[test]
fn reconcile_cost_stores_drift_per_day_and_model_as_worked_by_hand() {
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_ANALYTICS_MIN_GROUP_SIZE", "2")]);
    add_user(&server.data_dir, "ada@example.com", "ADMIN");
    let other = user_with_token(&server.data_dir, "bo@example.com");
    let ((d1, noon1), (d2, noon2)) = (day(2), day(3));
    // Day 1: ten claude_code turns on opus-4-6 of 100k input and 10k output ($0.50 +
    // $0.25 each: $7.50), eight codex turns on gpt-5 of 100k input ($0.125 each: $1.00).
    // Day 2: ten opus turns of 100k input ($5.00), and cline (billed through Anthropic
    // here) reporting prompts but never tokens.
    let mut events = Vec::new();
    for i in 0..10 {
        events.push(turn("claude_code", "cc-1", noon1 + i, "claude-opus-4-6", 100_000, 10_000));
        events.push(turn("claude_code", "cc-2", noon2 + i, "claude-opus-4-6", 100_000, 0));
    }
    for i in 0..8 {
        events.push(turn("codex", "cx-1", noon1 + i, "gpt-5-2025-08-07", 100_000, 0));
    }
    let mut prompt = event("prompt_submit", "cl-1", noon2 + 50);
    prompt["agent_type"] = json!("cline");
    events.push(prompt);
    let (status, body) = server.post_events(&server.token, &envelope(events));
    assert_eq!(status, 200, "{body}");
    // A second person at work on both days, so the organisation's report pages show (two
    // at least) even when the two days fall in different months.
    let (status, body) = server.post_events(
        &other,
        &envelope(vec![event("prompt_submit", "bo-1", noon1), event("prompt_submit", "bo-2", noon2)]),
    );
    assert_eq!(status, 200, "{body}");

    let anthropic = anthropic_stand_in(BTreeMap::from([
        (
            d1.clone(),
            vec![
                // $9.00 billed for opus against $7.50: $1.50 beyond max(5 % of $9, $1) → breach.
                tokens("wrk_agents", "claude-opus-4-6", "uncached_input_tokens", "500.00"),
                tokens("wrk_agents", "claude-opus-4-6", "output_tokens", "400.00"),
                // Haiku nobody's events used: $2.50 → unattributed.
                tokens("wrk_agents", "claude-haiku-4-5-20251001", "uncached_input_tokens", "250"),
                // Web search is not for tokens: an other charge, outside drift.
                json!({"amount": "50.00", "currency": "USD", "cost_type": "web_search", "model": null,
                       "description": "Web Search Usage", "workspace_id": "wrk_agents"}),
                // Another workspace is outside the configured scope.
                tokens("wrk_marketing", "claude-opus-4-6", "output_tokens", "100000.00"),
            ],
        ),
        // $8.00 against $5.00 on a day cline reported no tokens → uncaptured, not a breach.
        (d2.clone(), vec![tokens("wrk_agents", "claude-opus-4-6", "uncached_input_tokens", "800.00")]),
    ]));
    let openai = openai_stand_in(
        BTreeMap::from([(
            d1.clone(),
            vec![
                line_item("gpt-5-2025-08-07, input", 0.6),
                line_item("gpt-5-2025-08-07, cached input", 0.4),
                line_item("Image models", 0.25),
            ],
        )]),
        200,
    );
    let site = |receiver: &Receiver| receiver.url.trim_end_matches("/hook").to_string();
    let (anthropic_url, openai_url) = (site(&anthropic), site(&openai));
    let env = [
        ("SIGHTLINE_BILLING_ANTHROPIC_ADMIN_KEY", "sk-ant-admin01-test"),
        ("SIGHTLINE_BILLING_ANTHROPIC_URL", anthropic_url.as_str()),
        ("SIGHTLINE_BILLING_ANTHROPIC_WORKSPACES", "wrk_agents"),
        ("SIGHTLINE_BILLING_ANTHROPIC_AGENTS", "claude_code,cline"),
        ("SIGHTLINE_BILLING_OPENAI_ADMIN_KEY", "sk-admin-test"),
        ("SIGHTLINE_BILLING_OPENAI_URL", openai_url.as_str()),
        ("SIGHTLINE_BILLING_OPENAI_PROJECTS", "proj_agents"),
    ];
    let ran = reconcile(&server, &env);
    assert!(ran.status.success(), "{}", stderr(&ran));
    let said = stdout(&ran);
    assert!(said.contains("anthropic: $20.00 billed, $12.50 recomputed, 1 pricing breaches"), "{said}");
    assert!(said.contains("openai: $1.25 billed, $1.00 recomputed, 0 pricing breaches"), "{said}");
    // Seven days a run: three pages of Anthropic's buckets (3 + 3 + 1), four of OpenAI's.
    assert_eq!(anthropic.got.lock().unwrap().len(), 3);
    assert_eq!(openai.got.lock().unwrap().len(), 4);

    let s = |text: &str| text.to_string();
    assert_eq!(
        drift(&server),
        vec![
            (d2.clone(), s("anthropic"), s("claude-opus-4-6"), 5 * USD, 8 * USD, 3 * USD, s("uncaptured"), s("cline")),
            (
                d1.clone(),
                s("anthropic"),
                s("claude-haiku-4-5"),
                0,
                2_500_000_000,
                2_500_000_000,
                s("unattributed"),
                s("")
            ),
            (
                d1.clone(),
                s("anthropic"),
                s("claude-opus-4-6"),
                7_500_000_000,
                9 * USD,
                1_500_000_000,
                s("breach"),
                s("")
            ),
            (d1.clone(), s("openai"), s("gpt-5"), USD, USD, 0, s("within"), s("")),
        ]
    );
    let other: i64 = server
        .main_db()
        .query_row("SELECT sum(billed_nusd) FROM billing_lines WHERE model = ''", [], |r| r.get(0))
        .unwrap();
    assert_eq!(other, 750_000_000, "web search $0.50 and image models $0.25, outside drift");

    // `/org/roi` shows reconciled spend beside recomputed, and the drift per day and model.
    let admin = access_token(&server, "ada@example.com");
    wait_until(std::time::Duration::from_secs(30), "the aggregates refreshed", || {
        server
            .main_db()
            .query_row("SELECT count(DISTINCT user_id) FROM agg_usage_hourly", [], |r| r.get::<_, i64>(0))
            .unwrap()
            == 2
    });
    let csv = |table: &str| {
        let response = agent()
            .get(format!("{}/org/roi?days=7&format=csv&table={table}", server.web))
            .header("Authorization", format!("Bearer {admin}"))
            .call()
            .unwrap();
        response.into_body().read_to_string().unwrap()
    };
    let reconciled = csv("reconciled");
    assert!(reconciled.contains("anthropic,2,12.50,19.50,7.00,35.9,0.50,1,1,1"), "{reconciled}");
    assert!(reconciled.contains("openai,1,1.00,1.00,0.00,0.0,0.25,0,0,0"), "{reconciled}");
    let drift_csv = csv("drift");
    assert!(drift_csv.contains(&format!("{d1},anthropic,claude-opus-4-6,7.50,9.00,1.50,breach,")), "{drift_csv}");
    assert!(
        drift_csv.contains(&format!("{d2},anthropic,claude-opus-4-6,5.00,8.00,3.00,uncaptured,cline")),
        "{drift_csv}"
    );
    // Anyone else reads that they are for administrators: a quiet day's bill per model
    // could describe one person's spend.
    add_user(&server.data_dir, "vi@example.com", "VIEWER_AGGREGATE");
    let viewer = access_token(&server, "vi@example.com");
    let page = agent()
        .get(format!("{}/org/roi?days=7", server.web))
        .header("Authorization", format!("Bearer {viewer}"))
        .header("Accept", "text/html")
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap();
    assert!(page.contains("are shown to administrators only"), "{page}");
    assert!(
        page.contains("href=\"/org/months\"") || page.contains("(/org/months)"),
        "the monthly totals' page is named"
    );
    assert!(!page.contains("claude-opus-4-6") && !page.contains("uncaptured"), "{page}");
    // The organisation's monthly totals are theirs to read: a month of a vendor's bill
    // over at least the minimum of active people is nobody's own spend.
    let months = agent()
        .get(format!("{}/org/months?format=csv&table=reconciled-months", server.web))
        .header("Authorization", format!("Bearer {viewer}"))
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap();
    let vendors: Vec<&str> = months.lines().skip(1).filter_map(|line| line.split(',').nth(1)).collect();
    assert!(vendors.contains(&"anthropic") && vendors.contains(&"openai"), "{months}");
    assert!(!months.contains("withheld") && !months.contains("claude-opus-4-6"), "{months}");

    // A source that fails fails the run, and what was stored stays as it was.
    let before = drift(&server);
    let refusing = openai_stand_in(BTreeMap::new(), 401);
    let refusing_url = site(&refusing);
    let mut failing_env = env.to_vec();
    failing_env[5] = ("SIGHTLINE_BILLING_OPENAI_URL", refusing_url.as_str());
    let failed = reconcile(&server, &failing_env);
    assert_eq!(failed.status.code(), Some(2), "{}", stdout(&failed));
    assert!(stderr(&failed).contains("OpenAI costs answered 401: Incorrect API key provided"), "{}", stderr(&failed));
    assert_eq!(drift(&server), before, "nothing half-written");
}

#[test]
fn the_server_schedules_reconcile_cost_daily_only_when_enabled() {
    let dir = tempfile::tempdir().unwrap();
    let list = |enabled: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(["jobs", "list", "--data-dir", dir.path().to_str().unwrap()])
            .env_remove("SIGHTLINE_CONFIG")
            .env("SIGHTLINE_BILLING_RECONCILIATION_ENABLED", enabled)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        text.lines()
            .find(|line| line.starts_with("reconcile-cost\t"))
            .unwrap()
            .split('\t')
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let on = list("true");
    assert_eq!(on[1..4], ["one-shot", "cron 0 7 * * * (UTC)", "yes"]);
    assert!(on[7].ends_with("T07:00:00.000Z"), "the next 07:00 UTC: {on:?}");
    let off = list("false");
    assert_eq!((off[3].as_str(), off[7].as_str()), ("no", "—"), "{off:?}");
}

/// A vendor that says there is more but gives no page to ask for has not given the whole
/// bill: the run fails and stores nothing, rather than record a partial bill as drift.
#[test]
fn a_bill_that_does_not_page_as_documented_fails_the_run_and_stores_nothing() {
    let server = TestServer::spawn();
    let stalled = Receiver::answering(|_, _, _| {
        let (d, _) = day(2);
        (200, json!({"data": [{"starting_at": format!("{d}T00:00:00Z"), "ending_at": format!("{d}T23:59:59Z"), "results": [tokens("w", "claude-opus-4-6", "output_tokens", "100")]}],
                     "has_more": true, "next_page": null}).to_string())
    });
    let url = stalled.url.trim_end_matches("/hook").to_string();
    let failed = reconcile(
        &server,
        &[("SIGHTLINE_BILLING_ANTHROPIC_ADMIN_KEY", "sk-ant-admin01-test"), ("SIGHTLINE_BILLING_ANTHROPIC_URL", &url)],
    );
    assert_eq!(failed.status.code(), Some(2), "{}", stdout(&failed));
    assert!(stderr(&failed).contains("has_more without a new next_page"), "{}", stderr(&failed));
    assert!(drift(&server).is_empty());
    let lines: i64 = server.main_db().query_row("SELECT count(*) FROM billing_lines", [], |r| r.get(0)).unwrap();
    assert_eq!(lines, 0);
}

/// A vendor's billing API answering malformed pages: a body that is not JSON, a page of the
/// wrong shape (`data` an object, amounts that are not numbers), a page cut short. Each run
/// fails naming the vendor's answer, and nothing is stored from it.
#[test]
fn malformed_bill_pages_fail_the_run_naming_the_answer_and_store_nothing() {
    let server = TestServer::spawn();
    let (d, _) = day(2);
    let pages: Vec<(&str, String)> = vec![
        ("not JSON", "<html><body>502 Bad Gateway</body></html>".to_string()),
        ("data is an object", json!({"data": {"starting_at": "x"}, "has_more": false}).to_string()),
        (
            "an amount that is not a number",
            json!({"data": [{"starting_at": format!("{d}T00:00:00Z"), "ending_at": format!("{d}T23:59:59Z"),
                             "results": [{"amount": "lots", "currency": "USD", "workspace_id": "w", "model": "claude-opus-4-6",
                                          "cost_type": "tokens", "token_type": "output_tokens"}]}],
                   "has_more": false})
            .to_string(),
        ),
        ("cut short", "{\"data\": [{\"starting_at\": ".to_string()),
    ];
    for (case, page) in pages {
        let vendor = Receiver::answering(move |_, _, _| (200, page.clone()));
        let url = vendor.url.trim_end_matches("/hook").to_string();
        let failed = reconcile(
            &server,
            &[
                ("SIGHTLINE_BILLING_ANTHROPIC_ADMIN_KEY", "sk-ant-admin01-test"),
                ("SIGHTLINE_BILLING_ANTHROPIC_URL", &url),
            ],
        );
        assert_eq!(failed.status.code(), Some(2), "{case}: {}", stdout(&failed));
        assert!(stderr(&failed).to_lowercase().contains("anthropic"), "{case}: names the vendor: {}", stderr(&failed));
        assert!(drift(&server).is_empty(), "{case}");
        let lines: i64 = server.main_db().query_row("SELECT count(*) FROM billing_lines", [], |r| r.get(0)).unwrap();
        assert_eq!(lines, 0, "{case}: nothing stored");
    }
    let runs: Vec<(String, String)> = server
        .main_db()
        .prepare("SELECT outcome, coalesce(error, '') FROM job_runs WHERE job = 'reconcile-cost'")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(runs.len(), 4);
    assert!(
        runs.iter().all(|(outcome, error)| outcome == "failed" && !error.is_empty()),
        "each run says what failed: {runs:?}"
    );
}

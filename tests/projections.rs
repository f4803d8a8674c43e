//! Projections (issue 21): an administrator records a predicted saving at
//! `/admin/projections`; the baseline is measured over the days before the period from
//! the real aggregates, stamped with the price tables and scorers in force, and audited;
//! the projection is graded against its period on the console and on `/org/roi`, which
//! also says when no vendor's billing has been reconciled. Anyone but an administrator is
//! refused and nothing is stored.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::json;
use sightline::events::partitions::Day;

const DAY_MS: i64 = 86_400_000;

fn midnight(back: i64) -> i64 {
    now_ms() - now_ms().rem_euclid(DAY_MS) - back * DAY_MS
}

/// `n` opus turns of 100k input tokens ($0.50 each) by the holder of `token` at `ts`.
fn spend(server: &TestServer, token: &str, session: &str, ts: i64, n: i64) {
    let events = (0..n)
        .map(|i| {
            let mut turn = event("turn_end", session, ts + i);
            turn["model"] = json!("claude-opus-4-6");
            turn["usage"] = json!({"input_tokens": 100_000, "output_tokens": 0});
            turn
        })
        .collect();
    let (status, body) = server.post_events(token, &envelope(events));
    assert_eq!(status, 200, "{body}");
}

fn html(server: &TestServer, token: &str, path: &str) -> (u16, String) {
    let response = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent()
        .get(format!("{}{path}", server.web))
        .header("Authorization", format!("Bearer {token}"))
        .header("Accept", "text/html")
        .call()
        .unwrap();
    let status = response.status().as_u16();
    (status, response.into_body().read_to_string().unwrap())
}

#[test]
fn a_recorded_projection_is_measured_stamped_audited_and_graded() {
    let server = TestServer::spawn_with_env(&[("SIGHTLINE_ANALYTICS_MIN_GROUP_SIZE", "2")]);
    add_user(&server.data_dir, "ada@example.com", "ADMIN");
    let other = user_with_token(&server.data_dir, "bo@example.com");
    // Baseline week [today−14, today−7): $14 (28 turns, two people); the period
    // [today−7, today): $7. Spend per week falls by $7.
    spend(&server, &server.token, "base-1", midnight(10) + DAY_MS / 2, 20);
    spend(&server, &other, "base-2", midnight(9) + DAY_MS / 2, 8);
    spend(&server, &server.token, "period-1", midnight(3) + DAY_MS / 2, 10);
    spend(&server, &other, "period-2", midnight(2) + DAY_MS / 2, 4);
    wait_until(Duration::from_secs(30), "the aggregates refreshed", || {
        server
            .main_db()
            .query_row("SELECT coalesce(sum(cost_nusd), 0) FROM agg_usage_hourly", [], |r| r.get::<_, i64>(0))
            .unwrap()
            == 21_000_000_000
    });

    let admin = access_token(&server, "ada@example.com");
    let (from, to) = (Day::of_ms(midnight(7)).to_string(), Day::of_ms(midnight(1)).to_string());
    let form = format!(
        "title=Prompt+caching+rollout&metric=spend_per_week&saving_low=5&saving_high=8&period_from={from}&period_to={to}&baseline_days=7"
    );
    let (status, location) = post_form(&format!("{}/admin/projections", server.web), &admin, &form);
    assert_eq!(status, 303, "{location:?}");
    assert!(location.unwrap().starts_with("/admin/projections?done="));

    let conn = server.main_db();
    let (baseline, tables, scorers): (f64, String, String) = conn
        .query_row("SELECT baseline_value, price_tables, scorers FROM projections", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert!((baseline - 14.0).abs() < 1e-9, "the baseline week's spend: {baseline}");
    assert!(tables.contains("claude_code 2026-") && tables.contains("codex "), "{tables}");
    assert!(scorers.contains("friction@"), "{scorers}");
    let audited: i64 = conn
        .query_row("SELECT count(*) FROM audit_log WHERE action = 'PROJECTION_RECORDED'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(audited, 1);

    // Graded: $14 − $7 = $7 a week saved, inside 5 to 8; the period has ended.
    let (status, page) = html(&server, &admin, "/admin/projections");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<td>14.00 ("), "the baseline: {page}");
    assert!(page.contains("<td>7.00</td><td>7.00</td><td>met</td>"), "actual, saving, grade: {page}");
    let (status, roi) = html(&server, &admin, "/org/roi?days=30");
    assert_eq!(status, 200, "{roi}");
    assert!(roi.contains("Prompt caching rollout") && roi.contains("<td>met</td>"), "{roi}");
    assert!(roi.contains("No vendor&#39;s billing has been reconciled"), "the null source: {roi}");

    // Bad input names its field and stores nothing; a member is refused.
    let bad = form.replace("saving_low=5", "saving_low=9");
    let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
    let refused = agent
        .post(format!("{}/admin/projections", server.web))
        .header("Authorization", format!("Bearer {admin}"))
        .content_type("application/x-www-form-urlencoded")
        .send(bad)
        .unwrap();
    assert_eq!(refused.status().as_u16(), 400);
    assert!(refused.into_body().read_to_string().unwrap().contains("saving_high (8) is below saving_low (9)"));
    let member = access_token(&server, "bo@example.com");
    let (status, _) = post_form(&format!("{}/admin/projections", server.web), &member, &form);
    assert_eq!(status, 403);
    let count: i64 = conn.query_row("SELECT count(*) FROM projections", [], |r| r.get(0)).unwrap();
    assert_eq!(count, 1, "nothing more stored");

    // Removing is audited too.
    let id: String = conn.query_row("SELECT id FROM projections", [], |r| r.get(0)).unwrap();
    let (status, _) = post_form(&format!("{}/admin/projections/{id}/remove", server.web), &admin, "");
    assert_eq!(status, 303);
    let removed: i64 =
        conn.query_row("SELECT count(*) FROM audit_log WHERE action = 'PROJECTION_REMOVED'", [], |r| r.get(0)).unwrap();
    assert_eq!(removed, 1);
}

//! Tests of one evaluation and of an administrator's acts, on an in-memory `main.db`
//! built from `schema.sql`: aggregate rows are written directly, so each rule's window
//! and floor are exercised at exact times (the path from ingest is `tests/alerts.rs`).

use super::*;

const DAY: i64 = 86_400_000;
/// Noon, 2026-11-20.
const NOW: i64 = 1_795_176_000_000;

fn db() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(crate::db::migrations::SCHEMA_SQL).unwrap();
    conn
}

fn spend_at(conn: &Connection, at_ms: i64, usd: i64) {
    let hour = at_ms.div_euclid(3_600_000) * 3_600_000;
    conn.execute(
        "INSERT INTO agg_usage_hourly VALUES (?1, 'u1', 'claude_code', 'm', 1, 1, 1, 0, 0, 0, 0, 0, 0, ?2)
         ON CONFLICT DO UPDATE SET cost_nusd = cost_nusd + excluded.cost_nusd",
        params![hour, usd * 1_000_000_000],
    )
    .unwrap();
}

fn state_of(conn: &Connection, id: &str) -> String {
    conn.query_row("SELECT state FROM alert_events WHERE id = ?1", [id], |r| r.get(0)).unwrap()
}

/// A spend spike opens an event, goes on while it lasts, and resolves when it ends; a
/// silence set on it mutes the next event of the rule too, until it expires.
#[test]
fn a_spend_spike_opens_continues_and_resolves() {
    let conn = db();
    // One $10 day in each of the 7 days before the last 24 hours.
    for day in 2..=8 {
        spend_at(&conn, NOW - day * DAY + 2 * 3_600_000, 10);
    }
    assert!(evaluate(&conn, NOW).unwrap().is_empty(), "steady spend: quiet");
    spend_at(&conn, NOW - 3_600_000, 50);
    let first = evaluate(&conn, NOW).unwrap();
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!((first[0].rule, first[0].step), (Rule::SpendSpike, Step::Open { notify: true }));
    assert!((first[0].value - 5.0).abs() < 1e-9, "$50 against a $10 mean: {first:?}");
    let id = first[0].event_id.clone().unwrap();
    let again = evaluate(&conn, NOW + 60_000).unwrap();
    assert_eq!(again[0].step, Step::Continue);
    silence(&conn, "admin", &id, NOW + 10 * DAY, NOW).unwrap();
    acknowledge(&conn, "admin", &id, NOW).unwrap();
    assert_eq!(state_of(&conn, &id), "acknowledged");
    assert!(matches!(acknowledge(&conn, "admin", &id, NOW), Err(ActError::NotOpen(_))), "only a firing event");
    // Two days later the spike has left the window: resolved, and silently.
    let later = evaluate(&conn, NOW + 2 * DAY).unwrap();
    assert_eq!(later[0].step, Step::Resolve { notify: false });
    assert_eq!(state_of(&conn, &id), "resolved");
    assert!(matches!(silence(&conn, "admin", &id, NOW + 20 * DAY, NOW), Err(ActError::NotOpen(_))));
    // A new spike within the silence opens a new event, without notice.
    spend_at(&conn, NOW + 2 * DAY - 3_600_000, 200);
    let muted = evaluate(&conn, NOW + 2 * DAY + 60_000).unwrap();
    assert_eq!(muted[0].step, Step::Open { notify: false }, "{muted:?}");
    assert_ne!(muted[0].event_id.as_deref(), Some(id.as_str()), "a resolved event is never reopened");
    let audited: i64 = conn
        .query_row("SELECT count(*) FROM audit_log WHERE action IN ('ALERT_ACKNOWLEDGED', 'ALERT_SILENCED')", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(audited, 2);
    assert!(matches!(silence(&conn, "admin", &id, NOW - 1, NOW), Err(ActError::SilenceInPast)));
}

/// The error rate fires above its threshold with enough calls, never on a handful.
#[test]
fn the_error_rate_needs_enough_calls_and_a_high_enough_share() {
    let conn = db();
    let day = NOW.div_euclid(DAY) * DAY;
    let calls = |calls: i64, errors: i64| {
        conn.execute(
            "INSERT OR REPLACE INTO agg_tools_daily VALUES (?1, 'u1', 'claude_code', 'Bash', '', '', '', ?2, ?3, 0, 0, 0, 0)",
            params![day, calls, errors],
        )
        .unwrap();
    };
    calls(10, 9);
    assert!(evaluate(&conn, NOW).unwrap().is_empty(), "nine of ten: too few calls to say");
    calls(200, 40);
    assert!(evaluate(&conn, NOW).unwrap().is_empty(), "20% is under 25%");
    calls(200, 60);
    let fired = evaluate(&conn, NOW).unwrap();
    assert_eq!((fired[0].rule, fired[0].step), (Rule::ErrorRate, Step::Open { notify: true }), "{fired:?}");
}

/// A job's service-level breach (`job_alerts`) is an alert until a day has passed.
#[test]
fn a_job_breach_is_an_alert() {
    let conn = db();
    conn.execute(
        "INSERT INTO job_alerts (id, job, run_id, at_ms, severity, reason) VALUES ('a', 'run-deletions', 'r', ?1, 'critical', 'the run failed')",
        [NOW - 3_600_000],
    )
    .unwrap();
    let fired = evaluate(&conn, NOW).unwrap();
    assert_eq!((fired[0].rule, fired[0].step), (Rule::JobSlo, Step::Open { notify: true }), "{fired:?}");
    assert!(fired[0].detail.contains("run-deletions (critical): the run failed"), "{}", fired[0].detail);
    let later = evaluate(&conn, NOW + DAY).unwrap();
    assert_eq!(later[0].step, Step::Resolve { notify: true });
}

/// The two rules seeded disabled stay quiet until an operator enables them with a
/// threshold; the budget then fires at 75 % of the month.
#[test]
fn budget_and_routing_waste_wait_for_an_operator() {
    let conn = db();
    spend_at(&conn, NOW - DAY, 800);
    assert!(evaluate(&conn, NOW).unwrap().is_empty());
    conn.execute("UPDATE alert_rules SET enabled = 1, threshold = 1000 WHERE id = 'budget_threshold'", []).unwrap();
    let fired = evaluate(&conn, NOW).unwrap();
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0].rule, Rule::BudgetThreshold);
    assert!(fired[0].detail.contains("past the 75% level"), "{}", fired[0].detail);
}

/// Routing waste, once an operator sets its threshold, fires on the share of the last 7
/// days' interactive spend that went to questions and single edits; CI runs and older
/// sessions do not count.
#[test]
fn routing_waste_fires_on_the_share_spent_on_small_sessions() {
    let conn = db();
    conn.execute("INSERT INTO users (id, email, name, created_at_ms) VALUES ('u1', 'u@example.com', 'U', 0)", [])
        .unwrap();
    let session = |id: &str, at: i64, shape: &str, usd: i64, kind: &str| {
        conn.execute(
            "INSERT INTO sessions (id, user_id, agent_type, agent_session_id, run_kind, first_event_ms, last_event_ms,
                                   shape_label, cost_nusd)
             VALUES (?1, 'u1', 'claude_code', ?1, ?5, ?2, ?2, ?3, ?4)",
            params![id, at, shape, usd * 1_000_000_000, kind],
        )
        .unwrap();
    };
    session("q", NOW - DAY, "question", 30, "INTERACTIVE");
    session("big", NOW - DAY, "feature", 70, "INTERACTIVE");
    session("ci", NOW - DAY, "question", 500, "CI");
    session("old", NOW - 10 * DAY, "question", 500, "INTERACTIVE");
    conn.execute("UPDATE alert_rules SET enabled = 1, threshold = 0.5 WHERE id = 'routing_waste'", []).unwrap();
    assert!(evaluate(&conn, NOW).unwrap().is_empty(), "30 % of the week's interactive spend: under 0.5");
    conn.execute("UPDATE alert_rules SET threshold = 0.25 WHERE id = 'routing_waste'", []).unwrap();
    let fired = evaluate(&conn, NOW).unwrap();
    assert_eq!((fired[0].rule, fired[0].step), (Rule::RoutingWaste, Step::Open { notify: true }), "{fired:?}");
    assert!((fired[0].value - 0.3).abs() < 1e-9, "{fired:?}");
}

/// Budgets of a team and a person: each level is its own event, a person's notice names
/// the budget and not the person, and a removed budget's events resolve.
#[test]
fn team_and_person_budgets_fire_per_level_and_resolve_when_removed() {
    let conn = db();
    for (id, email) in [("u1", "one@example.com"), ("u2", "two@example.com")] {
        conn.execute("INSERT INTO users (id, email, name, created_at_ms) VALUES (?1, ?2, 'Someone', 0)", [id, email])
            .unwrap();
    }
    conn.execute("INSERT INTO teams (id, slug, name, created_at_ms) VALUES ('t', 'web', 'Web', 0)", []).unwrap();
    conn.execute("INSERT INTO team_members (team_id, user_id, added_at_ms) VALUES ('t', 'u1', 0)", []).unwrap();
    spend_at(&conn, NOW - 3_600_000, 80);
    conn.execute("UPDATE alert_rules SET enabled = 1 WHERE id = 'budget_threshold'", []).unwrap();
    crate::alerts::budgets::set(&conn, "team", "t", 100_000_000_000, &[50, 75, 90], "admin", NOW).unwrap();
    let person = crate::alerts::budgets::set(&conn, "person", "u1", 50_000_000_000, &[100], "admin", NOW).unwrap();
    let fired = evaluate(&conn, NOW).unwrap();
    let subjects: Vec<&str> = fired.iter().map(|t| t.subject.as_str()).collect();
    assert_eq!(subjects, vec!["team:web@50", "team:web@75", format!("person:{person}@100").as_str()], "{fired:?}");
    assert!(fired.iter().all(|t| t.step == Step::Open { notify: true }));
    let personal = &fired[2].detail;
    assert!(personal.starts_with(&format!("personal budget {person} is at 160%")), "{personal}");
    assert!(!personal.contains("one@example.com") && !personal.contains('$'), "{personal}");
    crate::alerts::budgets::remove(&conn, &person, "admin", NOW).unwrap();
    let after = evaluate(&conn, NOW + 60_000).unwrap();
    let resolved: Vec<&str> =
        after.iter().filter(|t| matches!(t.step, Step::Resolve { .. })).map(|t| t.subject.as_str()).collect();
    assert_eq!(resolved, vec![format!("person:{person}@100").as_str()]);
    // Switched off, the rule's events resolve without a notice.
    conn.execute("UPDATE alert_rules SET enabled = 0 WHERE id = 'budget_threshold'", []).unwrap();
    let off = evaluate(&conn, NOW + 120_000).unwrap();
    assert_eq!(off.len(), 2, "{off:?}");
    assert!(off.iter().all(|t| t.step == Step::Resolve { notify: false }), "{off:?}");
    let open: i64 =
        conn.query_row("SELECT count(*) FROM alert_events WHERE state <> 'resolved'", [], |r| r.get(0)).unwrap();
    assert_eq!(open, 0);
    assert!(fired[0].detail.starts_with("team web is at 80%") && !fired[0].detail.contains('$'), "{}", fired[0].detail);
}

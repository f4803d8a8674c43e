//! `/admin/alerts`: the rules with their thresholds and switches, the monthly budgets of
//! teams and people, the channels (from the environment) with their switches and a
//! test-send, the events with acknowledge and silence, and the latest delivery attempts.
//! Every form posts under `/admin/alerts/…` and comes back here.
//!
//! Invariants: every change goes through `alerts::*` and commits with its `ALERT_*`
//! audit row; a person's budget is shown to administrators with their address, but
//! its events and notices name the budget's id only; a test-send reaches one channel
//! and its outcome is shown and audited, never logged as an alert delivery.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::{AdminPage, Field, Flash, Row, Section, change, done, required, when};
use crate::alerts::budgets::{self, Budget};
use crate::alerts::channel_configs::{self, NAMES};
use crate::alerts::channels::{self, Channel};
use crate::alerts::rules::Rule;
use crate::alerts::store::{self, ActError, RuleError};
use crate::auth::users;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Path, Query};
use crate::model::usd;
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

const PATH: &str = "/admin/alerts";

/// Where a channel sends, without its secrets: the scheme and host of a URL.
fn destination(channel: &Channel) -> String {
    let host = |url: &str| {
        let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
        let host = rest.split(['/', '?']).next().unwrap_or("");
        host.rsplit('@').next().unwrap_or(host).to_string()
    };
    match channel {
        Channel::Chat { url } | Channel::Webhook { url, .. } => host(url),
        Channel::Email { url, to, .. } => format!("{} via {}", to.join(", "), host(url)),
    }
}

fn subject_label(subject: &str, budgets: &[Budget]) -> String {
    match subject.strip_prefix("person:").and_then(|rest| rest.split_once('@')) {
        Some((id, level)) => match budgets.iter().find(|b| b.id == id) {
            Some(budget) => format!("person {} @{level}%", budget.label),
            None => format!("person (budget removed) @{level}%"),
        },
        None => subject.to_string(),
    }
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    let (rules, budgets, configs, events, deliveries) = state
        .read(|conn| {
            Ok((
                store::rule_settings(conn)?,
                budgets::list(conn)?,
                channel_configs::all(conn)?,
                store::events(conn)?,
                channels::recent(conn, 50)?,
            ))
        })
        .await?;
    let now_ms = state.clock.now_ms();
    Ok(AdminPage::new(PATH, "Alerts", "What is watched, where notices go, and what has fired.", flash)
        .section(event_section(events, &budgets, now_ms))
        .section(rule_section(&rules))
        .section(budget_section(&budgets))
        .section(channel_section(&state.config.alerts, &configs))
        .section(delivery_section(deliveries))
        .respond())
}

fn rule_section(rules: &[store::RuleSetting]) -> Section {
    let mut rule_section = Section::new("rules", "Rules")
        .intro("evaluate-alerts measures every rule that is on and has a threshold; see docs/alerts.md for each definition and the state machine.")
        .columns(vec!["Rule", "Threshold means", "Threshold", "On", "Changed"]);
    rule_section.rows = rules
        .iter()
        .map(|setting| {
            Row::new(vec![
                Cell::text(setting.rule.id()),
                Cell::text(setting.rule.threshold_means()),
                Cell::text(setting.threshold.map_or("not set".into(), |t| format!("{t}"))),
                Cell::text(if setting.enabled { "on" } else { "off" }),
                when(Some(setting.updated_at_ms).filter(|ms| *ms > 0)),
            ])
            .action(
                super::Form::new(format!("{PATH}/rules/{}", setting.rule.id()), "Save")
                    .field(Field::number(
                        "threshold",
                        "Threshold",
                        setting.threshold.map(|t| t.to_string()).unwrap_or_default(),
                    ))
                    .field(Field::checkbox("enabled", "on", setting.enabled)),
            )
        })
        .collect();
    rule_section
}

fn budget_section(budgets: &[budgets::Budget]) -> Section {
    let mut budget_section = Section::new("budgets", "Team and personal budgets")
        .intro("Measured by budget_threshold when it is on, each level notified once a month. A personal budget's notices name the budget, not the person.")
        .columns(vec!["Scope", "Who", "Monthly budget", "Levels"])
        .empty("No team or personal budget is set.")
        .form(
            super::Form::new(format!("{PATH}/budgets"), "Set budget")
                .field(Field::select("scope", "Scope", "team", &["team", "person"]))
                .field(Field::text("who", "Team slug or e-mail", ""))
                .field(Field::number("monthly_usd", "Monthly $", ""))
                .field(Field::text("levels", "Levels %", "75,90,100")),
        );
    budget_section.rows = budgets
        .iter()
        .map(|budget| {
            Row::new(vec![
                Cell::text(&budget.scope),
                Cell::text(&budget.label),
                Cell::usd(budget.monthly_nusd),
                Cell::text(budget.levels.iter().map(|l| format!("{l}%")).collect::<Vec<_>>().join(", ")),
            ])
            .action(super::Form::new(format!("{PATH}/budgets/{}/remove", budget.id), "Remove").danger())
        })
        .collect();
    budget_section
}

fn channel_section(
    alerts: &crate::config::Alerts,
    configs: &std::collections::HashMap<String, channel_configs::ChannelConfig>,
) -> Section {
    let environment = channels::from_config(alerts);
    let mut channel_section = Section::new("channels", "Channels")
        .intro("Channels and their credentials come from the configuration ([alerts], or SIGHTLINE_ALERT_*; docs/alerts.md); here they are switched on or off and tested.")
        .columns(vec!["Channel", "Configured", "Sends to", "On", "Last test", "Outcome"]);
    if let Err(err) = &environment {
        channel_section.intro = format!("{} The configuration is wrong: {err}", channel_section.intro);
    }
    let configured = environment.unwrap_or_default();
    for name in NAMES {
        let config = configs.get(name).cloned().unwrap_or_default();
        let channel = configured.iter().find(|c| c.name() == name);
        let mut row = Row::new(vec![
            Cell::text(name),
            Cell::text(if channel.is_some() { "yes" } else { "no" }),
            Cell::text(channel.map(destination).unwrap_or_default()),
            Cell::text(if config.enabled { "on" } else { "off" }),
            when(config.last_test_at_ms),
            Cell::text(config.last_test_outcome.clone().unwrap_or_default()),
        ])
        .action(
            super::Form::new(format!("{PATH}/channels/{name}"), "Save")
                .field(Field::checkbox("enabled", "on", config.enabled))
                .field(Field::hidden("form", "channel")),
        );
        if channel.is_some() {
            row = row.action(super::Form::new(format!("{PATH}/channels/{name}/test"), "Send a test"));
        }
        channel_section.rows.push(row);
    }
    channel_section
}

fn event_section(events: Vec<store::EventLine>, budgets: &[budgets::Budget], now_ms: i64) -> Section {
    let mut event_section = Section::new("events", "Events")
        .intro("Unresolved first. Acknowledging stops the reminders of a firing event; silencing mutes its notifications, and those of the next event of the same subject, until the time given.")
        .columns(vec!["Rule", "Subject", "State", "Opened", "Last seen", "Value / threshold", "What", "Acknowledged by", "Silenced until"])
        .empty("No alert has fired.");
    event_section.rows = events
        .into_iter()
        .map(|event| {
            let mut row = Row::new(vec![
                Cell::text(&event.rule_id),
                Cell::text(subject_label(&event.subject, budgets)),
                Cell::text(&event.state),
                when(Some(event.opened_at_ms)),
                when(Some(event.last_seen_ms)),
                Cell::text(format!("{:.2} / {:.2}", event.value, event.threshold)),
                Cell::text(&event.detail),
                Cell::text(event.acknowledged_by.clone().unwrap_or_default()),
                when(event.silenced_until_ms.filter(|until| *until > now_ms)),
            ]);
            if event.state == "firing" {
                row = row.action(super::Form::new(format!("{PATH}/events/{}/acknowledge", event.id), "Acknowledge"));
            }
            if event.state != "resolved" {
                row =
                    row.action(
                        super::Form::new(format!("{PATH}/events/{}/silence", event.id), "Silence")
                            .field(Field::number("hours", "for hours", "24")),
                    );
            }
            row
        })
        .collect();
    event_section
}

fn delivery_section(deliveries: Vec<channels::LoggedAttempt>) -> Section {
    let mut delivery_section = Section::new("deliveries", "Latest delivery attempts")
        .columns(vec!["At", "Rule", "Channel", "Transition", "Attempt", "Outcome", "Answer"])
        .empty("No notification has been sent.");
    delivery_section.rows = deliveries
        .into_iter()
        .map(|attempt| {
            Row::new(vec![
                when(Some(attempt.at_ms)),
                Cell::text(attempt.rule_id),
                Cell::text(attempt.channel),
                Cell::text(attempt.transition),
                Cell::count(attempt.attempt),
                Cell::text(attempt.outcome),
                Cell::text(attempt.detail),
            ])
        })
        .collect();
    delivery_section
}

#[derive(Deserialize)]
pub struct RuleForm {
    threshold: Option<String>,
    enabled: Option<String>,
}

/// `POST /admin/alerts/rules/{rule}`.
pub async fn set_rule(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(rule): Path<String>,
    Form(form): Form<RuleForm>,
) -> Result<Redirect, PageError> {
    let rule = Rule::parse(&rule).ok_or(PageError(AppError::NotFound))?;
    let threshold = match form.threshold.as_deref().map(str::trim).unwrap_or("") {
        "" => None,
        text => Some(
            text.parse::<f64>()
                .map_err(|_| AppError::bad_request("threshold", format!("threshold must be a number, not {text:?}")))?,
        ),
    };
    let enabled = form.enabled.is_some();
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    change(&state, move |tx| {
        let set = store::set_rule(tx, &actor, rule, threshold, enabled, now_ms)?;
        Ok(set.map_err(|err: RuleError| AppError::bad_request("threshold", err.to_string())))
    })
    .await?;
    Ok(done(PATH, &format!("{} is {}", rule.id(), if enabled { "on" } else { "off" })))
}

#[derive(Deserialize)]
pub struct BudgetForm {
    scope: Option<String>,
    who: Option<String>,
    monthly_usd: Option<String>,
    levels: Option<String>,
}

/// `POST /admin/alerts/budgets`: a team's or person's monthly budget.
pub async fn set_budget(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Form(form): Form<BudgetForm>,
) -> Result<Redirect, PageError> {
    let scope = match form.scope.as_deref() {
        Some("team") => "team",
        Some("person") => "person",
        other => {
            return Err(AppError::bad_request("scope", format!("scope must be team or person, not {other:?}")).into());
        }
    };
    let who = form.who.unwrap_or_default().trim().to_string();
    let dollars = |t: &str| t.parse::<f64>().ok().filter(|usd| usd.is_finite() && *usd > 0.0);
    let must = "monthly_usd (the monthly budget) must be a number of dollars above 0";
    let amount = required("monthly_usd", form.monthly_usd, dollars, must)?;
    let monthly_nusd = (amount * 1e9).round() as i64;
    let levels = budgets::parse_levels(form.levels.as_deref().unwrap_or(""))
        .map_err(|why| AppError::bad_request("levels", why))?;
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    change(&state, move |tx| {
        let no_subject = || AppError::bad_request("who", format!("there is no {scope} {who:?}"));
        let subject_id = if scope == "team" {
            match crate::access::teams::by_slug(tx, &who) {
                Ok(team) => team.id,
                Err(crate::access::teams::TeamError::Db(db)) => return Err(db),
                Err(_) => return Ok(Err(no_subject())),
            }
        } else {
            match users::find_by_email(tx, &who)? {
                Some(user) => user.id,
                None => return Ok(Err(no_subject())),
            }
        };
        budgets::set(tx, scope, &subject_id, monthly_nusd, &levels, &actor, now_ms)?;
        Ok(Ok(()))
    })
    .await?;
    // The flash travels in the URL: it names no one.
    Ok(done(PATH, &format!("the {scope} budget is set to {} a month", usd(monthly_nusd))))
}

/// `POST /admin/alerts/budgets/{id}/remove`.
pub async fn remove_budget(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(id): Path<String>,
) -> Result<Redirect, PageError> {
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    change(&state, move |tx| match budgets::remove(tx, &id, &actor, now_ms)? {
        Some(_) => Ok(Ok(())),
        None => Ok(Err(AppError::NotFound)),
    })
    .await?;
    Ok(done(PATH, "the budget is removed"))
}

fn channel_name(name: &str) -> Result<&'static str, PageError> {
    NAMES.into_iter().find(|known| *known == name).ok_or(PageError(AppError::NotFound))
}

#[derive(Deserialize)]
pub struct ChannelForm {
    form: Option<String>,
    enabled: Option<String>,
}

/// `POST /admin/alerts/channels/{channel}`: on or off.
pub async fn set_channel(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(name): Path<String>,
    Form(form): Form<ChannelForm>,
) -> Result<Redirect, PageError> {
    let channel = channel_name(&name)?;
    if form.form.as_deref() != Some("channel") {
        return Err(AppError::bad_request("form", "this form switches a channel; send it from /admin/alerts").into());
    }
    let enabled = form.enabled.is_some();
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    state.write(move |tx| channel_configs::set_enabled(tx, &actor, channel, enabled, now_ms)).await?;
    Ok(done(PATH, &format!("{channel} is {}", if enabled { "on" } else { "off" })))
}

/// `POST /admin/alerts/channels/{channel}/test`: a test notice, retried like an alert's.
pub async fn test_channel(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path(name): Path<String>,
) -> Result<Redirect, PageError> {
    let name = channel_name(&name)?;
    let configured = channels::from_config(&state.config.alerts).map_err(AppError::Conflict)?;
    let channel = configured.into_iter().find(|c| c.name() == name).ok_or_else(|| {
        AppError::Conflict(format!("{name} is not configured ([alerts] or SIGHTLINE_ALERT_*; docs/alerts.md)"))
    })?;
    let clock = state.clock.clone();
    let attempts =
        tokio::task::spawn_blocking(move || channels::test_send(&channel, &|| clock.now_ms(), &std::thread::sleep))
            .await
            .map_err(|err| AppError::Internal(err.to_string()))?;
    let outcome = match attempts.last() {
        Some(last) if last.delivered => format!("delivered on attempt {} ({})", last.attempt, last.detail),
        Some(last) => format!("failed after {} attempts: {}", attempts.len(), last.detail),
        None => "not sent".into(),
    };
    let (actor, now_ms, recorded) = (caller.user.id.clone(), state.clock.now_ms(), outcome.clone());
    state.write(move |tx| channel_configs::record_test(tx, &actor, name, &recorded, now_ms)).await?;
    Ok(done(PATH, &format!("test notice to {name}: {outcome}")))
}

#[derive(Deserialize)]
pub struct SilenceForm {
    hours: Option<String>,
}

/// `POST /admin/alerts/events/{id}/{acknowledge|silence}`.
pub async fn act_on_event(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Path((id, act)): Path<(String, String)>,
    Form(form): Form<SilenceForm>,
) -> Result<Redirect, PageError> {
    let (actor, now_ms) = (caller.user.id.clone(), state.clock.now_ms());
    let until_ms = match act.as_str() {
        "acknowledge" => None,
        "silence" => {
            let within = |t: &str| t.parse::<f64>().ok().filter(|h| h.is_finite() && *h > 0.0 && *h <= 24.0 * 90.0);
            let must = "silence for a number of hours above 0 and up to 90 days";
            let hours = required("hours", form.hours, within, must)?;
            Some(now_ms + (hours * 3_600_000.0).round() as i64)
        }
        _ => return Err(AppError::NotFound.into()),
    };
    change(&state, move |tx| {
        let acted = match until_ms {
            None => store::acknowledge(tx, &actor, &id, now_ms),
            Some(until) => store::silence(tx, &actor, &id, until, now_ms),
        };
        match acted {
            Ok(()) => Ok(Ok(())),
            Err(ActError::Db(db)) => Err(db),
            Err(err @ ActError::NotOpen(_)) => Ok(Err(AppError::Conflict(err.to_string()))),
            Err(err) => Ok(Err(AppError::bad_request("hours", err.to_string()))),
        }
    })
    .await?;
    Ok(done(
        PATH,
        &match until_ms {
            None => "the event is acknowledged".to_string(),
            Some(until) => format!("the event is silenced until {}", crate::model::instants::exact_utc(until)),
        },
    ))
}

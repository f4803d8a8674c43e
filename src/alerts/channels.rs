//! Notification channels for alert transitions, configured by `[alerts]` (docs/alerts.md;
//! credentials never in logs or the database): a chat webhook taking a
//! Slack-compatible payload (`SIGHTLINE_ALERT_CHAT_WEBHOOK_URL`), a generic webhook
//! taking JSON signed with HMAC-SHA256 (`SIGHTLINE_ALERT_WEBHOOK_URL`,
//! `SIGHTLINE_ALERT_WEBHOOK_SECRET`), and e-mail over SMTP through `lettre`
//! (`SIGHTLINE_ALERT_SMTP_URL`, `SIGHTLINE_ALERT_EMAIL_FROM`, `SIGHTLINE_ALERT_EMAIL_TO`). Each delivery is tried up to [`ATTEMPTS`] times with
//! a growing pause, and every attempt is returned for `alert_delivery_log`.
//!
//! Invariants: a channel that fails never stops the others (each is tried on its own);
//! the signature covers the exact bytes sent, with the timestamp, so a receiver can
//! refuse a replay; payloads carry the rule, figures and detail, never a person.

use std::time::Duration;

use ring::hmac;
use rusqlite::{Connection, params};
use serde_json::{Value, json};

use super::machine::Step;
use super::store::Transition;
use crate::db::DbError;

/// Tries per delivery, and the pause before the second (doubled before each next).
pub const ATTEMPTS: u32 = 3;
const FIRST_PAUSE: Duration = Duration::from_millis(250);
/// How long one try may take, connection to answer, on every channel.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A configured channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Channel {
    Chat {
        url: String,
    },
    Webhook {
        url: String,
        secret: String,
    },
    /// `url` as `lettre` reads it: `smtp://[user:password@]host[:port][?tls=required]`,
    /// or `smtps://…` for TLS from the first byte.
    Email {
        url: String,
        from: String,
        to: Vec<String>,
    },
}

impl Channel {
    pub fn name(&self) -> &'static str {
        match self {
            Channel::Chat { .. } => "chat_webhook",
            Channel::Webhook { .. } => "webhook",
            Channel::Email { .. } => "email",
        }
    }
}

/// The channels the `[alerts]` section configures (`SIGHTLINE_ALERT_*`). A webhook
/// without its secret is not configured: an unsigned alert could be forged.
pub fn from_config(alerts: &crate::config::Alerts) -> Result<Vec<Channel>, String> {
    let set = |value: &str| Some(value.trim().to_string()).filter(|v| !v.is_empty());
    let mut channels = Vec::new();
    if let Some(url) = set(&alerts.chat_webhook_url.0) {
        channels.push(Channel::Chat { url });
    }
    match (set(&alerts.webhook_url), set(&alerts.webhook_secret.0)) {
        (Some(url), Some(secret)) => channels.push(Channel::Webhook { url, secret }),
        (Some(_), None) => {
            return Err("SIGHTLINE_ALERT_WEBHOOK_URL is set without SIGHTLINE_ALERT_WEBHOOK_SECRET".into());
        }
        _ => {}
    }
    match (set(&alerts.smtp_url.0), set(&alerts.email_from), set(&alerts.email_to)) {
        (Some(url), Some(from), Some(to)) => {
            let to: Vec<String> = to.split(',').map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).collect();
            for address in std::iter::once(&from).chain(&to) {
                address
                    .parse::<lettre::message::Mailbox>()
                    .map_err(|err| format!("alert e-mail address {address:?} is not valid: {err}"))?;
            }
            lettre::SmtpTransport::from_url(&url)
                .map_err(|err| format!("SIGHTLINE_ALERT_SMTP_URL is not an SMTP URL: {err}"))?;
            channels.push(Channel::Email { url, from, to });
        }
        (None, None, None) => {}
        _ => {
            return Err("e-mail alerts need SIGHTLINE_ALERT_SMTP_URL, SIGHTLINE_ALERT_EMAIL_FROM and SIGHTLINE_ALERT_EMAIL_TO together".into());
        }
    }
    Ok(channels)
}

/// A transition to tell: an event opened or resolved, with notification not silenced.
pub struct Notice<'a> {
    pub transition: &'a Transition,
    pub event_id: &'a str,
    pub what: &'static str,
}

/// The transitions to tell channels about.
pub fn notices(transitions: &[Transition]) -> Vec<Notice<'_>> {
    transitions
        .iter()
        .filter_map(|t| {
            let what = match t.step {
                Step::Open { notify: true } => "opened",
                Step::Resolve { notify: true } => "resolved",
                _ => return None,
            };
            t.event_id.as_deref().map(|event_id| Notice { transition: t, event_id, what })
        })
        .collect()
}

/// The Slack-compatible payload: one line of text.
pub fn chat_payload(notice: &Notice<'_>) -> Value {
    let t = notice.transition;
    if notice.what == "test" {
        return json!({ "text": format!(":information_source: Sightline test notice: {}", t.detail) });
    }
    if notice.what == GRANT_REQUESTED {
        return json!({ "text": format!(":key: Sightline: {}", t.detail) });
    }
    let icon = if notice.what == "opened" { ":rotating_light:" } else { ":white_check_mark:" };
    json!({
        "text": format!(
            "{icon} Sightline alert {} {}: {} (value {:.2}, threshold {:.2})",
            t.rule.id(),
            notice.what,
            t.detail,
            t.value,
            t.threshold
        )
    })
}

/// The generic webhook's JSON.
pub fn webhook_payload(notice: &Notice<'_>, at_ms: i64) -> Value {
    let t = notice.transition;
    if notice.what == GRANT_REQUESTED {
        return json!({
            "type": "grant.requested",
            "grant_id": notice.event_id,
            "detail": t.detail,
            "at": crate::model::rfc3339_ms(at_ms),
        });
    }
    json!({
        "type": if notice.what == "test" { "alert.test" } else { "alert.transition" },
        "event_id": notice.event_id,
        "rule": t.rule.id(),
        "subject": t.subject,
        "transition": notice.what,
        "value": t.value,
        "threshold": t.threshold,
        "detail": t.detail,
        "at": crate::model::rfc3339_ms(at_ms),
    })
}

/// `sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<body>`: the value of the
/// `X-Sightline-Signature` header, `timestamp` that of `X-Sightline-Timestamp`.
pub fn signature(secret: &str, timestamp: &str, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let mut context = hmac::Context::with_key(&key);
    context.update(timestamp.as_bytes());
    context.update(b".");
    context.update(body);
    let tag = context.sign();
    format!("sha256={}", tag.as_ref().iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// One attempt's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub channel: &'static str,
    pub event_id: String,
    pub what: &'static str,
    pub attempt: u32,
    pub at_ms: i64,
    pub delivered: bool,
    pub detail: String,
}

/// The e-mail of a notice: a subject line and a plain-text body.
pub fn email_text(notice: &Notice<'_>) -> (String, String) {
    let t = notice.transition;
    if notice.what == "test" {
        return ("[Sightline] test notice".into(), format!("{}\n", t.detail));
    }
    if notice.what == GRANT_REQUESTED {
        return ("[Sightline] an access grant waits for a decision".into(), format!("{}\n", t.detail));
    }
    let subject = format!("[Sightline] alert {} {}", t.rule.id(), notice.what);
    let body = format!(
        "The alert rule {} {} (event {}).\n\n{}\n\nValue {:.2} against a threshold of {:.2}: {}.\n",
        t.rule.id(),
        notice.what,
        notice.event_id,
        t.detail,
        t.value,
        t.threshold,
        t.rule.threshold_means()
    );
    (subject, body)
}

/// Sends one e-mail; the server's acceptance in words.
fn send_email(url: &str, from: &str, to: &[String], notice: &Notice<'_>, timeout: Duration) -> Result<String, String> {
    use lettre::Transport;
    let (subject, body) = email_text(notice);
    let mut message = lettre::Message::builder()
        .from(from.parse().map_err(|err| format!("{from:?}: {err}"))?)
        .subject(subject)
        .header(lettre::message::header::ContentType::TEXT_PLAIN);
    for address in to {
        message = message.to(address.parse().map_err(|err| format!("{address:?}: {err}"))?);
    }
    let message = message.body(body).map_err(|err| err.to_string())?;
    let transport = lettre::SmtpTransport::from_url(url).map_err(|err| err.to_string())?.timeout(Some(timeout)).build();
    let response = transport.send(&message).map_err(|err| smtp_failure(&err, timeout))?;
    Ok(format!("SMTP {}", response.code()))
}

/// An SMTP failure in words: a read or connect that ran out of time says so (the socket
/// reports it as "Resource temporarily unavailable", which tells an operator nothing).
fn smtp_failure(err: &lettre::transport::smtp::Error, timeout: Duration) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && matches!(io.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
        {
            return format!("timed out: the mail server did not answer within {} s", timeout.as_secs_f64());
        }
        source = cause.source();
    }
    if err.is_timeout() {
        return format!("timed out: the mail server did not answer within {} s", timeout.as_secs_f64());
    }
    err.to_string()
}

/// The outcome of an HTTP try: delivered on a 2xx, and the answer in words.
fn answered(result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> (bool, String) {
    match result {
        Ok(response) => {
            let status = response.status().as_u16();
            ((200..300).contains(&status), format!("HTTP {status}"))
        }
        Err(err) => (false, err.to_string()),
    }
}

/// One try of a notice on a channel at `at_ms`; `written_ms` is when the notice's
/// payload was written (the same for every try of it).
fn try_once(
    agent: &ureq::Agent,
    channel: &Channel,
    notice: &Notice<'_>,
    written_ms: i64,
    at_ms: i64,
    timeout: Duration,
) -> (bool, String) {
    match channel {
        Channel::Chat { url } => {
            answered(agent.post(url).header("Content-Type", "application/json").send(chat_payload(notice).to_string()))
        }
        Channel::Webhook { url, secret } => {
            let body = webhook_payload(notice, written_ms).to_string();
            let timestamp = (at_ms / 1000).to_string();
            let signed = signature(secret, &timestamp, body.as_bytes());
            answered(
                agent
                    .post(url)
                    .header("Content-Type", "application/json")
                    .header("X-Sightline-Timestamp", &timestamp)
                    .header("X-Sightline-Signature", &signed)
                    .send(body),
            )
        }
        Channel::Email { url, from, to } => match send_email(url, from, to, notice, timeout) {
            Ok(accepted) => (true, accepted),
            Err(err) => (false, err),
        },
    }
}

/// Delivers every notice to every channel, each with its retries; returns every attempt.
/// `now_ms` gives each attempt's time; `pause` sleeps between tries (a test passes a
/// short one).
pub fn deliver(
    channels: &[Channel],
    notices: &[Notice<'_>],
    now_ms: &dyn Fn() -> i64,
    pause: &dyn Fn(Duration),
) -> Vec<Attempt> {
    deliver_within(channels, notices, now_ms, pause, TIMEOUT)
}

/// [`deliver`] with each try bounded by `timeout` (a test of a receiver that hangs
/// passes a short one).
fn deliver_within(
    channels: &[Channel],
    notices: &[Notice<'_>],
    now_ms: &dyn Fn() -> i64,
    pause: &dyn Fn(Duration),
    timeout: Duration,
) -> Vec<Attempt> {
    let agent =
        ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(timeout)).build().new_agent();
    let mut attempts = Vec::new();
    for notice in notices {
        for channel in channels {
            let written_ms = now_ms();
            let mut wait = FIRST_PAUSE;
            for attempt in 1..=ATTEMPTS {
                let at_ms = now_ms();
                let (delivered, detail) = try_once(&agent, channel, notice, written_ms, at_ms, timeout);
                attempts.push(Attempt {
                    channel: channel.name(),
                    event_id: notice.event_id.to_string(),
                    what: notice.what,
                    attempt,
                    at_ms,
                    delivered,
                    detail,
                });
                if delivered {
                    break;
                }
                if attempt < ATTEMPTS {
                    pause(wait);
                    wait *= 2;
                }
            }
        }
    }
    attempts
}

/// Writes the attempts to `alert_delivery_log`.
pub fn log(conn: &Connection, attempts: &[Attempt]) -> Result<(), DbError> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO alert_delivery_log (id, event_id, channel, transition, attempt, at_ms, outcome, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for a in attempts {
        insert.execute(params![
            uuid::Uuid::now_v7().to_string(),
            a.event_id,
            a.channel,
            a.what,
            a.attempt,
            a.at_ms,
            if a.delivered { "delivered" } else { "failed" },
            a.detail,
        ])?;
    }
    Ok(())
}

/// A test notice to `channel`, with its retries, as an administrator's test-send: it
/// names no rule's figures and no person (the audit log says who sent it), only when.
pub fn test_send(channel: &Channel, now_ms: &dyn Fn() -> i64, pause: &dyn Fn(Duration)) -> Vec<Attempt> {
    let event_id = format!("test-{}", uuid::Uuid::now_v7());
    let transition = Transition {
        rule: super::rules::Rule::JobSlo,
        subject: String::new(),
        step: Step::Open { notify: true },
        event_id: Some(event_id.clone()),
        value: 0.0,
        threshold: 0.0,
        detail: format!(
            "sent by an administrator from /admin/alerts at {} to check this channel; no alert is open",
            crate::model::rfc3339_ms(now_ms())
        ),
    };
    let notice = Notice { transition: &transition, event_id: &event_id, what: "test" };
    deliver(std::slice::from_ref(channel), &[notice], now_ms, pause)
}

mod grant_notice;
pub use grant_notice::{GRANT_REQUESTED, grant_requested};

/// One logged delivery attempt, as the console lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedAttempt {
    pub event_id: String,
    pub rule_id: String,
    pub channel: String,
    pub transition: String,
    pub attempt: i64,
    pub at_ms: i64,
    pub outcome: String,
    pub detail: String,
}

/// The latest delivery attempts, newest first.
pub fn recent(conn: &Connection, limit: usize) -> Result<Vec<LoggedAttempt>, DbError> {
    let mut stmt = conn.prepare_cached(
        "SELECT d.event_id, e.rule_id, d.channel, d.transition, d.attempt, d.at_ms, d.outcome, d.detail
         FROM alert_delivery_log d JOIN alert_events e ON e.id = d.event_id
         ORDER BY d.at_ms DESC, d.id DESC LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit as i64], |row| {
        Ok(LoggedAttempt {
            event_id: row.get(0)?,
            rule_id: row.get(1)?,
            channel: row.get(2)?,
            transition: row.get(3)?,
            attempt: row.get(4)?,
            at_ms: row.get(5)?,
            outcome: row.get(6)?,
            detail: row.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Tells the channels of the transitions worth telling, each with its retries; returns
/// every attempt and the run's summary (what changed, then what was delivered). The same
/// for the server's run and `sightline jobs run`.
pub fn notify(
    channels: &[Channel],
    transitions: &[Transition],
    now_ms: &dyn Fn() -> i64,
    pause: &dyn Fn(Duration),
) -> (Vec<Attempt>, String) {
    let attempts = deliver(channels, &notices(transitions), now_ms, pause);
    let summary = format!("{}; {}", super::store::describe(transitions), describe(&attempts));
    (attempts, summary)
}

/// One line on the deliveries, for the job's summary.
pub fn describe(attempts: &[Attempt]) -> String {
    let delivered = attempts.iter().filter(|a| a.delivered).count();
    let failed = attempts.len() - delivered;
    format!("{delivered} notifications delivered, {failed} failed attempts")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_configures_channels_and_a_webhook_needs_its_secret() {
        let env = |pairs: &[(&str, &str)]| crate::config::Config::from_variables(pairs).unwrap().alerts;
        let from_env = |alerts: crate::config::Alerts| from_config(&alerts);
        assert_eq!(from_env(env(&[])).unwrap(), vec![]);
        let both = from_env(env(&[
            ("SIGHTLINE_ALERT_CHAT_WEBHOOK_URL", "http://chat/hook"),
            ("SIGHTLINE_ALERT_WEBHOOK_URL", "http://ops/hook"),
            ("SIGHTLINE_ALERT_WEBHOOK_SECRET", "s3cret"),
        ]))
        .unwrap();
        assert_eq!(both.len(), 2);
        let err = from_env(env(&[("SIGHTLINE_ALERT_WEBHOOK_URL", "http://ops/hook")])).unwrap_err();
        assert!(err.contains("SIGHTLINE_ALERT_WEBHOOK_SECRET"), "{err}");
        let mail = from_env(env(&[
            ("SIGHTLINE_ALERT_SMTP_URL", "smtp://mail.example:2525"),
            ("SIGHTLINE_ALERT_EMAIL_FROM", "Sightline <alerts@sightline.example>"),
            ("SIGHTLINE_ALERT_EMAIL_TO", "ops@example.com, lead@example.com"),
        ]))
        .unwrap();
        assert!(matches!(&mail[0], Channel::Email { to, .. } if to.len() == 2), "{mail:?}");
        let half = from_env(env(&[("SIGHTLINE_ALERT_SMTP_URL", "smtp://mail.example")])).unwrap_err();
        assert!(half.contains("together"), "{half}");
        let bad = from_env(env(&[
            ("SIGHTLINE_ALERT_SMTP_URL", "smtp://mail.example"),
            ("SIGHTLINE_ALERT_EMAIL_FROM", "not an address"),
            ("SIGHTLINE_ALERT_EMAIL_TO", "ops@example.com"),
        ]))
        .unwrap_err();
        assert!(bad.contains("\"not an address\""), "{bad}");
    }

    /// The signature is HMAC-SHA256 over `timestamp.body`, checked here with ring's verify.
    #[test]
    fn the_signature_verifies_over_timestamp_and_body() {
        let signed = signature("s3cret", "1700000000", b"{\"a\":1}");
        let hex = signed.strip_prefix("sha256=").unwrap();
        let tag: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
        let key = hmac::Key::new(hmac::HMAC_SHA256, b"s3cret");
        assert!(hmac::verify(&key, b"1700000000.{\"a\":1}", &tag).is_ok());
        assert!(hmac::verify(&key, b"1700000001.{\"a\":1}", &tag).is_err());
    }
}

#[cfg(test)]
mod faults;

//! Receivers that fail as real ones do, on loopback: a port nobody listens on, a server
//! that accepts and never answers, an HTTP server that answers 500, an SMTP server that
//! refuses the mail (554) or never greets. Every channel tries each notice
//! [`ATTEMPTS`] times, pausing longer each time, and every attempt says why it failed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::alerts::machine::Step;
use crate::alerts::rules::Rule;
use crate::alerts::store::Transition;

/// A port that refuses connections: bound, then closed.
fn refusing() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    address.to_string()
}

/// A server that accepts every connection and never writes a byte.
fn hanging() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    address
}

/// An HTTP server that reads a request and answers 500.
fn failing_http() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buffer = [0u8; 65536];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\nConnection: close\r\n\r\noops\n",
            );
        }
    });
    address
}

/// An SMTP server that greets, then refuses every sender with 554.
fn refusing_smtp() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let _ = stream.write_all(b"220 stand-in ESMTP\r\n");
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 {
                let verb = line.get(..4).unwrap_or("").to_ascii_uppercase();
                let answer: &[u8] = match verb.as_str() {
                    "EHLO" | "HELO" => b"250 stand-in\r\n",
                    "MAIL" => b"554 5.7.1 relaying denied\r\n",
                    "QUIT" => b"221 bye\r\n",
                    _ => b"503 bad sequence\r\n",
                };
                let _ = stream.write_all(answer);
                line.clear();
            }
        }
    });
    address
}

fn transition() -> Transition {
    Transition {
        rule: Rule::SpendSpike,
        subject: String::new(),
        step: Step::Open { notify: true },
        event_id: Some("event-1".into()),
        value: 120.0,
        threshold: 50.0,
        detail: "spend of the last hour".into(),
    }
}

/// Delivers one notice to `channel` with a short timeout; the attempts and the pauses.
fn attempts_on(channel: Channel) -> (Vec<Attempt>, Vec<Duration>) {
    let transitions = [transition()];
    let pauses: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let kept = pauses.clone();
    let attempts = deliver_within(
        &[channel],
        &notices(&transitions),
        &|| 1_700_000_000_000,
        &move |pause| kept.lock().unwrap().push(pause),
        Duration::from_millis(300),
    );
    let pauses = pauses.lock().unwrap().clone();
    (attempts, pauses)
}

fn chat(address: &str) -> Channel {
    Channel::Chat { url: format!("http://{address}/hook") }
}

fn webhook(address: &str) -> Channel {
    Channel::Webhook { url: format!("http://{address}/hook"), secret: "s3cret".into() }
}

fn email(address: &str) -> Channel {
    Channel::Email {
        url: format!("smtp://{address}"),
        from: "Sightline <alerts@sightline.example>".into(),
        to: vec!["ops@example.com".into()],
    }
}

#[test]
fn every_failing_receiver_is_tried_three_times_with_growing_pauses_and_each_try_says_why() {
    let cases: Vec<(&str, Channel, &[&str])> = vec![
        ("chat, refused", chat(&refusing()), &["onnect", "refused"]),
        ("chat, hangs", chat(&hanging()), &["imeout", "timed out"]),
        ("chat, 500", chat(&failing_http()), &["HTTP 500"]),
        ("webhook, refused", webhook(&refusing()), &["onnect", "refused"]),
        ("webhook, hangs", webhook(&hanging()), &["imeout", "timed out"]),
        ("webhook, 500", webhook(&failing_http()), &["HTTP 500"]),
        ("email, refused", email(&refusing()), &["onnect", "refused"]),
        ("email, never greets", email(&hanging()), &["imeout", "timed out"]),
        ("email, 554", email(&refusing_smtp()), &["554", "relaying denied"]),
    ];
    for (case, channel, any_of) in cases {
        let (attempts, pauses) = attempts_on(channel);
        assert_eq!(attempts.len(), ATTEMPTS as usize, "{case}: {attempts:?}");
        for attempt in &attempts {
            assert!(!attempt.delivered, "{case}");
            assert!(
                any_of.iter().any(|word| attempt.detail.contains(word)),
                "{case}: the attempt says why it failed: {}",
                attempt.detail
            );
        }
        assert_eq!(attempts.iter().map(|a| a.attempt).collect::<Vec<_>>(), vec![1, 2, 3], "{case}");
        assert_eq!(pauses, vec![FIRST_PAUSE, FIRST_PAUSE * 2], "{case}: the pause doubles between tries");
        assert_eq!(describe(&attempts), "0 notifications delivered, 3 failed attempts", "{case}");
    }
}

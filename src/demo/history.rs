//! The demo's history: every developer's sessions, day by day, sent through
//! `POST /v1/events` by several senders at once, with the transcripts of some uploaded as
//! the shipper does; what was sent is counted for the summary and the pull requests.

use serde_json::{Value, json};

use super::otlp::{self, Source};
use super::people::Person;
use super::{DAY_MS, Server, activity};

/// Events per `POST /v1/events` (the hook sends up to the server's limit of 1,000).
const BATCH: usize = 500;
/// Sessions with a transcript: one in this many Claude Code and Codex sessions.
const TRANSCRIPT_EVERY: u32 = 12;
const SENDERS: usize = 4;

#[derive(Default)]
pub(super) struct Sent {
    pub(super) events: usize,
    pub(super) sessions: usize,
    pub(super) transcripts: usize,
    /// Sessions whose agent exported OTLP only, and both OTLP and the hook.
    pub(super) otlp_only: usize,
    pub(super) otlp_and_hook: usize,
    /// Work on a branch, for the pull requests: (developer, repository, branch) → first
    /// and last session start.
    pub(super) branches: std::collections::BTreeMap<(usize, &'static str, String), (i64, i64)>,
}

/// Everyone's history, day by day, through `POST /v1/events` (several senders at once).
pub(super) fn send_history(server: &Server, people: &[Person], days: i64, now_ms: i64) -> anyhow::Result<Sent> {
    let developers: Vec<&Person> = people.iter().filter(|p| p.team.is_some()).collect();
    let habits: Vec<activity::Habits> = developers.iter().enumerate().map(|(i, _)| activity::habits(i)).collect();
    // Generate on this thread (the seed orders everything), send on the senders.
    let (queue, work) = std::sync::mpsc::sync_channel::<Work>(64);
    let work = std::sync::Arc::new(std::sync::Mutex::new(work));
    let senders: Vec<_> = (0..SENDERS)
        .map(|_| {
            let (work, ingest) = (work.clone(), server.ingest.clone());
            std::thread::spawn(move || -> anyhow::Result<()> {
                let agent = Server::agent();
                loop {
                    let next = work.lock().map_err(|_| anyhow::anyhow!("a sender stopped"))?.recv();
                    let Ok(Work { token, events, transcript, exports }) = next else { return Ok(()) };
                    if !events.is_empty() {
                        post_events(&agent, &ingest, &token, events)?;
                    }
                    for (path, export) in &exports {
                        post_export(&agent, &ingest, &token, path, export)?;
                    }
                    if let Some((agent_type, session, text)) = transcript {
                        upload_transcript(&agent, &ingest, &token, &agent_type, &session, &text)?;
                    }
                }
            })
        })
        .collect();
    let mut sent = Sent::default();
    let today = now_ms.div_euclid(DAY_MS) * DAY_MS;
    for back in (0..days.max(1)).rev() {
        let day = today - back * DAY_MS;
        let weekday = (day.div_euclid(DAY_MS) + 4).rem_euclid(7); // 0 = Sunday
        for (index, (person, habit)) in developers.iter().zip(&habits).enumerate() {
            let working = (1..=5).contains(&weekday) && fastrand::u32(0..10) < 8;
            let weekend = !(1..=5).contains(&weekday) && fastrand::u32(0..20) == 0;
            if !(working || weekend) {
                continue;
            }
            let mut batch = Vec::new();
            for n in 0..habit.sessions_today() {
                let start = day + (8 * 3_600_000) + i64::from(n) * 2 * 3_600_000 + fastrand::i64(0..3_600_000);
                if start > now_ms - 3_600_000 {
                    continue;
                }
                let kind = match fastrand::u32(0..40) {
                    0..=2 => "CI",
                    3 => "EVAL",
                    _ => "INTERACTIVE",
                };
                let branch = if kind == "EVAL" { "main".to_string() } else { activity::branch(index, day / DAY_MS) };
                if branch != "main" {
                    let span = sent.branches.entry((index, habit.repo(), branch.clone())).or_insert((start, start));
                    span.1 = span.1.max(start);
                }
                let mut session = activity::session(habit, start, kind, &branch);
                if matches!(session.agent, "gemini_cli" | "codex") {
                    // Neither reports cache writes (OpenAI's and Gemini's caches are not
                    // written per request), so the hook's and the export's counts agree.
                    for event in session.events.iter_mut().filter(|e| e["type"] == "turn_end") {
                        event["usage"]["cache_write_5m_tokens"] = json!(0);
                    }
                }
                sent.sessions += 1;
                let source = match otlp::source_of(index, session.agent) {
                    // Copilot's and opencode's requests are not joined (their tokens
                    // would count twice): those developers use one source for them.
                    Source::Both if !otlp::joined(session.agent) => Source::Hook,
                    source if otlp::exports(session.agent) => source,
                    _ => Source::Hook,
                };
                if source == Source::Both {
                    // The hook reads each request's id from the transcript, as the agent exports it.
                    for event in session.events.iter_mut().filter(|e| e["type"] == "turn_end") {
                        if session.agent == "claude_code" {
                            event["metadata"]["request_id"] = json!(otlp::request_id(event));
                        }
                    }
                }
                let exports = match source {
                    Source::Hook => Vec::new(),
                    _ => otlp::session_exports(session.agent, &session.session_id, session.model, &session.events),
                };
                match source {
                    Source::Hook => {}
                    Source::Otlp => sent.otlp_only += 1,
                    Source::Both => sent.otlp_and_hook += 1,
                }
                if source == Source::Otlp {
                    // No hook: no transcript, no git context; the exporter's records only.
                    if !exports.is_empty() {
                        queue.send(Work {
                            token: person.hook_token.clone(),
                            events: Vec::new(),
                            transcript: None,
                            exports,
                        })?;
                    }
                    continue;
                }
                sent.events += session.events.len();
                // One interactive session in TRANSCRIPT_EVERY keeps its transcript, and so do
                // the first whose shell calls follow their last edit, so even a small demo,
                // on any day, has test runs that scoring reads from a transcript.
                let lucky = kind == "INTERACTIVE" && fastrand::u32(0..TRANSCRIPT_EVERY) == 0;
                let early = kind == "INTERACTIVE"
                    && matches!(session.agent, "claude_code" | "codex")
                    && sent.transcripts < 12
                    && activity::runs_commands_after_last_edit(&session);
                let transcript = (lucky || early)
                    .then(|| activity::transcript(&session, start))
                    .flatten()
                    .map(|text| (session.agent.to_string(), session.session_id.clone(), text));
                if transcript.is_some() {
                    sent.transcripts += 1;
                }
                batch.extend(session.events);
                if batch.len() >= BATCH || transcript.is_some() || !exports.is_empty() {
                    let events = std::mem::take(&mut batch);
                    queue.send(Work { token: person.hook_token.clone(), events, transcript, exports })?;
                }
            }
            if !batch.is_empty() {
                queue.send(Work {
                    token: person.hook_token.clone(),
                    events: batch,
                    transcript: None,
                    exports: Vec::new(),
                })?;
            }
        }
    }
    drop(queue);
    for sender in senders {
        sender.join().map_err(|_| anyhow::anyhow!("a sender panicked"))??;
    }
    Ok(sent)
}

/// What one sender posts: a person's hook events, a transcript, an agent's OTLP exports.
struct Work {
    token: String,
    events: Vec<Value>,
    transcript: Option<(String, String, String)>,
    exports: Vec<otlp::Export>,
}

/// An agent's OTLP/JSON export to `path` (`/v1/logs`, `/v1/metrics`, `/v1/traces`), as
/// its exporter sends it.
pub(super) fn post_export(
    agent: &ureq::Agent,
    ingest: &str,
    token: &str,
    path: &str,
    export: &Value,
) -> anyhow::Result<()> {
    let mut response = agent
        .post(format!("{ingest}{path}"))
        .header("Authorization", format!("Bearer {token}"))
        .content_type("application/json")
        .send(export.to_string())?;
    let status = response.status().as_u16();
    let answer = response.body_mut().read_to_string().unwrap_or_default();
    anyhow::ensure!(status == 200, "POST {path} answered {status}: {answer}");
    anyhow::ensure!(!answer.contains("partialSuccess"), "{path}: records were refused: {answer}");
    Ok(())
}

pub(super) fn post_events(agent: &ureq::Agent, ingest: &str, token: &str, events: Vec<Value>) -> anyhow::Result<()> {
    for chunk in events.chunks(BATCH * 2) {
        let body = json!({"client": {"machine_id": "demo-laptop", "cli_version": env!("CARGO_PKG_VERSION"), "os": "linux"},
                          "events": chunk});
        let mut response = agent
            .post(format!("{ingest}/v1/events"))
            .header("Authorization", format!("Bearer {token}"))
            .content_type("application/json")
            .send(body.to_string())?;
        let status = response.status().as_u16();
        let answer = response.body_mut().read_to_string().unwrap_or_default();
        anyhow::ensure!(status == 200, "POST /v1/events answered {status}: {answer}");
        let answer: Value = serde_json::from_str(&answer)?;
        anyhow::ensure!(answer["rejected"].as_array().is_none_or(Vec::is_empty), "events were rejected: {answer}");
    }
    Ok(())
}

pub(super) fn upload_transcript(
    agent: &ureq::Agent,
    ingest: &str,
    token: &str,
    agent_type: &str,
    session: &str,
    text: &str,
) -> anyhow::Result<()> {
    let body = zstd::bulk::compress(text.as_bytes(), 3)?;
    let digest = crate::model::sha256_hex(&body);
    let mut response = agent
        .post(format!("{ingest}/v1/transcripts/{session}?agent_type={agent_type}"))
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", "application/zstd")
        .header("X-Chunk-Index", "0")
        .header("X-Chunk-Total", "1")
        .header("X-Chunk-Sha256", &digest)
        .header("X-Transcript-Sha256", &digest)
        .send(&body[..])?;
    let status = response.status().as_u16();
    anyhow::ensure!(
        status == 200,
        "the transcript upload answered {status}: {}",
        response.body_mut().read_to_string().unwrap_or_default()
    );
    Ok(())
}

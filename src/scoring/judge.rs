//! `judge-sessions`: an LLM judge (any OpenAI-compatible chat completions API) scores
//! the transcripts of sessions whose owners opted in (`judge_opt_in`).
//!
//! Invariants:
//! - only an opted-in owner's sessions are read, each through the owner's own read (the
//!   judge reads as the owner, never as anyone else), and every read writes an audit row
//!   whose subject is the owner, so it shows in their "who read my data";
//! - the rationale is stored in a file under `<data_dir>/judge/`, redacted; the score row
//!   holds only a reference to it;
//! - each verdict records its spend (`scores.cost_nusd`), and no call is made once the
//!   day's spend has reached the daily cap;
//! - without `SIGHTLINE_JUDGE_URL` and `SIGHTLINE_JUDGE_KEY` nothing is read or sent.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use super::registry;
use crate::audit::{self, Action, Entry};
use crate::db::DbError;
use crate::sessions::read::{self, Reading};

/// Who reads, in the audit: a fixed constant, not a person.
pub const READER: &str = "sightline-judge";
/// Sessions judged per run at most.
const PER_RUN: usize = 50;
/// Most transcript characters sent.
const MAX_CHARS: usize = 24_000;

/// How to reach the judge and what it costs.
#[derive(Clone)]
pub struct JudgeSettings {
    pub url: String,
    pub key: String,
    pub model: String,
    pub daily_cap_nusd: i64,
    pub input_nusd_per_token: i64,
    pub output_nusd_per_token: i64,
    /// How long one call may take.
    pub timeout: std::time::Duration,
}

impl JudgeSettings {
    /// From the `[judge]` section: `url` and `key` (`SIGHTLINE_JUDGE_URL`,
    /// `SIGHTLINE_JUDGE_KEY`) are needed; the model (default gpt-4o-mini), the daily cap
    /// in USD (default 5) and the prices per million tokens (defaults 0.15 and 0.60) may
    /// be set.
    pub fn from_config(judge: &crate::config::Judge) -> Result<JudgeSettings, String> {
        let (url, key) = (judge.url.trim(), judge.key.0.trim());
        if url.is_empty() || key.is_empty() {
            return Err("the judge needs SIGHTLINE_JUDGE_URL and SIGHTLINE_JUDGE_KEY".into());
        }
        let usd = |name: &str, value: f64| -> Result<i64, String> {
            if !(0.0..=1_000_000.0).contains(&value) {
                return Err(format!("{name} must be between 0 and 1000000"));
            }
            Ok((value * 1e9).round() as i64)
        };
        let model = judge.model.trim();
        if !(1..=600).contains(&judge.timeout_secs) {
            return Err("SIGHTLINE_JUDGE_TIMEOUT_SECS must be between 1 and 600".into());
        }
        Ok(JudgeSettings {
            timeout: std::time::Duration::from_secs(judge.timeout_secs),
            url: url.trim_end_matches('/').to_string(),
            key: key.to_string(),
            model: if model.is_empty() { "gpt-4o-mini".into() } else { model.to_string() },
            daily_cap_nusd: usd("SIGHTLINE_JUDGE_DAILY_CAP_USD", judge.daily_cap_usd)?,
            input_nusd_per_token: usd("SIGHTLINE_JUDGE_USD_PER_MTOK_INPUT", judge.usd_per_mtok_input)? / 1_000_000,
            output_nusd_per_token: usd("SIGHTLINE_JUDGE_USD_PER_MTOK_OUTPUT", judge.usd_per_mtok_output)? / 1_000_000,
        })
    }
}

/// What the judge said of one transcript, and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// 1 (poor) to 5 (excellent).
    pub score: i64,
    pub rationale: String,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

const RUBRIC: &str = "You review a coding agent's session. Judge how well the agent served the developer: did it \
understand the task, work efficiently, verify its changes, and communicate clearly? Answer with JSON only: \
{\"score\": <1-5>, \"rationale\": \"<at most three sentences>\"}.";

/// The chat request the judge gets for a transcript text.
pub fn request_body(settings: &JudgeSettings, transcript: &str) -> Value {
    json!({
        "model": settings.model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": RUBRIC},
            {"role": "user", "content": transcript},
        ],
    })
}

/// Reads a chat completions answer (OpenAI's shape: `choices[0].message.content`, `usage`).
pub fn parse_answer(answer: &Value) -> Result<Verdict, String> {
    let content =
        answer["choices"][0]["message"]["content"].as_str().ok_or("the answer has no choices[0].message.content")?;
    let verdict: Value = serde_json::from_str(content).map_err(|_| "the judge's content is not JSON".to_string())?;
    let score = verdict["score"].as_i64().filter(|s| (1..=5).contains(s)).ok_or("the judge's score is not 1 to 5")?;
    let rationale = verdict["rationale"].as_str().unwrap_or("").chars().take(2_000).collect();
    Ok(Verdict {
        score,
        rationale,
        input_tokens: answer["usage"]["prompt_tokens"].as_i64().unwrap_or(0).max(0),
        output_tokens: answer["usage"]["completion_tokens"].as_i64().unwrap_or(0).max(0),
    })
}

/// A session to judge.
pub struct Due {
    pub session_id: String,
    pub owner_id: String,
}

/// Sessions with a transcript, of owners who opted in, not judged at the current version.
pub fn due(conn: &Connection) -> Result<Vec<Due>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT s.id, s.user_id FROM sessions s JOIN visibility_policies v ON v.user_id = s.user_id
         WHERE v.judge_opt_in = 1 AND s.run_kind = 'INTERACTIVE' AND s.transcript_path IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM scores sc WHERE sc.subject_type = 'session' AND sc.subject_id = s.id
                 AND sc.scorer_name = ?1 AND sc.scorer_version = ?2)
         ORDER BY s.first_event_ms DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![registry::JUDGE.name, registry::JUDGE.version, PER_RUN as i64], |r| {
        Ok(Due { session_id: r.get(0)?, owner_id: r.get(1)? })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Spend on judge verdicts since `from_ms`.
pub fn spent_since(conn: &Connection, from_ms: i64) -> Result<i64, DbError> {
    Ok(conn
        .query_row(
            "SELECT coalesce(sum(cost_nusd), 0) FROM scores WHERE source = 'JUDGE' AND created_at_ms >= ?1",
            [from_ms],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0))
}

/// The owner's transcript as the judge reads it (roles and text, capped), after writing
/// the audit row of the read. None when the session has no transcript any more.
pub fn read_as_owner(
    conn: &Connection,
    data_dir: &Path,
    due: &Due,
    model: &str,
    now_ms: i64,
) -> Result<Option<String>, DbError> {
    let Some(proof) = read::own(conn, &due.owner_id, &due.session_id, Reading::Transcript)? else { return Ok(None) };
    let Some(messages) = crate::transcripts::store::read_for(conn, data_dir, &proof)? else { return Ok(None) };
    audit::record(
        conn,
        &Entry {
            actor_id: None,
            action: Action::JudgeRead,
            subject_user_id: Some(&due.owner_id),
            target: Some(&due.session_id),
            detail: json!({"reader": READER, "model": model, "why": "you opted in to the LLM judge"}),
        },
        now_ms,
    )?;
    let mut text = String::new();
    for message in messages {
        if text.len() >= MAX_CHARS {
            break;
        }
        text.push_str(&format!("[{}] {}\n", message.role.as_str(), message.text));
    }
    Ok(Some(text.chars().take(MAX_CHARS).collect()))
}

/// The folder of rationale files.
const RATIONALES: &str = "judge";

/// Removes every rationale file of a session, of every judge version (absent is fine:
/// re-runnable). Deletion requests and retention call it with the transcript it is about.
pub fn forget_rationales(data_dir: &Path, session_id: &str) -> Result<usize, DbError> {
    let folder = data_dir.join(RATIONALES);
    let entries = match std::fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(source) => return Err(DbError::Io { context: format!("listing {}", folder.display()), source }),
    };
    let prefix = format!("{session_id}-v");
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let version = name.strip_prefix(&prefix).and_then(|rest| rest.strip_suffix(".txt"));
        if version.is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())) {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(DbError::Io { context: format!("removing {}", entry.path().display()), source });
                }
            }
        }
    }
    Ok(removed)
}

/// Forgets that a session's judge scores have a rationale (its files are gone).
pub fn forget_rationale_refs(conn: &Connection, session_id: &str) -> Result<(), DbError> {
    conn.execute(
        "UPDATE scores SET rationale_ref = NULL WHERE subject_type = 'session' AND subject_id = ?1 AND rationale_ref IS NOT NULL",
        [session_id],
    )?;
    Ok(())
}

/// Stores a verdict: the rationale (redacted) in a file, the score with its spend and
/// the file's reference.
pub fn store(
    conn: &Connection,
    data_dir: &Path,
    session_id: &str,
    verdict: &Verdict,
    cost_nusd: i64,
    now_ms: i64,
) -> Result<(), DbError> {
    let relative = format!("{RATIONALES}/{session_id}-v{}.txt", registry::JUDGE.version);
    let path = data_dir.join(&relative);
    crate::db::ensure_dir(&data_dir.join(RATIONALES))?;
    let rationale = crate::redact::redact_text(&verdict.rationale).into_owned();
    std::fs::write(&path, rationale)
        .map_err(|source| DbError::Io { context: format!("writing {}", path.display()), source })?;
    conn.execute(
        "INSERT INTO scores (subject_type, subject_id, scorer_name, scorer_version, period_start_ms, value, label, source,
           cost_nusd, rationale_ref, created_at_ms)
         VALUES ('session', ?1, ?2, ?3, 0, ?4, ?5, 'JUDGE', ?6, ?7, ?8)
         ON CONFLICT (subject_type, subject_id, scorer_name, scorer_version, period_start_ms) DO UPDATE SET
           value = excluded.value, label = excluded.label, cost_nusd = excluded.cost_nusd,
           rationale_ref = excluded.rationale_ref, created_at_ms = excluded.created_at_ms",
        params![
            session_id,
            registry::JUDGE.name,
            registry::JUDGE.version,
            verdict.score as f64 / 5.0,
            format!("{} of 5", verdict.score),
            cost_nusd,
            relative,
            now_ms
        ],
    )?;
    Ok(())
}

/// How a run's summary says it stopped at the daily cap (`jobs::slo` alerts on it).
pub const CAP_REACHED: &str = "; the daily cap is reached";

/// What a run did.
#[derive(Debug, Default, PartialEq)]
pub struct JudgeReport {
    pub judged: usize,
    pub spent_nusd: i64,
    pub capped: bool,
}

impl JudgeReport {
    pub fn describe(&self) -> String {
        let cap = if self.capped { CAP_REACHED } else { "" };
        format!("{} sessions judged for ${:.4}{cap}", self.judged, self.spent_nusd as f64 / 1e9)
    }
}

/// Judges what is due: `reads` for the reads (a connection the audit rows are written
/// on), `ask` for the call to the API. Stops at the daily cap.
pub fn run(
    conn: &Connection,
    data_dir: &Path,
    settings: &JudgeSettings,
    now_ms: i64,
    ask: &dyn Fn(&Value) -> Result<Value, String>,
) -> Result<JudgeReport, String> {
    let day_start = now_ms.div_euclid(86_400_000) * 86_400_000;
    let mut report = JudgeReport::default();
    let mut spent = spent_since(conn, day_start).map_err(|e| e.to_string())?;
    for due in due(conn).map_err(|e| e.to_string())? {
        if spent >= settings.daily_cap_nusd {
            report.capped = true;
            break;
        }
        let Some(text) = read_as_owner(conn, data_dir, &due, &settings.model, now_ms).map_err(|e| e.to_string())?
        else {
            continue;
        };
        let answer = ask(&request_body(settings, &text))?;
        let verdict = parse_answer(&answer)?;
        let cost = verdict.input_tokens * settings.input_nusd_per_token
            + verdict.output_tokens * settings.output_nusd_per_token;
        store(conn, data_dir, &due.session_id, &verdict, cost, now_ms).map_err(|e| e.to_string())?;
        spent += cost;
        report.spent_nusd += cost;
        report.judged += 1;
    }
    if spent >= settings.daily_cap_nusd {
        report.capped = true;
    }
    Ok(report)
}

/// The call to an OpenAI-compatible chat completions endpoint (blocking).
pub fn ask_api(settings: &JudgeSettings, body: &Value) -> Result<Value, String> {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(settings.timeout))
        .build()
        .new_agent();
    let url = format!("{}/chat/completions", settings.url);
    let mut answer = agent
        .post(&url)
        .header("Authorization", format!("Bearer {}", settings.key))
        .header("Content-Type", "application/json")
        .send(body.to_string())
        .map_err(|err| format!("cannot reach {url}: {err}"))?;
    let status = answer.status().as_u16();
    let text = answer.body_mut().with_config().limit(4 << 20).read_to_string().map_err(|e| e.to_string())?;
    if status != 200 {
        return Err(format!("{url} answered {status}"));
    }
    serde_json::from_str(&text).map_err(|_| format!("{url} did not answer JSON"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_need_both_variables_and_read_prices() {
        let settings = |pairs: &[(&str, &str)]| {
            crate::config::Config::from_variables(pairs).and_then(|config| JudgeSettings::from_config(&config.judge))
        };
        assert!(settings(&[("SIGHTLINE_JUDGE_URL", "http://x")]).is_err());
        let s = settings(&[
            ("SIGHTLINE_JUDGE_URL", "http://x/v1/"),
            ("SIGHTLINE_JUDGE_KEY", "k"),
            ("SIGHTLINE_JUDGE_DAILY_CAP_USD", "0.5"),
        ])
        .unwrap();
        assert_eq!(
            (s.url.as_str(), s.daily_cap_nusd, s.input_nusd_per_token, s.output_nusd_per_token),
            ("http://x/v1", 500_000_000, 150, 600)
        );
        let bad = settings(&[
            ("SIGHTLINE_JUDGE_URL", "u"),
            ("SIGHTLINE_JUDGE_KEY", "k"),
            ("SIGHTLINE_JUDGE_DAILY_CAP_USD", "lots"),
        ]);
        assert!(bad.err().unwrap().contains("SIGHTLINE_JUDGE_DAILY_CAP_USD"));
    }

    #[test]
    fn answers_are_read_strictly() {
        let answer = json!({"choices": [{"message": {"role": "assistant", "content": "{\"score\": 4, \"rationale\": \"Verified.\"}"}}],
                            "usage": {"prompt_tokens": 1000, "completion_tokens": 50}});
        assert_eq!(
            parse_answer(&answer).unwrap(),
            Verdict { score: 4, rationale: "Verified.".into(), input_tokens: 1000, output_tokens: 50 }
        );
        let six = json!({"choices": [{"message": {"content": "{\"score\": 6}"}}]});
        assert!(parse_answer(&six).is_err());
        assert!(parse_answer(&json!({"error": "x"})).is_err());
    }
}

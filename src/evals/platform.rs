//! What the eval dashboard reads of the Sightline platform: the agent sessions a harness
//! linked to its cells (`/api/evals` on the platform's web address, docs/results-db.md),
//! with an `eval` token of an eval engineer. The platform decides and audits every read;
//! the dashboard only asks, over HTTP, and shows the answer.
//!
//! Invariants: the platform is optional (no address, no agent sections); a platform that
//! is down, slow (30 s) or refuses is a notice on the page naming the address and the
//! answer, never a failed page; nothing here writes anywhere. The dashboard shows what
//! the token's eval engineer may read to whoever passes its own sign-in, so it needs one
//! (`app::serve::dashboard` refuses a platform without a dashboard token).

use std::time::Duration;

use serde::Deserialize;

/// How far a harness's cost may be from Sightline's before the page flags it: 5 % of the
/// larger, and never less than a cent (rounding in a harness's own pricing).
pub const COST_TOLERANCE_SHARE: f64 = 0.05;
pub const COST_TOLERANCE_FLOOR_USD: f64 = 0.01;

/// How long a page waits for the platform (a run's figures read every linked session's
/// events there), and the largest answer it takes (a cell of several sessions, each with
/// its trace and 300 messages).
const TIMEOUT_SECS: u64 = 30;
const MAX_ANSWER_BYTES: u64 = 64 * 1024 * 1024;

/// The platform's address and the eval token the dashboard reads it with.
#[derive(Clone, Debug)]
pub struct Platform {
    pub url: String,
    token: String,
}

impl Platform {
    /// `None` without an address; an address without a token is refused by name.
    pub fn new(url: Option<&str>, token: Option<&str>) -> Result<Option<Platform>, String> {
        let Some(url) = url.map(str::trim).filter(|url| !url.is_empty()) else { return Ok(None) };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("the platform address {url:?} must start with http:// or https://"));
        }
        let token = token.map(str::trim).filter(|token| !token.is_empty()).ok_or_else(|| {
            "a platform address needs an eval token (SIGHTLINE_PLATFORM_TOKEN, from `sightline token create --kind eval`)"
                .to_string()
        })?;
        Ok(Some(Platform { url: url.trim_end_matches('/').to_string(), token: token.to_string() }))
    }

    /// Where a person opens a session on the platform.
    pub fn session_url(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    fn get<T: for<'de> Deserialize<'de>>(&self, path: &str) -> Result<T, String> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(TIMEOUT_SECS)))
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}{path}", self.url);
        let mut response = agent
            .get(&url)
            .header("Authorization", format!("Bearer {}", self.token))
            .call()
            .map_err(|err| format!("the platform at {} did not answer: {err}", self.url))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()
            .map_err(|err| format!("the platform's answer: {err}"))?;
        if status != 200 {
            let message = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|value| value["error"]["message"].as_str().map(str::to_string))
                .unwrap_or_default();
            return Err(format!("the platform at {} answered {status} {message}", self.url).trim_end().to_string());
        }
        serde_json::from_str(&body).map_err(|err| format!("the platform's answer is not what was expected: {err}"))
    }

    /// The sessions linked to `cell_id` of `run_name`, with trace and transcript.
    pub fn cell(&self, run_name: &str, cell_id: &str) -> Result<Vec<AgentSession>, String> {
        let path = format!(
            "/api/evals/cells/{}?run={}",
            crate::model::percent_encode(cell_id),
            crate::model::percent_encode(run_name)
        );
        self.get::<Sessions>(&path).map(|answer| answer.sessions)
    }

    /// The figures of every session that named `run_name`.
    pub fn run(&self, run_name: &str) -> Result<Vec<AgentSession>, String> {
        self.get::<Sessions>(&format!("/api/evals/runs/{}", crate::model::percent_encode(run_name)))
            .map(|answer| answer.sessions)
    }
}

#[derive(Deserialize)]
struct Sessions {
    sessions: Vec<AgentSession>,
}

/// One linked session as the platform describes it.
#[derive(Clone, Debug, Deserialize)]
pub struct AgentSession {
    pub id: String,
    pub url: String,
    pub agent_type: String,
    pub cell_id: String,
    pub phase: Option<String>,
    pub first_event_ms: i64,
    pub last_event_ms: i64,
    pub ended: bool,
    pub prompts: i64,
    pub tool_calls: i64,
    pub tool_errors: i64,
    pub denials: i64,
    pub notifications: i64,
    pub subagents: i64,
    pub usage: crate::model::Usage,
    pub cost_usd: f64,
    pub unknown_model_events: i64,
    pub behaviour: Behaviour,
    #[serde(default)]
    pub turns: Vec<AgentTurn>,
    #[serde(default)]
    pub events_truncated: bool,
    #[serde(default)]
    pub transcript: Option<Transcript>,
}

impl AgentSession {
    /// Every token the session counted: the prompt as the vendor counts it, output and reasoning.
    pub fn tokens(&self) -> i64 {
        self.usage.prompt_tokens() + self.usage.output_tokens + self.usage.reasoning_tokens
    }
}

/// What the platform's trajectory scorers make of the session.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Behaviour {
    pub friction: f64,
    pub step_efficiency: f64,
    pub shape: String,
    pub retry_loops: i64,
    pub permission_waits: i64,
    pub waiting_ms: i64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct AgentTurn {
    pub label: String,
    pub start_ms: i64,
    pub end_ms: i64,
    pub model: Option<String>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_usd: f64,
    pub calls: i64,
    pub failed_calls: i64,
    pub waits: i64,
    pub tools: String,
    pub spans: Vec<crate::charts::Span>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Transcript {
    pub total: usize,
    pub messages: Vec<TranscriptMessage>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct TranscriptMessage {
    pub role: String,
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    pub tool_name: Option<String>,
    #[serde(default)]
    pub is_error: bool,
    pub whole_text_bytes: Option<usize>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ToolCall {
    pub name: String,
    pub input: String,
}

/// Whether `harness` and `sightline` (US dollars) differ by more than the tolerance.
pub fn cost_differs(harness: f64, sightline: f64) -> bool {
    let allowed = (harness.abs().max(sightline.abs()) * COST_TOLERANCE_SHARE).max(COST_TOLERANCE_FLOOR_USD);
    (harness - sightline).abs() > allowed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cost_differs_beyond_five_percent_and_a_cent() {
        assert!(!cost_differs(1.00, 1.04));
        assert!(cost_differs(1.00, 1.06));
        assert!(!cost_differs(0.004, 0.012), "within a cent");
        assert!(cost_differs(0.0, 0.02));
        assert!(cost_differs(2.0, 0.5));
    }

    #[test]
    fn an_address_needs_its_scheme_and_a_token() {
        assert!(Platform::new(None, Some("t")).unwrap().is_none());
        assert!(Platform::new(Some("sightline.example"), Some("t")).unwrap_err().contains("http://"));
        assert!(Platform::new(Some("http://h:1"), None).unwrap_err().contains("eval token"));
        let platform = Platform::new(Some("https://h.example/"), Some("slh_eval_x")).unwrap().unwrap();
        assert_eq!(platform.session_url("/sessions/s1"), "https://h.example/sessions/s1");
    }
}

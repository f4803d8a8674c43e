//! Per-cell generation of the demo database: what a cell costs and spends, its
//! phases and reviewer, and its outcome (exit class, success, error), all drawn from
//! the run's seeded generator.

use super::*;

/// The adversarial reviewer of a multi-phase cell: another vendor's model; aider runs none.
pub(super) fn reviewer(h: &Harness, m: &Model) -> Option<&'static Model> {
    let name = if m.vendor == "anthropic" { "gpt-5-codex" } else { "claude-opus-4-5" };
    MODELS.iter().find(|r| r.name == name).filter(|_| !h.native.is_empty())
}

/// Tokens (input, output, cache read, cache write, reasoning), cost, time and counts of calls.
#[derive(Default)]
pub(super) struct Spend {
    pub(super) usage: [i64; 5],
    pub(super) cost: f64,
    pub(super) ms: i64,
    pub(super) calls: i64,
    pub(super) tools: i64,
}

pub(super) fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// What `calls` API calls cost: the context grows per call; caching harnesses read most of it
/// from the cache (Anthropic models also pay cache writes); reasoning is billed as output.
pub(super) fn spend(rng: &mut Rng, h: &Harness, m: &Model, calls: u32) -> Spend {
    let calls = u64::from(calls.max(1));
    let ctx0 = rng.u64(8_000..16_000) + if h.caching { 0 } else { 12_000 };
    let prompt = calls * ctx0 + rng.u64(400..1600) * calls * (calls - 1) / 2;
    let (cache_read, cache_write) = match (h.caching, m.prices[3] > 0.0) {
        (false, _) => (0, 0),
        (true, true) => (prompt * 88 / 100, prompt * 6 / 100),
        (true, false) => (prompt * 80 / 100, 0),
    };
    let (input, output) = (prompt - cache_read - cache_write, calls * rng.u64(180..900));
    let reasoning = (output as f64 * m.reasoning * (0.5 + rng.f64())) as u64;
    let usage = [input, output, cache_read, cache_write, reasoning];
    let billed = [input, output + reasoning, cache_read, cache_write];
    let cost = billed.iter().zip(m.prices).map(|(&n, p)| n as f64 * p).sum::<f64>() / 1e6;
    let tools = if h.caching { calls * rng.u64(70..100) / 100 } else { calls / 2 + 1 };
    let ms = calls * m.ms_per_call * rng.u64(70..140) / 100 + tools * rng.u64(300..2500);
    let [ms, calls, tools] = [ms, calls, tools].map(|v| v as i64);
    Spend { usage: usage.map(|v| v as i64), cost: round6(cost), ms, calls, tools }
}

pub(super) fn usage_json([i, o, r, w, x]: &[i64; 5]) -> String {
    let names = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"];
    format!(
        "{{\"{}\":{i},\"{}\":{o},\"{}\":{r},\"{}\":{w},\"{}\":{x}}}",
        names[0], names[1], names[2], names[3], names[4]
    )
}

pub(super) struct Phase {
    pub(super) name: &'static str,
    pub(super) trace: String,
    pub(super) model: &'static str,
    pub(super) role: &'static str,
    pub(super) exit_code: i64,
    pub(super) timed_out: bool,
    pub(super) spend: Spend,
    pub(super) error: Option<&'static str>,
}

/// Phases consistent with the cell's exit class: plan, implement, then (with a reviewer)
/// review and, when the reviewer objects, revise. A timed-out phase has exit code 124.
pub(super) fn make_phases(rng: &mut Rng, key: &Key, exit: &str) -> Vec<Phase> {
    let (h, m) = (&HARNESSES[key.h], &MODELS[key.m]);
    let budget = rng.u32(h.calls.0..h.calls.1);
    let phase = |rng: &mut Rng, name, model: &'static Model, role, share: u32, failure: Option<(i64, &'static str)>| {
        let (exit_code, error) = failure.map_or((0, None), |(code, e)| (code, Some(e)));
        let mut spend = spend(rng, h, model, budget * share / 100);
        if exit_code == 124 {
            spend.ms = if role == "reviewer" { 600_000 } else { 900_000 };
        }
        let trace = data::hex(rng, 32);
        Phase { name, trace, model: model.name, role, exit_code, timed_out: exit_code == 124, spend, error }
    };
    let implement = match exit {
        "timeout" => Some((124, "phase timed out after 900 s (limit 900 s); process group killed")),
        "error" => Some((2, "ToolCrash: Bash tool exited with signal 9 (SIGKILL); sandbox memory.max=4G reached")),
        "infra_error" => Some((75, "RateLimitError: 429 rate_limit_error after 5 retries (retry-after 30 s)")),
        "fail" if rng.bool() => Some((1, "tests failed after implementation: 2 failing (see test_output)")),
        _ => None,
    };
    let mut phases =
        vec![phase(rng, "plan", m, "worker", 20, None), phase(rng, "implement", m, "worker", 60, implement)];
    let Some(reviewer) = reviewer(h, m).filter(|_| implement.is_none()) else { return phases };
    let review = match (exit, rng.u8(0..20)) {
        ("fail", _) | ("pass", 0..=4) => Some((1, REJECTED)),
        ("pass", 5) => Some((124, "review timed out after 600 s; verdict taken from tests alone")),
        _ => None,
    };
    phases.push(phase(rng, "review", reviewer, "reviewer", 25, review));
    if review.is_some_and(|(code, _)| code == 1) {
        let still = (exit == "fail").then_some((1, "revision did not address the review: tests still failing"));
        phases.push(phase(rng, "revise", m, "worker", 30, still));
    }
    phases
}

pub(super) fn phases_json(phases: &[Phase], review: Option<&Model>) -> String {
    let mut s = String::from("{\"phases\":[");
    for (k, p) in phases.iter().enumerate() {
        let (sp, sep) = (&p.spend, if k > 0 { "," } else { "" });
        let _ = write!(s, "{sep}{{\"name\":\"{}\",\"trace_id\":\"{}\",\"model\":\"{}\",", p.name, p.trace, p.model);
        let _ = write!(s, "\"model_role\":\"{}\",\"exit_code\":{},\"duration_ms\":{},", p.role, p.exit_code, sp.ms);
        let _ =
            write!(s, "\"timed_out\":{},\"usage\":{},\"total_cost\":{},", p.timed_out, usage_json(&sp.usage), sp.cost);
        let _ = write!(s, "\"num_api_calls\":{}}}", sp.calls);
    }
    let _ = write!(s, "],\"review_model\":{}}}", review.map_or("null".to_string(), |r| format!("\"{}\"", r.name)));
    s
}

pub(super) struct Cell<'t> {
    pub(super) exit: &'static str,
    pub(super) success: f64,
    pub(super) error_class: Option<&'static str>,
    pub(super) error_message: Option<String>,
    pub(super) usage: [i64; 5],
    pub(super) cost: f64,
    pub(super) latency: i64,
    pub(super) ttfa: i64,
    pub(super) api_calls: i64,
    pub(super) tool_calls: i64,
    pub(super) diff: Option<Cow<'t, str>>,
    pub(super) test_output: Option<Cow<'t, str>>,
    pub(super) metadata: String,
    pub(super) stdout: Cow<'t, str>,
    pub(super) stderr: Cow<'t, str>,
    pub(super) retry: i64,
    pub(super) phases: Vec<Phase>,
    pub(super) phases_table: bool,
}

/// Exit class, success and error class: model skill, harness fit, a reviewer and the task's
/// difficulty set the pass probability; swe is all or nothing (rare partial credit), the rest
/// graded in steps of 0.05 and passing at 0.7.
pub(super) fn outcome(rng: &mut Rng, run: &RunSpec, key: &Key) -> (&'static str, f64, Option<&'static str>) {
    let (h, m, task) = (&HARNESSES[key.h], &MODELS[key.m], &TASKS[key.task]);
    let fit = match h.native {
        "" => -0.12,
        native if native == m.vendor => 0.06,
        _ => -0.04,
    };
    let review = if task.track == Track::MultiPhase && reviewer(h, m).is_some() { 0.06 } else { 0.0 };
    let p = m.skill + fit + review - task.difficulty;
    match rng.f64() {
        r if r < 0.02 => ("timeout", 0.0, Some("Timeout")),
        r if r < 0.032 => ("error", 0.0, Some("ToolCrash")),
        r if r < 0.04 + run.infra => ("infra_error", 0.0, Some("RateLimitError")),
        _ if task.track != Track::Swe => match ((p + rng.f64() * 0.6 - 0.3).clamp(0.0, 1.0) * 20.0).round() / 20.0 {
            s if s >= 0.7 => ("pass", s, None),
            s => ("fail", s, Some("AssertionError")),
        },
        _ if rng.f64() < p => ("pass", 1.0, None),
        _ if rng.f64() < 0.2 => ("fail", 0.0, Some("PatchApplyError")),
        _ => (
            "fail",
            if rng.f64() < 0.15 { [0.33, 0.5, 0.67, 0.75][rng.usize(0..4)] } else { 0.0 },
            Some("AssertionError"),
        ),
    }
}

pub(super) fn make_cell<'t>(rng: &mut Rng, run: &RunSpec, key: &Key, task_id: &str, texts: &'t Texts) -> Cell<'t> {
    let (h, m, task) = (&HARNESSES[key.h], &MODELS[key.m], &TASKS[key.task]);
    let (exit, success, error_class) = outcome(rng, run, key);
    let error_message = error_class.map(|class| logs::error_message(rng, class, key.task, m.vendor, success));
    let (mut total, mut ttfa, mut phases) = (Spend::default(), 0, Vec::new());
    let metadata = if task.track == Track::MultiPhase {
        phases = make_phases(rng, key, exit);
        for (k, p) in phases.iter().enumerate() {
            (0..5).for_each(|i| total.usage[i] += p.spend.usage[i]);
            (total.cost, total.ms, total.calls) =
                (total.cost + p.spend.cost, total.ms + p.spend.ms, total.calls + p.spend.calls);
            total.tools += p.spend.tools;
            ttfa = if k == 1 { total.ms } else { ttfa };
        }
        (total.cost, total.ms) = (round6(total.cost), total.ms + rng.i64(2000..9000));
        phases_json(&phases, reviewer(h, m))
    } else {
        let calls = rng.u32(h.calls.0..h.calls.1) * if task.track == Track::Swe { 100 } else { 60 } / 100;
        total = spend(rng, h, m, if exit == "pass" { calls } else { calls * 13 / 10 });
        ttfa = total.ms * rng.i64(25..70) / 100;
        format!("{{\"harness_version\":\"{}\",\"sandbox\":\"docker\",\"max_turns\":{}}}", h.version, 50 * (key.h + 1))
    };
    total.ms = if exit == "timeout" { 1_800_000 + rng.i64(0..4000) } else { total.ms };
    let big = exit == "timeout" || rng.f64() < 0.02;
    let (stdout, stderr) = texts.logs(rng, key, task_id, big);
    let attempted = !matches!(exit, "error" | "infra_error");
    Cell {
        exit,
        success,
        error_class,
        error_message,
        usage: total.usage,
        cost: total.cost,
        latency: total.ms,
        ttfa: ttfa.min(total.ms),
        api_calls: total.calls,
        tool_calls: total.tools,
        diff: (attempted || rng.bool()).then(|| texts.diff(rng, key)),
        test_output: (attempted && exit != "timeout").then(|| texts.tests(rng, key, exit == "pass", success)),
        metadata,
        stdout,
        stderr,
        retry: if exit == "infra_error" { 5 } else { i64::from(rng.u8(0..100) < 4) },
        phases_table: !phases.is_empty() && rng.bool(),
        phases,
    }
}

//! Harness logs and error messages for the demo generator ([`super`]): stdout and stderr
//! of a size in a range (with ANSI escapes and FAKE credentials on request), Python
//! tracebacks, and error messages per error class. Every builder draws from the caller's
//! [`Rng`], so output is deterministic per seed; FAKE secrets are assembled at run time.

use std::fmt::Write as _;
use std::ops::Range;

use fastrand::Rng;

use super::data::{HOSTILE_TASK, Harness, Model, TASKS, Track, pick};

/// What a log is about: harness, model, task id and files.
pub(super) struct LogCtx<'a> {
    pub(super) harness: &'a Harness,
    pub(super) model: &'a Model,
    pub(super) task: &'a str,
    pub(super) files: [&'a str; 2],
}

// Log line templates: {t} clock, {n}/{N} a small/large number, {p} a percentage, {f} a task
// file, {c} a command, {m} the model, {e} its API endpoint, {g}/{r} green/reset with colours.
const STDOUT_LINES: [&str; 8] = [
    "[{t}] assistant: Let me look at how the failing path is reached before changing anything.",
    "[{t}] assistant: The fixture builds the object without a session; I'll reproduce that first.",
    "[{t}] assistant: I'll make the smallest change and run the focused tests.",
    "[{t}] assistant: Two tests still fail; the second one depends on the ordering of the dict.",
    "[{t}] tool_use Read {f}\n[{t}] tool_result ok ({n} lines)",
    "[{t}] tool_use Edit {f} (+{n} -{n})\n[{t}] {g}✓ applied{r}",
    "[{t}] tool_use Bash `{c}`\n[{t}] tool_result exit=0 ({n} lines)",
    "[{t}] tool_use Grep \"def merge\" src\n[{t}] tool_result ok ({n} matches)",
];
const STDERR_LINES: [&str; 8] = [
    "{t} DEBUG sandbox: exec [\"bash\", \"-lc\", \"{c}\"] pid={N}",
    "{t} INFO  http: POST {e} 200 in {N}ms (model={m}, input={N}, output={n})",
    "{t} WARN  http: 429 rate_limit_error; retrying in {N}ms (attempt 2/6)",
    "/usr/local/lib/python3.11/site-packages/_pytest/config/__init__.py:1441: PytestConfigWarning: Unknown config option: asyncio_mode",
    "{t} DEBUG tool: Read {f} -> {N} bytes",
    // Only with colours: escapes, carriage-return progress with backspaces, a bell.
    "\x1b[33mwarning\x1b[0m: unused variable: \x1b[1m`retries`\x1b[0m\n  \x1b[34m-->\x1b[0m {f}:{n}:9",
    "\r\x1b[2K[####------] {p}% resolving dependencies |\x08/\x08-\x08\\",
    "\x07\x1b[1;31mERROR\x1b[0m sandbox: process {N} exited with signal 15 (SIGTERM)",
];
const ENDPOINTS: [(&str, &str); 2] =
    [("openai", "/v1/responses"), ("google", "/v1beta/models/gemini-2.5-pro:generateContent")];
const COMMANDS: [&str; 5] =
    ["python -m pytest -x -q", "cargo test --quiet", "git diff --stat", "rg -n \"def merge\" src", "npm test -- --run"];

fn expand(s: &mut String, template: &str, rng: &mut Rng, cx: &LogCtx<'_>, ms: u64, ansi: bool) {
    let mut parts = template.split('{');
    s.push_str(parts.next().unwrap_or_default());
    for part in parts {
        let (key, rest) = part.split_at(part.len().min(2));
        let _ = match key {
            "t}" => write!(s, "{:02}:{:02}:{:02}.{:03}", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000),
            "n}" => write!(s, "{}", rng.u32(2..900)),
            "N}" => write!(s, "{}", rng.u32(900..90_000)),
            "p}" => write!(s, "{}", rng.u32(1..100)),
            "f}" => write!(s, "{}", cx.files[rng.usize(0..2)]),
            "c}" => write!(s, "{}", pick(rng, &COMMANDS)),
            "m}" => write!(s, "{}", cx.model.name),
            "e}" => write!(s, "{}", ENDPOINTS.iter().find(|e| e.0 == cx.model.vendor).map_or("/v1/messages", |e| e.1)),
            "g}" | "r}" if !ansi => Ok(()),
            "g}" => write!(s, "\x1b[32m"),
            "r}" => write!(s, "\x1b[0m"),
            _ => write!(s, "{{{key}"),
        };
        s.push_str(rest);
    }
    s.push('\n');
}

/// The harness's stdout: a header, then assistant turns and tool calls, of a size in `size`.
pub(super) fn stdout_log(rng: &mut Rng, cx: &LogCtx<'_>, size: Range<usize>, ansi: bool) -> String {
    let (h, target) = (cx.harness, rng.usize(size));
    let mut s = String::with_capacity(target + 256);
    let (bold, reset) = if ansi { ("\x1b[1m", "\x1b[0m") } else { ("", "") };
    let _ = writeln!(
        s,
        "{bold}{} {}{reset} · model={} · task={} · sandbox=docker",
        h.name, h.version, cx.model.name, cx.task
    );
    let mut ms = 0;
    while s.len() < target {
        ms += rng.u64(300..9000);
        expand(&mut s, pick(rng, &STDOUT_LINES), rng, cx, ms, ansi);
    }
    s
}

/// The harness's stderr, of a size in `size`: debug and warning lines; with `ansi` also colour
/// escapes, carriage-return progress, backspaces and a bell; with `secrets` FAKE credentials
/// (an AWS key pair, a GitHub token) and an e-mail address, for the redaction demo.
pub(super) fn stderr_log(rng: &mut Rng, cx: &LogCtx<'_>, size: Range<usize>, ansi: bool, secrets: bool) -> String {
    let target = rng.usize(size);
    let mut s = String::with_capacity(target + 512);
    if secrets {
        let mut token = |n: usize| -> String { (0..n).map(|_| rng.alphanumeric()).collect() };
        let (key_id, secret, gh) = (token(8).to_uppercase(), token(30), token(28));
        let _ = write!(s, "00:00:00.412 DEBUG env: AWS_ACCESS_KEY_ID=AKIAFAKEDEMO{key_id} ");
        let _ = writeln!(s, "AWS_SECRET_ACCESS_KEY=FAKE/demo/{secret} GITHUB_TOKEN=ghp_FAKEdemo{gh}");
        s.push_str(
            "00:00:00.415 DEBUG git: -c user.email=dana.whitfield@example.com commit -m \"agent: apply patch\"\n",
        );
    }
    let (kinds, mut ms) = (if ansi { 8 } else { 5 }, 500);
    while s.len() < target {
        ms += rng.u64(5..4000);
        expand(&mut s, STDERR_LINES[rng.usize(0..kinds)], rng, cx, ms, ansi);
    }
    s
}

// The harness's stack, outermost first, and the frames of a library error it wraps.
const FRAMES: [(&str, &str, &str); 6] = [
    (
        "/opt/evals/harness/runner.py",
        "run_cell",
        "result = await self.agent.run(task, timeout=self.limits.wall_clock_s)",
    ),
    ("/opt/evals/harness/agents/base.py", "run", "return await self._loop(task, budget=self.budget)"),
    ("/opt/evals/harness/agents/base.py", "_loop", "outcome = await self.tools.call(step.tool, step.arguments)"),
    ("/opt/evals/harness/tools/registry.py", "call", "return await tool.invoke(arguments, sandbox=self.sandbox)"),
    ("/opt/evals/harness/tools/bash.py", "invoke", "rc, out = await sandbox.exec(command, timeout=self.timeout_s)"),
    ("/opt/evals/harness/sandbox.py", "exec", "raise self._error_for(rc, stderr) from exc"),
];
const CAUSE: &str = "Traceback (most recent call last):
  File \"/usr/local/lib/python3.11/site-packages/docker/api/exec_api.py\", line 169, in exec_start
    res = self._post_json(self._url('/exec/{0}/start', exec_id), data=data, stream=True)
  File \"/usr/local/lib/python3.11/site-packages/docker/api/client.py\", line 281, in _raise_for_status
    raise create_api_error_from_http_exception(e) from e
docker.errors.APIError: 500 Server Error for http+docker://localhost/v1.45/exec/3f9c2a/start: Internal Server Error \
(\"container 3f9c2a is not running\")

The above exception was the direct cause of the following exception:

";

/// A Python traceback of 3 to 6 harness frames ending in `last`, half the time chained to a
/// library error (about 400 to 2,000 characters in all).
fn traceback(rng: &mut Rng, last: &str) -> String {
    let mut s = String::from(if rng.bool() { CAUSE } else { "" }) + "Traceback (most recent call last):\n";
    for (file, func, code) in &FRAMES[..rng.usize(3..=6)] {
        let _ = write!(s, "  File \"{file}\", line {}, in {func}\n    {code}\n", rng.u32(30..900));
    }
    s + last
}

const HOSTILE: &str = "AssertionError: title \"Zoë's café & <script>alert(1)</script>\" was rendered unescaped; \
    expected &lt;script&gt;alert(1)&lt;/script&gt; ✗";
const SKIPPED: &str = "skipped: environment build failed for swe/sphinx-8721 under aider; task quarantined until \
    the image is rebuilt.\nERROR: Cannot install sphinx==3.5.0.dev20210110 because these package versions have \
    conflicting dependencies.\nThe conflict is caused by:\n    sphinx 3.5.0.dev20210110 depends on docutils<0.17 and \
    >=0.12\n    aider-chat 0.86.1 depends on docutils>=0.18\n\nTo fix this you could try to: 1. loosen the range of \
    package versions you've specified 2. remove package versions to allow pip to attempt to solve the conflict";

/// The skip reason of aider's quarantined task (long, multi-line pip output).
pub(super) fn quarantined(harness: &str, task: &str) -> Option<&'static str> {
    (harness == "aider" && task == "swe/sphinx-8721").then_some(SKIPPED)
}

/// An error message for `class`: one line, or a multi-line Python traceback for some classes.
pub(super) fn error_message(rng: &mut Rng, class: &str, task: usize, vendor: &str, success: f64) -> String {
    let (files, graded) = (TASKS[task].files, TASKS[task].track != Track::Swe);
    let last = match class {
        "AssertionError" if task == HOSTILE_TASK => return format!("{HOSTILE} (score {success:.2} < 0.70)"),
        "AssertionError" if graded => {
            let weakest = pick(rng, &["rollout plan", "risk analysis", "correctness", "test coverage"]);
            return format!("AssertionError: rubric score {success:.2} below pass threshold 0.70 (weakest: {weakest})");
        }
        "AssertionError" => {
            format!("AssertionError: {} of {} tests failed in {}", rng.u8(1..4), rng.u8(6..48), files[1])
        }
        "PatchApplyError" => {
            let (f, l) = (files[0], rng.u32(40..600));
            return format!(
                "PatchApplyError: error: patch failed: {f}:{l}\nerror: {f}: patch does not apply\nHunk #2 FAILED at {l}."
            );
        }
        "Timeout" => {
            let (s, cmd) = (rng.u32(60..900), if files[0].ends_with(".rs") { "cargo test" } else { "pytest -x" });
            return format!(
                "Timeout: cell exceeded the 1800 s wall-clock limit (last tool call: `{cmd}`, running {s} s)"
            );
        }
        "ToolCrash" => "ToolCrash: tool 'Bash' exited with signal 9 (SIGKILL): sandbox memory.max=4G reached".into(),
        _ => format!(
            "RateLimitError: 429 rate_limit_error from {vendor} after 5 retries: per-minute token limit exceeded"
        ),
    };
    if class == "ToolCrash" || rng.f64() < 0.4 { traceback(rng, &last) } else { last }
}

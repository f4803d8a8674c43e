//! Static material for the demo generator ([`super`]): harnesses, models and tasks, and the
//! builders of the free-text columns (unified diffs, test output, harness logs, error messages).
//! Every builder draws from the caller's [`Rng`], so output is deterministic per seed. The
//! FAKE secrets are assembled at run time, so no secret-shaped literal is in the source.

use std::fmt::Write as _;
use std::ops::Range;

use fastrand::Rng;

/// A task track of the spec (evals-reporting §1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Track {
    Swe,
    OpenEnded,
    MultiPhase,
}

impl Track {
    /// The value stored in `run_results.track`.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Track::Swe => "swe",
            Track::OpenEnded => "open_ended",
            Track::MultiPhase => "multi_phase",
        }
    }
}

/// An agent harness: `native` is the vendor it is tuned for (`""`: none), `caching` whether it
/// uses prompt caching, `calls` the range of API calls of one swe cell.
pub(super) struct Harness {
    pub(super) name: &'static str,
    pub(super) version: &'static str,
    pub(super) native: &'static str,
    pub(super) caching: bool,
    pub(super) calls: (u32, u32),
}

#[rustfmt::skip]
pub(super) const HARNESSES: [Harness; 3] = [
    Harness { name: "claude-code", version: "2.0.14", native: "anthropic", caching: true, calls: (14, 64) },
    Harness { name: "codex-cli", version: "0.58.0", native: "openai", caching: true, calls: (10, 50) },
    Harness { name: "aider", version: "0.86.1", native: "", caching: false, calls: (3, 14) },
];

/// A model: `prices` in US dollars per million tokens (input, output and reasoning, cache read,
/// cache write); `skill` the baseline pass probability; `reasoning` tokens per output token.
pub(super) struct Model {
    pub(super) name: &'static str,
    pub(super) vendor: &'static str,
    pub(super) prices: [f64; 4],
    pub(super) skill: f64,
    pub(super) ms_per_call: u64,
    pub(super) reasoning: f64,
}

/// The demo's nightly runs use the first four; the newest nightly and the big run add haiku.
#[rustfmt::skip]
pub(super) const MODELS: [Model; 5] = [
    Model { name: "claude-sonnet-4-5", vendor: "anthropic", prices: [3.0, 15.0, 0.3, 3.75], skill: 0.83, ms_per_call: 5200, reasoning: 0.0 },
    Model { name: "claude-opus-4-5", vendor: "anthropic", prices: [5.0, 25.0, 0.5, 6.25], skill: 0.98, ms_per_call: 7600, reasoning: 0.2 },
    Model { name: "gpt-5-codex", vendor: "openai", prices: [1.25, 10.0, 0.125, 0.0], skill: 0.8, ms_per_call: 6400, reasoning: 0.9 },
    Model { name: "gemini-2.5-pro", vendor: "google", prices: [1.25, 10.0, 0.125, 0.0], skill: 0.54, ms_per_call: 5800, reasoning: 0.7 },
    Model { name: "claude-haiku-4-5", vendor: "anthropic", prices: [1.0, 5.0, 0.1, 1.25], skill: 0.52, ms_per_call: 2600, reasoning: 0.0 },
];

/// A task: id `<track>/<name>` (never containing `__`), the two files it touches (source and
/// test, or document and source) and a difficulty subtracted from the pass probability.
pub(super) struct Task {
    pub(super) id: &'static str,
    pub(super) track: Track,
    pub(super) files: [&'static str; 2],
    pub(super) difficulty: f64,
}

const fn t(id: &'static str, track: Track, a: &'static str, b: &'static str, difficulty: f64) -> Task {
    Task { id, track, files: [a, b], difficulty }
}

/// Index of the task whose id carries markup, quotes, `&` and non-ASCII letters.
pub(super) const HOSTILE_TASK: usize = 23;
use Track::{MultiPhase as M, OpenEnded as O, Swe as S};
#[rustfmt::skip]
pub(super) const TASKS: [Task; 36] = [
    t("swe/django-11099", S, "django/contrib/auth/validators.py", "tests/auth_tests/test_validators.py", -0.15),
    t("swe/django-13658", S, "django/core/management/__init__.py", "tests/admin_scripts/tests.py", -0.05),
    t("swe/sympy-20590", S, "sympy/core/_print_helpers.py", "sympy/core/tests/test_basic.py", 0.1),
    t("swe/requests-2317", S, "requests/sessions.py", "tests/test_requests.py", -0.1),
    t("swe/flask-4992", S, "src/flask/config.py", "tests/test_config.py", 0.0),
    t("swe/astropy-12907", S, "astropy/modeling/separable.py", "astropy/modeling/tests/test_separable.py", 0.25),
    t("swe/pytest-5692", S, "src/_pytest/junitxml.py", "testing/test_junitxml.py", 0.05),
    t("swe/scikit-learn-13142", S, "sklearn/mixture/base.py", "sklearn/mixture/tests/test_gaussian_mixture.py", 0.15),
    t("swe/matplotlib-23314", S, "lib/mpl_toolkits/mplot3d/axes3d.py", "lib/matplotlib/tests/test_axes.py", 0.2),
    t("swe/sphinx-8721", S, "sphinx/ext/viewcode.py", "tests/test_ext_viewcode.py", 0.1),
    t("swe/xarray-4094", S, "xarray/core/dataarray.py", "xarray/tests/test_dataset.py", 0.3),
    t("swe/pylint-7080", S, "pylint/lint/expand_modules.py", "tests/test_self.py", 0.35),
    t("open_ended/write-rfc-cache", O, "docs/rfcs/0042-response-cache.md", "src/pricing/cache.py", -0.05),
    t("open_ended/design-rate-limiter", O, "docs/design/rate-limiter.md", "src/ratelimit/bucket.rs", 0.05),
    t("open_ended/explain-flaky-test", O, "docs/notes/flaky-test-analysis.md", "tests/test_scheduler.py", 0.1),
    t("open_ended/incident-postmortem", O, "docs/postmortems/2026-11-03-outage.md", "ops/alerts.py", -0.1),
    t("open_ended/api-deprecation-plan", O, "docs/rfcs/0051-v1-deprecation.md", "web/src/api/client.ts", 0.0),
    t("open_ended/threat-model-webhooks", O, "docs/security/webhooks-threat-model.md", "src/webhooks/verify.rs", 0.2),
    t("open_ended/port-bash-to-python", O, "docs/notes/deploy-port.md", "scripts/deploy.py", 0.05),
    t("open_ended/add-observability", O, "docs/design/tracing.md", "src/telemetry/spans.rs", 0.15),
    t("open_ended/summarise-perf-regression", O, "docs/notes/p99-regression.md", "bench/latency.py", 0.0),
    t("open_ended/cli-ux-review", O, "docs/reviews/cli-ux.md", "web/src/cli/help.ts", -0.15),
    t("open_ended/migrate-orm-docs", O, "docs/guides/orm-migration.md", "app/models/orders.py", 0.1),
    t("open_ended/render-\"zoë's-café\"&<script>alert(1)</script>", O, "docs/notes/escaping.md", "web/src/render.ts", 0.25),
    t("multi_phase/refactor-billing", M, "src/billing/invoice.rs", "src/billing/tests.rs", 0.05),
    t("multi_phase/split-monolith-auth", M, "src/auth/session.rs", "tests/auth_flow.rs", 0.25),
    t("multi_phase/add-retry-queue", M, "src/queue/retry.rs", "src/queue/tests.rs", 0.1),
    t("multi_phase/upgrade-tokio", M, "src/server/shutdown.rs", "tests/graceful_shutdown.rs", 0.0),
    t("multi_phase/schema-migration-orders", M, "app/migrations/0031_orders_split.py", "app/tests/test_orders.py", 0.15),
    t("multi_phase/feature-flag-cleanup", M, "web/src/checkout/Checkout.tsx", "web/src/checkout/Checkout.test.ts", -0.15),
    t("multi_phase/ts-strict-mode", M, "web/src/format/price.ts", "web/src/format/price.test.ts", -0.05),
    t("multi_phase/rust-error-types", M, "src/billing/charge.rs", "src/billing/tests.rs", 0.0),
    t("multi_phase/cache-invalidation", M, "src/cache/invalidate.rs", "tests/cache_coherence.rs", 0.35),
    t("multi_phase/pagination-api", M, "web/src/api/orders.ts", "web/src/api/orders.test.ts", 0.05),
    t("multi_phase/search-indexer", M, "app/search/indexer.py", "app/tests/test_indexer.py", 0.2),
    t("multi_phase/payment-webhooks", M, "src/webhooks/stripe.rs", "src/webhooks/tests.rs", 0.1),
];

// Hunks: the first line is the `@@` context, the rest the body (' ', '-' or '+' prefixed);
// the last of each language is for test files.
const PY_HUNKS: [&str; 3] = [
    r#"class ASCIIUsernameValidator(validators.RegexValidator):
 @deconstructible
 class ASCIIUsernameValidator(validators.RegexValidator):
-    regex = r'^[\w.@+-]+$'
+    regex = r'\A[\w.@+-]+\Z'
     message = _(
         'Enter a valid username. This value may contain only English letters, '"#,
    r#"def merge_setting(request_setting, session_setting, dict_class=OrderedDict):
     if session_setting is None:
         return request_setting
-    merged_setting = dict_class(to_key_val_list(session_setting))
+    merged_setting = dict_class(to_key_val_list(session_setting or {}))
     merged_setting.update(to_key_val_list(request_setting))
+    # Keys set to None in the request unset the session default.
     none_keys = [k for (k, v) in merged_setting.items() if v is None]"#,
    r#"class UsernameValidatorsTests(SimpleTestCase):
                 with self.assertRaises(ValidationError):
                     v(invalid)
 
+    def test_trailing_newline_rejected(self):
+        for v in (validators.UnicodeUsernameValidator(), validators.ASCIIUsernameValidator()):
+            with self.assertRaises(ValidationError):
+                v("trailingnewline\n")"#,
];
const RS_HUNKS: [&str; 3] = [
    r#"impl Invoice {
     pub fn total(&self) -> Money {
-        self.lines.iter().map(|l| l.amount).sum()
+        let subtotal: Money = self.lines.iter().map(|l| l.amount).sum();
+        subtotal.round_half_even(self.currency.minor_units())
     }"#,
    r#"pub enum BillingError {
-pub fn charge(customer: &Customer, amount: Money) -> Result<Receipt, String> {
-    let gateway = Gateway::connect().map_err(|e| e.to_string())?;
+pub fn charge(customer: &Customer, amount: Money) -> Result<Receipt, BillingError> {
+    let gateway = Gateway::connect().map_err(BillingError::Gateway)?;
     if amount.is_zero() {
-        return Err("zero amount".into());
+        return Err(BillingError::ZeroAmount { customer: customer.id });
     }"#,
    r#"mod tests {
     #[test]
     fn rounds_half_even() {
         let inv = invoice(&[("1.005", 1), ("2.015", 1)]);
         assert_eq!(inv.total(), Money::from_str("3.02").unwrap());
+        assert_eq!(inv.total().minor_units(), 302);
+        assert!(charge(&customer(), Money::ZERO).is_err());
     }"#,
];
const TS_HUNKS: [&str; 3] = [
    r#"export class ApiError extends Error {
-export async function listOrders(page: number): Promise<Order[]> {
-  const res = await fetch(`/api/orders?page=${page}`);
-  return res.json();
+export async function listOrders(cursor?: string, limit = 50): Promise<Page<Order>> {
+  const params = new URLSearchParams({ limit: String(limit) });
+  if (cursor) params.set("cursor", cursor);
+  const res = await fetch(`/api/orders?${params}`);
+  if (!res.ok) throw new ApiError(res.status, await res.text());
+  return (await res.json()) as Page<Order>;
 }"#,
    r#"export type CurrencyCode = "USD" | "EUR" | "GBP";
-export function formatPrice(amount, currency) {
+export function formatPrice(amount: number, currency: CurrencyCode): string {
   return new Intl.NumberFormat("en-US", { style: "currency", currency }).format(amount);
 }"#,
    r#"describe("listOrders", () => {
   it("passes the cursor through", async () => {
-    expect(await listOrders(2)).toHaveLength(50);
+    const page = await listOrders("b64:MjA=");
+    expect(page.items).toHaveLength(50);
+    expect(page.next).toBe("b64:NzA=");
   });"#,
];
const DOC: &str = "## Context

The pricing API recomputes every quote; p99 latency doubled after the catalogue grew.

## Proposal

- Cache quotes per (catalogue version, customer tier) with a 5-minute TTL.
- Invalidate on catalogue publish; never cache responses that carry a discount code.
- Emit `cache.hit` / `cache.miss` counters and a staleness histogram.

## Rollout and risks

1. Shadow mode for one week, comparing cached and fresh quotes; then 10%, then 100%.
2. Stale prices after an out-of-band edit are bounded by the publish hook and the TTL.";

/// Random lowercase hex digits.
pub(super) fn hex(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| char::from_digit(rng.u32(0..16), 16).unwrap_or('0')).collect()
}

pub(super) fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.usize(0..items.len())]
}

/// A unified diff over `files`: one to three `@@` hunks per code file, a new file for Markdown.
pub(super) fn diff(rng: &mut Rng, files: &[&str]) -> String {
    let mut out = String::with_capacity(2048);
    for file in files {
        let (a, b) = (hex(rng, 7), hex(rng, 7));
        if file.ends_with(".md") {
            let title = file.rsplit('/').next().unwrap_or(file).trim_end_matches(".md").replace('-', " ");
            let lines: Vec<&str> = DOC.lines().take(rng.usize(8..=16)).collect();
            let _ = writeln!(out, "diff --git a/{file} b/{file}\nnew file mode 100644\nindex 0000000..{b}");
            let _ = writeln!(out, "--- /dev/null\n+++ b/{file}\n@@ -0,0 +1,{} @@\n+# {title}\n+", lines.len() + 2);
            lines.iter().for_each(|l| out.extend(["+", l, "\n"]));
            continue;
        }
        let pool = match file.rsplit('.').next() {
            Some("rs") => RS_HUNKS,
            Some("ts" | "tsx") => TS_HUNKS,
            _ => PY_HUNKS,
        };
        let _ = writeln!(out, "diff --git a/{file} b/{file}\nindex {a}..{b} 100644\n--- a/{file}\n+++ b/{file}");
        let (mut line, mut delta) = (rng.i64(8..90), 0);
        let picks: &[usize] = if file.contains("test") { &[2] } else { [&[0, 1][..], &[0], &[1]][rng.usize(0..3)] };
        for &k in picks {
            let (header, body) = pool[k].split_once('\n').unwrap_or_default();
            let old = body.lines().filter(|l| !l.starts_with('+')).count() as i64;
            let new = body.lines().filter(|l| !l.starts_with('-')).count() as i64;
            let _ = writeln!(out, "@@ -{line},{old} +{},{new} @@ {header}\n{body}", line + delta);
            (delta, line) = (delta + new - old, line + old + rng.i64(12..160));
        }
    }
    out
}

const PY_TESTS: [&str; 3] = ["test_trailing_newline_rejected", "test_merge_none_unsets_default", "test_nested_lookup"];
const RS_TESTS: [&str; 4] = ["rounds_half_even", "zero_amount_is_rejected", "retries_back_off", "duplicate_is_ignored"];
const ASSERTS: [&str; 3] = [
    "AssertionError: ValidationError not raised",
    "AssertionError: Lists differ: ['a', 'b'] != ['a', 'b', 'c']",
    "AssertionError: expected status 200, got 500",
];
const PYTEST_HEAD: &str = "============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0
rootdir: /testbed
configfile: pyproject.toml";
const PYTEST_SUMMARY: &str = "=========================== short test summary info ============================";
const RUST_PANIC: &str = "assertion `left == right` failed\n  left: 301\n right: 302
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n";
const VITEST_FAIL: &str =
    "   × returns the next cursor when more pages exist\n     → expected undefined to be 'b64:MjA='";

/// Test output for a cell: a grader rubric (open_ended), else `cargo test`, vitest or pytest
/// style by the language of the task's files.
pub(super) fn test_output(rng: &mut Rng, task: &Task, passed: bool, score: f64) -> String {
    let (src, file, total, secs) = (task.files[0], task.files[1], rng.usize(6..48), rng.f64() * 6.0);
    let failed = if passed { 0 } else { rng.usize(1..4) };
    let (ok, verdict) = (total - failed, if passed { "ok" } else { "FAILED" });
    let mut s = String::with_capacity(1500);
    if task.track == Track::OpenEnded {
        s.push_str("grader: rubric v3 (5 criteria, weighted, pass threshold 0.70)\n");
        for c in ["completeness", "correctness", "clarity", "actionability", "risk analysis"] {
            let _ = writeln!(s, "  {c:<14} {:.2}", (score + rng.f64() * 0.3 - 0.15).clamp(0.0, 1.0));
        }
        let _ = write!(s, "weighted score: {score:.2} -> {}", if passed { "PASS" } else { "FAIL" });
    } else if src.ends_with(".rs") {
        let module = src.trim_start_matches("src/").trim_end_matches(".rs").replace('/', "::");
        let name = |i: usize| format!("{module}::tests::{}_{}", RS_TESTS[i % 4], i / 4);
        let _ = writeln!(s, "running {total} tests");
        (0..total).for_each(|i| _ = writeln!(s, "test {} ... {}", name(i), if i < failed { "FAILED" } else { "ok" }));
        if failed > 0 {
            let (name, line) = (name(0), rng.u32(40..400));
            let _ =
                write!(s, "\nfailures:\n\n---- {name} stdout ----\n\nthread '{name}' panicked at {src}:{line}:9:\n");
            s.push_str(RUST_PANIC);
        }
        let _ =
            write!(s, "test result: {verdict}. {ok} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out");
        let _ = write!(s, "; finished in {secs:.2}s");
    } else if src.ends_with(".ts") || src.ends_with(".tsx") {
        let _ = writeln!(s, " RUN  v2.1.4 /workspace\n\n ✓ web/src/api/client.test.ts ({total} tests) 48ms");
        if failed > 0 {
            let _ = writeln!(s, " × {file} (4 tests | {failed} failed) 31ms\n{VITEST_FAIL}");
        }
        let files = if failed > 0 { "1 failed | 1 passed" } else { "2 passed" };
        let _ =
            write!(s, "\n Test Files  {files} (2)\n      Tests  {failed} failed | {} passed ({})", ok + 4, total + 4);
        let _ = write!(s, "\n   Duration  {secs:.2}s");
    } else {
        let _ = write!(s, "{PYTEST_HEAD}\ncollected {total} items\n\n{file} ");
        (0..total).for_each(|i| s.push(if i == 3 && failed > 0 { 'F' } else { '.' }));
        let (assert, line) = (pick(rng, &ASSERTS), rng.u32(20..900));
        s.push_str(" [100%]\n\n");
        for name in &PY_TESTS[..failed] {
            let _ = write!(s, "_______________ Tests.{name} _______________\n\n    def {name}(self):\n");
            let _ =
                writeln!(s, ">       self.check(fixture('{name}'))\nE       {assert}\n\n{file}:{line}: AssertionError");
        }
        if failed > 0 {
            let _ = writeln!(s, "{PYTEST_SUMMARY}");
            PY_TESTS[..failed].iter().for_each(|n| s.extend(["FAILED ", file, "::Tests::", n, " - ", assert, "\n"]));
        }
        let _ = write!(s, "================== {failed} failed, {ok} passed in {secs:.2}s ==================");
    }
    s
}

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

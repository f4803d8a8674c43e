//! Static material for the demo generator ([`super`]): harnesses, models and tasks, and the
//! builders of the diff and test-output columns (logs and error messages are in
//! `demo_logs.rs`).
//! Every builder draws from the caller's [`Rng`], so output is deterministic per seed. The
//! FAKE secrets are assembled at run time, so no secret-shaped literal is in the source.

use std::fmt::Write as _;

use fastrand::Rng;

/// A task track (docs/results-db.md: `swe`, `open_ended`, `multi_phase`).
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

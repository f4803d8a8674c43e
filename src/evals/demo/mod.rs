//! `sightline evals demo`: writes a new, realistic `results.db` so a first dashboard is
//! populated at once, and a large single run for benchmarks. The database is created with the
//! harness DDL (`assets/results-schema.sql`), left in WAL mode, one transaction per run.
//!
//! Invariants:
//! - Never overwrites: the file is created exclusively, a leftover `-wal`/`-journal` beside it is
//!   refused too (SQLite would replay it into the new file), and a failed write removes the file.
//! - Deterministic: every value comes from one [`Rng`] seeded with [`DemoOptions::seed`] and
//!   timestamps are fixed bases plus generated offsets, never the wall clock.
//! - Cell ids are `<harness>__<model>__<task_id>__r<repeat>` of the row's own columns, and no
//!   harness, model or task id contains `__`.
//! - Only completed and failed cells have `run_results` rows; failed (`error`/`infra_error`
//!   exit classes) and skipped `run_state` rows carry an error text.
//! - Multi-phase cells hold their phases in `harness_metadata.phases` (docs/results-db.md);
//!   about half also have `run_phases` rows, so readers' fallback is exercised.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use fastrand::Rng;
use rusqlite::{Connection, Statement, params};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};

mod data;
use data::{HARNESSES, Harness, MODELS, Model, TASKS, Track};

mod logs;
use logs::LogCtx;

mod cells;
use cells::*;

const SCHEMA: &str = include_str!("../../../assets/results-schema.sql");
type Written<T> = Result<T, DemoError>;

/// What to generate, and from which seed.
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// Seed of the generator; the same seed and scale give the same database contents.
    pub seed: u64,
    pub scale: Scale,
}

/// Size and shape of the generated database.
#[derive(Clone, Copy, Debug)]
pub enum Scale {
    /// The showcase database: two complete runs and one in progress, a few hundred cells each.
    Demo,
    /// One complete run named `bench-<n>` of about `n` cells (whole tasks of 3 repeats × every
    /// harness and model, i.e. a multiple of 45), for benchmarks.
    Cells(usize),
}

/// Why the demo database could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("{0} already exists; choose another path or delete it")]
    Exists(PathBuf),
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What was written: each run with its number of `run_results` rows, then the number of
/// `run_phases` and `reconciliation_results` rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemoSummary {
    pub runs: Vec<(String, usize)>,
    pub phases: usize,
    pub reconciliations: usize,
}

/// Writes a new database at `path` (refuses to overwrite an existing file), in WAL mode, in one
/// transaction per run. On any error the partly written file is removed.
pub fn write_demo(path: &Path, options: &DemoOptions) -> Result<DemoSummary, DemoError> {
    for leftover in [sidecar(path, "-wal"), sidecar(path, "-journal")] {
        if leftover.exists() {
            return Err(DemoError::Exists(leftover));
        }
    }
    OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| match e.kind() {
        ErrorKind::AlreadyExists => DemoError::Exists(path.to_path_buf()),
        _ => DemoError::Io(e),
    })?;
    let written = fill(path, options);
    if written.is_err() {
        for file in [path.to_path_buf(), sidecar(path, "-wal"), sidecar(path, "-shm")] {
            let _ = std::fs::remove_file(file);
        }
    }
    written
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn fill(path: &Path, options: &DemoOptions) -> Result<DemoSummary, DemoError> {
    let mut conn = Connection::open(path)?;
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
    conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536;")?;
    conn.execute_batch(SCHEMA)?;
    let mut rng = Rng::with_seed(options.seed);
    let (runs, texts) = match options.scale {
        Scale::Demo => (demo_runs(), Texts::Fresh),
        Scale::Cells(n) => (vec![bench_run(n)], Texts::pooled(&mut rng)),
    };
    let mut summary = DemoSummary { runs: Vec::new(), phases: 0, reconciliations: 0 };
    for run in &runs {
        let tx = conn.transaction()?;
        let cells = write_run(&tx, run, &texts, &mut rng, &mut summary)?;
        tx.commit()?;
        summary.runs.push((run.name.clone(), cells));
    }
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    conn.close().map_err(|(_, e)| e)?;
    Ok(summary)
}

/// One cell of a run's matrix; `variant > 0` makes a distinct task id (`<id>-v<variant>`).
#[derive(Clone, Copy)]
struct Key {
    h: usize,
    m: usize,
    task: usize,
    variant: u32,
    repeat: u32,
}

/// A run to write. Below 1000 per mille done, the run is in progress: cells are shuffled, the
/// next `lanes` are running and the rest not started. `infra` adds `infra_error` probability.
struct RunSpec {
    name: String,
    start: OffsetDateTime,
    cells: Vec<Key>,
    done_permille: usize,
    infra: f64,
    lanes: usize,
}

/// The complete run whose cells get reconciliation results.
const RECONCILED: &str = "nightly-2026-11-20";

fn grid(models: usize, keep: impl Fn(usize) -> bool, repeats: impl Fn(usize, usize, Track) -> u32) -> Vec<Key> {
    let mut cells = Vec::new();
    for task in (0..TASKS.len()).filter(|&t| keep(t)) {
        for (h, m) in (0..HARNESSES.len()).flat_map(|h| (0..models).map(move |m| (h, m))) {
            let repeats = repeats(h, m, TASKS[task].track);
            cells.extend((0..repeats).map(|repeat| Key { h, m, task, variant: 0, repeat }));
        }
    }
    cells
}

fn demo_runs() -> Vec<RunSpec> {
    // pass@3 groups in the nightlies: swe for the two agentic harnesses with sonnet and gpt-5-codex.
    let swe3 = |h: usize, m: usize, track| if track == Track::Swe && h < 2 && m.is_multiple_of(2) { 3 } else { 1 };
    let ablation = grid(4, |t| t < 4 || TASKS[t].track == Track::MultiPhase, |_, _, _| 3);
    let run = |name: &str, start, cells, done_permille, infra| RunSpec {
        name: name.to_string(),
        start,
        cells,
        done_permille,
        infra,
        lanes: 8,
    };
    vec![
        run(RECONCILED, datetime!(2026-11-20 02:00 UTC), grid(4, |_| true, swe3), 1000, 0.0),
        run("ablation-reviewer", datetime!(2026-11-18 14:00 UTC), ablation, 1000, 0.0),
        run("nightly-2026-11-21", datetime!(2026-11-21 02:00 UTC), grid(5, |_| true, swe3), 580, 0.04),
    ]
}

/// Whole tasks of 3 repeats × every harness and model, as many as come nearest to `n` cells.
fn bench_run(n: usize) -> RunSpec {
    let (groups, per_task) = (HARNESSES.len() * MODELS.len(), 3 * HARNESSES.len() * MODELS.len());
    let tasks = if n == 0 { 0 } else { ((n + per_task / 2) / per_task).max(1) };
    let key = |i: usize| {
        let (k, r) = (i / per_task, i % per_task);
        let (task, variant, repeat) = (k % TASKS.len(), (k / TASKS.len()) as u32, (r / groups) as u32);
        Key { h: r % groups / MODELS.len(), m: r % MODELS.len(), task, variant, repeat }
    };
    let (cells, start) = ((0..tasks * per_task).map(key).collect(), datetime!(2026-11-22 00:00 UTC));
    RunSpec { name: format!("bench-{n}"), start, cells, done_permille: 1000, infra: 0.0, lanes: 64 }
}

/// `2026-11-21T09:30:00.123456+00:00`: `start` plus `ms`, with microseconds derived from `ms`.
fn stamp(start: OffsetDateTime, ms: i64) -> String {
    let t = start + Duration::microseconds(ms * 1000 + (ms * 7919).rem_euclid(1000));
    let (date, time) = (t.date(), t.time());
    let (y, mo, d, h, mi, s) =
        (date.year(), u8::from(date.month()), date.day(), time.hour(), time.minute(), time.second());
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:06}+00:00", time.microsecond())
}

const INSERT_RESULT: &str = "INSERT INTO run_results VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, \
    ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)";
const INSERT_STATE: &str = "INSERT INTO run_state VALUES (?1, ?2, ?3, ?4, ?5)";
const INSERT_PHASE: &str =
    "INSERT INTO run_phases VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
const INSERT_RECON: &str = "INSERT INTO reconciliation_results VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

fn write_run(db: &Connection, run: &RunSpec, texts: &Texts, rng: &mut Rng, sum: &mut DemoSummary) -> Written<usize> {
    let (mut results, mut states) = (db.prepare(INSERT_RESULT)?, db.prepare(INSERT_STATE)?);
    let (mut phases, mut recons) = (db.prepare(INSERT_PHASE)?, db.prepare(INSERT_RECON)?);
    let mut order: Vec<usize> = (0..run.cells.len()).collect();
    if run.done_permille < 1000 {
        rng.shuffle(&mut order);
    }
    let done = run.cells.len() * run.done_permille / 1000;
    let (mut lanes, mut written) = (vec![0_i64; run.lanes], 0);
    for (pos, key) in order.iter().map(|&i| run.cells[i]).enumerate().take(done + run.lanes) {
        let lane = (0..lanes.len()).min_by_key(|&l| lanes[l]).unwrap_or(0);
        let (started, (h, m), task) = (lanes[lane], (&HARNESSES[key.h], &MODELS[key.m]), &TASKS[key.task]);
        let task_id =
            if key.variant == 0 { Cow::Borrowed(task.id) } else { format!("{}-v{}", task.id, key.variant).into() };
        let id = format!("{}__{}__{task_id}__r{}", h.name, m.name, key.repeat);
        let budget_cut = run.done_permille < 1000 && m.name == "gemini-2.5-pro" && rng.f64() < 0.12;
        let quarantined = logs::quarantined(h.name, task.id).filter(|_| !run.name.starts_with("bench-"));
        let skipped = quarantined.or(budget_cut.then_some(BUDGET));
        if pos >= done || skipped.is_some() {
            let (status, error) = if pos >= done { ("running", None) } else { ("skipped", skipped) };
            lanes[lane] = if pos >= done { i64::MAX } else { started + rng.i64(800..3000) };
            states.execute(params![run.name, id, status, error, stamp(run.start, started)])?;
            continue;
        }
        let c = make_cell(rng, run, &key, &task_id, texts);
        let finished = started + c.latency;
        lanes[lane] = finished + rng.i64(500..6000);
        let (ts, [input, output, cache_read, cache_write, reasoning]) = (stamp(run.start, finished), c.usage);
        #[rustfmt::skip]
        results.execute(params![
            id, run.name, h.name, m.name, task_id, task.track.as_str(), key.repeat, c.exit, c.success, c.error_class,
            c.error_message, input, output, cache_read, cache_write, reasoning, c.cost, c.latency, c.ttfa, c.api_calls,
            c.tool_calls, c.diff, c.test_output, c.metadata, c.stdout, c.stderr, ts, c.retry,
        ])?;
        let failed = matches!(c.exit, "error" | "infra_error");
        let (status, error) = if failed { ("failed", c.error_message.as_deref()) } else { ("completed", None) };
        states.execute(params![run.name, id, status, error, ts])?;
        for (k, p) in c.phases.iter().enumerate().filter(|_| c.phases_table) {
            let (s, usage, timed_out) = (&p.spend, usage_json(&p.spend.usage), i64::from(p.timed_out));
            #[rustfmt::skip]
            phases.execute(params![
                run.name, id, k as i64, p.name, p.trace, p.model, p.role, p.exit_code, s.ms, timed_out, usage, s.cost,
                s.calls, p.error,
            ])?;
            sum.phases += 1;
        }
        if run.name == RECONCILED && matches!(c.exit, "pass" | "fail") && rng.f64() < 0.1 {
            sum.reconciliations += reconcile(&mut recons, rng, run, &id, &key, &c, finished)?;
        }
        written += 1;
    }
    Ok(written)
}

const BUDGET: &str = "skipped: provider budget exhausted for gemini-2.5-pro ($150.00 daily cap reached at 04:12 UTC)";

/// Writes one or two re-checks of a cell (tests re-run, a second grader); about 80% agree.
fn reconcile(
    stmt: &mut Statement<'_>,
    rng: &mut Rng,
    run: &RunSpec,
    id: &str,
    key: &Key,
    cell: &Cell<'_>,
    at: i64,
) -> Written<usize> {
    let grader = if key.m == 1 { "grader:gpt-5-codex" } else { "grader:claude-opus-4-5" };
    let reconcilers: &[&str] = match TASKS[key.task].track {
        Track::Swe => &["rerun-tests"],
        Track::MultiPhase if rng.f64() < 0.3 => &["rerun-tests", grader],
        _ => &[grader],
    };
    for (k, reconciler) in reconcilers.iter().enumerate() {
        let (flip, orig) = (rng.f64() < 0.2, cell.success);
        let (exit, success, notes) = match (*reconciler, flip, cell.exit) {
            ("rerun-tests", false, _) => (cell.exit, orig, data::pick(rng, &RERUN_SAME).to_string()),
            ("rerun-tests", true, "pass") => ("fail", 0.0, RERUN_FLIPS[0].to_string()),
            ("rerun-tests", true, _) => ("pass", 1.0, RERUN_FLIPS[1].to_string()),
            _ => {
                let shift = match (flip, cell.exit) {
                    (false, _) => rng.f64() * 0.1 - 0.05,
                    (true, "pass") => -0.3,
                    _ => 0.3,
                };
                let s = ((orig + shift).clamp(0.0, 1.0) * 100.0).round() / 100.0;
                let exit = if s >= 0.7 { "pass" } else { "fail" };
                let why = if exit == cell.exit { "same verdict" } else { data::pick(rng, &GRADER_DIFFERS) };
                (exit, s, format!("second grader scored {s:.2} (original {orig:.2}); {why}"))
            }
        };
        let (at, agrees) = (stamp(run.start, at + 6 * 3_600_000 + k as i64 * 90_000), exit == cell.exit);
        stmt.execute(params![run.name, id, at, reconciler, cell.exit, orig, exit, success, i64::from(agrees), notes])?;
    }
    Ok(reconcilers.len())
}

const REJECTED: &str = "reviewer rejected the change: 2 blocking findings (unchecked error path; no test for the \
    empty case)";
const RERUN_SAME: [&str; 2] = [
    "re-ran the tests 3 times in a fresh container: same verdict",
    "re-ran the failing tests on a clean checkout with the agent's patch: same result",
];
const RERUN_FLIPS: [&str; 2] = [
    "1 of 3 re-runs failed: a test depends on dict ordering, so the original pass was lucky (flaky)",
    "passed 3 of 3 re-runs; the original failure was a port collision in a test fixture, not the patch",
];
const GRADER_DIFFERS: [&str; 2] =
    ["verdicts differ: the rollout plan was judged missing", "verdicts differ: risks are listed but not mitigated"];

const POOL: usize = 4;

/// Free-text columns: generated per cell for the demo, or drawn from pools for the big run:
/// per task `POOL` diffs and `POOL` test outputs for failing and for passing cells, per harness
/// and model `POOL` stdout/stderr pairs (2-6 KB and 1-3 KB; one with FAKE secrets, one coloured).
enum Texts {
    Fresh,
    Pooled { diffs: Vec<Vec<String>>, tests: Vec<[Vec<String>; 2]>, logs: Vec<Vec<(String, String)>> },
}

impl Texts {
    fn pooled(rng: &mut Rng) -> Texts {
        let mut pool = |f: &mut dyn FnMut(&mut Rng) -> String| (0..POOL).map(|_| f(rng)).collect::<Vec<_>>();
        let diffs = TASKS.iter().map(|t| pool(&mut |rng| data::diff(rng, &t.files))).collect();
        let tests =
            TASKS.iter().map(|t| [false, true].map(|p| pool(&mut |rng| data::test_output(rng, t, p, 0.5)))).collect();
        let mut logs = Vec::new();
        for (harness, model) in HARNESSES.iter().flat_map(|h| MODELS.iter().map(move |m| (h, m))) {
            let task = &TASKS[logs.len() % TASKS.len()];
            let cx = LogCtx { harness, model, task: task.id, files: task.files };
            let log = |i| {
                (
                    logs::stdout_log(rng, &cx, 2_000..6_000, i == 1),
                    logs::stderr_log(rng, &cx, 1_000..3_000, i == 1, i == 0),
                )
            };
            logs.push((0..POOL).map(log).collect());
        }
        Texts::Pooled { diffs, tests, logs }
    }

    fn diff<'t>(&'t self, rng: &mut Rng, key: &Key) -> Cow<'t, str> {
        match self {
            Texts::Fresh => data::diff(rng, &TASKS[key.task].files).into(),
            Texts::Pooled { diffs, .. } => diffs[key.task][rng.usize(0..POOL)].as_str().into(),
        }
    }

    fn tests<'t>(&'t self, rng: &mut Rng, key: &Key, passed: bool, success: f64) -> Cow<'t, str> {
        match self {
            Texts::Pooled { tests, .. } if TASKS[key.task].track != Track::OpenEnded => {
                tests[key.task][usize::from(passed)][rng.usize(0..POOL)].as_str().into()
            }
            _ => data::test_output(rng, &TASKS[key.task], passed, success).into(),
        }
    }

    /// Stdout and stderr; in the demo `big` ones exceed 60 KB, some carry FAKE secrets, and
    /// aider's and some others' are coloured (ANSI escapes and other control characters).
    fn logs<'t>(&'t self, rng: &mut Rng, key: &Key, task: &str, big: bool) -> (Cow<'t, str>, Cow<'t, str>) {
        let (harness, model) = (&HARNESSES[key.h], &MODELS[key.m]);
        if let Texts::Pooled { logs, .. } = self {
            let (out, err) = &logs[key.h * MODELS.len() + key.m][rng.usize(0..POOL)];
            return (out.as_str().into(), err.as_str().into());
        }
        let cx = LogCtx { harness, model, task, files: TASKS[key.task].files };
        let (ansi, secrets) = (harness.name == "aider" || rng.f64() < 0.25, rng.f64() < 0.06);
        let (out, err) = if big { (62_000..110_000, 60_000..120_000) } else { (1_500..14_000, 300..6_000) };
        let out = logs::stdout_log(rng, &cx, out, ansi);
        (out.into(), logs::stderr_log(rng, &cx, err, ansi, secrets).into())
    }
}

#[cfg(test)]
mod tests;

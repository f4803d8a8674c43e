//! Statistics for the eval-results viewer: task-level success rates with honest error bars, unbiased pass@k,
//! paired comparison of two runs on their shared tasks, and the cost-vs-success Pareto frontier.
//!
//! The unit of analysis is the task, not the cell. Repeats of one task are correlated, so they are first averaged
//! into one [`TaskScore`] per task and every standard error, interval and test is then taken over tasks (the
//! clustered, "task-level" estimate of Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640).
//!
//! Invariants: every function is pure and deterministic (the bootstrap draws from a fixed-seed SplitMix64 and
//! visits tasks in task-id order, so the input order never changes a result), uses std only (plus a serde derive for output), and never panics or
//! returns NaN for valid input, i.e. successes and task means in [0, 1]. [`task_scores`] makes any input valid: it
//! clamps successes into [0, 1] and counts a NaN success as 0 (a failed cell). Rates and intervals stay in [0, 1],
//! differences in [-1, 1]. With fewer than two tasks there is no spread to measure: the standard error is 0 and the
//! interval is the uninformative [0, 1] (a rate) or [-1, 1] (a difference), never a zero-width interval that would
//! look like certainty. With two or more tasks that all score the same the interval does have zero width: that is
//! what the formula gives, and it is shown as such.

use std::collections::BTreeMap;
use std::f64::consts::LN_2;

/// A repeat with `success >= 1.0 - SUCCESS_TOLERANCE` counts as a full success for pass@k.
pub const SUCCESS_TOLERANCE: f64 = 1e-9;
/// Two task means within this distance of each other are a tie in [`compare`].
pub const TIE_TOLERANCE: f64 = 1e-9;
/// A task passes when its mean success is at least this; [`compare`] dichotomises tasks with it.
pub const PASS_THRESHOLD: f64 = 0.5;
/// Resamples drawn by the paired bootstrap in [`compare`].
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;
/// Largest `n` for which [`mcnemar_exact`] sums binomial coefficients exactly in `u128`.
const EXACT_BINOMIAL_MAX_N: usize = 120;
/// Seed of the bootstrap's SplitMix64, fixed so that a comparison always shows the same interval.
const BOOTSTRAP_SEED: u64 = 0x5167_4711_E5EE_D001;

/// Per-task mean success after averaging repeats.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskScore {
    pub task_id: String,
    /// Mean of the task's (clamped) successes over its repeats, in [0, 1].
    pub mean: f64,
    /// Number of cells (repeats) of the task.
    pub repeats: usize,
    /// Repeats with `success >= 1.0 - 1e-9` ([`SUCCESS_TOLERANCE`]): the `c` of pass@k.
    pub successes: usize,
}

impl TaskScore {
    /// Folds in another group of the same task (one SQL grouped apart: 5 and '5'):
    /// repeats and successes add, the means are weighted by repeats.
    fn absorb(&mut self, other: &TaskScore) {
        let repeats = self.repeats + other.repeats;
        if repeats > 0 {
            self.mean = (self.mean * self.repeats as f64 + other.mean * other.repeats as f64) / repeats as f64;
        }
        self.repeats = repeats;
        self.successes += other.successes;
    }
}

/// Adds `score` to `tasks` (keyed by task id), absorbing it into the task of that id
/// if there is one.
pub fn add_task(tasks: &mut BTreeMap<String, TaskScore>, score: TaskScore) {
    match tasks.get_mut(&score.task_id) {
        Some(task) => task.absorb(&score),
        None => {
            tasks.insert(score.task_id.clone(), score);
        }
    }
}

/// Groups `(task_id, success)` samples by task: mean = Σ success / repeats per task.
///
/// Each success is clamped into [0, 1] and NaN counts as 0. Within a task the successes are summed in sorted order,
/// so the input order is irrelevant down to the last bit; the output is sorted by `task_id` (byte order).
pub fn task_scores<'a>(samples: impl IntoIterator<Item = (&'a str, f64)>) -> Vec<TaskScore> {
    let mut by_task: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (task_id, success) in samples {
        let success = if success.is_nan() { 0.0 } else { success.clamp(0.0, 1.0) };
        by_task.entry(task_id).or_default().push(success);
    }
    by_task
        .into_iter()
        .map(|(task_id, values)| TaskScore {
            task_id: task_id.to_owned(),
            successes: values.iter().filter(|&&v| v >= 1.0 - SUCCESS_TOLERANCE).count(),
            repeats: values.len(),
            mean: mean(values),
        })
        .collect()
}

/// A success rate over tasks with its standard error and 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Number of tasks, `n`.
    pub tasks: usize,
    pub mean: f64,
    pub std_error: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
}

/// Task-level estimate of the success rate (Miller 2024: clustered standard errors, with repeats first averaged
/// within each task).
///
/// With task means `x_1..x_n`: mean `x̄ = Σ x_i / n`; standard error `se = s / √n` with the sample standard deviation
/// `s = √(Σ (x_i − x̄)² / (n − 1))`; 95% interval `x̄ ± t(0.975, n − 1) · se` ([`t_critical_975`]), clamped to [0, 1].
/// This is `scipy.stats.t.interval(0.95, n - 1, loc=mean, scale=scipy.stats.sem(x))`.
///
/// `n = 0`: mean 0, se 0, interval [0, 1]. `n = 1`: mean = that task's mean, se 0, interval [0, 1] (one task says
/// nothing about the spread between tasks).
pub fn task_level_estimate(tasks: &[TaskScore]) -> Estimate {
    let n = tasks.len();
    let means: Vec<f64> = tasks.iter().map(|t| t.mean).collect();
    let mean = mean(means.clone());
    if n < 2 {
        return Estimate { tasks: n, mean, std_error: 0.0, ci95_low: 0.0, ci95_high: 1.0 };
    }
    let squares = sum(means.iter().map(|x| (x - mean) * (x - mean)).collect());
    let std_error = (squares / (n - 1) as f64 / n as f64).sqrt();
    let half_width = t_critical_975(n - 1) * std_error;
    Estimate {
        tasks: n,
        mean,
        std_error,
        ci95_low: (mean - half_width).clamp(0.0, 1.0),
        ci95_high: (mean + half_width).clamp(0.0, 1.0),
    }
}

/// `t(0.975, df)` for df = 1..=30, as `scipy.stats.t.ppf(0.975, df)` (scipy 1.17.1, round-tripped f64); they agree
/// with the printed tables, e.g. NIST/SEMATECH e-Handbook §1.3.6.7.2.
#[rustfmt::skip]
const T_975: [f64; 30] = [
    12.706204736174694, 4.302652729749462, 3.1824463052837078, 2.7764451051977934, 2.5705818356363146,
    2.4469118511449786, 2.364624251592784, 2.306004135204166, 2.262157162798205, 2.228138851986274,
    2.200985160091639, 2.1788128296672284, 2.1603686564627913, 2.144786687917804, 2.131449545559776,
    2.1199052992212546, 2.1098155778333156, 2.1009220402410382, 2.0930240544083087, 2.085963447265864,
    2.0796138447276795, 2.0738730679040254, 2.0686576104190486, 2.0638985616280245, 2.0595385527532972,
    2.0555294386428735, 2.0518305164802846, 2.0484071417952454, 2.045229642132703, 2.0422724563012378,
];

/// Standard normal 0.975 quantile, `scipy.stats.norm.ppf(0.975)`.
const Z_975: f64 = 1.959963984540054;

/// Two-sided 95% critical value of Student's t, the 0.975 quantile `t(0.975, df)`.
///
/// df = 1..=30: exact table (`T_975`). df > 30: Cornish–Fisher expansion (Abramowitz & Stegun 26.7.5)
/// `t ≈ z + g1/ν + g2/ν² + g3/ν³ + g4/ν⁴` with `z = Φ⁻¹(0.975)`, `g1 = (z³ + z)/4`, `g2 = (5z⁵ + 16z³ + 3z)/96`,
/// `g3 = (3z⁷ + 19z⁵ + 17z³ − 15z)/384`, `g4 = (79z⁹ + 776z⁷ + 1482z⁵ − 1920z³ − 945z)/92160`; its error against
/// scipy is at most 2.7e-8 (at df = 31) and falls as ν⁻⁵. df = 0: infinity (no interval can be formed).
pub fn t_critical_975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T_975[df - 1],
        _ => {
            let (z, nu) = (Z_975, df as f64);
            let z2 = z * z;
            let g1 = (z2 + 1.0) * z / 4.0;
            let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
            let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
            let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
            z + (g1 + (g2 + (g3 + g4 / nu) / nu) / nu) / nu
        }
    }
}

/// Unbiased pass@k from `n` samples of which `c` succeeded (Chen et al. 2021, "Evaluating Large Language Models
/// Trained on Code", eq. 1): `pass@k = 1 − C(n − c, k) / C(n, k)`.
///
/// Computed, as in the paper's numerically stable implementation, from the product
/// `C(n − c, k) / C(n, k) = Π_{i = n−c+1}^{n} (1 − k/i)`, taken in log space as `−expm1(Σ ln_1p(−k/i))` so that
/// small values keep their relative precision. `n − c < k` gives exactly 1, and `k = 1` gives exactly `c / n`.
/// `None` when `n < k`, when `k = 0` (pass@0 is meaningless) or when `c > n` (not a valid count).
pub fn pass_at_k(n: usize, c: usize, k: usize) -> Option<f64> {
    if k == 0 || n < k || c > n {
        return None;
    }
    if n - c < k {
        return Some(1.0);
    }
    if k == 1 {
        return Some(c as f64 / n as f64);
    }
    let kf = k as f64;
    let log_fail: f64 = (n - c + 1..=n).map(|i| (-kf / i as f64).ln_1p()).sum();
    Some((-log_fail.exp_m1()).clamp(0.0, 1.0))
}

/// Mean of [`pass_at_k`]`(repeats, successes, k)` over the tasks with at least `k` repeats; returns
/// `(value, tasks_used)`. `None` if no task has `k` repeats, or `k = 0`. Tasks with fewer repeats are left out
/// rather than guessed, so `tasks_used` may be smaller than `tasks.len()`.
pub fn mean_pass_at_k(tasks: &[TaskScore], k: usize) -> Option<(f64, usize)> {
    let values: Vec<f64> = tasks.iter().filter_map(|t| pass_at_k(t.repeats, t.successes.min(t.repeats), k)).collect();
    let used = values.len();
    (used > 0).then(|| (mean(values), used))
}

/// Paired comparison of a baseline run `a` and a candidate run `b` on their shared tasks. Every difference is
/// oriented candidate − baseline: positive means the candidate is better.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PairedComparison {
    /// Tasks present in both runs; every other field is over these only.
    pub shared_tasks: usize,
    /// Shared tasks where the candidate's mean beats the baseline's by more than [`TIE_TOLERANCE`].
    pub candidate_wins: usize,
    /// Shared tasks where the candidate's mean is below the baseline's by more than [`TIE_TOLERANCE`].
    pub candidate_losses: usize,
    /// Shared tasks whose means are within [`TIE_TOLERANCE`]; wins + losses + ties = shared_tasks.
    pub ties: usize,
    /// Mean over shared tasks of `b.mean − a.mean` (candidate − baseline), in [-1, 1]; 0 with no shared task.
    pub mean_difference: f64,
    /// [`mcnemar_exact`]`(improvements.len(), regressions.len())`: exact two-sided test on the discordant pairs
    /// after dichotomising each task at mean ≥ [`PASS_THRESHOLD`]; 1.0 when there is no discordant pair.
    pub mcnemar_p: f64,
    /// 95% paired percentile bootstrap interval of `mean_difference` (Efron & Tibshirani 1993, ch. 13): tasks
    /// resampled with replacement, each keeping its (baseline, candidate) pair, [`BOOTSTRAP_RESAMPLES`] times from a
    /// fixed seed; the 2.5% and 97.5% quantiles (linear interpolation, numpy's default). (-1, 1) with fewer than
    /// two shared tasks.
    pub bootstrap_ci95: (f64, f64),
    /// Task ids, sorted, where the baseline passed (mean ≥ 0.5) and the candidate failed (mean < 0.5).
    pub regressions: Vec<String>,
    /// Task ids, sorted, where the baseline failed (mean < 0.5) and the candidate passed (mean ≥ 0.5).
    pub improvements: Vec<String>,
}

/// Compares baseline `a` with candidate `b` on the task ids present in both (see [`PairedComparison`] for every
/// field). A "win" is `b.mean > a.mean` (the candidate is more successful), a "loss" `b.mean < a.mean` (a
/// regression), a tie when they are equal within 1e-9. Tasks in only one run are ignored; if a list repeats a task
/// id, its first entry is used. Results do not depend on the order of either list.
pub fn compare(a: &[TaskScore], b: &[TaskScore]) -> PairedComparison {
    let mut baseline: BTreeMap<&str, f64> = BTreeMap::new();
    for t in a {
        baseline.entry(t.task_id.as_str()).or_insert(t.mean);
    }
    let mut pairs: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for t in b {
        if let Some(&base) = baseline.get(t.task_id.as_str()) {
            pairs.entry(t.task_id.as_str()).or_insert((base, t.mean));
        }
    }
    let (mut candidate_wins, mut candidate_losses, mut ties) = (0, 0, 0);
    let (mut regressions, mut improvements) = (Vec::new(), Vec::new());
    let mut differences = Vec::with_capacity(pairs.len());
    for (&task_id, &(base, cand)) in &pairs {
        let difference = cand - base;
        differences.push(difference);
        match difference {
            d if d > TIE_TOLERANCE => candidate_wins += 1,
            d if d < -TIE_TOLERANCE => candidate_losses += 1,
            _ => ties += 1,
        }
        match (base >= PASS_THRESHOLD, cand >= PASS_THRESHOLD) {
            (true, false) => regressions.push(task_id.to_owned()),
            (false, true) => improvements.push(task_id.to_owned()),
            _ => {}
        }
    }
    PairedComparison {
        shared_tasks: pairs.len(),
        candidate_wins,
        candidate_losses,
        ties,
        mean_difference: mean(differences.clone()),
        mcnemar_p: mcnemar_exact(improvements.len(), regressions.len()),
        bootstrap_ci95: bootstrap_mean_ci95(&differences),
        regressions,
        improvements,
    }
}

/// Percentile bootstrap of the mean of `values` (in task-id order): see [`PairedComparison::bootstrap_ci95`].
fn bootstrap_mean_ci95(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    if n < 2 {
        return (-1.0, 1.0);
    }
    let mut rng = SplitMix64(BOOTSTRAP_SEED);
    let mut means: Vec<f64> =
        (0..BOOTSTRAP_RESAMPLES).map(|_| (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64).collect();
    means.sort_by(f64::total_cmp);
    (quantile(&means, 0.025).clamp(-1.0, 1.0), quantile(&means, 0.975).clamp(-1.0, 1.0))
}

/// Quantile `p` of non-empty sorted `values` with linear interpolation (Hyndman & Fan type 7, numpy's default).
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p;
    let low = h.floor() as usize;
    let high = (low + 1).min(sorted.len() - 1);
    sorted[low] + (h - low as f64) * (sorted[high] - sorted[low])
}

/// Exact two-sided p-value of McNemar's test (McNemar 1947) in its exact conditional form, the sign test on the
/// discordant pairs `b01` and `b10`: with `n = b01 + b10`, `m = min(b01, b10)` and `X ~ Bin(n, 1/2)`,
/// `p = min(1, 2 · P(X ≤ m))`, which equals `scipy.stats.binomtest(m, n, 0.5, alternative='two-sided').pvalue`.
/// 1.0 when `n = 0`. Symmetric in its arguments.
///
/// For `n ≤ 120` the tail is summed in exact integers, so the p-value is the correctly rounded f64. Beyond that,
/// `P(X ≤ m) = P(X = m) · Σ_{i ≤ m} P(X = i)/P(X = m)`, with `ln P(X = m)` from Loader's saddle-point formula
/// (Loader 2000, "Fast and Accurate Computation of Binomial Probabilities", as in R's `dbinom`): the relative error is
/// about `|ln p| · 1e-16` (2e-15 at p ≈ 0.05 and n = 1e6). Nothing overflows for `n` up to 1e6 and beyond; a p-value
/// below about 1e-308 underflows to 0.
pub fn mcnemar_exact(b01: usize, b10: usize) -> f64 {
    let n = b01.saturating_add(b10);
    let m = b01.min(b10);
    if n == 0 || m == b01.max(b10) {
        return 1.0;
    }
    let tail = if n <= EXACT_BINOMIAL_MAX_N { exact_half_tail(m, n) } else { saddle_point_half_tail(m, n) };
    (2.0 * tail).min(1.0)
}

/// `P(X ≤ m)` for `X ~ Bin(n, 1/2)`, `n ≤ 120`: `Σ_{i ≤ m} C(n, i)` in integers (`C(120, 60) · 60 < 2^123`), rounded
/// once to f64 and scaled exactly by `2^−n`.
fn exact_half_tail(m: usize, n: usize) -> f64 {
    let (mut term, mut tail) = (1u128, 1u128);
    for i in 0..m {
        term = term * (n - i) as u128 / (i + 1) as u128;
        tail += term;
    }
    tail as f64 * 2f64.powi(-(n as i32))
}

/// `P(X ≤ m)` for `X ~ Bin(n, 1/2)` and `m < n/2`, any `n`: `P(X = m)` from [`ln_binomial_half_pmf`] times the sum of
/// the ratios `P(X = i)/P(X = m)`, built downwards from `P(X = i−1)/P(X = i) = i/(n−i+1)` until they stop mattering.
fn saddle_point_half_tail(m: usize, n: usize) -> f64 {
    let (mut ratio, mut total) = (1.0f64, 1.0f64);
    for i in (1..=m).rev() {
        ratio *= i as f64 / (n - i + 1) as f64;
        total += ratio;
        if ratio < total * 1e-20 {
            break;
        }
    }
    (ln_binomial_half_pmf(m, n) + total.ln()).exp()
}

/// `ln P(X = x)` for `X ~ Bin(n, 1/2)` and `0 ≤ x ≤ n`, by Loader's method (R's `dbinom_raw`):
/// `ln P = lc − ½ ln(2π x (n − x)/n)` with `lc = δ(n) − δ(x) − δ(n − x) − D(x, n/2) − D(n − x, n/2)`, where `δ` is
/// [`stirling_error`] and `D` is [`deviance_term`].
fn ln_binomial_half_pmf(x: usize, n: usize) -> f64 {
    if x == 0 || x == n {
        return -(n as f64) * LN_2;
    }
    let (xf, nf) = (x as f64, n as f64);
    let half = 0.5 * nf;
    let lc = stirling_error(n)
        - stirling_error(x)
        - stirling_error(n - x)
        - deviance_term(xf, half)
        - deviance_term(nf - xf, half);
    let lf = (2.0 * std::f64::consts::PI).ln() + xf.ln() + (-xf / nf).ln_1p();
    lc - 0.5 * lf
}

/// `δ(n) = ln n! − ln(√(2πn) (n/e)^n)`, `n ≥ 1`: a table for n ≤ 15 (mpmath at 40 digits, rounded to f64; the same as
/// R's `sferr_halves` at whole numbers), else the Stirling series `1/12n − 1/360n³ + 1/1260n⁵ − 1/1680n⁷ + 1/1188n⁹`
/// cut where R's `stirlerr` cuts it.
fn stirling_error(n: usize) -> f64 {
    #[rustfmt::skip]
    const TABLE: [f64; 16] = [
        0.0, 0.08106146679532726, 0.0413406959554093, 0.02767792568499834,
        0.020790672103765093, 0.016644691189821193, 0.013876128823070748, 0.01189670994589177,
        0.010411265261972096, 0.009255462182712733, 0.00833056343336287, 0.007573675487951841,
        0.00694284010720953, 0.006408994188004207, 0.005951370112758848, 0.005554733551962801,
    ];
    let [s0, s1, s2, s3, s4] = [1.0 / 12.0, 1.0 / 360.0, 1.0 / 1260.0, 1.0 / 1680.0, 1.0 / 1188.0];
    if n < TABLE.len() {
        return TABLE[n];
    }
    let nf = n as f64;
    let nn = nf * nf;
    match n {
        501.. => (s0 - s1 / nn) / nf,
        81..=500 => (s0 - (s1 - s2 / nn) / nn) / nf,
        36..=80 => (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / nf,
        _ => (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / nf,
    }
}

/// `D(x, np) = x ln(x/np) + np − x`, by a series when `x` is near `np` to avoid cancellation (Loader 2000, R's `bd0`).
fn deviance_term(x: f64, np: f64) -> f64 {
    if (x - np).abs() < 0.1 * (x + np) {
        let v = (x - np) / (x + np);
        let mut s = (x - np) * v;
        let mut ej = 2.0 * x * v;
        let v2 = v * v;
        for j in 1..1000 {
            ej *= v2;
            let next = s + ej / f64::from(2 * j + 1);
            if next == s {
                return next;
            }
            s = next;
        }
        return s;
    }
    x * (x / np).ln() + np - x
}

/// Indices of the points on the cost-vs-success Pareto frontier, sorted by cost ascending (then by index).
///
/// A point `(cost, success)` is on the frontier unless another point dominates it: cost ≤, success ≥ and at least
/// one of them strictly better. So identical points are all kept (neither dominates the other), while a point with
/// the same cost and lower success, or the same success and higher cost, is not. A point with a NaN coordinate is
/// never on the frontier and dominates nothing. O(n log n): sort by (cost ↑, success ↓) and sweep.
pub fn pareto_frontier(points: &[(f64, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).filter(|&i| !points[i].0.is_nan() && !points[i].1.is_nan()).collect();
    order.sort_by(|&i, &j| {
        let ((ci, si), (cj, sj)) = (points[i], points[j]);
        ci.total_cmp(&cj).then(sj.total_cmp(&si)).then(i.cmp(&j))
    });
    let mut frontier = Vec::new();
    let mut best_cheaper: Option<f64> = None;
    let mut start = 0;
    while start < order.len() {
        let cost = points[order[start]].0;
        let end = start + order[start..].iter().take_while(|&&i| points[i].0 == cost).count();
        let top = points[order[start]].1;
        if best_cheaper.is_none_or(|best| top > best) {
            frontier.extend(order[start..end].iter().copied().filter(|&i| points[i].1 == top));
            best_cheaper = Some(top);
        }
        start = end;
    }
    frontier
}

/// SplitMix64 (Steele, Lea & Flood 2014; constants from Vigna's reference `splitmix64.c`).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n ≥ 1`) without modulo bias (Lemire 2019, "Fast Random Integer Generation in an
    /// Interval").
    fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let threshold = n.wrapping_neg() % n;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(n);
            if product as u64 >= threshold {
                return (product >> 64) as usize;
            }
        }
    }
}

/// Σ values with Neumaier's compensated summation over the values sorted ascending, so the result does not depend on
/// the input order.
fn sum(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let (mut total, mut compensation) = (0.0f64, 0.0f64);
    for v in values {
        let t = total + v;
        compensation += if total.abs() >= v.abs() { (total - t) + v } else { (v - t) + total };
        total = t;
    }
    total + compensation
}

/// Mean of `values` by [`sum`], kept within [min, max] of the values so rounding never leaves their range (all equal
/// values give exactly that value). 0 for no values.
fn mean(values: Vec<f64>) -> f64 {
    let Some(low) = values.iter().copied().reduce(f64::min) else {
        return 0.0;
    };
    let high = values.iter().copied().fold(low, f64::max);
    let n = values.len() as f64;
    (sum(values) / n).max(low).min(high)
}

#[cfg(test)]
mod tests;

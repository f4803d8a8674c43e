//! Tests of `stats`. Reference values come from scipy 1.17.1 / numpy 2.4 / Python's `statistics` and `fractions`,
//! and mpmath at 50 digits where scipy itself is only approximate; each test says how its numbers were obtained.

use super::*;

fn score(task_id: &str, mean: f64) -> TaskScore {
    TaskScore { task_id: task_id.to_owned(), mean, repeats: 1, successes: usize::from(mean >= 1.0) }
}

fn assert_close(actual: f64, expected: f64, tolerance: f64) {
    assert!((actual - expected).abs() <= tolerance, "{actual} != {expected} within {tolerance}");
}

fn assert_relative(actual: f64, expected: f64, tolerance: f64) {
    assert!((actual - expected).abs() <= tolerance * expected.abs(), "{actual} != {expected} within {tolerance} rel");
}

// ---- task_scores ----

#[test]
fn task_scores_average_repeats_and_sort_by_task_id() {
    let samples = [("t2", 0.0), ("t1", 1.0), ("t2", 0.5), ("t1", 0.0), ("t1", 1.0), ("t3", 0.25)];
    let scores = task_scores(samples);
    let ids: Vec<&str> = scores.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["t1", "t2", "t3"]);
    assert_close(scores[0].mean, 2.0 / 3.0, 1e-15);
    assert_eq!((scores[0].repeats, scores[0].successes), (3, 2));
    assert_eq!(scores[1], TaskScore { task_id: "t2".into(), mean: 0.25, repeats: 2, successes: 0 });
    assert_eq!(scores[2], TaskScore { task_id: "t3".into(), mean: 0.25, repeats: 1, successes: 0 });
}

#[test]
fn task_scores_do_not_depend_on_input_order_to_the_last_bit() {
    let samples: Vec<(&str, f64)> =
        (0..60).map(|i| (["x", "y", "z"][i % 3], f64::from(u32::try_from(i).unwrap()).sqrt().fract())).collect();
    let forward = task_scores(samples.iter().copied());
    let backward = task_scores(samples.iter().rev().copied());
    assert_eq!(forward, backward);
    for (f, b) in forward.iter().zip(&backward) {
        assert_eq!(f.mean.to_bits(), b.mean.to_bits());
    }
}

#[test]
fn task_scores_clamp_out_of_range_successes_and_count_nan_as_failure() {
    let scores = task_scores([("t", 1.5), ("t", -0.5), ("t", f64::NAN), ("t", 1.0 - 1e-10), ("t", 0.999)]);
    // Clamped to 1, 0, 0, 1 - 1e-10, 0.999; the first and fourth count as successes.
    assert_close(scores[0].mean, (1.0 + 0.0 + 0.0 + (1.0 - 1e-10) + 0.999) / 5.0, 1e-15);
    assert_eq!((scores[0].repeats, scores[0].successes), (5, 2));
    assert!(task_scores(std::iter::empty()).is_empty());
}

// ---- task_level_estimate and t_critical_975 ----

#[test]
fn task_level_estimate_matches_scipy_t_interval() {
    // Task means [2/3, 0, 1, 0.75, 0.75, 0.2]. statistics.fmean → 0.5611111111111111; scipy.stats.sem →
    // 0.15495917423312616; scipy.stats.t.interval(0.95, 5, loc=mean, scale=sem) →
    // (0.16277587256223414, 0.9594463496599881).
    let samples = [
        ("a", 1.0),
        ("a", 1.0),
        ("a", 0.0),
        ("b", 0.0),
        ("b", 0.0),
        ("c", 1.0),
        ("d", 0.5),
        ("d", 1.0),
        ("e", 1.0),
        ("e", 0.0),
        ("e", 1.0),
        ("e", 1.0),
        ("f", 0.2),
    ];
    let estimate = task_level_estimate(&task_scores(samples));
    assert_eq!(estimate.tasks, 6);
    assert_close(estimate.mean, 0.5611111111111111, 1e-15);
    assert_close(estimate.std_error, 0.15495917423312616, 1e-15);
    assert_close(estimate.ci95_low, 0.16277587256223414, 1e-14);
    assert_close(estimate.ci95_high, 0.9594463496599881, 1e-14);
}

#[test]
fn task_level_estimate_beyond_the_table_uses_the_approximation() {
    // 41 tasks with means i/40: scipy.stats.sem → 0.046770717334674264; t.interval(0.95, 40, ...) →
    // (0.40547285420791884, 0.5945271457920811). The approximation of t(0.975, 40) is off by 7.3e-9.
    let tasks: Vec<TaskScore> = (0..=40).map(|i| score(&format!("t{i:02}"), f64::from(i) / 40.0)).collect();
    let estimate = task_level_estimate(&tasks);
    assert_close(estimate.mean, 0.5, 1e-15);
    assert_close(estimate.std_error, 0.046770717334674264, 1e-15);
    assert_close(estimate.ci95_low, 0.40547285420791884, 1e-9);
    assert_close(estimate.ci95_high, 0.5945271457920811, 1e-9);
}

#[test]
fn task_level_interval_is_clamped_to_the_unit_interval() {
    // Means [1, 1, 1, 0.9]: scipy gives mean 0.975, sem 0.025, t.interval → (0.8954388423679073, 1.0545611576320926);
    // the upper end is clamped to 1.
    let tasks = [score("a", 1.0), score("b", 1.0), score("c", 1.0), score("d", 0.9)];
    let estimate = task_level_estimate(&tasks);
    assert_close(estimate.mean, 0.975, 1e-15);
    assert_close(estimate.std_error, 0.025, 1e-15);
    assert_close(estimate.ci95_low, 0.8954388423679073, 1e-14);
    assert_eq!(estimate.ci95_high, 1.0);
    let low = task_level_estimate(&[score("a", 0.0), score("b", 0.0), score("c", 0.1)]);
    assert_eq!(low.ci95_low, 0.0);
}

#[test]
fn task_level_estimate_of_identical_tasks_has_zero_width() {
    let tasks: Vec<TaskScore> = (0..7).map(|i| score(&i.to_string(), 0.3)).collect();
    let estimate = task_level_estimate(&tasks);
    assert_eq!((estimate.mean, estimate.std_error, estimate.ci95_low, estimate.ci95_high), (0.3, 0.0, 0.3, 0.3));
}

#[test]
fn task_level_estimate_with_no_or_one_task_is_uninformative() {
    let none = task_level_estimate(&[]);
    assert_eq!(none, Estimate { tasks: 0, mean: 0.0, std_error: 0.0, ci95_low: 0.0, ci95_high: 1.0 });
    let one = task_level_estimate(&[score("only", 0.75)]);
    assert_eq!(one, Estimate { tasks: 1, mean: 0.75, std_error: 0.0, ci95_low: 0.0, ci95_high: 1.0 });
}

#[test]
fn t_critical_values_match_scipy() {
    // scipy.stats.t.ppf(0.975, df).
    for (df, expected) in [
        (1, 12.706204736174694),
        (2, 4.302652729749462),
        (5, 2.5705818356363146),
        (10, 2.228138851986274),
        (30, 2.0422724563012378),
    ] {
        assert_eq!(t_critical_975(df), expected, "df {df}");
    }
    // Beyond the table: Cornish–Fisher, within 3e-8 of scipy.
    for (df, expected) in
        [(31, 2.039513446396408), (40, 2.021075390306273), (100, 1.9839715185235518), (1000, 1.9623390808264083)]
    {
        assert_close(t_critical_975(df), expected, 3e-8);
    }
    assert_eq!(t_critical_975(0), f64::INFINITY);
}

#[test]
fn t_critical_values_decrease_towards_the_normal_quantile() {
    let mut previous = t_critical_975(1);
    for df in (2..=2000).chain([10_000, 1_000_000]) {
        let t = t_critical_975(df);
        assert!(t < previous && t > Z_975, "df {df}: {t}");
        previous = t;
    }
}

// ---- pass@k ----

fn binomial(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    (0..k).fold(1u128, |acc, i| acc * (n - i) as u128 / (i + 1) as u128)
}

#[test]
fn pass_at_k_matches_the_combinatorial_formula_for_small_n() {
    // Reference: 1 - C(n-c, k) / C(n, k) with exact integer binomials (one rounding in the division).
    for n in 1..=20 {
        for c in 0..=n {
            for k in 1..=n {
                let expected = 1.0 - binomial(n - c, k) as f64 / binomial(n, k) as f64;
                let actual = pass_at_k(n, c, k).unwrap();
                assert_close(actual, expected, 1e-14);
            }
        }
    }
}

#[test]
fn pass_at_k_edge_cases() {
    assert_eq!(pass_at_k(10, 0, 3), Some(0.0));
    assert_eq!(pass_at_k(10, 10, 3), Some(1.0));
    assert_eq!(pass_at_k(5, 1, 5), Some(1.0));
    assert_eq!(pass_at_k(5, 0, 5), Some(0.0));
    assert_eq!(pass_at_k(3, 1, 4), None);
    assert_eq!(pass_at_k(0, 0, 1), None);
    assert_eq!(pass_at_k(5, 2, 0), None);
    assert_eq!(pass_at_k(5, 6, 1), None);
    assert_eq!(pass_at_k(7, 3, 1), Some(3.0 / 7.0));
    assert_eq!(pass_at_k(10, 8, 3), Some(1.0)); // n - c < k: every draw of 3 holds a success
}

#[test]
fn pass_at_k_is_stable_for_large_n() {
    // Python fractions: 1 - Fraction(comb(200-3, 100), comb(200, 100)) = 349/398 = 0.8768844221105527.
    assert_close(pass_at_k(200, 3, 100).unwrap(), 349.0 / 398.0, 1e-15);
    // 1 - Fraction(comb(990, 500), comb(1000, 500)) → 0.9990668121978155.
    assert_close(pass_at_k(1000, 10, 500).unwrap(), 0.9990668121978155, 1e-15);
    // Small values keep relative precision: 1 - C(9999, 2)/C(10000, 2) = 2/10000 exactly.
    assert_relative(pass_at_k(10_000, 1, 2).unwrap(), 2e-4, 1e-13);
    let huge = pass_at_k(1_000_000, 500_000, 1000).unwrap();
    assert_eq!(huge, 1.0);
}

#[test]
fn mean_pass_at_k_uses_only_tasks_with_enough_repeats() {
    let tasks = [
        TaskScore { task_id: "a".into(), mean: 0.5, repeats: 4, successes: 2 },
        TaskScore { task_id: "b".into(), mean: 0.0, repeats: 4, successes: 0 },
        TaskScore { task_id: "c".into(), mean: 1.0, repeats: 1, successes: 1 },
    ];
    let (pass1, used1) = mean_pass_at_k(&tasks, 1).unwrap();
    assert_eq!(used1, 3);
    assert_close(pass1, (0.5 + 0.0 + 1.0) / 3.0, 1e-15);
    // pass@2 of a = 1 - C(2,2)/C(4,2) = 5/6; b = 0; c has one repeat and is left out.
    let (pass2, used2) = mean_pass_at_k(&tasks, 2).unwrap();
    assert_eq!(used2, 2);
    assert_close(pass2, 5.0 / 12.0, 1e-15);
    assert_eq!(mean_pass_at_k(&tasks, 5), None);
    assert_eq!(mean_pass_at_k(&[], 1), None);
}

// ---- McNemar ----

#[test]
fn mcnemar_exact_matches_scipy_binomtest() {
    // scipy.stats.binomtest(min(b01, b10), b01 + b10, p=0.5, alternative='two-sided').pvalue; where scipy's last
    // digits differ, the exact value from mpmath (50 digits, summing binomial(n, i) / 2^n, rounded to f64) is used.
    let cases = [
        (0, 0, 1.0),
        (0, 1, 1.0),
        (1, 2, 1.0),
        (7, 7, 1.0),
        (0, 10, 0.001953125),
        (3, 12, 0.03515625),
        (25, 40, 0.08168153394154005),
        (500, 560, 0.06990955946026933),
        (499_000, 501_000, 0.04560829986538208), // scipy: 0.0456082998653896
        (20, 980, 6.468270526489398e-260),
    ];
    for (b01, b10, expected) in cases {
        assert_relative(mcnemar_exact(b01, b10), expected, 1e-12);
        assert_eq!(mcnemar_exact(b01, b10), mcnemar_exact(b10, b01), "symmetry at ({b01}, {b10})");
    }
    // 2 P(X <= 480000), X ~ Bin(1e6, 1/2), is about 1e-350: scipy gives 0.0, and so do we, without overflow.
    assert_eq!(mcnemar_exact(480_000, 520_000), 0.0);
}

#[test]
fn mcnemar_saddle_point_tail_agrees_with_the_exact_integer_tail() {
    // The two paths of mcnemar_exact overlap for n <= 120: the log-space one (used above 120) must match the exact.
    for n in 1..=EXACT_BINOMIAL_MAX_N {
        for m in (0..n).take_while(|&m| 2 * m < n) {
            assert_relative(saddle_point_half_tail(m, n), exact_half_tail(m, n), 1e-13);
        }
    }
    // Hand-checkable: P(X <= 3), X ~ Bin(15, 1/2) = (1 + 15 + 105 + 455) / 2^15 = 576 / 32768.
    assert_eq!(exact_half_tail(3, 15), 576.0 / 32768.0);
}

#[test]
fn mcnemar_exact_is_a_probability_for_every_small_pair() {
    for b01 in 0..60 {
        for b10 in 0..60 {
            let p = mcnemar_exact(b01, b10);
            assert!((0.0..=1.0).contains(&p), "({b01}, {b10}) → {p}");
            // Exact reference for small n from integer binomials: min(1, 2 Σ_{i<=m} C(n, i) / 2^n).
            let n = b01 + b10;
            let tail: u128 = (0..=b01.min(b10)).map(|i| binomial(n, i)).sum();
            let expected = (2.0 * tail as f64 / 2f64.powi(i32::try_from(n).unwrap())).min(1.0);
            assert_relative(p, expected, 1e-12);
        }
    }
}

// ---- compare ----

#[test]
fn compare_counts_candidate_wins_when_the_candidate_is_better() {
    let baseline = [score("a", 0.2), score("b", 0.9), score("c", 0.5)];
    let candidate = [score("a", 0.8), score("b", 0.9 + 1e-12), score("c", 0.25)];
    let result = compare(&baseline, &candidate);
    assert_eq!(result.shared_tasks, 3);
    assert_eq!((result.candidate_wins, result.candidate_losses, result.ties), (1, 1, 1));
    assert_close(result.mean_difference, (0.6 + 1e-12 - 0.25) / 3.0, 1e-15);
    assert!(result.mean_difference > 0.0);
    assert_eq!(result.regressions, ["c"]);
    assert_eq!(result.improvements, ["a"]);
    assert_eq!(result.mcnemar_p, 1.0);
}

#[test]
fn compare_uses_only_shared_tasks() {
    let baseline = [score("only-a", 0.0), score("s1", 1.0), score("s2", 0.0), score("s1", 0.0)];
    let candidate = [score("s2", 1.0), score("only-b", 1.0), score("s1", 1.0)];
    let result = compare(&baseline, &candidate);
    assert_eq!(result.shared_tasks, 2);
    // The first "s1" of the baseline (1.0) is used: a tie there, a win on s2.
    assert_eq!((result.candidate_wins, result.candidate_losses, result.ties), (1, 0, 1));
    assert_close(result.mean_difference, 0.5, 1e-15);
    assert_eq!(result.improvements, ["s2"]);
    assert!(result.regressions.is_empty());
}

#[test]
fn compare_with_fewer_than_two_shared_tasks_is_uninformative() {
    let none = compare(&[score("a", 1.0)], &[score("b", 0.0)]);
    assert_eq!((none.shared_tasks, none.mean_difference, none.mcnemar_p), (0, 0.0, 1.0));
    assert_eq!(none.bootstrap_ci95, (-1.0, 1.0));
    let one = compare(&[score("a", 1.0)], &[score("a", 0.0)]);
    assert_eq!((one.shared_tasks, one.candidate_losses, one.mean_difference), (1, 1, -1.0));
    assert_eq!(one.bootstrap_ci95, (-1.0, 1.0));
    assert_eq!(one.regressions, ["a"]);
}

#[test]
fn compare_mcnemar_uses_the_discordant_pairs() {
    // Ten tasks fixed by the candidate, none broken, five passed by both: binomtest(0, 10) = 0.001953125.
    let mut baseline: Vec<TaskScore> = (0..10).map(|i| score(&format!("f{i}"), 0.0)).collect();
    let mut candidate: Vec<TaskScore> = (0..10).map(|i| score(&format!("f{i}"), 1.0)).collect();
    for i in 0..5 {
        baseline.push(score(&format!("p{i}"), 1.0));
        candidate.push(score(&format!("p{i}"), 0.75));
    }
    let result = compare(&baseline, &candidate);
    assert_eq!((result.improvements.len(), result.regressions.len()), (10, 0));
    assert_eq!(result.mcnemar_p, 0.001953125);
    assert_eq!(result.candidate_losses, 5); // worse, but still passing: not a regression
}

/// 200 tasks: baseline (i mod 4)/4, candidate ((7i + 1) mod 5)/4.
fn two_runs() -> (Vec<TaskScore>, Vec<TaskScore>) {
    let baseline = (0..200).map(|i| score(&format!("t{i:03}"), f64::from(i % 4) / 4.0)).collect();
    let candidate = (0..200).map(|i| score(&format!("t{i:03}"), f64::from((7 * i + 1) % 5) / 4.0)).collect();
    (baseline, candidate)
}

#[test]
fn compare_bootstrap_is_deterministic_and_agrees_with_theory() {
    // numpy: mean difference 0.125; wins 100, losses 60; improvements 60, regressions 40;
    // binomtest(40, 100).pvalue = 0.05688793364098089. A numpy percentile bootstrap with 200,000 resamples gives
    // (0.0625, 0.1875) and the normal interval mean ± 1.96 · sd_pop/√n is (0.06254, 0.18746), se 0.0319; ten
    // thousand resamples put each end within a tenth of that se.
    let (baseline, candidate) = two_runs();
    let result = compare(&baseline, &candidate);
    assert_eq!(result.shared_tasks, 200);
    assert_close(result.mean_difference, 0.125, 1e-15);
    assert_eq!((result.candidate_wins, result.candidate_losses, result.ties), (100, 60, 40));
    assert_eq!((result.improvements.len(), result.regressions.len()), (60, 40));
    assert_relative(result.mcnemar_p, 0.05688793364098089, 1e-12);
    let (low, high) = result.bootstrap_ci95;
    assert!(low < result.mean_difference && result.mean_difference < high);
    assert_close(low, 0.0625, 0.0032);
    assert_close(high, 0.1875, 0.0032);
    assert_eq!(compare(&baseline, &candidate), result);
}

#[test]
fn compare_does_not_depend_on_input_order() {
    let (mut baseline, mut candidate) = two_runs();
    let forward = compare(&baseline, &candidate);
    baseline.reverse();
    candidate.rotate_left(77);
    let shuffled = compare(&baseline, &candidate);
    assert_eq!(forward, shuffled);
    assert_eq!(forward.bootstrap_ci95.0.to_bits(), shuffled.bootstrap_ci95.0.to_bits());
}

#[test]
fn compare_bootstrap_of_identical_differences_has_zero_width() {
    let baseline: Vec<TaskScore> = (0..5).map(|i| score(&i.to_string(), 0.25)).collect();
    let candidate: Vec<TaskScore> = (0..5).map(|i| score(&i.to_string(), 0.75)).collect();
    let result = compare(&baseline, &candidate);
    assert_eq!(result.bootstrap_ci95, (0.5, 0.5));
    assert_eq!(result.mean_difference, 0.5);
}

#[test]
fn bootstrap_indices_are_uniform() {
    let mut rng = SplitMix64(BOOTSTRAP_SEED);
    let mut counts = [0u32; 7];
    for _ in 0..70_000 {
        counts[rng.below(7)] += 1;
    }
    // Each count ~ Bin(70000, 1/7): mean 10000, sd 92.6; 5 sd either side.
    assert!(counts.iter().all(|&c| (9537..=10463).contains(&c)), "{counts:?}");
}

// ---- Pareto frontier ----

#[test]
fn pareto_frontier_excludes_dominated_points_and_sorts_by_cost() {
    let points = [(1.0, 0.5), (2.0, 0.4), (2.0, 0.7), (3.0, 0.7), (0.5, 0.1), (4.0, 0.9)];
    // (2, 0.4) is dominated by (1, 0.5); (3, 0.7) by (2, 0.7).
    assert_eq!(pareto_frontier(&points), [4, 0, 2, 5]);
}

#[test]
fn pareto_frontier_ties() {
    // Identical points are both kept (neither is strictly better); same cost with lower success and same success
    // at higher cost are dominated.
    let points = [(1.0, 0.5), (1.0, 0.5), (1.0, 0.3), (2.0, 0.5), (2.0, 0.8), (2.0, 0.8)];
    assert_eq!(pareto_frontier(&points), [0, 1, 4, 5]);
}

#[test]
fn pareto_frontier_edge_cases() {
    assert!(pareto_frontier(&[]).is_empty());
    assert_eq!(pareto_frontier(&[(5.0, 0.0)]), [0]);
    assert_eq!(pareto_frontier(&[(f64::NAN, 1.0), (1.0, f64::NAN), (3.0, 0.2)]), [2]);
    // A cheaper and better point dominates everything else.
    assert_eq!(pareto_frontier(&[(3.0, 0.5), (2.0, 0.6), (0.0, 1.0), (1.0, 0.9)]), [2]);
}

#[test]
fn a_task_grouped_apart_is_absorbed_with_repeat_weighted_means() {
    let mut tasks = BTreeMap::new();
    let score =
        |mean: f64, repeats: usize, successes: usize| TaskScore { task_id: "5".into(), mean, repeats, successes };
    add_task(&mut tasks, score(1.0, 1, 1));
    add_task(&mut tasks, score(0.25, 3, 0));
    let merged = &tasks["5"];
    assert_eq!((merged.repeats, merged.successes), (4, 1));
    assert!((merged.mean - (1.0 + 0.75) / 4.0).abs() < 1e-12, "{}", merged.mean);
}

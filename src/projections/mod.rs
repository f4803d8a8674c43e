//! Projections (docs/cost.md, "Projections"): an administrator's predicted
//! saving (a range in the unit of one of three organisation-level metrics, over a
//! period), recorded with the baseline measured over the days before the period, the
//! outcome guards of that baseline (friction of scored sessions, share of merged pull
//! requests reverted) and the price-table and scorer versions in force; then graded
//! against what happened ([`grade`]), flagged when the gain came with rising friction or
//! reverts. `projections` is owned by [`store`]; [`measure`] reads the aggregates; [`record`] keeps
//! the rules of recording one, with its audit row.
//!
//! Invariants: every figure is the organisation's (never a person's or a team's); all
//! three metrics are costs, so a saving is the baseline minus what happened; a metric
//! with nothing to measure is `None` and grades as pending, never as zero.

pub mod measure;
pub mod record;
pub mod store;

/// What a projection predicts a saving in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Spend of the interactive sessions linked to merged pull requests, per pull request.
    CostPerMergedPr,
    /// Interactive agent spend per week.
    SpendPerWeek,
    /// Spend of merged pull requests with a business value, per unit of value.
    CostPerValueUnit,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Metric::CostPerMergedPr, Metric::SpendPerWeek, Metric::CostPerValueUnit];

    pub fn as_str(self) -> &'static str {
        match self {
            Metric::CostPerMergedPr => "cost_per_merged_pr",
            Metric::SpendPerWeek => "spend_per_week",
            Metric::CostPerValueUnit => "cost_per_value_unit",
        }
    }

    pub fn parse(text: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|metric| metric.as_str() == text)
    }

    /// The unit, in words.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::CostPerMergedPr => "USD per merged pull request",
            Metric::SpendPerWeek => "USD per week",
            Metric::CostPerValueUnit => "USD per unit of business value",
        }
    }
}

/// The figures of a window: the metric and its two outcome guards.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Measured {
    pub value: Option<f64>,
    /// Mean friction of the scored interactive sessions.
    pub friction: Option<f64>,
    /// Share of the merged pull requests with agent sessions that were reverted.
    pub revert_rate: Option<f64>,
}

/// How a projection turned out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grade {
    /// The period has not started, or there is nothing to measure on one side.
    Pending,
    /// A saving beyond the predicted range.
    Exceeded,
    /// A saving inside the range.
    Met,
    /// Some saving, below the range.
    Short,
    /// No saving at all.
    Missed,
}

impl Grade {
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Pending => "pending",
            Grade::Exceeded => "exceeded",
            Grade::Met => "met",
            Grade::Short => "short",
            Grade::Missed => "missed",
        }
    }
}

/// A rise in friction beyond this share of the baseline's flags a gain.
pub const FRICTION_RISE: f64 = 0.10;
/// A rise in the revert rate beyond this many points flags a gain.
pub const REVERT_RISE: f64 = 0.02;

/// The grade of a saving `baseline − actual` against `[low, high]`, and the guards that
/// rose with a gain (`"friction"`, `"reverts"`).
pub fn grade(low: f64, high: f64, baseline: &Measured, actual: &Measured) -> (Grade, Option<f64>, Vec<&'static str>) {
    let (Some(before), Some(after)) = (baseline.value, actual.value) else {
        return (Grade::Pending, None, Vec::new());
    };
    let saving = before - after;
    let grade = if saving > high {
        Grade::Exceeded
    } else if saving >= low {
        Grade::Met
    } else if saving > 0.0 {
        Grade::Short
    } else {
        Grade::Missed
    };
    let mut flags = Vec::new();
    if saving > 0.0 {
        if let (Some(b), Some(a)) = (baseline.friction, actual.friction)
            && a > b * (1.0 + FRICTION_RISE)
        {
            flags.push("friction");
        }
        if let (Some(b), Some(a)) = (baseline.revert_rate, actual.revert_rate)
            && a > b + REVERT_RISE
        {
            flags.push("reverts");
        }
    }
    (grade, Some(saving), flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(value: f64, friction: f64, revert_rate: f64) -> Measured {
        Measured { value: Some(value), friction: Some(friction), revert_rate: Some(revert_rate) }
    }

    #[test]
    fn savings_are_graded_against_the_range_and_gains_with_rising_guards_are_flagged() {
        // Predicted: $2 to $5 less per merged pull request, from a $20 baseline.
        let base = m(20.0, 0.30, 0.05);
        assert_eq!(grade(2.0, 5.0, &base, &m(16.0, 0.31, 0.05)), (Grade::Met, Some(4.0), vec![]));
        assert_eq!(grade(2.0, 5.0, &base, &m(14.0, 0.30, 0.05)), (Grade::Exceeded, Some(6.0), vec![]));
        assert_eq!(grade(2.0, 5.0, &base, &m(19.0, 0.30, 0.05)), (Grade::Short, Some(1.0), vec![]));
        assert_eq!(
            grade(2.0, 5.0, &base, &m(21.0, 0.90, 0.50)),
            (Grade::Missed, Some(-1.0), vec![]),
            "no gain, no flag"
        );
        // A gain with friction up 20 % (beyond 10 %) and reverts up 3 points (beyond 2).
        assert_eq!(grade(2.0, 5.0, &base, &m(16.0, 0.36, 0.08)), (Grade::Met, Some(4.0), vec!["friction", "reverts"]));
        // Friction up 10 % exactly and reverts up 2 points exactly are not flagged.
        let (_, _, flags) = grade(2.0, 5.0, &base, &m(16.0, 0.33, 0.07));
        assert!(flags.is_empty(), "{flags:?}");
        let nothing = Measured::default();
        assert_eq!(grade(2.0, 5.0, &base, &nothing), (Grade::Pending, None, vec![]));
    }
}

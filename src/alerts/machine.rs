//! The alert state machine (docs/alerts.md): what one evaluation does to a rule's
//! unresolved event, given whether the rule breaches its threshold now.
//!
//! | now \ event | none | firing | acknowledged |
//! |---|---|---|---|
//! | breaching | open (notify unless silenced) | stay (update the value) | stay |
//! | not breaching | nothing | resolve (notify unless silenced) | resolve |
//!
//! Acknowledging moves `firing` to `acknowledged` (no more reminders); silencing, until an
//! expiry, keeps the state but mutes its notifications. A resolved event is never
//! reopened: the next breach opens a new one.

/// The state of an unresolved event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    Firing,
    Acknowledged,
}

impl Open {
    pub fn as_str(self) -> &'static str {
        match self {
            Open::Firing => "firing",
            Open::Acknowledged => "acknowledged",
        }
    }

    pub fn parse(text: &str) -> Option<Open> {
        match text {
            "firing" => Some(Open::Firing),
            "acknowledged" => Some(Open::Acknowledged),
            _ => None,
        }
    }
}

/// What an evaluation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing breaches and nothing is open.
    Quiet,
    /// Open a new firing event.
    Open { notify: bool },
    /// The open event goes on breaching: keep it, with the new value.
    Continue,
    /// The open event stops breaching: resolve it.
    Resolve { notify: bool },
}

/// The step for a rule whose unresolved event is `open` (if any), which breaches now or
/// not; `silenced` when the event (or, for a new one, the rule's last event) is silenced
/// at this time.
pub fn next(open: Option<Open>, breaching: bool, silenced: bool) -> Step {
    match (open, breaching) {
        (None, false) => Step::Quiet,
        (None, true) => Step::Open { notify: !silenced },
        (Some(_), true) => Step::Continue,
        (Some(_), false) => Step::Resolve { notify: !silenced },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_of_the_table() {
        assert_eq!(next(None, false, false), Step::Quiet);
        assert_eq!(next(None, true, false), Step::Open { notify: true });
        assert_eq!(next(None, true, true), Step::Open { notify: false });
        for open in [Open::Firing, Open::Acknowledged] {
            assert_eq!(next(Some(open), true, false), Step::Continue);
            assert_eq!(next(Some(open), false, false), Step::Resolve { notify: true });
            assert_eq!(next(Some(open), false, true), Step::Resolve { notify: false });
        }
        assert_eq!(Open::parse(Open::Acknowledged.as_str()), Some(Open::Acknowledged));
        assert_eq!(Open::parse("resolved"), None);
    }
}

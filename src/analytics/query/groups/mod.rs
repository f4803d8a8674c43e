//! The minimum group size: figures shown to people who may not see the individuals
//! behind them (team and organisation pages, their CSV exports) never describe fewer than
//! `min_people` people. A figure set is read only when its subject had at least that many
//! active people in the period ([`people`], [`Guarded`]); a breakdown folds its small
//! groups into one "other" row, and keeps folding the smallest shown group into it until
//! that row too covers enough people, so no small group can be had by subtracting the
//! shown rows from the total ([`breakdown`], [`tools`]).
//!
//! Invariant: the user ids a group is counted from stay in this module; callers get counts.

use std::collections::BTreeSet;

use hashbrown::HashMap;

use rusqlite::{Connection, Row, params_from_iter};

use super::disclosure::Disclosure;
use super::models;

mod teams;
mod tools;

use super::{By, Figures, Period, Subject, parameters, read_figures, subject_filter};
use crate::db::DbError;
use teams::TeamTallies;
pub(in crate::analytics::query) use teams::members_of;
pub use teams::{TeamGroup, per_team};
pub use tools::{ToolKey, tool_groups, tools};

/// A subject's figures, or why they are not shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Guarded<T> {
    Shown(T),
    /// Fewer than the minimum number of people were active: nothing is shown.
    TooFew {
        people: i64,
        min_people: i64,
    },
    /// Enough people, but showing them would let a smaller team's figures be had by
    /// subtraction (`disclosure`): nothing is shown.
    Withheld {
        min_people: i64,
    },
}

impl<T> Guarded<T> {
    pub fn shown(&self) -> Option<&T> {
        match self {
            Guarded::Shown(value) => Some(value),
            Guarded::TooFew { .. } | Guarded::Withheld { .. } => None,
        }
    }
}

/// How many people had interactive activity of the subject in the period.
pub fn people(conn: &Connection, subject: &Subject, period: Period) -> Result<i64, DbError> {
    let (filter, values) = subject_filter(subject);
    let usage = crate::analytics::usage::table_for(period);
    let sql = format!(
        "SELECT count(DISTINCT user_id) FROM {usage}
         WHERE {filter} AND bucket_start_ms >= ? AND bucket_start_ms < ?"
    );
    Ok(conn.query_row(&sql, params_from_iter(parameters(values, period)), |row| row.get(0))?)
}

/// Whether a team's usage figures may be shown at all (`disclosure`); a person's and the
/// organisation's always may (their size is checked on its own).
pub fn disclosed(conn: &Connection, subject: &Subject, period: Period, min_people: i64) -> Result<bool, DbError> {
    match subject {
        Subject::Team(_) => Ok(Disclosure::of_usage(conn, period, min_people)?.allows_subject(subject)),
        Subject::Person(_) | Subject::Organisation => Ok(true),
    }
}

/// Reads the subject's figures with `read` only when at least `min_people` were active.
pub fn guarded<T>(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    min_people: i64,
    read: impl FnOnce(&Connection) -> Result<T, DbError>,
) -> Result<Guarded<T>, DbError> {
    let people = people(conn, subject, period)?;
    if people < min_people {
        return Ok(Guarded::TooFew { people, min_people });
    }
    if !disclosed(conn, subject, period, min_people)? {
        return Ok(Guarded::Withheld { min_people });
    }
    Ok(Guarded::Shown(read(conn)?))
}

/// One row of a guarded breakdown: `key` is `None` for the folded "other" row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRow<T> {
    pub key: Option<String>,
    pub figures: T,
    pub people: i64,
}

/// Folds rows of fewer than `min_people` into one "other" row, then the smallest shown
/// rows too until "other" covers at least `min_people` (or every row is in it). Rows
/// come in display order; "other" goes last.
pub(super) fn fold<T: Clone, P: Ord + Clone>(
    rows: Vec<(String, T, BTreeSet<P>)>,
    min_people: i64,
    add: impl Fn(&mut T, &T),
    weight: impl Fn(&T) -> i64,
) -> Vec<GroupRow<T>> {
    let min = min_people.max(1) as usize;
    let (mut shown, mut small): (Vec<_>, Vec<_>) = rows.into_iter().partition(|(_, _, people)| people.len() >= min);
    if small.is_empty() {
        return shown
            .into_iter()
            .map(|(key, figures, people)| GroupRow { key: Some(key), figures, people: people.len() as i64 })
            .collect();
    }
    let union = |rows: &[(String, T, BTreeSet<P>)]| {
        rows.iter().flat_map(|(_, _, p)| p.iter().cloned()).collect::<BTreeSet<_>>()
    };
    while union(&small).len() < min && !shown.is_empty() {
        // The shown row with the least weight joins "other".
        let at = (0..shown.len()).min_by_key(|&i| weight(&shown[i].1)).unwrap_or(0);
        small.push(shown.remove(at));
    }
    let mut out: Vec<GroupRow<T>> = shown
        .into_iter()
        .map(|(key, figures, people)| GroupRow { key: Some(key), figures, people: people.len() as i64 })
        .collect();
    let people = union(&small);
    if people.len() >= min {
        let mut figures = small[0].1.clone();
        for (_, more, _) in &small[1..] {
            add(&mut figures, more);
        }
        out.push(GroupRow { key: None, figures, people: people.len() as i64 });
    }
    out
}

fn add_figures(into: &mut Figures, more: &Figures) {
    into.events += more.events;
    into.prompts += more.prompts;
    into.sessions_started += more.sessions_started;
    into.usage.add(&more.usage);
    into.cost_nusd += more.cost_nusd;
}

/// The hourly aggregate's figure columns, in the order `read_figures` reads them.
const FIGURE_COLUMNS: &str = "events, prompts, sessions_started, input_tokens, output_tokens, cache_read_tokens,
    cache_write_5m_tokens, cache_write_1h_tokens, reasoning_tokens, cost_nusd";

/// Groups as rows, the costliest first, the small ones folded into "other".
fn costliest_first(groups: impl IntoIterator<Item = (String, Tally)>, min_people: i64) -> Vec<GroupRow<Figures>> {
    let mut rows: Vec<(String, Figures, BTreeSet<u32>)> =
        groups.into_iter().map(|(key, t)| (key, t.figures, t.people.to_set())).collect();
    rows.sort_by(|a, b| b.1.cost_nusd.cmp(&a.1.cost_nusd).then_with(|| a.0.cmp(&b.0)));
    fold(rows, min_people, add_figures, |f| f.cost_nusd)
}

/// The subject's usage broken down (`by`), costliest first (days in order), with every
/// group of fewer than `min_people` folded into the last row.
pub fn breakdown(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    by: By,
    min_people: i64,
) -> Result<Vec<GroupRow<Figures>>, DbError> {
    let sessions = if models::is_about_models(by) {
        models::ModelSessions::read(conn, subject, period)?
    } else {
        models::ModelSessions::default()
    };
    breakdown_with(conn, subject, period, by, min_people, &sessions)
}

/// [`breakdown`] with the subject's model sessions already read (a page showing several
/// model breakdowns reads them once).
pub fn breakdown_with(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    by: By,
    min_people: i64,
    sessions: &models::ModelSessions,
) -> Result<Vec<GroupRow<Figures>>, DbError> {
    let (filter, values) = subject_filter(subject);
    // Grouped here rather than by SQL, as in `tool_groups`.
    let usage = crate::analytics::usage::table_for(period);
    let sql = format!(
        "SELECT {column}, user_id, {FIGURE_COLUMNS}
         FROM {usage} WHERE {filter} AND bucket_start_ms >= ? AND bucket_start_ms < ?",
        column = by.column()
    );
    let mut groups: HashMap<String, Tally> = Default::default();
    let (mut people, mut keys) = (PersonIds::default(), RowKeys::new(by));
    let mut stmt = conn.prepare(&sql)?;
    let mut found = stmt.query(params_from_iter(parameters(values, period)))?;
    while let Some(row) = found.next()? {
        // Model rows are families, and events without a model make none (`models`).
        let Some(key) = keys.of(text(row, 0)?) else { continue };
        let person = people.of(text(row, 1)?);
        tally_in(&mut groups, key).add(&read_figures(row, 2)?, person);
    }
    if models::is_about_models(by) {
        return Ok(with_model_sessions(sessions, by, costliest_first(groups, min_people)));
    }
    if by != By::Day {
        return Ok(costliest_first(groups, min_people));
    }
    let mut days: Vec<(String, Figures, BTreeSet<u32>)> =
        groups.into_iter().map(|(key, t)| (key, t.figures, t.people.to_set())).collect();
    days.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(fold(days, min_people, add_figures, |f| f.cost_nusd))
}

/// Model rows' sessions and prompts: those of the sessions that used each model, and for
/// "other" those of the models folded into it, each session once (`models`).
fn with_model_sessions(
    sessions: &models::ModelSessions,
    by: By,
    mut rows: Vec<GroupRow<Figures>>,
) -> Vec<GroupRow<Figures>> {
    let sessions = sessions.keyed(by);
    let shown: BTreeSet<String> = rows.iter().filter_map(|row| row.key.clone()).collect();
    let shown: BTreeSet<&str> = shown.iter().map(String::as_str).collect();
    for row in &mut rows {
        sessions.apply(row.key.as_deref(), &shown, &mut row.figures);
    }
    rows
}

/// What an overview shows of its subject, read in one pass over the hourly aggregate.
pub struct Overview {
    pub people: i64,
    pub totals: Figures,
    pub by_day: Vec<GroupRow<Figures>>,
    pub agents: Vec<GroupRow<Figures>>,
    pub models: Vec<GroupRow<Figures>>,
    pub teams: Vec<GroupRow<Figures>>,
    /// Whether the subject's own figures may be shown (`disclosed`), from the same
    /// disclosure the team rows were decided by.
    pub disclosed: bool,
}

/// The figures behind a group, and who they are of (by [`PersonIds`]).
#[derive(Default)]
struct Tally {
    figures: Figures,
    people: PeopleBits,
}

/// A set of person numbers ([`PersonIds`]) as bits: adding a row's person is one OR,
/// where an ordered set took a search and, for a new person, an allocation.
#[derive(Clone, Default)]
pub(super) struct PeopleBits {
    words: Vec<u64>,
    count: usize,
}

impl PeopleBits {
    pub(super) fn insert(&mut self, person: u32) {
        let (word, bit) = ((person / 64) as usize, person % 64);
        if self.words.len() <= word {
            self.words.resize(word + 1, 0);
        }
        let mask = 1u64 << bit;
        if self.words[word] & mask == 0 {
            self.words[word] |= mask;
            self.count += 1;
        }
    }

    pub(super) fn len(&self) -> usize {
        self.count
    }

    pub(super) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The numbers, for [`fold`]'s unions.
    pub(super) fn to_set(&self) -> BTreeSet<u32> {
        let mut set = BTreeSet::new();
        for (index, word) in self.words.iter().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                set.insert(index as u32 * 64 + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
        set
    }
}

impl Tally {
    fn add(&mut self, figures: &Figures, person: u32) {
        add_figures(&mut self.figures, figures);
        self.people.insert(person);
    }
}

/// Small integers for the people the rows name, in the order met: a tally's people are
/// then a set of integers, not of 36-character ids compared and copied for every row
/// (at 2,000 developers a quarter's rows number hundreds of thousands).
#[derive(Default)]
struct PersonIds {
    ids: HashMap<String, u32>,
}

impl PersonIds {
    fn of(&mut self, user: &str) -> u32 {
        let next = self.ids.len() as u32;
        *entry(&mut self.ids, user, || next)
    }
}

/// A breakdown's group of each raw value (a model's family, `models::row_key`), worked
/// out once per value rather than once per row.
struct RowKeys {
    by: By,
    known: HashMap<String, Option<String>>,
}

impl RowKeys {
    fn new(by: By) -> RowKeys {
        RowKeys { by, known: HashMap::new() }
    }

    fn of(&mut self, raw: &str) -> Option<&str> {
        let by = self.by;
        entry(&mut self.known, raw, || models::row_key(by, raw)).as_deref()
    }
}

/// The value of `key` in `map`, made by `make` on first use: the row's text is borrowed
/// for the look-up (hashed once) and copied only for a new key (`entry` would copy it
/// every row).
fn entry<'m, V>(map: &'m mut HashMap<String, V>, key: &str, make: impl FnOnce() -> V) -> &'m mut V {
    map.entry_ref(key).or_insert_with(make)
}

/// The tally of `key`, made on first use.
fn tally_in<'m>(groups: &'m mut HashMap<String, Tally>, key: &str) -> &'m mut Tally {
    entry(groups, key, Tally::default)
}

/// A text column, borrowed from the row (no copy).
fn text<'r>(row: &'r Row<'_>, index: usize) -> rusqlite::Result<&'r str> {
    row.get_ref(index)?
        .as_str()
        .map_err(|err| rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, Box::new(err)))
}

/// The subject's people, totals, and its breakdowns by day, agent, model (each folded
/// like [`breakdown`]) and team group (disclosed like [`per_team`]), from one read of the period's rows:
/// the same figures as those functions, for the price of one scan instead of six.
pub fn overview(
    conn: &Connection,
    subject: &Subject,
    period: Period,
    teams: &[TeamGroup],
    min_people: i64,
) -> Result<Overview, DbError> {
    use std::collections::BTreeMap;
    let (filter, values) = subject_filter(subject);
    let usage = crate::analytics::usage::table_for(period);
    let sql = format!(
        "SELECT bucket_start_ms, user_id, agent_type, model, {FIGURE_COLUMNS}
         FROM {usage} WHERE {filter} AND bucket_start_ms >= ? AND bucket_start_ms < ?"
    );
    let mut per_team = TeamTallies::of(conn, teams)?;
    let mut totals = Tally::default();
    let (mut days, mut agents, mut model_families): (
        BTreeMap<i64, Tally>,
        HashMap<String, Tally>,
        HashMap<String, Tally>,
    ) = Default::default();
    let (mut people, mut families) = (PersonIds::default(), RowKeys::new(By::Model));
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query(params_from_iter(parameters(values, period)))?;
    while let Some(row) = rows.next()? {
        let bucket: i64 = row.get(0)?;
        let user = text(row, 1)?;
        let person = people.of(user);
        let figures = read_figures(row, 4)?;
        totals.add(&figures, person);
        days.entry(bucket.div_euclid(86_400_000) * 86_400_000).or_default().add(&figures, person);
        tally_in(&mut agents, text(row, 2)?).add(&figures, person);
        if let Some(family) = families.of(text(row, 3)?) {
            tally_in(&mut model_families, family).add(&figures, person);
        }
        per_team.add(&figures, user, person);
    }
    let by_day = days.into_iter().map(|(day, t)| (day.to_string(), t.figures, t.people.to_set())).collect();
    let disclosure = Disclosure::of_usage(conn, period, min_people)?;
    Ok(Overview {
        people: totals.people.len() as i64,
        totals: totals.figures,
        by_day: fold(by_day, min_people, add_figures, |f| f.cost_nusd),
        agents: costliest_first(agents, min_people),
        models: with_model_sessions(
            &models::ModelSessions::read(conn, subject, period)?,
            By::Model,
            costliest_first(model_families, min_people),
        ),
        teams: per_team.rows(&disclosure),
        disclosed: disclosure.allows_subject(subject),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn people(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|id| id.to_string()).collect()
    }

    fn sum(into: &mut i64, more: &i64) {
        *into += more;
    }

    proptest::proptest! {
        /// The bit set holds what an ordered set of the same numbers holds, duplicates once.
        #[test]
        fn people_bits_are_the_set_of_the_numbers_added(numbers in proptest::collection::vec(0u32..5_000, 0..300)) {
            let mut bits = PeopleBits::default();
            for number in &numbers {
                bits.insert(*number);
            }
            let expected: BTreeSet<u32> = numbers.iter().copied().collect();
            proptest::prop_assert_eq!(bits.len(), expected.len());
            proptest::prop_assert_eq!(bits.is_empty(), expected.is_empty());
            proptest::prop_assert_eq!(bits.to_set(), expected);
        }

        /// Whatever the groups: no row describes fewer than the minimum, and either nothing
        /// is shown (everyone together is fewer) or every figure is somewhere (nothing lost).
        #[test]
        fn no_row_is_about_fewer_than_the_minimum_and_nothing_is_lost(
            groups in proptest::collection::vec((0i64..1_000, proptest::collection::btree_set(0u8..12, 0..6)), 0..8),
            min in 2i64..7,
        ) {
            let rows: Vec<(String, i64, BTreeSet<String>)> = groups
                .iter()
                .enumerate()
                .map(|(i, (value, ids))| (format!("g{i}"), *value, ids.iter().map(|id| id.to_string()).collect()))
                .collect();
            let everyone: BTreeSet<String> = rows.iter().flat_map(|(_, _, p)| p.iter().cloned()).collect();
            let total: i64 = rows.iter().map(|(_, v, _)| v).sum();
            let folded = fold(rows, min, sum, |v| *v);
            proptest::prop_assert!(folded.iter().all(|row| row.people >= min));
            if (everyone.len() as i64) < min {
                proptest::prop_assert!(folded.is_empty());
            } else {
                proptest::prop_assert_eq!(folded.iter().map(|row| row.figures).sum::<i64>(), total);
            }
        }
    }

    #[test]
    fn big_groups_stay_and_small_ones_fold_into_other() {
        let rows = vec![
            ("a".to_string(), 50, people(&["1", "2", "3"])),
            ("b".to_string(), 30, people(&["1", "4"])),
            ("c".to_string(), 20, people(&["5"])),
        ];
        let folded = fold(rows, 3, sum, |v| *v);
        assert_eq!(folded.len(), 2);
        assert_eq!((folded[0].key.as_deref(), folded[0].figures, folded[0].people), (Some("a"), 50, 3));
        // b and c together are three people (1, 4, 5).
        assert_eq!((folded[1].key.as_deref(), folded[1].figures, folded[1].people), (None, 50, 3));
    }

    /// One small group alone could be had by subtraction: the smallest shown group joins it.
    #[test]
    fn other_too_small_takes_the_smallest_shown_group_and_never_shows_fewer() {
        let rows = vec![
            ("a".to_string(), 50, people(&["1", "2", "3"])),
            ("b".to_string(), 40, people(&["4", "5", "6"])),
            ("c".to_string(), 5, people(&["7"])),
        ];
        let folded = fold(rows, 3, sum, |v| *v);
        assert_eq!(folded.iter().map(|r| r.key.clone()).collect::<Vec<_>>(), [Some("a".to_string()), None]);
        assert_eq!((folded[1].figures, folded[1].people), (45, 4));
        // Everyone together is fewer than the minimum: nothing at all.
        let rows = vec![("a".to_string(), 5, people(&["1"])), ("b".to_string(), 5, people(&["2"]))];
        assert!(fold(rows, 3, sum, |v| *v).is_empty());
        // No row is ever about fewer than the minimum.
        let rows = vec![("a".to_string(), 9, people(&["1", "2", "3"])), ("b".to_string(), 1, people(&["1"]))];
        assert!(fold(rows, 3, sum, |v| *v).iter().all(|r| r.people >= 3));
    }
}

//! Sign-in throttling by account and address together, with growing delays, as the
//! identity providers do ("smart lockout"): a password guesser slows down, and the
//! rightful owner from their usual address still gets in.
//!
//! Three counts of failures, each forgotten [`QUIET_MS`] after its last failure:
//! - **this account from this address**: after [`PAIR_FREE`] failures, each further
//!   attempt waits 1 s, then 2 s, 4 s, … up to [`MAX_DELAY_MS`] after the last failure;
//! - **this account from every unfamiliar address together**: after [`ACCOUNT_FREE`]
//!   failures the same growing delay applies to attempts from any address the account
//!   has not signed in from in [`FAMILIAR_MS`]; an address it has signed in from is
//!   exempt, so guesses from elsewhere never lock the owner out;
//! - **this address, whatever the account**: [`ADDRESS_LIMIT`] failures in
//!   [`WINDOW_MS`] refuse it until the window ends (one client spraying many accounts).
//!
//! Invariants: only failures count; a success clears that account's counts and makes its
//! address familiar; the counts are in memory (one process serves the organisation; a
//! restart forgets them, which costs an attacker a restart they cannot cause) and pruned
//! so they cannot grow without bound. The familiar addresses are also kept in
//! `sign_in_addresses` ([`remember`], [`familiar_since`]) and read back at start
//! ([`LoginThrottle::seed`]): were they forgotten, eleven guesses after a restart would
//! lock the only administrator out (L3 of issue 52).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use rusqlite::{Connection, params};

use crate::db::DbError;

/// The address-wide window.
pub const WINDOW_MS: i64 = 15 * 60_000;
/// Failures per client address per window (an office behind one address has several
/// people mistyping).
pub const ADDRESS_LIMIT: u32 = 20;
/// Failures of one account from one address before delays begin.
pub const PAIR_FREE: u32 = 3;
/// Failures of one account from unfamiliar addresses together before delays begin.
pub const ACCOUNT_FREE: u32 = 10;
/// The longest delay.
pub const MAX_DELAY_MS: i64 = 15 * 60_000;
/// Failures are forgotten this long after the last one.
pub const QUIET_MS: i64 = 60 * 60_000;
/// An address an account signed in from stays familiar this long.
pub const FAMILIAR_MS: i64 = 30 * 86_400_000;
const PRUNE_ABOVE: usize = 10_000;

/// Failures counted since the count was last clear, and when the last one was.
#[derive(Clone, Copy, Default)]
struct Failures {
    count: u32,
    last_ms: i64,
}

impl Failures {
    fn live(self, now_ms: i64) -> u32 {
        if now_ms - self.last_ms < QUIET_MS { self.count } else { 0 }
    }

    /// How long from `now_ms` an attempt must wait, with `free` failures allowed.
    fn wait_ms(self, free: u32, now_ms: i64) -> i64 {
        let count = self.live(now_ms);
        if count < free {
            return 0;
        }
        let delay = (1000i64 << (count - free).min(20)).min(MAX_DELAY_MS);
        (self.last_ms + delay - now_ms).max(0)
    }

    fn add(&mut self, now_ms: i64) {
        self.count = self.live(now_ms) + 1;
        self.last_ms = now_ms;
    }
}

#[derive(Clone, Copy)]
struct Window {
    started_ms: i64,
    failures: u32,
}

#[derive(Default)]
struct Counts {
    pairs: HashMap<(String, IpAddr), Failures>,
    accounts: HashMap<String, Failures>,
    addresses: HashMap<IpAddr, Window>,
    /// When each account last signed in from each address.
    familiar: HashMap<(String, IpAddr), i64>,
}

#[derive(Default)]
pub struct LoginThrottle {
    counts: Mutex<Counts>,
}

/// The longest account name counted (an e-mail address is at most 254 bytes); a longer
/// one is cut, so no client can make the table hold megabytes per entry.
const MAX_ACCOUNT_BYTES: usize = 254;

fn account_key(account: &str) -> String {
    let mut key = account.trim().to_lowercase();
    crate::model::truncate_at_char_boundary(&mut key, MAX_ACCOUNT_BYTES);
    key
}

impl LoginThrottle {
    /// Checks and counts an attempt in one step: `Err(seconds)` to wait, or the attempt is
    /// counted as a failure now (under the lock), so guesses sent in parallel cannot all pass
    /// the check before any of them is counted. A right password then calls [`succeeded`],
    /// which clears it.
    ///
    /// [`succeeded`]: LoginThrottle::succeeded
    pub fn attempt(&self, account: &str, address: IpAddr, now_ms: i64) -> Result<(), u64> {
        let Ok(mut counts) = self.counts.lock() else { return Ok(()) };
        check_counts(&counts, account, address, now_ms)?;
        count_failure(&mut counts, account, address, now_ms);
        Ok(())
    }

    /// `Err(seconds)` to wait before this account may be tried from this address, without
    /// counting an attempt (the tests' view; sign-in uses [`attempt`]).
    ///
    /// [`attempt`]: LoginThrottle::attempt
    #[cfg(test)]
    pub fn check(&self, account: &str, address: IpAddr, now_ms: i64) -> Result<(), u64> {
        let Ok(counts) = self.counts.lock() else { return Ok(()) };
        check_counts(&counts, account, address, now_ms)
    }

    /// Forgets counts that have gone quiet and familiar addresses that have aged
    /// (`sweep-scratch`); returns how many.
    pub fn prune(&self, now_ms: i64) -> usize {
        let Ok(mut counts) = self.counts.lock() else { return 0 };
        drop_ended(&mut counts, now_ms)
    }

    /// Counts one failure (the tests' way of making history; sign-in counts in [`attempt`]).
    ///
    /// [`attempt`]: LoginThrottle::attempt
    #[cfg(test)]
    pub fn failed(&self, account: &str, address: IpAddr, now_ms: i64) {
        if let Ok(mut counts) = self.counts.lock() {
            count_failure(&mut counts, account, address, now_ms);
        }
    }

    /// The account signed in from this address: this address's count for the account
    /// clears, the attempt [`attempt`] counted is taken back from the account-wide and
    /// address counts, and the address is familiar. Other addresses' counts stay: a
    /// guesser elsewhere keeps their delay.
    ///
    /// [`attempt`]: LoginThrottle::attempt
    pub fn succeeded(&self, account: &str, address: IpAddr, now_ms: i64) {
        if let Ok(mut counts) = self.counts.lock() {
            let account = account_key(account);
            counts.pairs.remove(&(account.clone(), address));
            // The attempt reached the account-wide count only from an unfamiliar address.
            if !is_familiar(&counts, &account, address, now_ms)
                && let Some(everywhere) = counts.accounts.get_mut(&account)
            {
                everywhere.count = everywhere.count.saturating_sub(1);
            }
            if let Some(window) = counts.addresses.get_mut(&address) {
                window.failures = window.failures.saturating_sub(1);
            }
            counts.familiar.insert((account, address), now_ms);
        }
    }
}

impl LoginThrottle {
    /// Makes each (account, address, signed-in-at) familiar, as read back at start.
    pub fn seed(&self, familiar: impl IntoIterator<Item = (String, IpAddr, i64)>) {
        if let Ok(mut counts) = self.counts.lock() {
            for (account, address, signed_in_ms) in familiar {
                counts.familiar.insert((account_key(&account), address), signed_in_ms);
            }
        }
    }
}

/// Keeps that `account` signed in from `address` at `now_ms`, in the caller's
/// transaction; rows older than [`FAMILIAR_MS`] go at the same time.
pub fn remember(tx: &Connection, account: &str, address: IpAddr, now_ms: i64) -> Result<(), DbError> {
    tx.prepare_cached(
        "INSERT INTO sign_in_addresses (account, address, signed_in_at_ms) VALUES (?1, ?2, ?3)
         ON CONFLICT (account, address) DO UPDATE SET signed_in_at_ms = max(signed_in_at_ms, excluded.signed_in_at_ms)",
    )?
    .execute(params![account_key(account), address.to_string(), now_ms])?;
    tx.prepare_cached("DELETE FROM sign_in_addresses WHERE signed_in_at_ms <= ?1")?.execute([now_ms - FAMILIAR_MS])?;
    Ok(())
}

/// The addresses accounts signed in from within [`FAMILIAR_MS`] of `now_ms` (at most
/// the newest 10,000, the in-memory table's bound).
pub fn familiar_since(conn: &Connection, now_ms: i64) -> Result<Vec<(String, IpAddr, i64)>, DbError> {
    let mut stmt = conn.prepare(
        "SELECT account, address, signed_in_at_ms FROM sign_in_addresses WHERE signed_in_at_ms > ?1
         ORDER BY signed_in_at_ms DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![now_ms - FAMILIAR_MS, PRUNE_ABOVE as i64], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, i64>(2)?))
    })?;
    let mut familiar = Vec::new();
    for row in rows {
        let (account, address, signed_in_ms) = row?;
        // A row that is not an address (written by hand) is skipped, not fatal.
        if let Ok(address) = address.parse() {
            familiar.push((account, address, signed_in_ms));
        }
    }
    Ok(familiar)
}

fn entries(counts: &Counts) -> usize {
    counts.pairs.len() + counts.accounts.len() + counts.addresses.len() + counts.familiar.len()
}

/// Whether the account signed in from the address within [`FAMILIAR_MS`]: its failures
/// there do not reach the account-wide count.
fn is_familiar(counts: &Counts, account: &str, address: IpAddr, now_ms: i64) -> bool {
    counts.familiar.get(&(account.to_string(), address)).is_some_and(|signed_in_ms| now_ms - signed_in_ms < FAMILIAR_MS)
}

/// `Err(seconds)` to wait, from the counts as they stand.
fn check_counts(counts: &Counts, account: &str, address: IpAddr, now_ms: i64) -> Result<(), u64> {
    let account = account_key(account);
    let pair = counts.pairs.get(&(account.clone(), address)).copied().unwrap_or_default();
    let mut wait_ms = pair.wait_ms(PAIR_FREE, now_ms);
    if !is_familiar(counts, &account, address, now_ms) {
        let everywhere = counts.accounts.get(&account).copied().unwrap_or_default();
        wait_ms = wait_ms.max(everywhere.wait_ms(ACCOUNT_FREE, now_ms));
    }
    if let Some(window) = counts.addresses.get(&address)
        && now_ms - window.started_ms < WINDOW_MS
        && window.failures >= ADDRESS_LIMIT
    {
        wait_ms = wait_ms.max(window.started_ms + WINDOW_MS - now_ms);
    }
    if wait_ms > 0 { Err((wait_ms as u64).div_ceil(1000)) } else { Ok(()) }
}

/// Counts one failure of the account from the address.
fn count_failure(counts: &mut Counts, account: &str, address: IpAddr, now_ms: i64) {
    if entries(counts) > PRUNE_ABOVE {
        drop_ended(counts, now_ms);
    }
    let account = account_key(account);
    counts.pairs.entry((account.clone(), address)).or_default().add(now_ms);
    if !is_familiar(counts, &account, address, now_ms) {
        counts.accounts.entry(account).or_default().add(now_ms);
    }
    let window = counts.addresses.entry(address).or_insert(Window { started_ms: now_ms, failures: 0 });
    if now_ms - window.started_ms >= WINDOW_MS {
        *window = Window { started_ms: now_ms, failures: 0 };
    }
    window.failures += 1;
}

/// Drops what no longer counts; returns how many entries went.
fn drop_ended(counts: &mut Counts, now_ms: i64) -> usize {
    let before = entries(counts);
    counts.pairs.retain(|_, failures| failures.live(now_ms) > 0);
    counts.accounts.retain(|_, failures| failures.live(now_ms) > 0);
    counts.addresses.retain(|_, window| now_ms - window.started_ms < WINDOW_MS);
    counts.familiar.retain(|_, signed_in_ms| now_ms - *signed_in_ms < FAMILIAR_MS);
    before - entries(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));
    const ATTACKER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 66));

    #[test]
    fn guesses_from_one_address_wait_longer_and_longer() {
        let throttle = LoginThrottle::default();
        let mut now = 1_000;
        for _ in 0..PAIR_FREE {
            assert!(throttle.check("Ada@example.com", ATTACKER, now).is_ok());
            throttle.failed("ada@example.com", ATTACKER, now);
        }
        assert_eq!(throttle.check("ADA@example.com", ATTACKER, now), Err(1), "the fourth waits a second");
        now += 1_000;
        throttle.failed("ada@example.com", ATTACKER, now);
        assert_eq!(throttle.check("ada@example.com", ATTACKER, now), Err(2));
        now += 2_000;
        throttle.failed("ada@example.com", ATTACKER, now);
        assert_eq!(throttle.check("ada@example.com", ATTACKER, now), Err(4), "doubling");
        for _ in 0..30 {
            throttle.failed("ada@example.com", ATTACKER, now);
        }
        assert_eq!(throttle.check("ada@example.com", ATTACKER, now), Err((MAX_DELAY_MS / 1000) as u64), "capped");
        assert!(throttle.check("ada@example.com", ATTACKER, now + QUIET_MS).is_ok(), "forgotten when quiet");
        assert!(throttle.check("bob@example.com", HOME, now).is_ok(), "other accounts unaffected");
    }

    /// One client guessing the only administrator's password from its own address never
    /// keeps the administrator out at their usual address.
    #[test]
    fn the_owner_from_a_familiar_address_gets_in_while_someone_else_guesses() {
        let throttle = LoginThrottle::default();
        throttle.succeeded("admin@example.com", HOME, 0);
        let mut now = 60_000;
        for round in 0..200u32 {
            // The attacker rotates addresses: every count but the account-wide one is fresh.
            let address = IpAddr::V4(std::net::Ipv4Addr::new(198, 51, (round / 250) as u8, (round % 250) as u8));
            throttle.failed("admin@example.com", address, now);
            now += 100;
        }
        assert!(throttle.check("admin@example.com", ATTACKER, now).is_err(), "an unfamiliar address waits");
        assert!(throttle.check("admin@example.com", HOME, now).is_ok(), "the usual address gets straight in");
        // A mistake at home counts only there; the owner's success leaves the guesser waiting.
        throttle.failed("admin@example.com", HOME, now);
        assert!(throttle.check("admin@example.com", HOME, now).is_ok());
        throttle.succeeded("admin@example.com", HOME, now);
        assert!(throttle.check("admin@example.com", ATTACKER, now).is_err());
        // Familiarity ages out: a month later home is an address like any other.
        let later = now + FAMILIAR_MS;
        throttle.prune(later);
        for _ in 0..ACCOUNT_FREE {
            throttle.failed("admin@example.com", ATTACKER, later);
        }
        assert!(throttle.check("admin@example.com", HOME, later).is_err());
    }

    /// Signing in from home, again and again, takes back only the home attempts; the
    /// guesser's failures elsewhere keep counting toward the account-wide delay.
    #[test]
    fn the_owners_sign_ins_at_home_do_not_wear_down_a_guessers_count() {
        let throttle = LoginThrottle::default();
        throttle.succeeded("admin@example.com", HOME, 0);
        let mut now = 1_000;
        for round in 0..ACCOUNT_FREE {
            let address = IpAddr::V4(std::net::Ipv4Addr::new(198, 51, 100, round as u8));
            throttle.attempt("admin@example.com", address, now).unwrap();
            throttle.attempt("admin@example.com", HOME, now).unwrap();
            throttle.succeeded("admin@example.com", HOME, now);
            now += 1;
        }
        assert!(
            throttle.check("admin@example.com", ATTACKER, now).is_err(),
            "ten guesses from unfamiliar addresses still count"
        );
    }

    /// What a restart reads back keeps the owner's address familiar.
    #[test]
    fn familiar_addresses_survive_a_restart_through_the_table() {
        let conn = crate::db::plans::main_db();
        remember(&conn, "Admin@Example.com", HOME, 1_000).unwrap();
        remember(&conn, "old@example.com", HOME, -FAMILIAR_MS).unwrap();
        let read = familiar_since(&conn, 2_000).unwrap();
        assert_eq!(read, vec![("admin@example.com".to_string(), HOME, 1_000)]);
        let restarted = LoginThrottle::default();
        restarted.seed(read);
        for round in 0..ACCOUNT_FREE {
            restarted.failed(
                "admin@example.com",
                IpAddr::V4(std::net::Ipv4Addr::new(198, 51, 100, round as u8)),
                2_000,
            );
        }
        assert!(restarted.check("admin@example.com", ATTACKER, 2_000).is_err());
        assert!(restarted.check("admin@example.com", HOME, 2_000).is_ok(), "home is still familiar");
    }

    #[test]
    fn an_address_spraying_many_accounts_is_refused_until_its_window_ends() {
        let throttle = LoginThrottle::default();
        for i in 0..ADDRESS_LIMIT {
            throttle.failed(&format!("user{i}@example.com"), ATTACKER, 0);
        }
        assert_eq!(throttle.check("new@example.com", ATTACKER, 0), Err((WINDOW_MS / 1000) as u64));
        assert!(throttle.check("new@example.com", HOME, 0).is_ok());
        assert!(throttle.check("new@example.com", ATTACKER, WINDOW_MS).is_ok());
    }

    /// Guesses sent at once are counted as they pass the check, not after their slow
    /// password check: the fourth waits even before any of the first three has failed.
    #[test]
    fn parallel_attempts_are_counted_before_their_outcome() {
        let throttle = LoginThrottle::default();
        for _ in 0..PAIR_FREE {
            assert!(throttle.attempt("ada@example.com", ATTACKER, 0).is_ok());
        }
        assert_eq!(throttle.attempt("ada@example.com", ATTACKER, 0), Err(1));
        // The owner's right password at home takes back only their own attempt.
        assert!(throttle.attempt("ada@example.com", HOME, 0).is_ok());
        throttle.succeeded("ada@example.com", HOME, 0);
        assert!(throttle.check("ada@example.com", ATTACKER, 0).is_err(), "the guesser still waits");
        assert!(throttle.check("ada@example.com", HOME, 0).is_ok());
        // An address that is megabytes long is kept as 254 bytes.
        throttle.failed(&"x".repeat(2 << 20), ATTACKER, 0);
        let longest = throttle.counts.lock().unwrap().pairs.keys().map(|(account, _)| account.len()).max();
        assert_eq!(longest, Some(254));
    }
}

//! Throttling of one-time codes typed by a signed-in person (`/device`, RFC 8628 §5.1):
//! wrong codes are counted per person and per client address in a fixed window; past
//! the limit, attempts are refused with 429 and a `Retry-After` until the window ends —
//! even with the right code, so guessing gains nothing by continuing. The person is
//! already signed in, so this can lock no one out of their account (passwords have
//! their own, `super::throttle`).
//!
//! Invariants: only failures count and a success clears the account's count; the
//! table is in memory (one process serves the organisation; a restart forgets, which
//! costs an attacker a restart they cannot cause) and is pruned so it cannot grow
//! without bound.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

pub const WINDOW_MS: i64 = 15 * 60_000;
/// Failures per account per window.
pub const ACCOUNT_LIMIT: u32 = 5;
/// Failures per client address per window (an office behind one address has
/// several people mistyping).
pub const ADDRESS_LIMIT: u32 = 20;
/// Device codes one client address may ask for per window (`sightline login` asks for
/// one; an office behind one address onboarding together asks for more).
pub const CODES_PER_ADDRESS: u32 = 20;
const PRUNE_ABOVE: usize = 10_000;

#[derive(Clone, Copy)]
struct Window {
    started_ms: i64,
    failures: u32,
}

#[derive(Default)]
pub struct CodeThrottle {
    windows: Mutex<HashMap<String, Window>>,
}

impl CodeThrottle {
    fn keys(account: &str, address: IpAddr) -> [(String, u32); 2] {
        [
            (format!("account:{}", account.trim().to_lowercase()), ACCOUNT_LIMIT),
            (format!("address:{address}"), ADDRESS_LIMIT),
        ]
    }

    /// `Err(seconds)` to wait if this account or address is over its limit.
    pub fn check(&self, account: &str, address: IpAddr, now_ms: i64) -> Result<(), u64> {
        let Ok(windows) = self.windows.lock() else { return Ok(()) };
        let mut wait_ms = 0;
        for (key, limit) in Self::keys(account, address) {
            if let Some(window) = windows.get(&key)
                && now_ms - window.started_ms < WINDOW_MS
                && window.failures >= limit
            {
                wait_ms = wait_ms.max(window.started_ms + WINDOW_MS - now_ms);
            }
        }
        if wait_ms > 0 { Err((wait_ms as u64).div_ceil(1000)) } else { Ok(()) }
    }

    /// Forgets windows that have ended (`sweep-scratch`); returns how many.
    pub fn prune(&self, now_ms: i64) -> usize {
        let Ok(mut windows) = self.windows.lock() else { return 0 };
        drop_ended(&mut windows, now_ms)
    }

    /// Counts a device code asked for from `address`: `Err(seconds)` to wait once the
    /// address asked for [`CODES_PER_ADDRESS`] in the window (the code is not made).
    ///
    /// An IPv6 client is counted by its /64 (one machine's whole subnet), else a single
    /// host could take the organisation's waiting codes with addresses of its own. The
    /// table holds at most `PRUNE_ABOVE` live windows: past it a new address waits a
    /// minute, so a flood from many addresses costs a bounded table, not a growing scan.
    pub fn take_code(&self, address: IpAddr, now_ms: i64) -> Result<(), u64> {
        let Ok(mut windows) = self.windows.lock() else { return Ok(()) };
        let key = match address {
            IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                format!("codes:{}/64", std::net::Ipv6Addr::from(prefix))
            }
            _ => format!("codes:{}", address.to_canonical()),
        };
        if windows.len() > PRUNE_ABOVE && !windows.contains_key(&key) {
            drop_ended(&mut windows, now_ms);
            if windows.len() > PRUNE_ABOVE {
                return Err(60);
            }
        }
        let window = current_window(&mut windows, key, now_ms);
        if window.failures >= CODES_PER_ADDRESS {
            return Err(((window.started_ms + WINDOW_MS - now_ms) as u64).div_ceil(1000));
        }
        window.failures += 1;
        Ok(())
    }

    pub fn failed(&self, account: &str, address: IpAddr, now_ms: i64) {
        let Ok(mut windows) = self.windows.lock() else { return };
        if windows.len() > PRUNE_ABOVE {
            drop_ended(&mut windows, now_ms);
        }
        for (key, _) in Self::keys(account, address) {
            current_window(&mut windows, key, now_ms).failures += 1;
        }
    }

    pub fn succeeded(&self, account: &str) {
        if let Ok(mut windows) = self.windows.lock() {
            windows.remove(&format!("account:{}", account.trim().to_lowercase()));
        }
    }
}

/// Drops the windows that have ended; returns how many.
fn drop_ended(windows: &mut HashMap<String, Window>, now_ms: i64) -> usize {
    let before = windows.len();
    windows.retain(|_, window| now_ms - window.started_ms < WINDOW_MS);
    before - windows.len()
}

/// `key`'s window at `now_ms`: a new one when it had none or its window ended.
fn current_window(windows: &mut HashMap<String, Window>, key: String, now_ms: i64) -> &mut Window {
    let window = windows.entry(key).or_insert(Window { started_ms: now_ms, failures: 0 });
    if now_ms - window.started_ms >= WINDOW_MS {
        *window = Window { started_ms: now_ms, failures: 0 };
    }
    window
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_codes_are_counted_per_address_and_per_ipv6_subnet() {
        let throttle = CodeThrottle::default();
        let one: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        for _ in 0..CODES_PER_ADDRESS {
            assert!(throttle.take_code(one, 0).is_ok());
        }
        assert_eq!(throttle.take_code("2001:db8:1:2::ffff".parse().unwrap(), 0), Err(900), "the same /64");
        assert!(throttle.take_code("2001:db8:1:3::1".parse().unwrap(), 0).is_ok(), "another /64");
        assert!(throttle.take_code("192.0.2.1".parse().unwrap(), 0).is_ok());
        assert!(throttle.take_code(one, WINDOW_MS).is_ok(), "the window ends");
    }

    const HERE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1));

    #[test]
    fn an_account_locks_after_its_limit_until_the_window_ends() {
        let throttle = CodeThrottle::default();
        for _ in 0..ACCOUNT_LIMIT {
            assert!(throttle.check("Ada@example.com", HERE, 1_000).is_ok());
            throttle.failed("ada@example.com", HERE, 1_000);
        }
        assert_eq!(throttle.check("ada@example.com", HERE, 1_000), Err(900));
        assert_eq!(throttle.check("ADA@example.com", HERE, 1_000 + WINDOW_MS - 1_500), Err(2));
        assert!(throttle.check("ada@example.com", HERE, 1_000 + WINDOW_MS).is_ok());
        assert!(throttle.check("bob@example.com", HERE, 1_000).is_ok(), "other accounts unaffected");
    }

    #[test]
    fn an_address_locks_across_accounts_and_success_clears_only_the_account() {
        let throttle = CodeThrottle::default();
        for i in 0..ADDRESS_LIMIT {
            throttle.failed(&format!("user{i}@example.com"), HERE, 0);
        }
        assert!(throttle.check("new@example.com", HERE, 0).is_err());
        let elsewhere: IpAddr = "10.0.0.2".parse().unwrap();
        assert!(throttle.check("new@example.com", elsewhere, 0).is_ok());
        for _ in 0..ACCOUNT_LIMIT {
            throttle.failed("eve@example.com", elsewhere, 0);
        }
        throttle.succeeded("eve@example.com");
        assert!(throttle.check("eve@example.com", elsewhere, 0).is_ok());
    }
}

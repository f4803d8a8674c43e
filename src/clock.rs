//! The server's notion of "now", in Unix milliseconds: one [`Clock`] for all server code
//! (requests, the writer, the indexer, timers, the deletion runner). Production reads
//! the system clock; tests hold a manual clock and move it, so expiry (grants, tokens,
//! device codes, throttling) and schedules are tested by setting the time rather than
//! by sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// The system clock in Unix milliseconds. Server code asks its [`Clock`] instead, so
/// that tests can hold time still; this is for the developer-machine commands and the
/// operator verbs, which have no server state.
pub fn system_now_ms() -> i64 {
    (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

#[derive(Clone, Debug, Default)]
pub struct Clock {
    manual: Option<Arc<AtomicI64>>,
}

impl Clock {
    pub fn system() -> Clock {
        Clock { manual: None }
    }

    /// A clock that stays at `now_ms` until moved.
    pub fn manual(now_ms: i64) -> Clock {
        Clock { manual: Some(Arc::new(AtomicI64::new(now_ms))) }
    }

    pub fn now_ms(&self) -> i64 {
        match &self.manual {
            Some(value) => value.load(Ordering::SeqCst),
            None => system_now_ms(),
        }
    }

    /// Moves a manual clock forward; a system clock ignores it.
    pub fn advance_ms(&self, by_ms: i64) {
        if let Some(value) = &self.manual {
            value.fetch_add(by_ms, Ordering::SeqCst);
        }
    }
}

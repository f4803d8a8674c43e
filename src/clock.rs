//! The server's notion of "now", in Unix milliseconds. Production reads the system
//! clock; tests hold a manual clock and move it, so expiry (grants, tokens, device
//! codes, throttling) is tested by setting the time rather than by sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

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
            None => crate::db::now_ms(),
        }
    }

    /// Moves a manual clock forward; a system clock ignores it.
    pub fn advance_ms(&self, by_ms: i64) {
        if let Some(value) = &self.manual {
            value.fetch_add(by_ms, Ordering::SeqCst);
        }
    }
}

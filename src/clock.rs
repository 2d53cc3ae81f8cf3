//! The real clock: the system's wall clock (`CLOCK_REALTIME`, read through the vDSO), in
//! milliseconds since the snowflake epoch.

use crate::generator::Clock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    pub epoch_unix_ms: i64,
}

/// Milliseconds since 1970-01-01 UTC, negative before it.
pub fn unix_now_ms() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(since) => since.as_millis() as i64,
        Err(before) => -(before.duration().as_millis() as i64),
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        unix_now_ms() - self.epoch_unix_ms
    }

    fn sleep_ms(&self, ms: i64) {
        std::thread::sleep(Duration::from_millis(ms.max(0) as u64));
    }
}

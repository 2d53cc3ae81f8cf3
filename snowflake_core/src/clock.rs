//! The real clock: the system's wall clock (`CLOCK_REALTIME`, read through the vDSO), in
//! ticks of the layout's unit since the snowflake epoch.

use crate::generator::Clock;
use crate::layout::Unit;
use std::time::Duration;

#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    pub epoch_unix_ms: i64,
    pub unit: Unit,
}

/// Milliseconds since 1970-01-01 UTC, negative before it. Read with `clock_gettime`
/// directly: `SystemTime` arithmetic (checked subtraction, 128-bit millis) cost a third
/// again as much as the clock read itself on every `snowflake_next()`.
#[inline]
pub fn unix_now_ms() -> i64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the current time into `now`; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
    now.tv_sec * 1000 + now.tv_nsec / 1_000_000
}

impl SystemClock {
    /// The tick that a time in ms since 1970 falls in.
    #[inline]
    pub fn tick_of_unix_ms(&self, unix_ms: i64) -> i64 {
        self.unit.ticks_of_ms(unix_ms - self.epoch_unix_ms)
    }

    /// The last ms since 1970 of tick `tick`.
    pub fn unix_ms_of_tick_end(&self, tick: i64) -> i64 {
        (tick + 1) * self.unit.ms() - 1 + self.epoch_unix_ms
    }
}

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> i64 {
        self.tick_of_unix_ms(unix_now_ms())
    }

    fn sleep(&self, ticks: i64) {
        let ms = ticks.max(0) * self.unit.ms();
        std::thread::sleep(Duration::from_millis(ms as u64));
    }

    fn unit(&self) -> Unit {
        self.unit
    }
}

//! The real clock: the system's wall clock (`CLOCK_REALTIME`, read through the vDSO), in
//! ticks of the layout's unit since the snowflake epoch, and how far into the tick.

use crate::generator::{Clock, Reading};
use crate::layout::Unit;
use std::time::Duration;

#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    pub epoch_unix_ms: i64,
    pub unit: Unit,
}

pub const NS_PER_MS: u64 = 1_000_000;

/// The wall clock since 1970-01-01 UTC: whole ms (negative before 1970), and the ns into
/// the last of them. Read with `clock_gettime` directly: `SystemTime` arithmetic (checked
/// subtraction, 128-bit millis) cost a third again as much as the clock read itself on
/// every `snowflake_next()`.
#[inline]
fn unix_now() -> (i64, u32) {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the current time into `now`; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
    let ms_of_second = now.tv_nsec / NS_PER_MS as i64;
    (
        now.tv_sec * 1000 + ms_of_second,
        (now.tv_nsec - ms_of_second * NS_PER_MS as i64) as u32,
    )
}

/// Milliseconds since 1970-01-01 UTC, negative before it.
#[inline]
pub fn unix_now_ms() -> i64 {
    unix_now().0
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

    /// The reading of the time `ns_of_ms` ns past `unix_ms`. The unit's division is by a
    /// constant (a multiplication), and none at all for 1 ms ticks: this runs on every call.
    #[inline]
    fn reading_at(&self, unix_ms: i64, ns_of_ms: u32) -> Reading {
        let ms = unix_ms - self.epoch_unix_ms;
        if self.unit == Unit::Ms {
            return Reading {
                tick: ms,
                nanos: ns_of_ms,
            };
        }
        let tick = self.unit.ticks_of_ms(ms);
        // Below 10^9 for a tick of a second: within a u32.
        let ms_of_tick = (ms - tick * self.unit.ms()) as u32;
        Reading {
            tick,
            nanos: ms_of_tick * NS_PER_MS as u32 + ns_of_ms,
        }
    }
}

impl Clock for SystemClock {
    #[inline]
    fn read(&self) -> Reading {
        let (unix_ms, ns_of_ms) = unix_now();
        self.reading_at(unix_ms, ns_of_ms)
    }

    fn sleep(&self, ticks: i64) {
        let ms = ticks.max(0) * self.unit.ms();
        std::thread::sleep(Duration::from_millis(ms as u64));
    }

    fn unit(&self) -> Unit {
        self.unit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(unit: Unit) -> SystemClock {
        SystemClock {
            epoch_unix_ms: 1_577_836_800_000,
            unit,
        }
    }

    #[test]
    fn a_reading_splits_the_time_into_the_tick_and_the_nanoseconds_into_it() {
        let epoch = 1_577_836_800_000;
        let ms = clock(Unit::Ms);
        assert_eq!(ms.reading_at(epoch + 7, 0), Reading { tick: 7, nanos: 0 });
        assert_eq!(ms.reading_at(epoch + 7, 999_999).nanos, 999_999);
        let ten = clock(Unit::TenMs);
        assert_eq!(
            ten.reading_at(epoch + 25, 40),
            Reading {
                tick: 2,
                nanos: 5_000_040
            }
        );
        assert_eq!(
            ten.reading_at(epoch - 1, 0),
            Reading {
                tick: -1,
                nanos: 9_000_000
            }
        );
        let second = clock(Unit::Second);
        assert_eq!(
            second.reading_at(epoch + 999, 999_999),
            Reading {
                tick: 0,
                nanos: 999_999_999
            }
        );
    }

    #[test]
    fn the_real_clock_reads_within_a_tick() {
        let ms = clock(Unit::Ms);
        let before = unix_now_ms() - ms.epoch_unix_ms;
        let reading = ms.read();
        assert!(reading.tick >= before && reading.tick <= unix_now_ms() - ms.epoch_unix_ms);
    }
}

//! One backend's generator: hands out strictly increasing `(ms, sequence)` pairs.
//!
//! Pure: the clock comes in through a trait, so the tests drive it with a fake clock.
//!
//! The rules, and why each keeps ids unique:
//! - A new generator starts strictly after the millisecond it was made in. The previous
//!   holder of the backend slot waited at exit until the clock reached its last ms, so
//!   every pair it used lies at or before that ms.
//! - When the clock has moved on, take its ms and sequence 0.
//! - Otherwise (same ms, or the clock stepped back) stay on the last ms and take the next
//!   sequence; when the sequence is spent, borrow the next ms.
//! - Never mint more than `max_lead_ms` ahead of the clock: that bounds the wait at exit.
//!   Getting there by a burst costs a wait of a millisecond or so; a clock that is further
//!   behind than that stepped back beyond the bound, and gets an error.

use crate::error::Error;
use crate::layout::{MAX_MS, MAX_SEQUENCE};

/// Milliseconds since the snowflake epoch, and a way to let them pass.
pub trait Clock {
    /// Negative when the clock reads a time before the epoch.
    fn now_ms(&self) -> i64;
    fn sleep_ms(&self, ms: i64);
}

/// The longest a call sleeps to get back within the lead bound. A burst needs about
/// 1 ms; anything longer means the clock stepped back, which the caller should hear of.
pub const MAX_CATCH_UP_MS: i64 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generator {
    /// The last pair handed out (or, when fresh, the start ms with the sequence spent).
    last_ms: i64,
    sequence: u32,
}

impl Generator {
    /// A generator whose first id falls in a millisecond strictly after `start_ms`.
    pub fn after(start_ms: i64) -> Generator {
        Generator {
            last_ms: start_ms,
            sequence: MAX_SEQUENCE,
        }
    }

    pub fn last_ms(&self) -> i64 {
        self.last_ms
    }

    /// The next `(ms, sequence)` pair, strictly greater than every pair before it.
    pub fn next(&mut self, clock: &impl Clock, max_lead_ms: i64) -> Result<(i64, u32), Error> {
        loop {
            let now = clock.now_ms();
            if now < 0 {
                return Err(Error::ClockBeforeEpoch);
            }
            let (ms, sequence) = if now > self.last_ms {
                (now, 0)
            } else if self.sequence < MAX_SEQUENCE {
                (self.last_ms, self.sequence + 1)
            } else {
                (self.last_ms + 1, 0)
            };
            let excess = ms - now - max_lead_ms;
            if excess <= 0 {
                if ms > MAX_MS {
                    return Err(Error::TimeRangeExhausted);
                }
                self.last_ms = ms;
                self.sequence = sequence;
                return Ok((ms, sequence));
            }
            if excess > MAX_CATCH_UP_MS {
                return Err(Error::ClockBehind {
                    behind_ms: self.last_ms - now,
                    max_lead_ms,
                });
            }
            clock.sleep_ms(excess);
        }
    }

    /// How long to sleep at exit so the clock reaches the last ms handed out, and the next
    /// backend on this slot starts after it. Capped at the bound: a clock that stepped back
    /// further is refused by `next` and documented as not covered.
    pub fn exit_wait_ms(&self, now_ms: i64, max_lead_ms: i64) -> i64 {
        (self.last_ms - now_ms).clamp(0, max_lead_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;
    use std::cell::Cell;

    /// A clock that moves only when told to, or when slept on.
    struct FakeClock {
        now: Cell<i64>,
        slept: Cell<i64>,
    }

    impl FakeClock {
        fn at(ms: i64) -> FakeClock {
            FakeClock {
                now: Cell::new(ms),
                slept: Cell::new(0),
            }
        }
        fn set(&self, ms: i64) {
            self.now.set(ms);
        }
        fn advance(&self, ms: i64) {
            self.now.set(self.now.get() + ms);
        }
    }

    impl Clock for FakeClock {
        fn now_ms(&self) -> i64 {
            self.now.get()
        }
        fn sleep_ms(&self, ms: i64) {
            assert!(ms > 0, "sleeps must make progress");
            self.slept.set(self.slept.get() + ms);
            self.advance(ms);
        }
    }

    const LEAD: i64 = 1000;

    #[test]
    fn the_first_id_falls_after_the_start_millisecond() {
        let clock = FakeClock::at(100);
        let mut generator = Generator::after(100);
        assert_eq!(generator.next(&clock, LEAD), Ok((101, 0)));
        let mut generator = Generator::after(100);
        clock.set(105);
        assert_eq!(generator.next(&clock, LEAD), Ok((105, 0)));
    }

    #[test]
    fn without_lead_the_first_id_waits_for_the_next_millisecond() {
        let clock = FakeClock::at(100);
        let mut generator = Generator::after(100);
        assert_eq!(generator.next(&clock, 0), Ok((101, 0)));
        assert_eq!(clock.slept.get(), 1);
    }

    #[test]
    fn a_spent_millisecond_borrows_the_next() {
        let clock = FakeClock::at(100);
        let mut generator = Generator::after(99);
        for sequence in 0..=MAX_SEQUENCE {
            assert_eq!(generator.next(&clock, LEAD), Ok((100, sequence)));
        }
        assert_eq!(generator.next(&clock, LEAD), Ok((101, 0)));
        assert_eq!(clock.slept.get(), 0);
        // The clock catching up to the borrowed ms does not reuse it.
        clock.set(101);
        assert_eq!(generator.next(&clock, LEAD), Ok((101, 1)));
    }

    #[test]
    fn a_burst_never_runs_more_than_the_bound_ahead_and_sleeps_instead() {
        let clock = FakeClock::at(1_000);
        let mut generator = Generator::after(999);
        let lead = 5;
        let mut last = (0, 0);
        for _ in 0..4096 * 20 {
            let pair = generator.next(&clock, lead).unwrap();
            assert!(pair > last);
            assert!(
                pair.0 - clock.now_ms() <= lead,
                "{pair:?} at {}",
                clock.now_ms()
            );
            last = pair;
        }
        // 20 ms worth of ids with a 5 ms lead: the clock had to be waited on ~14 ms.
        assert_eq!(last.0, 1_019);
        assert_eq!(clock.slept.get(), 14);
    }

    #[test]
    fn a_step_back_within_the_bound_is_absorbed() {
        let clock = FakeClock::at(10_000);
        let mut generator = Generator::after(9_999);
        let before = generator.next(&clock, LEAD).unwrap();
        clock.set(10_000 - LEAD);
        let after = generator.next(&clock, LEAD).unwrap();
        assert_eq!(after, (10_000, 1));
        assert!(after > before);
        assert_eq!(clock.slept.get(), 0);
    }

    #[test]
    fn a_small_step_past_the_bound_is_waited_out() {
        let clock = FakeClock::at(10_000);
        let mut generator = Generator::after(9_999);
        generator.next(&clock, LEAD).unwrap();
        clock.set(10_000 - LEAD - 3);
        assert_eq!(generator.next(&clock, LEAD), Ok((10_000, 1)));
        assert_eq!(clock.slept.get(), 3);
    }

    #[test]
    fn a_step_back_beyond_the_bound_is_an_error_and_changes_nothing() {
        let clock = FakeClock::at(10_000);
        let mut generator = Generator::after(9_999);
        generator.next(&clock, LEAD).unwrap();
        let state = generator;
        clock.set(10_000 - 5_000);
        assert_eq!(
            generator.next(&clock, LEAD),
            Err(Error::ClockBehind {
                behind_ms: 5_000,
                max_lead_ms: LEAD
            })
        );
        assert_eq!(generator, state);
        clock.set(10_000 - LEAD);
        assert_eq!(generator.next(&clock, LEAD), Ok((10_000, 1)));
    }

    #[test]
    fn a_clock_before_the_epoch_or_past_the_41_bits_is_an_error() {
        let clock = FakeClock::at(-1);
        assert_eq!(
            Generator::after(-5).next(&clock, LEAD),
            Err(Error::ClockBeforeEpoch)
        );
        let clock = FakeClock::at(MAX_MS);
        let mut generator = Generator::after(MAX_MS - 1);
        for _ in 0..=MAX_SEQUENCE {
            generator.next(&clock, LEAD).unwrap();
        }
        assert_eq!(generator.next(&clock, LEAD), Err(Error::TimeRangeExhausted));
    }

    #[test]
    fn exit_waits_until_the_clock_reaches_the_last_millisecond() {
        let clock = FakeClock::at(500);
        let mut generator = Generator::after(499);
        for _ in 0..=MAX_SEQUENCE * 3 {
            generator.next(&clock, LEAD).unwrap();
        }
        assert_eq!(generator.last_ms(), 502);
        assert_eq!(generator.exit_wait_ms(500, LEAD), 2);
        assert_eq!(generator.exit_wait_ms(502, LEAD), 0);
        assert_eq!(generator.exit_wait_ms(600, LEAD), 0);
        assert_eq!(generator.exit_wait_ms(-10_000, LEAD), LEAD);
    }

    /// A slot handed over: the old generator exits after its wait, the new one starts at
    /// the clock's ms then. Their pairs never meet, whatever the old one's lead was.
    #[test]
    fn property_a_slot_hand_over_never_repeats_a_pair() {
        let mut rng = Rng::new(4);
        for _ in 0..2_000 {
            let lead = rng.below(20) as i64;
            let clock = FakeClock::at(1_000 + rng.below(1_000) as i64);
            let mut old = Generator::after(clock.now_ms());
            let mut used = std::collections::HashSet::new();
            for _ in 0..rng.below(20_000) {
                used.insert(old.next(&clock, lead).unwrap());
                if rng.below(100) == 0 {
                    clock.advance(1);
                }
            }
            let wait = old.exit_wait_ms(clock.now_ms(), lead);
            if wait > 0 {
                clock.sleep_ms(wait);
            }
            let mut new = Generator::after(clock.now_ms());
            for _ in 0..5_000 {
                assert!(!used.contains(&new.next(&clock, lead).unwrap()));
            }
        }
    }

    #[test]
    fn property_pairs_strictly_increase_and_stay_within_the_lead_under_a_wandering_clock() {
        let mut rng = Rng::new(5);
        for _ in 0..200 {
            let lead = rng.below(50) as i64;
            let clock = FakeClock::at(1_000_000);
            let mut generator = Generator::after(clock.now_ms());
            let mut last = (i64::MIN, 0);
            for _ in 0..20_000 {
                match rng.below(1000) {
                    0..=9 => clock.advance(rng.below(5) as i64),
                    10 => clock.advance(-(rng.below(lead as u64 + 1) as i64)),
                    _ => {}
                }
                match generator.next(&clock, lead) {
                    Ok(pair) => {
                        assert!(pair > last, "{pair:?} after {last:?}");
                        assert!(pair.0 - clock.now_ms() <= lead);
                        last = pair;
                    }
                    // Repeated steps back can add up past the bound: refused, never repeated.
                    Err(Error::ClockBehind {
                        behind_ms,
                        max_lead_ms,
                    }) => {
                        assert!(behind_ms > max_lead_ms);
                        clock.advance(behind_ms);
                    }
                    Err(other) => panic!("unexpected {other:?}"),
                }
            }
        }
    }
}

//! One backend's generator: hands out strictly increasing `(tick, sequence)` pairs.
//!
//! Pure: the clock comes in through a trait, so the tests drive it with a fake clock. A
//! tick is the unit of the layout's time field: 1 ms by default, 10 ms or 1 s.
//!
//! The rules, and why each keeps ids unique:
//! - A new generator starts strictly after the tick it was made in. The previous holder
//!   of the backend slot waited at exit until the clock reached its last tick, so every
//!   pair it used lies at or before that tick.
//! - When the clock has moved on, take its tick. The sequence starts at 0, or, where the
//!   layout puts the sequence right below the time, at the clock's fraction of the tick
//!   scaled to the sequence (`fraction x 2^sequence bits`); and on such a layout, whenever
//!   the clock's fraction is ahead of the last sequence within the same tick, take it.
//!   Then the ids of every backend sort by when they were minted below the tick, and
//!   concurrent inserts reach a B-tree in key order (docs/design.md, "Order").
//! - Otherwise (same tick, or the clock stepped back) stay on the last tick and take the
//!   next sequence; when the sequence is spent, borrow the next tick.
//!
//! Every branch hands out a pair strictly greater than the last one, so following the
//! clock changes where in the tick the pairs fall, never that they increase.
//! - Never mint more than `max_lead_ms` ahead of the clock: that bounds the wait at exit.
//!   Getting there by a burst costs a wait of a tick or so; a clock that is further
//!   behind than that stepped back beyond the bound, and gets an error.

use crate::clock::NS_PER_MS;
use crate::layout::{Field, Layout, Unit};
use crate::report::{Report, Reported, SqlState};
use crate::stats::{Stats, UNKEPT};

/// Why the clock let no id be minted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockError {
    /// The system clock reads a time before `snowflake.epoch`.
    BeforeEpoch,
    /// The clock stepped back further than the lead bound absorbs.
    Behind {
        behind_ms: i64,
        max_lead_ms: i64,
        /// The time of the last id, when the caller knows the epoch to tell it.
        last: Option<String>,
    },
    /// The time field of the layout is full.
    TimeRangeExhausted,
}

const CHECK_CLOCK_AND_EPOCH: &str = "Check the system clock and snowflake.epoch.";

impl Reported for ClockError {
    fn report(&self) -> Report {
        let report = |message: String| Report::new(SqlState::ObjectNotInPrerequisiteState, message);
        match self {
            ClockError::BeforeEpoch => {
                report("the system clock reads a time before snowflake.epoch".into())
                    .hint(CHECK_CLOCK_AND_EPOCH)
            }
            ClockError::Behind {
                behind_ms,
                max_lead_ms,
                last,
            } => report(match last {
                Some(last) => format!("the system clock is {behind_ms} ms behind the last snowflake id of this backend slot ({last})"),
                None => format!("the system clock is {behind_ms} ms behind the last snowflake id of this backend slot"),
            })
            .detail(format!("A step back of up to snowflake.max_lead_ms ({max_lead_ms} ms) is absorbed; this one is larger. With shared_preload_libraries the last id may be from before a restart: no id is minted below it."))
            .hint("Retry once the clock has caught up, or raise snowflake.max_lead_ms."),
            ClockError::TimeRangeExhausted => report(
                "the time field of the layout is full: the time range from snowflake.epoch is used up".into(),
            )
            .hint(CHECK_CLOCK_AND_EPOCH),
        }
    }
}

/// One reading of a clock: the tick since the snowflake epoch (negative before it), and
/// the nanoseconds since that tick began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub tick: i64,
    pub nanos: u32,
}

/// Ticks since the snowflake epoch, and a way to let them pass.
pub trait Clock {
    fn read(&self) -> Reading;
    fn sleep(&self, ticks: i64);
    fn unit(&self) -> Unit;

    /// The tick alone.
    fn now(&self) -> i64 {
        self.read().tick
    }
}

/// The longest a call sleeps to get back within the lead bound, unless a tick is longer.
/// A burst needs about 1 ms; anything longer means the clock stepped back, which the
/// caller should hear of.
pub const MAX_CATCH_UP_MS: i64 = 10;

#[derive(Debug, Clone, Copy)]
pub struct Generator {
    /// The last pair handed out (or, when fresh, the start tick with the sequence spent).
    last: i64,
    sequence: u32,
    max_sequence: u32,
    /// Turns the nanoseconds into the tick into a sequence, `nanos * scale >> 32`: where
    /// the sequence follows the clock, `2^(32 + sequence bits) / ns per tick` rounded down
    /// (so the sequence stays below `2^sequence bits`, and rises with the clock); 0 where
    /// the sequence restarts at 0. A multiplication: this runs on every call.
    sequence_scale: u64,
    max_ticks: i64,
    /// The pair of the last call that minted ahead of the clock, and the clock's reading
    /// then: with `last`, the previous reading, to tell a step back from a burst without
    /// a store on the plain path.
    ahead_at: (i64, u32),
    ahead_read: i64,
    /// The furthest this generator ran ahead of the clock, so `stats` hears only of a new one.
    furthest_lead: i64,
    stats: &'static Stats,
}

impl Generator {
    /// A generator for `layout` whose first id falls in a tick strictly after `start`.
    pub fn after(start: i64, layout: &Layout) -> Generator {
        Generator {
            last: start,
            sequence: layout.max_sequence(),
            max_sequence: layout.max_sequence(),
            sequence_scale: if layout.sequence_follows_clock() {
                (1u64 << (32 + layout.bits(Field::Sequence)))
                    / (layout.unit().ms() as u64 * NS_PER_MS)
            } else {
                0
            },
            max_ticks: layout.max_ticks(),
            // The start is no reading of the clock: the first call is no step back.
            ahead_at: (start, layout.max_sequence()),
            ahead_read: i64::MIN,
            furthest_lead: 0,
            stats: &UNKEPT,
        }
    }

    /// The same generator, counting what it meets in `stats`.
    pub fn counting_in(self, stats: &'static Stats) -> Generator {
        Generator { stats, ..self }
    }

    pub fn last(&self) -> i64 {
        self.last
    }

    /// The next `(tick, sequence)` pair, strictly greater than every pair before it.
    #[inline(always)]
    pub fn next(&mut self, clock: &impl Clock, max_lead_ms: i64) -> Result<(i64, u32), ClockError> {
        let unit = clock.unit();
        let lead = unit.ticks_of_ms(max_lead_ms);
        loop {
            let reading = clock.read();
            let now = reading.tick;
            if now < 0 {
                return Err(ClockError::BeforeEpoch);
            }
            let on_clock = ((u64::from(reading.nanos) * self.sequence_scale) >> 32) as u32;
            let (tick, sequence) =
                if now > self.last || (now == self.last && on_clock > self.sequence) {
                    (now, on_clock)
                } else if self.sequence < self.max_sequence {
                    (self.last, self.sequence + 1)
                } else {
                    (self.last + 1, 0)
                };
            // The plain path: minting on the clock's own tick.
            if tick <= now {
                if tick > self.max_ticks {
                    return Err(ClockError::TimeRangeExhausted);
                }
                self.last = tick;
                self.sequence = sequence;
                return Ok((tick, sequence));
            }
            let excess = tick - now - lead;
            if excess <= 0 {
                if tick > self.max_ticks {
                    return Err(ClockError::TimeRangeExhausted);
                }
                self.note_ahead(now, (tick, sequence));
                self.last = tick;
                self.sequence = sequence;
                return Ok((tick, sequence));
            }
            if excess > unit.ticks_of_ms(MAX_CATCH_UP_MS).max(1) {
                self.stats.step_back_refused();
                return Err(ClockError::Behind {
                    behind_ms: (self.last - now) * unit.ms(),
                    max_lead_ms,
                    last: None,
                });
            }
            self.stats.spent_tick_waited();
            clock.sleep(excess);
        }
    }

    /// Minting ahead of the clock: a burst borrowing ticks, or a step back absorbed (the
    /// clock reading less than at the call before, which a burst alone never makes it do).
    #[cold]
    fn note_ahead(&mut self, now: i64, pair: (i64, u32)) {
        // A call on the plain path read the clock at the tick it minted in.
        let previous_read = if (self.last, self.sequence) == self.ahead_at {
            self.ahead_read
        } else {
            self.last
        };
        if now < previous_read {
            self.stats.step_back_absorbed();
        }
        self.ahead_at = pair;
        self.ahead_read = now;
        if pair.0 - now > self.furthest_lead {
            self.furthest_lead = pair.0 - now;
            self.stats.ran_ahead(self.furthest_lead);
        }
    }

    /// What decides the next pair, for the tests.
    #[cfg(test)]
    fn state(&self) -> (i64, u32, (i64, u32), i64, i64) {
        (
            self.last,
            self.sequence,
            self.ahead_at,
            self.ahead_read,
            self.furthest_lead,
        )
    }

    /// How many ticks to sleep at exit so the clock reaches the last tick handed out, and
    /// the next backend on this slot starts after it. Capped at the bound: a clock that
    /// stepped back further is refused by `next` and documented as not covered.
    pub fn exit_wait(&self, now: i64, unit: Unit, max_lead_ms: i64) -> i64 {
        (self.last - now).clamp(0, unit.ticks_of_ms(max_lead_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_clock::FakeClock;
    use crate::stats::Totals;
    use crate::test_rng::Rng;

    const LEAD: i64 = 1000;
    const MAX_SEQUENCE: u32 = 4095;

    fn layout() -> Layout {
        Layout::from_node_bits(2).unwrap()
    }

    #[test]
    fn the_first_id_falls_after_the_start_millisecond() {
        let clock = FakeClock::at(100);
        let mut generator = Generator::after(100, &layout());
        assert_eq!(generator.next(&clock, LEAD), Ok((101, 0)));
        let mut generator = Generator::after(100, &layout());
        clock.set(105);
        assert_eq!(generator.next(&clock, LEAD), Ok((105, 0)));
    }

    #[test]
    fn without_lead_the_first_id_waits_for_the_next_millisecond() {
        let clock = FakeClock::at(100);
        let mut generator = Generator::after(100, &layout());
        assert_eq!(generator.next(&clock, 0), Ok((101, 0)));
        assert_eq!(clock.slept.get(), 1);
    }

    #[test]
    fn a_spent_millisecond_borrows_the_next() {
        let clock = FakeClock::at(100);
        let mut generator = Generator::after(99, &layout());
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
        let mut generator = Generator::after(999, &layout());
        let lead = 5;
        let mut last = (0, 0);
        for _ in 0..4096 * 20 {
            let pair = generator.next(&clock, lead).unwrap();
            assert!(pair > last);
            assert!(pair.0 - clock.now() <= lead, "{pair:?} at {}", clock.now());
            last = pair;
        }
        // 20 ms worth of ids with a 5 ms lead: the clock had to be waited on ~14 ms.
        assert_eq!(last.0, 1_019);
        assert_eq!(clock.slept.get(), 14);
    }

    #[test]
    fn a_step_back_within_the_bound_is_absorbed() {
        let clock = FakeClock::at(10_000);
        let mut generator = Generator::after(9_999, &layout());
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
        let mut generator = Generator::after(9_999, &layout());
        generator.next(&clock, LEAD).unwrap();
        clock.set(10_000 - LEAD - 3);
        assert_eq!(generator.next(&clock, LEAD), Ok((10_000, 1)));
        assert_eq!(clock.slept.get(), 3);
    }

    #[test]
    fn a_step_back_beyond_the_bound_is_an_error_and_changes_nothing() {
        let clock = FakeClock::at(10_000);
        let mut generator = Generator::after(9_999, &layout());
        generator.next(&clock, LEAD).unwrap();
        let state = generator.state();
        clock.set(10_000 - 5_000);
        assert_eq!(
            generator.next(&clock, LEAD),
            Err(ClockError::Behind {
                behind_ms: 5_000,
                max_lead_ms: LEAD,
                last: None
            })
        );
        assert_eq!(generator.state(), state);
        clock.set(10_000 - LEAD);
        assert_eq!(generator.next(&clock, LEAD), Ok((10_000, 1)));
    }

    #[test]
    fn a_clock_before_the_epoch_or_past_the_time_field_is_an_error() {
        let clock = FakeClock::at(-1);
        assert_eq!(
            Generator::after(-5, &layout()).next(&clock, LEAD),
            Err(ClockError::BeforeEpoch)
        );
        let clock = FakeClock::at(layout().max_ticks());
        let mut generator = Generator::after(layout().max_ticks() - 1, &layout());
        for _ in 0..=MAX_SEQUENCE {
            generator.next(&clock, LEAD).unwrap();
        }
        assert_eq!(
            generator.next(&clock, LEAD),
            Err(ClockError::TimeRangeExhausted)
        );
    }

    #[test]
    fn exit_waits_until_the_clock_reaches_the_last_millisecond() {
        let clock = FakeClock::at(500);
        let mut generator = Generator::after(499, &layout());
        for _ in 0..=MAX_SEQUENCE * 3 {
            generator.next(&clock, LEAD).unwrap();
        }
        assert_eq!(generator.last(), 502);
        assert_eq!(generator.exit_wait(500, Unit::Ms, LEAD), 2);
        assert_eq!(generator.exit_wait(502, Unit::Ms, LEAD), 0);
        assert_eq!(generator.exit_wait(600, Unit::Ms, LEAD), 0);
        assert_eq!(generator.exit_wait(-10_000, Unit::Ms, LEAD), LEAD);
    }

    /// A slot handed over: the old generator exits after its wait, the new one starts at
    /// the clock's ms then. Their pairs never meet, whatever the old one's lead was.
    #[test]
    fn property_a_slot_hand_over_never_repeats_a_pair() {
        let mut rng = Rng::new(4);
        for _ in 0..2_000 {
            let lead = rng.below(20) as i64;
            let clock = FakeClock::at(1_000 + rng.below(1_000) as i64);
            let mut old = Generator::after(clock.now(), &layout());
            let mut used = std::collections::HashSet::new();
            for _ in 0..rng.below(20_000) {
                used.insert(old.next(&clock, lead).unwrap());
                match rng.below(100) {
                    0 => clock.advance(1),
                    1..=20 => clock.set_nanos(rng.below(1_000_000) as u32),
                    _ => {}
                }
            }
            let wait = old.exit_wait(clock.now(), Unit::Ms, lead);
            if wait > 0 {
                clock.sleep(wait);
            }
            let mut new = Generator::after(clock.now(), &layout());
            for _ in 0..5_000 {
                assert!(!used.contains(&new.next(&clock, lead).unwrap()));
            }
        }
    }

    #[test]
    fn ten_ms_ticks_borrow_and_wait_in_whole_ticks() {
        let layout = crate::spec::parse("js53").unwrap().layout;
        let clock = FakeClock::ticking(1_000, Unit::TenMs);
        let mut generator = Generator::after(999, &layout);
        for sequence in 0..=63 {
            assert_eq!(generator.next(&clock, 20), Ok((1_000, sequence)));
        }
        // 20 ms of lead is 2 ticks: two ticks are borrowed, the third is waited for.
        for tick in [1_001, 1_002] {
            for sequence in 0..=63 {
                assert_eq!(generator.next(&clock, 20), Ok((tick, sequence)));
            }
        }
        assert_eq!(clock.slept.get(), 0);
        assert_eq!(generator.next(&clock, 20), Ok((1_003, 0)));
        assert_eq!(clock.slept.get(), 1);
        // A step back of 50 ms is 5 ticks: past the bound and past one tick of catch-up.
        clock.set(1_003 - 5);
        assert_eq!(
            generator.next(&clock, 20),
            Err(ClockError::Behind {
                behind_ms: 50,
                max_lead_ms: 20,
                last: None
            })
        );
        assert_eq!(generator.exit_wait(1_001, Unit::TenMs, 20), 2);
    }

    #[test]
    fn one_second_ticks_wait_out_a_spent_second_even_with_no_lead() {
        let layout = crate::spec::parse("time:31/1s, node:2, slot:8, sequence:22")
            .unwrap()
            .layout;
        let clock = FakeClock::ticking(50, Unit::Second);
        let mut generator = Generator::after(50, &layout);
        // No lead: the first id waits for the next second, one tick of catch-up.
        assert_eq!(generator.next(&clock, 0), Ok((51, 0)));
        assert_eq!(clock.slept.get(), 1);
        // 999 ms of lead is no whole tick.
        assert_eq!(generator.exit_wait(40, Unit::Second, 999), 0);
    }

    /// Random layouts (sequence widths, units) under a wandering clock: pairs strictly
    /// increase, never repeat across a slot hand-over, and stay within the lead.
    #[test]
    fn property_on_random_layouts_pairs_increase_and_stay_within_the_lead() {
        let mut rng = Rng::new(6);
        for _ in 0..300 {
            let unit = [Unit::Ms, Unit::TenMs, Unit::Second][rng.below(3) as usize];
            let sequence_bits = rng.below(13);
            let time = format!("time:{}/{}", 53 - 10 - sequence_bits, unit.name());
            // The sequence right below the time (following the clock) or below the worker.
            let spec = if rng.below(2) == 0 {
                format!("{time}, sequence:{sequence_bits}, node:2, slot:8")
            } else {
                format!("{time}, node:2, slot:8, sequence:{sequence_bits}")
            };
            let layout = crate::spec::parse(&spec).unwrap().layout;
            let lead_ms = rng.below(3_000) as i64;
            let lead = unit.ticks_of_ms(lead_ms);
            let clock = FakeClock::ticking(1_000_000, unit);
            let mut generator = Generator::after(clock.now(), &layout);
            let mut used = std::collections::HashSet::new();
            let mut last = (i64::MIN, 0);
            for _ in 0..5_000 {
                match rng.below(100) {
                    0..=4 => clock.advance(rng.below(3) as i64),
                    5 => clock.advance(-(rng.below(lead as u64 + 1) as i64)),
                    6..=30 => clock.set_nanos(rng.below(unit.ms() as u64 * 1_000_000) as u32),
                    _ => {}
                }
                match generator.next(&clock, lead_ms) {
                    Ok(pair) => {
                        assert!(pair > last, "{spec}: {pair:?} after {last:?}");
                        assert!(pair.1 <= layout.max_sequence());
                        assert!(pair.0 - clock.now() <= lead, "{spec}");
                        used.insert(pair);
                        last = pair;
                    }
                    // Repeated steps back can add up past the bound: refused, never repeated.
                    Err(ClockError::Behind {
                        behind_ms,
                        max_lead_ms,
                        ..
                    }) => {
                        assert!(behind_ms > max_lead_ms, "{spec}");
                        clock.advance(generator.last() - clock.now());
                    }
                    Err(other) => panic!("{spec}: unexpected {other:?}"),
                }
            }
            let wait = generator.exit_wait(clock.now(), unit, lead_ms);
            if wait > 0 {
                clock.sleep(wait);
            }
            let mut next_holder = Generator::after(clock.now(), &layout);
            for _ in 0..1_000 {
                let pair = next_holder.next(&clock, lead_ms).unwrap();
                assert!(!used.contains(&pair), "{spec}: {pair:?} repeated");
            }
        }
    }

    #[test]
    fn a_new_tick_starts_the_sequence_at_the_clocks_fraction_of_it() {
        let clock = FakeClock::at(100);
        let mut generator = Generator::after(99, &layout());
        clock.set_nanos(250_100);
        assert_eq!(generator.next(&clock, LEAD), Ok((100, 1024)));
        // Faster than the clock: the last sequence plus one.
        assert_eq!(generator.next(&clock, LEAD), Ok((100, 1025)));
        // The clock's fraction ahead of the last sequence: the fraction.
        clock.set_nanos(500_100);
        assert_eq!(generator.next(&clock, LEAD), Ok((100, 2048)));
        clock.set(101);
        clock.set_nanos(999_999);
        assert_eq!(generator.next(&clock, LEAD), Ok((101, 4095)));
        // Late in the tick the sequence is soon spent: the next tick is borrowed.
        assert_eq!(generator.next(&clock, LEAD), Ok((102, 0)));
        assert_eq!(generator.next(&clock, LEAD), Ok((102, 1)));
    }

    /// The clock's sequence, on every sequence width and unit: within its field at the
    /// tick's last nanosecond, and at most one below the exact `nanos x 2^bits / tick`.
    #[test]
    fn the_clocks_sequence_fits_its_field_on_every_width_and_unit() {
        for unit in [Unit::Ms, Unit::TenMs, Unit::Second] {
            let ns_per_tick = unit.ms() as u64 * 1_000_000;
            for bits in 1..=31u32 {
                let spec = format!(
                    "time:{}/{}, sequence:{bits}, node:2, slot:8",
                    53 - bits,
                    unit.name()
                );
                let layout = crate::spec::parse(&spec).unwrap().layout;
                for nanos in [0, 1, ns_per_tick / 3, ns_per_tick / 2, ns_per_tick - 1] {
                    let clock = FakeClock::ticking(10, unit);
                    clock.set_nanos(nanos as u32);
                    let (_, sequence) = Generator::after(9, &layout).next(&clock, 0).unwrap();
                    let exact = (u128::from(nanos) << bits) / u128::from(ns_per_tick);
                    assert!(sequence <= layout.max_sequence(), "{spec} at {nanos}");
                    assert!(
                        u128::from(sequence) + 1 >= exact && u128::from(sequence) <= exact,
                        "{spec} at {nanos}: {sequence}, exact {exact}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_worker_first_layout_starts_each_tick_at_sequence_0() {
        let layout = crate::spec::parse("worker-first").unwrap().layout;
        let clock = FakeClock::at(100);
        clock.set_nanos(750_100);
        let mut generator = Generator::after(99, &layout);
        assert_eq!(generator.next(&clock, LEAD), Ok((100, 0)));
        clock.set(101);
        assert_eq!(generator.next(&clock, LEAD), Ok((101, 0)));
        assert_eq!(generator.next(&clock, LEAD), Ok((101, 1)));
    }

    #[test]
    fn a_step_back_inside_the_tick_goes_on_from_the_last_sequence() {
        let clock = FakeClock::at(100);
        let mut generator = Generator::after(99, &layout());
        clock.set_nanos(500_100);
        assert_eq!(generator.next(&clock, LEAD), Ok((100, 2048)));
        clock.set_nanos(250_100);
        assert_eq!(generator.next(&clock, LEAD), Ok((100, 2049)));
        clock.set(99);
        clock.set_nanos(750_100);
        assert_eq!(generator.next(&clock, LEAD), Ok((100, 2050)));
    }

    /// The order promise at its root: generators of different slots minting one after
    /// another on one clock, at most once per sequence step of the clock, hand out ids that
    /// sort in the order they were minted, whichever slot minted each.
    #[test]
    fn property_ids_of_many_generators_sort_by_the_clock_below_the_tick() {
        let mut rng = Rng::new(7);
        let layout = layout();
        // One step of a 12-bit sequence is 1/4096 ms, 244.1 ns.
        let step = 245;
        for _ in 0..200 {
            let clock = FakeClock::at(1_000);
            let mut slots: Vec<(i64, Generator)> = (0..1 + rng.below(16))
                .map(|slot| {
                    let worker = layout.worker_bits(rng.below(4) as i64, slot as i64);
                    (worker, Generator::after(999, &layout))
                })
                .collect();
            let mut at = 0u64;
            let mut last_id = -1;
            for _ in 0..5_000 {
                // The clock moves on by one sequence step or more between two calls.
                at += step * (1 + rng.below(40));
                clock.set(1_000 + (at / 1_000_000) as i64);
                clock.set_nanos((at % 1_000_000) as u32);
                let which = rng.below(slots.len() as u64) as usize;
                let (worker, generator) = &mut slots[which];
                let (tick, sequence) = generator.next(&clock, LEAD).unwrap();
                let id = layout.minter(*worker).id(tick, sequence);
                assert!(id > last_id, "{id} after {last_id}");
                last_id = id;
            }
        }
    }

    fn counted(generator: Generator) -> (Generator, &'static Stats) {
        let stats: &'static Stats = Box::leak(Box::default());
        (generator.counting_in(stats), stats)
    }

    #[test]
    fn a_burst_counts_its_lead_but_no_step_back() {
        let clock = FakeClock::at(100);
        let (mut generator, stats) = counted(Generator::after(99, &layout()));
        for _ in 0..=MAX_SEQUENCE * 3 + 2 {
            generator.next(&clock, LEAD).unwrap();
        }
        let totals = stats.read();
        assert_eq!(totals.furthest_lead_ticks, 2);
        assert_eq!(totals.steps_back_absorbed, 0);
        assert_eq!(totals.spent_tick_waits, 0);
    }

    #[test]
    fn steps_back_absorbed_refused_and_waits_are_counted() {
        let clock = FakeClock::at(10_000);
        let (mut generator, stats) = counted(Generator::after(9_999, &layout()));
        generator.next(&clock, LEAD).unwrap();
        clock.set(9_700);
        generator.next(&clock, LEAD).unwrap();
        generator.next(&clock, LEAD).unwrap();
        clock.set(9_600);
        generator.next(&clock, LEAD).unwrap();
        assert_eq!(stats.read().steps_back_absorbed, 2, "each step back once");
        assert_eq!(stats.read().furthest_lead_ticks, 400);
        clock.set(10_000 - LEAD - 5_000);
        assert!(generator.next(&clock, LEAD).is_err());
        assert_eq!(stats.read().steps_back_refused, 1);
        clock.set(10_000 - LEAD - 2);
        generator.next(&clock, LEAD).unwrap();
        assert_eq!(stats.read().spent_tick_waits, 1);
    }

    #[test]
    fn totals_add_counts_and_keep_the_furthest_lead() {
        let one = Totals {
            steps_back_absorbed: 1,
            steps_back_refused: 2,
            spent_tick_waits: 3,
            furthest_lead_ticks: 40,
        };
        let other = Totals {
            furthest_lead_ticks: 7,
            ..one
        };
        assert_eq!(
            one.plus(other),
            Totals {
                steps_back_absorbed: 2,
                steps_back_refused: 4,
                spent_tick_waits: 6,
                furthest_lead_ticks: 40,
            }
        );
    }
}

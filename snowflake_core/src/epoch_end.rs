//! When a layout's time field runs out, and the warning years before: the first instant
//! past its last tick (`epoch_ends` of `snowflake_status`), the share of the field used,
//! and a warning due once a day while fewer than `WARN_BEFORE_MS` remain. Pure date
//! arithmetic on Unix ms: the caller gives the clock.

use crate::layout::Layout;
use crate::time::{format_unix_ms, Epoch};
use std::sync::atomic::{AtomicI64, Ordering};

/// Five years of 365.25 days: how long before the end the warning starts. The alert rule of
/// `ops/prometheus/snowflake-alerts.yml` uses the same span (157,788,000 s).
pub const WARN_BEFORE_MS: i64 = 5 * 36_525 * 86_400_000 / 100;

const DAY_MS: i64 = 86_400_000;

/// The time field of `layout` counted from `epoch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochSpan {
    /// The epoch, Unix ms.
    pub starts_unix_ms: i64,
    /// The first ms past the last tick the time field holds; `None` past what an i64 of
    /// Unix ms holds (no layout of 63 bits comes near).
    pub ends_unix_ms: Option<i64>,
}

impl EpochSpan {
    pub fn of(epoch: Epoch, layout: &Layout) -> EpochSpan {
        let ends_unix_ms = layout
            .max_ticks()
            .checked_add(1)
            .and_then(|ticks| ticks.checked_mul(layout.unit().ms()))
            .and_then(|ms| ms.checked_add(epoch.unix_ms()));
        EpochSpan {
            starts_unix_ms: epoch.unix_ms(),
            ends_unix_ms,
        }
    }

    /// The share of the time field behind `now_unix_ms`, from 0 (at the epoch) to 1 (at
    /// its end, and past it).
    pub fn used(&self, now_unix_ms: i64) -> f64 {
        let Some(ends) = self.ends_unix_ms else {
            return 0.0;
        };
        let length = (ends - self.starts_unix_ms) as f64;
        ((now_unix_ms - self.starts_unix_ms) as f64 / length).clamp(0.0, 1.0)
    }

    /// Milliseconds left before the end, 0 once it is reached; `None` with no end.
    pub fn left_ms(&self, now_unix_ms: i64) -> Option<i64> {
        self.ends_unix_ms.map(|ends| (ends - now_unix_ms).max(0))
    }

    /// The warning due at `now_unix_ms`: fewer than `WARN_BEFORE_MS` left.
    pub fn warning(&self, now_unix_ms: i64) -> Option<EndWarning> {
        let ends_unix_ms = self.ends_unix_ms?;
        (ends_unix_ms - now_unix_ms < WARN_BEFORE_MS).then_some(EndWarning {
            ends_unix_ms,
            days_left: (ends_unix_ms - now_unix_ms).max(0) / DAY_MS,
        })
    }
}

/// Fewer than five years left before ids run out of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndWarning {
    pub ends_unix_ms: i64,
    pub days_left: i64,
}

impl EndWarning {
    pub fn message(&self) -> String {
        let ends = format_unix_ms(self.ends_unix_ms);
        match self.days_left {
            0 => format!("snowflake_pg: the time field of the layout runs out at {ends}, within a day: no id can be minted after it"),
            days => format!("snowflake_pg: the time field of the layout runs out at {ends}, in {days} days: no id can be minted after it"),
        }
    }

    pub fn hint(&self) -> &'static str {
        "Plan the move before then: a layout whose time field reaches further (more time bits, or 10ms or 1s ticks, snowflake.layout) or a later snowflake.epoch changes what every id means, and new ids must not repeat old ones: see the chapter \"The end of the epoch\" of docs/operations.md."
    }
}

/// The day (since 1970-01-01 UTC) that `unix_ms` falls in.
pub fn day_of(unix_ms: i64) -> i64 {
    unix_ms.div_euclid(DAY_MS)
}

/// Once a day: the day of the last warning, shared by the processes of a server (in shared
/// memory with preload) or kept by one backend.
#[derive(Debug)]
pub struct Daily {
    last_day: AtomicI64,
}

impl Default for Daily {
    fn default() -> Daily {
        Daily::new()
    }
}

impl Daily {
    pub const fn new() -> Daily {
        Daily {
            last_day: AtomicI64::new(i64::MIN),
        }
    }

    /// A warning given on `day` (since 1970-01-01 UTC), the next one due the day after.
    pub const fn given_on(day: i64) -> Daily {
        Daily {
            last_day: AtomicI64::new(day),
        }
    }

    /// Whether the warning is due at `now_unix_ms`: true for the one caller that first
    /// asks on a day (UTC) other than that of the last warning, and records the day.
    pub fn due(&self, now_unix_ms: i64) -> bool {
        let today = day_of(now_unix_ms);
        let last = self.last_day.load(Ordering::Relaxed);
        last != today
            && self
                .last_day
                .compare_exchange(last, today, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_clock::FakeClock;
    use crate::generator::Clock;

    const NOW: i64 = 1_795_000_000_000; // 2026-11-18
    const EPOCH_2020: i64 = 1_577_836_800_000;

    fn layout(spec: &str) -> Layout {
        crate::spec::parse(spec).unwrap().layout
    }

    #[test]
    fn the_default_layout_from_2020_ends_in_2089_and_js53_in_2063() {
        let epoch = Epoch::parse("2020-01-01", NOW).unwrap();
        let default = EpochSpan::of(epoch, &layout("default"));
        // The first ms past the last one ids hold (2089-09-06 15:47:35.551, time.rs).
        assert_eq!(
            default.ends_unix_ms.map(format_unix_ms).as_deref(),
            Some("2089-09-06 15:47:35.552+00")
        );
        assert_eq!(default.ends_unix_ms, Some(EPOCH_2020 + (1 << 41)));
        let js53 = EpochSpan::of(epoch, &layout("js53"));
        assert_eq!(
            js53.ends_unix_ms.map(format_unix_ms).as_deref(),
            Some("2063-07-21 06:52:14.720+00")
        );
        assert_eq!(default.warning(NOW), None);
        assert_eq!(js53.warning(NOW), None);
    }

    #[test]
    fn the_share_used_goes_from_0_at_the_epoch_to_1_at_the_end() {
        let epoch = Epoch::parse("2020-01-01", NOW).unwrap();
        let span = EpochSpan::of(epoch, &layout("default"));
        let ends = span.ends_unix_ms.unwrap();
        assert_eq!(span.used(EPOCH_2020), 0.0);
        assert_eq!(span.used(EPOCH_2020 + (1 << 40)), 0.5);
        assert_eq!(span.used(ends), 1.0);
        assert_eq!(span.used(ends + 1), 1.0);
        assert_eq!(span.used(EPOCH_2020 - 1), 0.0);
        assert_eq!(span.left_ms(ends - 5), Some(5));
        assert_eq!(span.left_ms(ends + 5), Some(0));
        // Seconds ticks reach far: 2^41 s from 2020.
        let seconds = EpochSpan::of(epoch, &layout("time:41/1s, node:2, slot:8, sequence:12"));
        assert_eq!(seconds.ends_unix_ms, Some(EPOCH_2020 + (1 << 41) * 1000));
    }

    #[test]
    fn the_warning_starts_five_years_before_the_end_and_says_when() {
        // 37 bits of ms from 2026-01-01 end in 2030-05: fewer than five years left.
        let epoch = Epoch::parse("2026-01-01", NOW).unwrap();
        let span = EpochSpan::of(epoch, &layout("time:37, node:2, slot:8, sequence:16"));
        let ends = span.ends_unix_ms.unwrap();
        assert_eq!(format_unix_ms(ends), "2030-05-10 17:29:13.472+00");
        let warning = span.warning(NOW).unwrap();
        assert_eq!(warning.days_left, (ends - NOW) / DAY_MS);
        assert_eq!(
            warning.message(),
            format!(
                "snowflake_pg: the time field of the layout runs out at 2030-05-10 17:29:13.472+00, in {} days: no id can be minted after it",
                warning.days_left
            )
        );
        assert!(warning.hint().contains("docs/operations.md"));
        // Exactly five years before, not yet; a ms later, due.
        assert_eq!(span.warning(ends - WARN_BEFORE_MS), None);
        assert!(span.warning(ends - WARN_BEFORE_MS + 1).is_some());
        assert_eq!(span.warning(ends + DAY_MS).map(|w| w.days_left), Some(0));
        assert_eq!(WARN_BEFORE_MS, 157_788_000 * 1000);
    }

    #[test]
    fn a_daily_warning_is_due_once_per_day_whoever_asks() {
        let clock = FakeClock::at(NOW);
        let daily = Daily::new();
        assert!(daily.due(clock.now()), "the first ask");
        assert!(!daily.due(clock.now()));
        clock.advance(3_600_000);
        assert!(!daily.due(clock.now()), "an hour later, the same day");
        let next_day = (day_of(NOW) + 1) * DAY_MS;
        clock.set(next_day - 1);
        assert!(!daily.due(clock.now()), "the last ms of the day");
        clock.set(next_day);
        assert!(daily.due(clock.now()), "midnight UTC");
        assert!(!daily.due(clock.now()));
        // A clock stepped back a day warns again: a day other than the last one's.
        clock.set(NOW);
        assert!(daily.due(clock.now()));
        assert_eq!(day_of(-1), -1);
        let given = Daily::given_on(day_of(NOW));
        assert!(!given.due(NOW));
        assert!(given.due(NOW + DAY_MS));
    }

    #[test]
    fn property_the_warning_is_due_exactly_when_fewer_than_five_years_are_left() {
        let epoch = Epoch::parse("2020-01-01", NOW).unwrap();
        let mut rng = crate::test_rng::Rng::new(30);
        for bits in 30..=41 {
            let sequence = 63 - bits - 10;
            let span = EpochSpan::of(
                epoch,
                &layout(&format!("time:{bits}, node:2, slot:8, sequence:{sequence}")),
            );
            let ends = span.ends_unix_ms.unwrap();
            for _ in 0..1000 {
                let now = EPOCH_2020 + rng.below(1 << 42) as i64;
                let due = span.warning(now).is_some();
                assert_eq!(due, ends - now < WARN_BEFORE_MS, "{bits} bits at {now}");
                let used = span.used(now);
                assert!((0.0..=1.0).contains(&used));
                assert_eq!(used == 1.0, now >= ends, "{bits} bits at {now}");
            }
        }
    }
}

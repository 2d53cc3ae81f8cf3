//! Times in and out of ids: the epoch setting, and PostgreSQL timestamps (microseconds
//! since 2000-01-01 UTC) to and from milliseconds since the snowflake epoch.

use crate::layout::{Layout, Unit};
use crate::report::{Report, Reported, SqlState};
use chrono::{DateTime, NaiveDate, NaiveDateTime};

/// Unix time of PostgreSQL's own epoch, 2000-01-01 00:00:00 UTC, in ms.
const PG_EPOCH_UNIX_MS: i64 = 946_684_800_000;
/// How PostgreSQL stores `infinity` and `-infinity` in a timestamptz.
const PG_INFINITY: i64 = i64::MAX;
const PG_NEG_INFINITY: i64 = i64::MIN;
/// The first microsecond past PostgreSQL's last timestamp, 294277-01-01 00:00:00 UTC.
const PG_END_MICROS: i64 = 9_223_371_331_200_000_000;

/// A time that ids cannot hold, or an epoch that cannot be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeError {
    /// `infinity` or `-infinity` given where a time is needed.
    InfiniteTime,
    /// A time before `snowflake.epoch`.
    TimeBeforeEpoch {
        time: String,
        epoch: String,
    },
    /// A time past the last tick the time field can hold.
    TimePastRange {
        time: String,
        last: String,
    },
    /// An id whose time lies past what a timestamptz can hold.
    TimeOfIdOutOfRange(i64),
    InvalidEpoch {
        value: String,
    },
    EpochInFuture {
        value: String,
    },
    /// The epoch lies where a timestamptz cannot show it.
    EpochOutOfRange,
    InvalidReorderedAt {
        value: String,
    },
    ReorderedAtInFuture {
        value: String,
    },
}

impl Reported for TimeError {
    fn report(&self) -> Report {
        use SqlState::*;
        match self {
            TimeError::InfiniteTime => Report::new(
                DatetimeFieldOverflow,
                "snowflake ids cannot hold an infinite timestamp",
            ),
            TimeError::TimeBeforeEpoch { time, epoch } => Report::new(
                DatetimeFieldOverflow,
                format!("timestamp {time} is before snowflake.epoch ({epoch})"),
            ),
            TimeError::TimePastRange { time, last } => Report::new(
                DatetimeFieldOverflow,
                format!("timestamp {time} is past the last time snowflake ids can hold ({last})"),
            ),
            TimeError::TimeOfIdOutOfRange(id) => Report::new(
                DatetimeFieldOverflow,
                format!("snowflake id {id} holds a time past the last one a timestamptz can hold"),
            ),
            TimeError::InvalidEpoch { value } => Report::new(
                InvalidParameterValue,
                format!("invalid value for snowflake.epoch: \"{value}\""),
            )
            .detail("Write a time from 1970 on as an ISO 8601 date or time, such as '2020-01-01' or '2020-01-01 00:00:00+00'."),
            TimeError::EpochInFuture { value } => Report::new(
                InvalidParameterValue,
                format!("snowflake.epoch \"{value}\" is in the future"),
            )
            .hint("snowflake.epoch must be a time in the past."),
            TimeError::EpochOutOfRange => {
                Report::new(DatetimeFieldOverflow, "the epoch is out of range")
            }
            TimeError::InvalidReorderedAt { value } => Report::new(
                InvalidParameterValue,
                format!("invalid value for snowflake.reordered_at: \"{value}\""),
            )
            .detail("Write the time this server restarted into snowflake_pg 0.4.0 as an ISO 8601 time, such as '2026-12-01 06:00:00+00', no earlier than snowflake.epoch; or leave it empty."),
            TimeError::ReorderedAtInFuture { value } => Report::new(
                InvalidParameterValue,
                format!("snowflake.reordered_at \"{value}\" is in the future"),
            )
            .hint("Set it to the time this server restarted into snowflake_pg 0.4.0: no id is minted before it."),
        }
    }
}

/// The epoch of ids, in Unix ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Epoch {
    unix_ms: i64,
}

impl Epoch {
    /// Reads `snowflake.epoch`: an ISO 8601 date, or date and time with an optional UTC
    /// offset (none means UTC), from 1970 on. It must lie in the past as of `now_unix_ms`.
    pub fn parse(value: &str, now_unix_ms: i64) -> Result<Epoch, TimeError> {
        let unix_ms = parse_utc_ms(value.trim())
            .filter(|&unix_ms| unix_ms >= 0)
            .ok_or_else(|| TimeError::InvalidEpoch {
                value: value.into(),
            })?;
        if unix_ms > now_unix_ms {
            return Err(TimeError::EpochInFuture {
                value: value.into(),
            });
        }
        Ok(Epoch { unix_ms })
    }

    pub fn unix_ms(self) -> i64 {
        self.unix_ms
    }

    /// The tick of `layout` that a timestamptz falls in, checked to fit the time field.
    /// Times are truncated toward the past to the tick, so a time and every later time
    /// of its tick map to the same tick.
    pub fn ticks_of(self, pg_micros: i64, layout: &Layout) -> Result<i64, TimeError> {
        if pg_micros == PG_INFINITY || pg_micros == PG_NEG_INFINITY {
            return Err(TimeError::InfiniteTime);
        }
        let ms = pg_micros.div_euclid(1000) + PG_EPOCH_UNIX_MS - self.unix_ms;
        if ms < 0 {
            return Err(TimeError::TimeBeforeEpoch {
                time: format_pg_micros(pg_micros),
                epoch: self.to_string(),
            });
        }
        let ticks = layout.unit().ticks_of_ms(ms);
        if ticks > layout.max_ticks() {
            let tick_ms = layout.unit().ms();
            let last = (layout.max_ticks().saturating_add(1))
                .saturating_mul(tick_ms)
                .saturating_add(self.unix_ms - 1);
            return Err(TimeError::TimePastRange {
                time: format_pg_micros(pg_micros),
                last: format_unix_ms(last),
            });
        }
        Ok(ticks)
    }

    /// The timestamptz (microseconds since 2000-01-01) of the start of tick `ticks` since
    /// this epoch, or `None` past what a timestamptz can hold.
    pub fn pg_micros_of(self, ticks: i64, unit: Unit) -> Option<i64> {
        let micros = ticks
            .checked_mul(unit.ms())?
            .checked_add(self.unix_ms - PG_EPOCH_UNIX_MS)?
            .checked_mul(1000)?;
        (micros < PG_END_MICROS).then_some(micros)
    }
}

/// `snowflake.reordered_at`, on a server upgraded from 0.3.0 or earlier: the tick from
/// which its ids are in its layout's order; those of earlier ticks were minted in 0.3.0's
/// (`Layout::worker_first`). `None` when empty: every id is in the layout's order. In the
/// past as of `now_unix_ms`, so that a server never mints before it.
pub fn reordered_tick(
    value: &str,
    epoch: Epoch,
    unit: Unit,
    now_unix_ms: i64,
) -> Result<Option<i64>, TimeError> {
    if value.trim().is_empty() {
        return Ok(None);
    }
    let unix_ms = parse_utc_ms(value.trim())
        .filter(|&unix_ms| unix_ms >= epoch.unix_ms)
        .ok_or_else(|| TimeError::InvalidReorderedAt {
            value: value.into(),
        })?;
    if unix_ms > now_unix_ms {
        return Err(TimeError::ReorderedAtInFuture {
            value: value.into(),
        });
    }
    Ok(Some(unit.ticks_of_ms(unix_ms - epoch.unix_ms)))
}

impl std::fmt::Display for Epoch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_unix_ms(self.unix_ms))
    }
}

fn parse_utc_ms(value: &str) -> Option<i64> {
    if let Ok(with_offset) = DateTime::parse_from_rfc3339(value) {
        return Some(with_offset.timestamp_millis());
    }
    for format in ["%Y-%m-%d %H:%M:%S%.f%#z", "%Y-%m-%dT%H:%M:%S%.f%#z"] {
        if let Ok(with_offset) = DateTime::parse_from_str(value, format) {
            return Some(with_offset.timestamp_millis());
        }
    }
    for format in ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(value, format) {
            return Some(naive.and_utc().timestamp_millis());
        }
    }
    let date = NaiveDate::parse_from_str(value, "%Y-%m-%d").ok()?;
    Some(date.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis())
}

/// `2020-01-01 00:00:00+00`, as psql prints a timestamptz in UTC (with ms when non-zero).
pub fn format_unix_ms(unix_ms: i64) -> String {
    match DateTime::from_timestamp_millis(unix_ms) {
        Some(t) if unix_ms % 1000 == 0 => t.format("%Y-%m-%d %H:%M:%S+00").to_string(),
        Some(t) => t.format("%Y-%m-%d %H:%M:%S%.3f+00").to_string(),
        None => format!("{unix_ms} ms after 1970-01-01 00:00:00+00"),
    }
}

fn format_pg_micros(pg_micros: i64) -> String {
    format_unix_ms((pg_micros.div_euclid(1000)).saturating_add(PG_EPOCH_UNIX_MS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    const NOW: i64 = 1_795_000_000_000; // 2026-11
    const EPOCH_2020: i64 = 1_577_836_800_000;

    fn epoch_2020() -> Epoch {
        Epoch::parse("2020-01-01 00:00:00+00", NOW).unwrap()
    }

    #[test]
    fn reordered_at_is_a_past_tick_from_the_epoch_or_nothing() {
        let tick = |value: &str, unit| reordered_tick(value, epoch_2020(), unit, NOW);
        assert_eq!(tick("", Unit::Ms), Ok(None));
        assert_eq!(tick("  ", Unit::Ms), Ok(None));
        assert_eq!(tick("2020-01-01 00:00:01.5+00", Unit::Ms), Ok(Some(1_500)));
        assert_eq!(tick("2020-01-01T00:00:01.5Z", Unit::TenMs), Ok(Some(150)));
        assert_eq!(tick("2020-01-01", Unit::Second), Ok(Some(0)));
        for bad in ["yesterday", "2019-12-31 23:59:59+00", "2020-13-01"] {
            assert_eq!(
                tick(bad, Unit::Ms),
                Err(TimeError::InvalidReorderedAt { value: bad.into() })
            );
        }
        assert_eq!(
            tick("2099-01-01", Unit::Ms),
            Err(TimeError::ReorderedAtInFuture {
                value: "2099-01-01".into()
            })
        );
        let report = TimeError::ReorderedAtInFuture {
            value: "2099-01-01".into(),
        }
        .report();
        assert_eq!(
            report.message,
            "snowflake.reordered_at \"2099-01-01\" is in the future"
        );
    }

    #[test]
    fn epoch_accepts_the_usual_spellings_of_one_instant() {
        for spelling in [
            "2020-01-01",
            "2020-01-01 00:00:00",
            "2020-01-01 00:00:00+00",
            "2020-01-01 00:00:00+00:00",
            "2020-01-01T00:00:00Z",
            "2020-01-01 01:00:00+01",
            " 2020-01-01 00:00:00.000 ",
        ] {
            assert_eq!(
                Epoch::parse(spelling, NOW).map(Epoch::unix_ms),
                Ok(EPOCH_2020),
                "{spelling}"
            );
        }
    }

    #[test]
    fn epoch_refuses_garbage_and_the_future() {
        for bad in [
            "",
            "yesterday",
            "2020-13-01",
            "2020-01-01 25:00:00",
            "1577836800000",
            "1969-12-31",
        ] {
            assert_eq!(
                Epoch::parse(bad, NOW),
                Err(TimeError::InvalidEpoch { value: bad.into() }),
                "{bad}"
            );
        }
        assert_eq!(
            Epoch::parse("2030-01-01", NOW),
            Err(TimeError::EpochInFuture {
                value: "2030-01-01".into()
            })
        );
    }

    fn ms() -> Layout {
        Layout::from_node_bits(2).unwrap()
    }

    #[test]
    fn ticks_of_maps_the_epoch_to_zero_and_truncates_toward_the_past() {
        let epoch = epoch_2020();
        let epoch_pg_micros = (EPOCH_2020 - PG_EPOCH_UNIX_MS) * 1000;
        assert_eq!(epoch.ticks_of(epoch_pg_micros, &ms()), Ok(0));
        assert_eq!(epoch.ticks_of(epoch_pg_micros + 999, &ms()), Ok(0));
        assert_eq!(epoch.ticks_of(epoch_pg_micros + 1000, &ms()), Ok(1));
        assert!(matches!(
            epoch.ticks_of(epoch_pg_micros - 1, &ms()),
            Err(TimeError::TimeBeforeEpoch { .. })
        ));
        assert_eq!(epoch.pg_micros_of(0, Unit::Ms), Some(epoch_pg_micros));
        let ten_ms = crate::spec::parse("js53").unwrap().layout;
        assert_eq!(epoch.ticks_of(epoch_pg_micros + 9_999, &ten_ms), Ok(0));
        assert_eq!(epoch.ticks_of(epoch_pg_micros + 10_000, &ten_ms), Ok(1));
        assert_eq!(
            epoch.pg_micros_of(1, Unit::TenMs),
            Some(epoch_pg_micros + 10_000)
        );
    }

    #[test]
    fn ticks_of_refuses_infinity_and_the_end_of_the_time_field() {
        let epoch = epoch_2020();
        assert_eq!(
            epoch.ticks_of(i64::MAX, &ms()),
            Err(TimeError::InfiniteTime)
        );
        assert_eq!(
            epoch.ticks_of(i64::MIN, &ms()),
            Err(TimeError::InfiniteTime)
        );
        let max = ms().max_ticks();
        let last = epoch.pg_micros_of(max, Unit::Ms).unwrap();
        assert_eq!(epoch.ticks_of(last + 999, &ms()), Ok(max));
        assert_eq!(
            epoch.ticks_of(last + 1000, &ms()),
            Err(TimeError::TimePastRange {
                time: "2089-09-06 15:47:35.552+00".into(),
                last: "2089-09-06 15:47:35.551+00".into()
            })
        );
        // With 10 ms ticks, the last time is the last ms of the last tick: 2063-07-21.
        let js53 = crate::spec::parse("js53").unwrap().layout;
        let end = epoch
            .pg_micros_of(js53.max_ticks() + 1, Unit::TenMs)
            .unwrap();
        assert_eq!(epoch.ticks_of(end - 1, &js53), Ok(js53.max_ticks()));
        assert_eq!(
            epoch.ticks_of(end, &js53),
            Err(TimeError::TimePastRange {
                time: "2063-07-21 06:52:14.720+00".into(),
                last: "2063-07-21 06:52:14.719+00".into()
            })
        );
        // Before 2000, PostgreSQL's own epoch, the micros are negative.
        let old = Epoch::parse("1990-01-01", NOW).unwrap();
        assert_eq!(
            old.ticks_of(-1, &ms()),
            Ok(PG_EPOCH_UNIX_MS - old.unix_ms() - 1)
        );
        // Past what a timestamptz holds: no time, never a wrapped one.
        assert_eq!(epoch.pg_micros_of(i64::MAX, Unit::Ms), None);
        assert_eq!(epoch.pg_micros_of(1 << 53, Unit::Second), None);
    }

    #[test]
    fn property_ticks_of_and_pg_micros_of_round_trip_on_whole_ticks() {
        let epoch = epoch_2020();
        let mut rng = Rng::new(3);
        for unit in [Unit::Ms, Unit::TenMs, Unit::Second] {
            let layout = crate::spec::parse(&format!("time:41/{}, node:22", unit.name()))
                .unwrap()
                .layout;
            for _ in 0..30_000 {
                let ticks = rng.below(1 << 36) as i64;
                let micros = epoch.pg_micros_of(ticks, unit).unwrap();
                assert_eq!(epoch.ticks_of(micros, &layout), Ok(ticks));
                let within = rng.below(unit.ms() as u64 * 1000) as i64;
                assert_eq!(epoch.ticks_of(micros + within, &layout), Ok(ticks));
            }
        }
    }

    #[test]
    fn times_print_as_psql_prints_them_in_utc() {
        assert_eq!(format_unix_ms(EPOCH_2020), "2020-01-01 00:00:00+00");
        assert_eq!(format_unix_ms(EPOCH_2020 - 1), "2019-12-31 23:59:59.999+00");
        assert_eq!(epoch_2020().to_string(), "2020-01-01 00:00:00+00");
    }
}

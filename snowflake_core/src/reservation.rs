//! The server's high-water mark, the pure half: the last tick any backend may mint in,
//! reserved ahead of the clock and moved ahead by the one call that passes the renewal
//! point, while the other backends go on minting within the old reservation. The
//! extension keeps a `Reservation` in shared memory and gives `renew` the ways to write
//! the mark durably and to wait; `hwm.rs` of the extension says why the mark exists.

use crate::generator::Clock;
use crate::report::{Report, Reported, SqlState};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// How far ahead of the clock a reservation reaches. A crash restart begins after the
/// last reservation, so this is also about how far ahead of the clock the first ids after
/// one can be: a new backend waits out up to this much past the lead bound.
pub const RESERVE_MS: i64 = 1000;

/// How far past the last reservation it replayed a promoted standby begins: what
/// asynchronous replication may not have delivered. A renewal reaches at most
/// `RESERVE_MS` past the tick that needed it, and that tick follows the reservation before
/// it while the primary's clock keeps time, so the old primary can have minted past the
/// reservation a standby holds by at most `RESERVE_MS` per renewal the standby missed: at
/// a renewal about every half reservation, this covers the last second of minting. A
/// standby further behind at the failure, or a primary whose clock stepped ahead just
/// before it, needs synchronous replication, where each reservation is confirmed by the
/// standby before it is used (docs/design.md, "Failover").
pub const PROMOTION_MARGIN_MS: i64 = RESERVE_MS;

/// How long a call waits for another process to renew the reservation before it gives up
/// with an error: renewing is one write and two fsyncs of a small file, so a wait this long
/// means the file system is stuck, and a call should not hang with it.
pub const RENEWAL_WAIT_BOUND: Duration = Duration::from_millis(10_000);

/// Why the high-water mark could not be read or moved ahead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReservationError {
    /// The mark's file exists but does not hold a mark.
    Unreadable { path: String, reason: String },
    /// The mark could not be moved ahead: no id may be minted past it.
    Unwritable { path: String, reason: String },
    /// The process renewing the mark did not finish within the bound: a minting call
    /// waited for it that long.
    Stalled { waited_ms: i64 },
}

impl Reported for ReservationError {
    fn report(&self) -> Report {
        match self {
            ReservationError::Unreadable { path, reason } => Report::new(
                SqlState::DataCorrupted,
                format!("could not read the snowflake_pg high-water mark from \"{path}\": {reason}"),
            )
            .hint("The file holds the time of the last id minted. Restore it, or remove it and start the server once the clock is past that time."),
            ReservationError::Unwritable { path, reason } => Report::new(
                SqlState::IoError,
                format!("could not move the snowflake_pg high-water mark ahead in \"{path}\": {reason}"),
            )
            .detail("No id is minted past the high-water mark until it can be written: ids would otherwise repeat after a restart.")
            .hint("Make room on the file system of the data directory, or make the directory writable again."),
            ReservationError::Stalled { waited_ms } => Report::new(
                SqlState::LockNotAvailable,
                format!("the snowflake_pg high-water mark was not moved ahead within {waited_ms} ms"),
            )
            .hint("The process writing the mark file is stuck, most likely in fsync of the data directory's file system: look at that file system. No id is minted past the mark until it is written."),
        }
    }
}

/// The tick a server life starts from: after every id of the previous life. The mark's
/// tick when there is one; else (a first start) the clock plus the lead bound, which no
/// backend can have minted past.
pub fn life_start(marked: Option<i64>, now: i64, lead_ticks: i64) -> i64 {
    marked.unwrap_or(now + lead_ticks)
}

pub struct Reservation {
    /// A call minting past this tick renews the reservation: halfway through it.
    renew_after: AtomicI64,
    /// The last tick any backend may mint in, written durably before it is set here.
    reserved: AtomicI64,
    /// Held by the one process writing the mark.
    writing: AtomicBool,
}

impl Reservation {
    /// A reservation up to `start`, renewed by the first id past it.
    pub fn starting_at(start: i64) -> Reservation {
        Reservation {
            renew_after: AtomicI64::new(start),
            reserved: AtomicI64::new(start),
            writing: AtomicBool::new(false),
        }
    }

    /// What a backend compares its ticks with on every call, with one atomic load.
    pub fn renew_after(&self) -> &AtomicI64 {
        &self.renew_after
    }

    /// The last tick any backend may mint in.
    pub fn reserved(&self) -> i64 {
        self.reserved.load(Ordering::Acquire)
    }

    /// Renews the reservation for a call about to mint in `tick`, past the renewal point:
    /// the one process that takes the writer's flag writes a new mark `RESERVE_MS` ahead
    /// of the clock (or of `tick`) with `write_mark`, and publishes it only once written.
    /// Fails only when `tick` lies past the reservation and it cannot be moved: then no id
    /// of that tick may be handed out. While another process writes, a call that needs the
    /// new mark calls `wait` (which may raise a cancel) and gives up after `bound`.
    pub fn renew(
        &self,
        tick: i64,
        clock: &impl Clock,
        bound: Duration,
        mut write_mark: impl FnMut(i64) -> Result<(), ReservationError>,
        mut wait: impl FnMut(),
    ) -> Result<(), ReservationError> {
        let started = Instant::now();
        loop {
            let needed = tick > self.reserved();
            if self
                .writing
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                let renewed = {
                    let _writer = Writer(&self.writing);
                    self.extend(tick, clock, &mut write_mark)
                };
                return if needed { renewed } else { Ok(()) };
            }
            if !needed {
                return Ok(()); // another process is renewing; this tick is reserved already
            }
            if started.elapsed() >= bound {
                let waited_ms = started.elapsed().as_millis() as i64;
                return Err(ReservationError::Stalled { waited_ms });
            }
            wait();
        }
    }

    /// Raises the reservation to `floor` at least: what recovery replayed from the WAL of
    /// a server's renewals, or a promoted standby's margin on top. Runs while no backend
    /// mints (during recovery, before any backend may mint).
    pub fn raise_to(&self, floor: i64) {
        self.reserved.fetch_max(floor, Ordering::AcqRel);
        self.renew_after.fetch_max(floor, Ordering::AcqRel);
    }

    fn extend(
        &self,
        tick: i64,
        clock: &impl Clock,
        write_mark: &mut impl FnMut(i64) -> Result<(), ReservationError>,
    ) -> Result<(), ReservationError> {
        if tick <= self.renew_after.load(Ordering::Acquire) {
            return Ok(()); // renewed while this call waited
        }
        let span = clock.unit().ticks_of_ms(RESERVE_MS).max(2);
        let reserved = tick.max(clock.now()) + span;
        write_mark(reserved)?;
        self.reserved.store(reserved, Ordering::Release);
        self.renew_after
            .store(reserved - span / 2, Ordering::Release);
        Ok(())
    }
}

/// The writer's flag, held while a mark is written and let go however the writing ends:
/// writing it may raise a PostgreSQL error (the WAL record), which unwinds through here.
struct Writer<'a>(&'a AtomicBool);

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_clock::FakeClock;
    use std::cell::RefCell;

    const NO_WAIT: Duration = Duration::ZERO;

    /// A mark that records what was written, or fails as a full disk would.
    fn recording(
        written: &RefCell<Vec<i64>>,
    ) -> impl FnMut(i64) -> Result<(), ReservationError> + '_ {
        |tick| {
            written.borrow_mut().push(tick);
            Ok(())
        }
    }

    fn unwritable(_tick: i64) -> Result<(), ReservationError> {
        Err(ReservationError::Unwritable {
            path: "pg_snowflake/high_water_mark".into(),
            reason: "No space left on device".into(),
        })
    }

    #[test]
    fn a_life_starts_at_the_mark_or_a_lead_past_the_clock() {
        assert_eq!(life_start(Some(5_000), 9_000, 1_000), 5_000);
        assert_eq!(life_start(None, 9_000, 1_000), 10_000);
    }

    #[test]
    fn renewing_writes_a_reservation_ahead_before_publishing_it() {
        let clock = FakeClock::at(10_000);
        let reservation = Reservation::starting_at(9_000);
        let written = RefCell::new(vec![]);
        let renewed = reservation.renew(10_000, &clock, NO_WAIT, recording(&written), || {});
        assert_eq!(renewed, Ok(()));
        assert_eq!(*written.borrow(), vec![11_000]);
        assert_eq!(reservation.reserved(), 11_000);
        assert_eq!(reservation.renew_after().load(Ordering::Relaxed), 10_500);
        // A burst past the clock reserves ahead of the burst.
        reservation
            .renew(10_900, &clock, NO_WAIT, recording(&written), || {})
            .unwrap();
        assert_eq!(reservation.reserved(), 11_900);
    }

    #[test]
    fn a_writer_that_fails_by_unwinding_lets_the_next_call_write() {
        let clock = FakeClock::at(10_000);
        let reservation = Reservation::starting_at(10_000);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            reservation.renew(10_001, &clock, NO_WAIT, |_| panic!("an ERROR"), || {})
        }));
        assert!(unwound.is_err());
        assert_eq!(reservation.reserved(), 10_000, "nothing published");
        let written = RefCell::new(vec![]);
        reservation
            .renew(10_001, &clock, NO_WAIT, recording(&written), || {})
            .unwrap();
        assert_eq!(*written.borrow(), vec![11_001]);
    }

    #[test]
    fn a_replayed_reservation_raises_both_the_reservation_and_its_renewal_point() {
        let clock = FakeClock::at(10_000);
        let reservation = Reservation::starting_at(10_500);
        reservation.raise_to(12_000);
        reservation.raise_to(11_000);
        assert_eq!(reservation.reserved(), 12_000, "never lowered");
        let written = RefCell::new(vec![]);
        reservation
            .renew(11_900, &clock, NO_WAIT, recording(&written), || {})
            .unwrap();
        assert!(
            written.borrow().is_empty(),
            "within the replayed reservation"
        );
        reservation
            .renew(12_001, &clock, NO_WAIT, recording(&written), || {})
            .unwrap();
        assert_eq!(*written.borrow(), vec![13_001]);
    }

    #[test]
    fn a_call_already_within_the_reservation_writes_nothing() {
        let clock = FakeClock::at(10_000);
        let reservation = Reservation::starting_at(10_000);
        let written = RefCell::new(vec![]);
        reservation
            .renew(10_600, &clock, NO_WAIT, recording(&written), || {})
            .unwrap();
        assert_eq!(reservation.reserved(), 11_600);
        // Another call that passed the old renewal point: renewed since it looked.
        reservation
            .renew(10_600, &clock, NO_WAIT, recording(&written), || {})
            .unwrap();
        assert_eq!(*written.borrow(), vec![11_600]);
    }

    #[test]
    fn a_mark_that_cannot_be_written_refuses_only_ticks_past_the_reservation() {
        let clock = FakeClock::at(10_000);
        let reservation = Reservation::starting_at(10_100);
        assert_eq!(
            reservation.renew(10_050, &clock, NO_WAIT, unwritable, || {}),
            Ok(())
        );
        let refused = reservation.renew(10_101, &clock, NO_WAIT, unwritable, || {});
        assert_eq!(refused.unwrap_err().report().sqlstate, SqlState::IoError);
        assert_eq!(reservation.reserved(), 10_100, "nothing published");
    }

    #[test]
    fn a_call_waits_for_another_writer_within_the_bound_then_gives_up() {
        let clock = FakeClock::at(10_000);
        let reservation = Reservation::starting_at(10_000);
        reservation.writing.store(true, Ordering::Relaxed);
        let mut waits = 0;
        // Within the reservation: no need to wait for the writer.
        assert_eq!(
            reservation.renew(10_000, &clock, Duration::from_secs(60), unwritable, || {
                waits += 1
            }),
            Ok(())
        );
        assert_eq!(waits, 0);
        let bound = Duration::from_millis(20);
        let stalled = reservation.renew(10_001, &clock, bound, unwritable, || {
            waits += 1;
            std::thread::sleep(Duration::from_millis(1));
        });
        assert!(matches!(stalled, Err(ReservationError::Stalled { waited_ms }) if waited_ms >= 20));
        assert!(waits > 1);
        // The writer finished: the next call renews.
        reservation.writing.store(false, Ordering::Relaxed);
        let written = RefCell::new(vec![]);
        reservation
            .renew(10_001, &clock, bound, recording(&written), || {})
            .unwrap();
        assert_eq!(reservation.reserved(), 11_001);
    }
}

//! With `shared_preload_libraries`: the server's high-water mark, the last tick any of its
//! backends may mint in, kept in a file so that after a restart, clean or crashed, every
//! new id is greater than every id minted before, whatever the wall clock says.
//!
//! Backends mint only up to the reserved tick, read with one atomic load per call. The
//! reservation moves `RESERVE_MS` ahead of the clock (or of a burst) at a time: written
//! to the file and fsynced before it is published, by the call that passes its halfway
//! point, about twice a second for the whole server; the other backends go on minting
//! within the old reservation meanwhile. A clean shutdown records the last tick actually
//! minted instead, so a clean start does not run ahead of the clock.

use crate::error::Error;
use crate::generator::Clock;
use crate::settings::{self, Fixed};
use crate::{mark_file, slot_marks};
use pgrx::{pg_guard, pg_shmem_init, pg_sys, PGRXSharedMemory, PgAtomic};
use std::ffi::c_int;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// How far ahead of the clock a reservation reaches. A crash restart begins after the
/// last reservation, so this is also about how far ahead of the clock the first ids after
/// one can be: a new backend waits out up to this much past the lead bound.
pub const RESERVE_MS: i64 = 1000;

/// The file, relative to the data directory (every server process's working directory).
pub const FILE: &str = "pg_snowflake/high_water_mark";

pub struct Reservation {
    /// A call minting past this tick renews the reservation: halfway through it.
    renew_after: AtomicI64,
    /// The last tick any backend may mint in, on disk before it is set here.
    reserved: AtomicI64,
    /// Held by the one process writing the file.
    writing: AtomicBool,
}

// SAFETY: plain atomics, valid in any process that maps the segment.
unsafe impl PGRXSharedMemory for Reservation {}

static RESERVATION: PgAtomic<Reservation> =
    unsafe { PgAtomic::new(c"snowflake_pg high-water mark") };
/// Set in the postmaster when the reservation is made in shared memory; backends inherit it.
static KEPT: AtomicBool = AtomicBool::new(false);
/// What a backend checks its ticks against without preload: nothing to renew, ever.
static NEVER: AtomicI64 = AtomicI64::new(i64::MAX);

/// Requests the shared memory and the clean-stop record; call from `_PG_init` while
/// preloading (in the postmaster, whose exit callbacks its children do not inherit).
// The macro tests for PostgreSQL versions this crate does not build for.
#[allow(unexpected_cfgs)]
pub fn request() {
    pg_shmem_init!(
        RESERVATION = {
            let start = life_start();
            // Set once the reservation exists: a start that fails before leaves it unused.
            KEPT.store(true, Ordering::Relaxed);
            Reservation {
                renew_after: AtomicI64::new(start),
                reserved: AtomicI64::new(start),
                writing: AtomicBool::new(false),
            }
        }
    );
    // SAFETY: registers a plain function, run when the postmaster exits.
    unsafe { pg_sys::before_shmem_exit(Some(record_clean_stop), pg_sys::Datum::from(0)) };
}

/// The tick a server life starts from, asked each time shared memory is (re)initialised:
/// after every id of the previous life. From the file when there is one; else (a first
/// start) the clock plus the lead bound, which no backend can have minted past.
pub fn life_start() -> i64 {
    let fixed = settings::fixed().unwrap_or_else(|error| crate::raise::raise(error));
    match mark_file::read(Path::new(FILE)) {
        Ok(Some(unix_ms)) => fixed.tick_of_unix_ms(unix_ms),
        Ok(None) => {
            let clock = fixed.clock();
            clock.now() + clock.unit.ticks_of_ms(settings::max_lead_ms())
        }
        Err(reason) => crate::raise::raise(Error::MarkFileUnreadable {
            path: FILE.into(),
            reason,
        }),
    }
}

/// What a backend compares its ticks with on every call: the reservation's renewal point
/// with preload, else a tick never reached.
pub fn renew_after() -> &'static AtomicI64 {
    if KEPT.load(Ordering::Relaxed) {
        &RESERVATION.get().renew_after
    } else {
        &NEVER
    }
}

/// The last tick any backend may mint in, with preload.
pub fn reserved() -> Option<i64> {
    KEPT.load(Ordering::Relaxed)
        .then(|| RESERVATION.get().reserved.load(Ordering::Acquire))
}

/// How long a call waits for another process to renew the reservation before it gives up
/// with an error: renewing is one write and two fsyncs of a small file, so a wait this long
/// means the file system is stuck, and a call should not hang with it.
pub const RENEWAL_WAIT_BOUND_MS: i64 = 10_000;

/// Renews the reservation for a call about to mint in `tick`, past the renewal point.
/// Fails only when `tick` lies past the reservation and it cannot be moved: then no id of
/// that tick may be handed out. Waiting for another process's renewal, the call stays
/// interruptible (statement_timeout, pg_cancel_backend) and gives up after
/// `RENEWAL_WAIT_BOUND_MS`.
#[cold]
pub fn renew(tick: i64, fixed: &Fixed) -> Result<(), Error> {
    let shared = RESERVATION.get();
    let started = std::time::Instant::now();
    loop {
        let needed = tick > shared.reserved.load(Ordering::Acquire);
        if shared
            .writing
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            let renewed = extend(shared, tick, fixed);
            shared.writing.store(false, Ordering::Release);
            return if needed { renewed } else { Ok(()) };
        }
        if !needed {
            return Ok(()); // another backend is renewing; this tick is reserved already
        }
        let waited_ms = started.elapsed().as_millis() as i64;
        if waited_ms >= RENEWAL_WAIT_BOUND_MS {
            return Err(Error::RenewalStalled { waited_ms });
        }
        // SAFETY: at the boundary with PostgreSQL's C code, holding nothing to drop: a
        // cancel or a timeout becomes the statement's ERROR.
        unsafe {
            pg_sys::panic::pgrx_extern_c_guard(|| {
                pgrx::check_for_interrupts!();
                pg_sys::pg_usleep(1000);
            })
        };
    }
}

fn extend(shared: &Reservation, tick: i64, fixed: &Fixed) -> Result<(), Error> {
    if tick <= shared.renew_after.load(Ordering::Acquire) {
        return Ok(()); // renewed while this call waited
    }
    let clock = fixed.clock();
    let span = clock.unit.ticks_of_ms(RESERVE_MS).max(2);
    let reserved = tick.max(clock.now()) + span;
    mark_file::write(Path::new(FILE), fixed.unix_ms_of_tick_end(reserved)).map_err(|reason| {
        Error::MarkFileUnwritable {
            path: FILE.into(),
            reason,
        }
    })?;
    shared.reserved.store(reserved, Ordering::Release);
    shared
        .renew_after
        .store(reserved - span / 2, Ordering::Release);
    Ok(())
}

/// At the postmaster's exit: after a clean shutdown every backend has recorded its last
/// tick in its slot mark, and the latest of them replaces the reservation, so that the
/// next start begins at the last id rather than ahead of it. After an immediate shutdown
/// some slot is still claimed by a killed backend, and the reservation stays.
#[pg_guard]
unsafe extern "C-unwind" fn record_clean_stop(_code: c_int, _arg: pg_sys::Datum) {
    let (Ok(fixed), Some(last)) = (settings::fixed(), slot_marks::last_if_all_recorded()) else {
        return;
    };
    // The server is going away: a failure here leaves the reservation, which is safe.
    let _ = mark_file::write(Path::new(FILE), fixed.unix_ms_of_tick_end(last));
}

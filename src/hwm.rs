//! With `shared_preload_libraries`: the server's high-water mark, the last tick any of its
//! backends may mint in, kept in a file so that after a restart, clean or crashed, every
//! new id is greater than every id minted before, whatever the wall clock says.
//!
//! Backends mint only up to the reserved tick, read with one atomic load per call. The
//! reservation (`snowflake_core::reservation`, in shared memory) moves `RESERVE_MS` ahead
//! of the clock (or of a burst) at a time: written to the file and fsynced before it is
//! published, by the call that passes its halfway point, about twice a second for the
//! whole server; the other backends go on minting within the old reservation meanwhile. A
//! clean shutdown records the last tick actually minted instead, so a clean start does not
//! run ahead of the clock.
//!
//! Each renewal is also logged in WAL before it is published (`wal.rs`), so that a standby
//! holds its primary's reservations (`replayed`) and a promoted one starts past them
//! (`promoted`).

use crate::error::Error;
use crate::raise::raise;
use crate::{operations, settings, shmem, wal};
use pgrx::{pg_guard, pg_sys};
use snowflake_core::generator::Clock;
use snowflake_core::mark_file;
use snowflake_core::reservation::{
    self, ReservationError, PROMOTION_MARGIN_MS, RENEWAL_WAIT_BOUND, RESERVE_MS,
};
use snowflake_core::server::Fixed;
use snowflake_core::time::format_unix_ms;
use std::ffi::c_int;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};

/// The file, relative to the data directory (every server process's working directory).
pub const FILE: &str = "pg_snowflake/high_water_mark";

/// What a backend checks its ticks against without preload: nothing to renew, ever.
static NEVER: AtomicI64 = AtomicI64::new(i64::MAX);

/// Registers the clean-stop record; call from `_PG_init` while preloading (in the
/// postmaster, whose exit callbacks its children do not inherit).
pub fn record_at_clean_stop() {
    // SAFETY: registers a plain function, run when the postmaster exits.
    unsafe { pg_sys::before_shmem_exit(Some(record_clean_stop), pg_sys::Datum::from(0)) };
}

/// The tick a server life starts from, read from the file each time shared memory is
/// (re)made (`reservation::life_start`). A file that holds no mark stops the start.
pub fn life_start() -> i64 {
    let fixed = settings::fixed().unwrap_or_else(|error| raise(error));
    let clock = fixed.clock();
    let marked = mark_file::read(Path::new(FILE)).unwrap_or_else(|reason| {
        raise(ReservationError::Unreadable {
            path: FILE.into(),
            reason,
        })
    });
    let lead = clock.unit.ticks_of_ms(settings::max_lead_ms());
    reservation::life_start(
        marked.map(|unix_ms| clock.tick_of_unix_ms(unix_ms)),
        clock.now(),
        lead,
    )
}

/// What a backend compares its ticks with on every call: the reservation's renewal point
/// with preload, else a tick never reached.
pub fn renew_after() -> &'static AtomicI64 {
    shmem::shared().map_or(&NEVER, |shared| shared.reservation.renew_after())
}

/// The last tick any backend may mint in, with preload.
pub fn reserved() -> Option<i64> {
    shmem::shared().map(|shared| shared.reservation.reserved())
}

/// Renews the reservation for a call about to mint in `tick`, past the renewal point.
/// Waiting for another process's renewal, the call stays interruptible
/// (statement_timeout, pg_cancel_backend).
#[cold]
pub fn renew(tick: i64, fixed: &Fixed) -> Result<(), Error> {
    let Some(shared) = shmem::shared() else {
        return Ok(());
    };
    let clock = fixed.clock();
    let write_mark = |reserved: i64| {
        let unix_ms = clock.unix_ms_of_tick_end(reserved);
        write_file(unix_ms).inspect_err(|_| operations::renewal_failed())?;
        wal::log_reservation(unix_ms);
        operations::renewed();
        Ok(())
    };
    let wait = || {
        // SAFETY: at the boundary with PostgreSQL's C code, holding nothing to drop: a
        // cancel or a timeout becomes the statement's ERROR.
        unsafe {
            pg_sys::panic::pgrx_extern_c_guard(|| {
                pgrx::check_for_interrupts!();
                pg_sys::pg_usleep(1000);
            })
        }
    };
    let renewed = shared
        .reservation
        .renew(tick, &clock, RENEWAL_WAIT_BOUND, write_mark, wait);
    if let Err(ReservationError::Stalled { .. }) = renewed {
        operations::renewal_failed(); // a write failed is counted where it failed
    }
    // Renewals come about twice a second while ids are minted: the daily check that the
    // epoch does not end soon costs a comparison here, and warns once a day for the server.
    operations::warn_daily(fixed, true);
    Ok(renewed?)
}

fn write_file(unix_ms: i64) -> Result<(), ReservationError> {
    mark_file::write(Path::new(FILE), unix_ms).map_err(|reason| ReservationError::Unwritable {
        path: FILE.into(),
        reason,
    })
}

/// How far past the lead bound a new backend waits for its first tick rather than being
/// refused: the reservation's reach, after a crash restart. After a promotion, also the
/// margin, and one lead bound more: the old primary's last reservation may lie that far
/// ahead of its clock after a burst, and the standby's clock may be behind it by as much.
pub fn lead_waited_out_ms() -> i64 {
    let promoted = shmem::shared().is_some_and(|shared| shared.promoted.load(Ordering::Relaxed));
    match promoted {
        true => RESERVE_MS + PROMOTION_MARGIN_MS + settings::max_lead_ms(),
        false => RESERVE_MS,
    }
}

/// Replays a renewal logged by this server or its primary (during recovery, in the
/// startup process): the reservation and the mark of every slot rise to it, and so does
/// the file, so that a standby restarted before its promotion keeps it.
pub fn replayed(unix_ms: i64) {
    if let Some(shared) = shmem::shared() {
        let fixed = settings::fixed().unwrap_or_else(|error| raise(error));
        raise_to(shared, fixed.clock().tick_of_unix_ms(unix_ms), &fixed);
    }
}

/// At the end of a recovery that ends in a promotion: the reservation replayed last, plus
/// what asynchronous replication may not have delivered (`PROMOTION_MARGIN_MS`), becomes
/// the floor of every new id, which new backends wait out (`lead_waited_out_ms`).
pub fn promoted() {
    let Some(shared) = shmem::shared() else {
        return;
    };
    let fixed = settings::fixed().unwrap_or_else(|error| raise(error));
    let clock = fixed.clock();
    let floor = shared.reservation.reserved() + clock.unit.ticks_of_ms(PROMOTION_MARGIN_MS);
    raise_to(shared, floor, &fixed);
    shared.promoted.store(true, Ordering::Relaxed);
    pgrx::log!(
        "snowflake_pg: promoted: new ids start after {}, {PROMOTION_MARGIN_MS} ms past the last reservation replayed",
        format_unix_ms(clock.unix_ms_of_tick_end(floor))
    );
}

/// Raises the reservation and every slot mark to `tick`, the file first.
fn raise_to(shared: &shmem::Shared, tick: i64, fixed: &Fixed) {
    if tick <= shared.reservation.reserved() {
        return;
    }
    write_file(fixed.clock().unix_ms_of_tick_end(tick)).unwrap_or_else(|error| raise(error));
    shared.reservation.raise_to(tick);
    shared.slot_marks.raise_to(tick);
}

/// At the postmaster's exit: after a clean shutdown every backend has recorded its last
/// tick in its slot mark, and the latest of them replaces the reservation, so that the
/// next start begins at the last id rather than ahead of it. After an immediate shutdown
/// some slot is still claimed by a killed backend, and the reservation stays.
#[pg_guard]
unsafe extern "C-unwind" fn record_clean_stop(_code: c_int, _arg: pg_sys::Datum) {
    let (Ok(fixed), Some(shared)) = (settings::fixed(), shmem::shared()) else {
        return;
    };
    let Some(last) = shared.slot_marks.last_if_all_recorded() else {
        return;
    };
    // The server is going away: a failure here leaves the reservation, which is safe.
    let _ = mark_file::write(Path::new(FILE), fixed.clock().unix_ms_of_tick_end(last));
}

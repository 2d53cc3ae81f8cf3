//! What an operator is told without asking: the warning, years ahead, that the layout's
//! time field runs out (`snowflake_core::epoch_end`), and the figures of the high-water
//! mark's renewals that `snowflake_status` shows for alerts.
//!
//! The warning: with preload, the postmaster gives it at start (into the server log only),
//! then the first process to renew the high-water mark or read `snowflake_status` on a new
//! day (UTC) gives it again, once for the whole server (the day is kept in shared memory).
//! Without preload there is nothing shared: a backend gives it once a day, on its first
//! read of `snowflake_status` that day (what a monitoring agent does), never on the path
//! of `snowflake_next()`, so that a pool of short sessions does not flood the log.

use crate::{settings, shmem};
use pgrx::{pg_sys, PgLogLevel, PgSqlErrorCode};
use snowflake_core::clock::unix_now_ms;
use snowflake_core::epoch_end::{day_of, Daily, EpochSpan};
use snowflake_core::server::Fixed;
use std::sync::atomic::{AtomicI64, Ordering};

/// The day the postmaster warned at start, kept in its own memory: the segment is made
/// after `_PG_init`, and made anew at a crash restart.
static WARNED_AT_START: AtomicI64 = AtomicI64::new(i64::MIN);

/// This backend's day of the last warning, without preload.
static OWN: Daily = Daily::new();

/// The day the postmaster warned at start, `i64::MIN` if it did not: the shared day begins
/// there (`shmem::Origins`), so that the segment does not warn again that day.
pub fn warned_at_start() -> i64 {
    WARNED_AT_START.load(Ordering::Relaxed)
}

/// At server start, in the postmaster (preload): the warning if it is due, into the log.
pub fn warn_at_start() {
    let Ok(fixed) = settings::fixed() else {
        return; // the settings' own error stops the start
    };
    let now = unix_now_ms();
    if warn_if_ending(&fixed, now) {
        WARNED_AT_START.store(day_of(now), Ordering::Relaxed);
    }
}

/// The daily warning, if due today and not yet given: with preload once for the server,
/// else once for this backend. `minting` says the caller is on the path of minting, which
/// only the shared day may warn from.
pub fn warn_daily(fixed: &Fixed, minting: bool) {
    let daily = match shmem::shared() {
        Some(shared) => &shared.epoch_warned,
        None if minting => return,
        None => &OWN,
    };
    let now = unix_now_ms();
    // Asked first, so that a layout far from its end costs one comparison a day.
    if EpochSpan::of(fixed.epoch, &fixed.layout)
        .warning(now)
        .is_some()
        && daily.due(now)
    {
        warn_if_ending(fixed, now);
    }
}

/// Gives the warning if fewer than five years are left; says whether it did.
fn warn_if_ending(fixed: &Fixed, now_unix_ms: i64) -> bool {
    let Some(warning) = EpochSpan::of(fixed.epoch, &fixed.layout).warning(now_unix_ms) else {
        return false;
    };
    pg_sys::panic::ErrorReport::new(
        PgSqlErrorCode::ERRCODE_WARNING,
        warning.message(),
        "snowflake_pg",
    )
    .set_detail(format!(
        "The layout {} counts its time from the epoch {}.",
        fixed.layout, fixed.epoch
    ))
    .set_hint(warning.hint())
    .report(PgLogLevel::WARNING);
    true
}

/// A renewal of the high-water mark failed (`hwm::renew`).
pub fn renewal_failed() {
    if let Some(shared) = shmem::shared() {
        shared.renewals_failed.fetch_add(1, Ordering::Relaxed);
    }
}

/// The high-water mark was renewed now (`hwm::renew`).
pub fn renewed() {
    if let Some(shared) = shmem::shared() {
        shared
            .renewed_unix_ms
            .store(unix_now_ms(), Ordering::Relaxed);
    }
}

/// The renewals that failed since the server started, with preload.
pub fn renewals_failed() -> Option<u64> {
    shmem::shared().map(|shared| shared.renewals_failed.load(Ordering::Relaxed))
}

/// When the high-water mark was last renewed (Unix ms), with preload and once renewed.
pub fn renewed_unix_ms() -> Option<i64> {
    shmem::shared()
        .map(|shared| shared.renewed_unix_ms.load(Ordering::Relaxed))
        .filter(|&unix_ms| unix_ms != i64::MIN)
}

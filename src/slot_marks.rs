//! With `shared_preload_libraries`: the last millisecond each backend slot used, kept in
//! shared memory, so the slot's next holder starts after it even if the wall clock
//! stepped back in between. Every mark starts at the (re)initialisation of shared memory
//! plus the lead bound: after a crash restart, whose killed backends could not wait out
//! their lead, new backends still start after anything those can have minted.
//!
//! Read once when a backend makes its generator and written once at its exit: never on
//! the hot path, and no lock (one atomic per slot).

use crate::layout::WORKER_BITS;
use crate::settings;
use pgrx::{pg_guard, pg_shmem_init, pg_sys, PGRXSharedMemory, PgAtomic};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// One mark per slot any `node_bits` can number, in ms since the snowflake epoch.
pub struct SlotMarks([AtomicI64; 1 << WORKER_BITS]);

// SAFETY: plain atomics, valid in any process that maps the segment.
unsafe impl PGRXSharedMemory for SlotMarks {}

static MARKS: PgAtomic<SlotMarks> = unsafe { PgAtomic::new(c"snowflake_pg slot marks") };
/// Set in the postmaster while preloading; backends inherit it.
static IN_USE: AtomicBool = AtomicBool::new(false);

/// Requests the shared memory; call from `_PG_init` while preloading.
// The macro tests for PostgreSQL versions this crate does not build for.
#[allow(unexpected_cfgs)]
pub fn request() {
    pg_shmem_init!(MARKS = SlotMarks(std::array::from_fn(|_| AtomicI64::new(start_mark()))));
    IN_USE.store(true, Ordering::Relaxed);
}

/// Later than any id a backend of the previous server life can have minted.
fn start_mark() -> i64 {
    let now = settings::fixed().map_or(0, |fixed| {
        crate::clock::unix_now_ms() - fixed.epoch.unix_ms()
    });
    now + settings::max_lead_ms()
}

/// The last ms the slot's earlier holders used, when the marks are kept.
pub fn mark(slot: i64) -> Option<i64> {
    IN_USE
        .load(Ordering::Relaxed)
        .then(|| MARKS.get().0[slot as usize].load(Ordering::Acquire))
}

/// Records the last ms this holder of the slot used, before it gives the slot back.
pub fn record(slot: i64, last_ms: i64) {
    if IN_USE.load(Ordering::Relaxed) {
        MARKS.get().0[slot as usize].fetch_max(last_ms, Ordering::Release);
    }
}

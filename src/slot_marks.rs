//! With `shared_preload_libraries`: the last tick (millisecond, by default) each backend
//! slot used, kept in shared memory, so the slot's next holder starts after it even if
//! the wall clock stepped back in between, and an exiting backend need not wait for the
//! clock to pass its last id. Every mark starts where the server life starts
//! (`hwm::life_start`): after every id of the previous life.
//!
//! Read once when a backend makes its generator and written once at its exit: never on
//! the hot path, and no lock (one atomic per slot).

use crate::layout::MAX_SLOT_BITS;
use pgrx::{pg_guard, pg_shmem_init, pg_sys, PGRXSharedMemory, PgAtomic};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::OnceLock;

/// One mark per slot a server's layout can number, in ticks since the snowflake epoch.
pub struct SlotMarks([AtomicI64; 1 << MAX_SLOT_BITS]);

// SAFETY: plain atomics, valid in any process that maps the segment.
unsafe impl PGRXSharedMemory for SlotMarks {}

static MARKS: PgAtomic<SlotMarks> = unsafe { PgAtomic::new(c"snowflake_pg slot marks") };
/// Set in the postmaster when the marks are made in shared memory; backends inherit it.
static IN_USE: AtomicBool = AtomicBool::new(false);
/// What every mark starts at, asked each time shared memory is (re)initialised: it must
/// lie after any id of the previous server life.
static START_MARK: OnceLock<fn() -> i64> = OnceLock::new();

/// Requests the shared memory; call from `_PG_init` while preloading.
// The macro tests for PostgreSQL versions this crate does not build for.
#[allow(unexpected_cfgs)]
pub fn request(start_mark: fn() -> i64) {
    let _ = START_MARK.set(start_mark);
    pg_shmem_init!(
        MARKS = {
            let start = START_MARK.get().map_or(0, |start_mark| start_mark());
            // Set once the marks exist: a start that fails before leaves them unused.
            IN_USE.store(true, Ordering::Relaxed);
            SlotMarks(std::array::from_fn(|_| AtomicI64::new(start)))
        }
    );
}
/// What a slot's mark holds while a backend holding the slot mints: not yet recorded.
const CLAIMED: i64 = i64::MAX;

/// Claims the slot's mark for this backend and gives the last tick of its earlier holders,
/// when the marks are kept. The slot was checked to fit the layout's slot bits, at most
/// `MAX_SLOT_BITS`.
pub fn claim(slot: i64) -> Option<i64> {
    IN_USE
        .load(Ordering::Relaxed)
        .then(|| MARKS.get().0[slot as usize].swap(CLAIMED, Ordering::AcqRel))
}

/// Records the last tick this holder of the slot used, before it gives the slot back; false
/// when the marks are not kept. PostgreSQL frees the slot only after this, so its next
/// holder reads the mark. The holder started after the mark it claimed, so its last tick
/// is at least that.
pub fn record(slot: i64, last: i64) -> bool {
    let kept = IN_USE.load(Ordering::Relaxed);
    if kept {
        MARKS.get().0[slot as usize].store(last, Ordering::Release);
    }
    kept
}

/// How many slots a live backend holds for its generator, with preload.
pub fn held() -> Option<usize> {
    IN_USE.load(Ordering::Relaxed).then(|| {
        MARKS
            .get()
            .0
            .iter()
            .filter(|mark| mark.load(Ordering::Relaxed) == CLAIMED)
            .count()
    })
}

/// The latest tick of every slot, unless some slot is still claimed: by a backend killed
/// before it could record its last tick, or one still running.
pub fn last_if_all_recorded() -> Option<i64> {
    if !IN_USE.load(Ordering::Relaxed) {
        return None;
    }
    let mut marks = MARKS
        .get()
        .0
        .iter()
        .map(|mark| mark.load(Ordering::Acquire));
    marks.try_fold(i64::MIN, |latest, mark| {
        (mark != CLAIMED).then_some(latest.max(mark))
    })
}

//! Shared memory, with `shared_preload_libraries`: everything the backends of a server
//! share, declared and made here alone, by the postmaster at each start (and again after a
//! crash restart), from one reading of the high-water mark's file. Without preload there is
//! none, and each user falls back to what a lone backend can do (`preloaded()` is false).
//!
//! - the reservation of the high-water mark (`hwm.rs`), checked on every call, and whether
//!   a promotion ended this server's recovery (`wal.rs`);
//! - one mark per backend slot, for the slot's next holder (`backend.rs`);
//! - the counters of each slot's generators, which `snowflake_status` sums;
//! - the day of the last warning that the epoch ends and the figures of the mark's
//!   renewals (`operations.rs`);
//! - the node claims seen committed (`claims.rs`), behind a lock: read once per backend.

use pgrx::{pg_shmem_init, PGRXSharedMemory, PgAtomic, PgLwLock};
use snowflake_core::claim::Remembered;
use snowflake_core::epoch_end::Daily;
use snowflake_core::layout::MAX_SLOT_BITS;
use snowflake_core::reservation::Reservation;
use snowflake_core::slot_marks::SlotMarks;
use snowflake_core::stats::Stats;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::OnceLock;

/// What the backends share without a lock: atomics only.
pub struct Shared {
    pub reservation: Reservation,
    pub slot_marks: SlotMarks,
    /// Whether this server life began as a standby that was promoted (`hwm::promoted`).
    pub promoted: AtomicBool,
    /// The counters of every backend slot a server's layout can number.
    pub slot_stats: [Stats; 1 << MAX_SLOT_BITS],
    /// The day of the last warning that the epoch ends, for the whole server.
    pub epoch_warned: Daily,
    /// Renewals of the high-water mark that failed: a write of its file that failed, or a
    /// call that gave up waiting for another process's write.
    pub renewals_failed: AtomicU64,
    /// When the high-water mark was last renewed (Unix ms), `i64::MIN` before the first.
    pub renewed_unix_ms: AtomicI64,
}

// SAFETY: plain atomics, valid in any process that maps the segment.
unsafe impl PGRXSharedMemory for Shared {}

/// The node claims seen committed during this server life.
pub struct Claims(pub Remembered);

// SAFETY: plain data with no pointers, valid in any process that maps the segment.
unsafe impl PGRXSharedMemory for Claims {}

// SAFETY: named once each; made by `request` before any backend reads them.
static SHARED: PgAtomic<Shared> = unsafe { PgAtomic::new(c"snowflake_pg shared state") };
// SAFETY: as above.
static CLAIMS: PgLwLock<Claims> = unsafe { PgLwLock::new(c"snowflake_pg node claims") };

/// Set in the postmaster once the segment is made; backends inherit it. A start that fails
/// before leaves it unset.
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// What the segment starts from, asked each time it is made: given by the modules above
/// rather than named, so that shared memory depends on nothing above it.
pub struct Origins {
    /// Where a server life starts (`hwm::life_start`): the tick after every id of the
    /// previous life, where the reservation and every slot mark begin.
    pub life_start: fn() -> i64,
    /// The day the postmaster warned at start that the epoch ends, if it did
    /// (`operations::warned_at_start`): the segment, made after, does not warn again that day.
    pub epoch_warned_on: fn() -> i64,
}

static ORIGINS: OnceLock<Origins> = OnceLock::new();

/// Requests the segment; call from `_PG_init` while preloading.
// The macro tests for PostgreSQL versions this crate does not build for.
#[allow(unexpected_cfgs)]
pub fn request(origins: Origins) {
    let _ = ORIGINS.set(origins);
    pg_shmem_init!(
        SHARED = {
            let (start, warned_on) = ORIGINS.get().map_or((0, i64::MIN), |origins| {
                ((origins.life_start)(), (origins.epoch_warned_on)())
            });
            PRELOADED.store(true, Ordering::Relaxed);
            Shared {
                reservation: Reservation::starting_at(start),
                slot_marks: SlotMarks::starting_at(start),
                promoted: AtomicBool::new(false),
                slot_stats: std::array::from_fn(|_| Stats::new()),
                epoch_warned: Daily::given_on(warned_on),
                renewals_failed: AtomicU64::new(0),
                renewed_unix_ms: AtomicI64::new(i64::MIN),
            }
        }
    );
    pg_shmem_init!(CLAIMS = Claims(Remembered::default()));
}

/// Whether the library was preloaded, and so the segment exists.
pub fn preloaded() -> bool {
    PRELOADED.load(Ordering::Relaxed)
}

/// The segment, with preload.
pub fn shared() -> Option<&'static Shared> {
    preloaded().then(|| SHARED.get())
}

/// The claims seen committed, with preload.
pub fn claims() -> Option<&'static PgLwLock<Claims>> {
    preloaded().then_some(&CLAIMS)
}

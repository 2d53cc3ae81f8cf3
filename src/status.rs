//! `snowflake_status`: what a DBA asks of a server minting ids. The counters of each
//! backend slot's generators (`stats`) live in shared memory with preload, so the view
//! sums the whole server since its start; without preload, only this session's are known.

use crate::error::Error;
use crate::layout::MAX_SLOT_BITS;
use crate::settings::{self, FROM_CITUS};
use crate::stats::{Stats, Totals};
use crate::{hwm, node, slot_marks};
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, pg_sys, PGRXSharedMemory, PgAtomic};
use std::sync::atomic::{AtomicBool, Ordering};

/// The counters of every backend slot a server's layout can number.
pub struct SlotStats([Stats; 1 << MAX_SLOT_BITS]);

// SAFETY: plain atomics, valid in any process that maps the segment.
unsafe impl PGRXSharedMemory for SlotStats {}

static SLOT_STATS: PgAtomic<SlotStats> = unsafe { PgAtomic::new(c"snowflake_pg slot stats") };
/// Set in the postmaster when the counters are made; backends inherit it.
static IN_USE: AtomicBool = AtomicBool::new(false);
/// This session's counters, without preload.
static OWN: Stats = Stats::new();

/// Requests the shared memory; call from `_PG_init` while preloading.
// The macro tests for PostgreSQL versions this crate does not build for.
#[allow(unexpected_cfgs)]
pub fn request() {
    pg_shmem_init!(
        SLOT_STATS = {
            IN_USE.store(true, Ordering::Relaxed);
            SlotStats(std::array::from_fn(|_| Stats::new()))
        }
    );
}

/// Where the generator of `slot` counts: the slot's shared counters with preload, else
/// this session's. The slot was checked to fit the layout's slot bits.
pub fn stats_of(slot: i64) -> &'static Stats {
    if IN_USE.load(Ordering::Relaxed) {
        &SLOT_STATS.get().0[slot as usize]
    } else {
        &OWN
    }
}

fn totals() -> Totals {
    if IN_USE.load(Ordering::Relaxed) {
        SLOT_STATS
            .get()
            .0
            .iter()
            .fold(Totals::default(), |sum, stats| sum.plus(stats.read()))
    } else {
        OWN.read()
    }
}

extension_sql!(
    r#"
CREATE VIEW snowflake_status AS
SELECT s.*,
       EXISTS (SELECT FROM snowflake_nodes n
               WHERE n.node_id = s.node_id AND n.system_identifier = s.system_identifier)
           AS node_claimed
FROM snowflake_server_status() s;
GRANT SELECT ON snowflake_status TO PUBLIC;
"#,
    name = "snowflake_status",
    requires = ["snowflake_nodes", snowflake_server_status]
);

/// One row about this server: see the `snowflake_status` view, which adds whether the
/// node id is claimed in this database.
#[allow(clippy::type_complexity)]
#[pg_extern(volatile, parallel_safe)]
fn snowflake_server_status() -> TableIterator<
    'static,
    (
        name!(node_id, Option<i32>),
        name!(node_source, &'static str),
        name!(system_identifier, i64),
        name!(layout, String),
        name!(epoch, TimestampWithTimeZone),
        name!(preloaded, bool),
        name!(backends_minting, Option<i32>),
        name!(high_water_mark, Option<TimestampWithTimeZone>),
        name!(furthest_lead_ms, i64),
        name!(clock_steps_absorbed, i64),
        name!(clock_steps_refused, i64),
        name!(spent_tick_waits, i64),
    ),
> {
    let fixed = crate::raise::or_raise(settings::fixed());
    let unit = fixed.layout.unit();
    let time_of = |ticks: i64| {
        fixed
            .epoch
            .pg_micros_of(ticks, unit)
            .and_then(|micros| TimestampWithTimeZone::try_from(micros).ok())
    };
    let choice = settings::node_choice();
    let totals = totals();
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    TableIterator::once((
        node::resolve(choice, &fixed.layout)
            .ok()
            .and_then(|id| i32::try_from(id).ok()),
        if choice == FROM_CITUS {
            "citus"
        } else {
            "setting"
        },
        // SAFETY: reads the control file's copy in shared memory.
        unsafe { pg_sys::GetSystemIdentifier() } as i64,
        fixed.layout.to_string(),
        time_of(0).unwrap_or_else(|| crate::raise::raise(Error::EpochOutOfRange)),
        IN_USE.load(Ordering::Relaxed),
        slot_marks::held().map(|held| held as i32),
        // The reservation ends with its last tick.
        hwm::reserved().and_then(|tick| time_of(tick + 1)),
        totals.furthest_lead_ticks * unit.ms(),
        count(totals.steps_back_absorbed),
        count(totals.steps_back_refused),
        count(totals.spent_tick_waits),
    ))
}

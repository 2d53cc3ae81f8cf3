//! `snowflake_status`: what a DBA asks of a server minting ids. The counters of each
//! backend slot's generators (`stats`) live in shared memory with preload, so the view
//! sums the whole server since its start; without preload, only this session's are known.

use crate::raise::{or_raise, raise};
use crate::settings::{self, FROM_CITUS};
use crate::{hwm, node, operations, shmem};
use pgrx::pg_sys;
use pgrx::prelude::*;
use snowflake_core::clock::unix_now_ms;
use snowflake_core::epoch_end::EpochSpan;
use snowflake_core::stats::{Stats, Totals};
use snowflake_core::time::TimeError;

/// Unix time of PostgreSQL's epoch, 2000-01-01 00:00:00 UTC, in ms.
const PG_EPOCH_UNIX_MS: i64 = 946_684_800_000;

/// This session's counters, without preload.
static OWN: Stats = Stats::new();

/// Where the generator of `slot` counts: the slot's shared counters with preload, else
/// this session's. The slot was checked to fit the layout's slot bits.
pub fn stats_of(slot: i64) -> &'static Stats {
    shmem::shared().map_or(&OWN, |shared| &shared.slot_stats[slot as usize])
}

fn totals() -> Totals {
    shmem::shared().map_or_else(
        || OWN.read(),
        |shared| {
            shared
                .slot_stats
                .iter()
                .fold(Totals::default(), |sum, stats| sum.plus(stats.read()))
        },
    )
}

/// One row about this server: see the `snowflake_status` view, which adds whether the
/// node id is claimed in this database, and by another server. Reading it gives the daily
/// warning that the epoch ends soon, if due (`operations`).
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
        name!(slots, i32),
        name!(backends_minting, Option<i32>),
        name!(most_backends_minting, Option<i32>),
        name!(high_water_mark, Option<TimestampWithTimeZone>),
        name!(furthest_lead_ms, i64),
        name!(clock_steps_absorbed, i64),
        name!(clock_steps_refused, i64),
        name!(spent_tick_waits, i64),
        name!(epoch_ends, Option<TimestampWithTimeZone>),
        name!(epoch_used, f64),
        name!(high_water_mark_renewed, Option<TimestampWithTimeZone>),
        name!(high_water_mark_renewals_failed, Option<i64>),
    ),
> {
    let fixed = or_raise(settings::fixed());
    let unit = fixed.layout.unit();
    let time_of = |ticks: i64| {
        fixed
            .epoch
            .pg_micros_of(ticks, unit)
            .and_then(|micros| TimestampWithTimeZone::try_from(micros).ok())
    };
    let choice = settings::node_choice();
    let shared = shmem::shared();
    let totals = totals();
    let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let of_unix_ms = |unix_ms: i64| {
        TimestampWithTimeZone::try_from((unix_ms - PG_EPOCH_UNIX_MS).saturating_mul(1000)).ok()
    };
    let span = EpochSpan::of(fixed.epoch, &fixed.layout);
    operations::warn_daily(&fixed, false);
    TableIterator::once((
        node::resolve(choice, &fixed)
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
        time_of(0).unwrap_or_else(|| raise(TimeError::EpochOutOfRange)),
        shmem::preloaded(),
        fixed.layout.slot_count() as i32,
        shared.map(|shared| shared.slot_marks.held() as i32),
        shared.map(|shared| shared.slot_marks.most_held() as i32),
        // The reservation ends with its last tick.
        hwm::reserved().and_then(|tick| time_of(tick + 1)),
        totals.furthest_lead_ticks * unit.ms(),
        count(totals.steps_back_absorbed),
        count(totals.steps_back_refused),
        count(totals.spent_tick_waits),
        span.ends_unix_ms.and_then(of_unix_ms),
        span.used(unix_now_ms()),
        operations::renewed_unix_ms().and_then(of_unix_ms),
        operations::renewals_failed().map(count),
    ))
}

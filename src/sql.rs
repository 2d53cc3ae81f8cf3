//! The SQL functions: thin wrappers that read the settings, call the pure modules and turn
//! their errors into PostgreSQL errors.

use crate::raise::{or_raise, raise};
use crate::{backend, layout, settings};
use pgrx::pg_sys;
use pgrx::prelude::*;

extension_sql!(
    r#"
CREATE TYPE snowflake_parts AS (
    ts timestamptz,
    node_id integer,
    backend_slot integer,
    worker_id integer,
    sequence integer
);
"#,
    name = "snowflake_parts",
    bootstrap
);

// `snowflake_next()` is the one hot function, so it is a bare version-1 C function rather
// than a `#[pg_extern]`: pgrx's generic wrapper (a memory-context switch and an unwinding
// guard on every call) cost about as much as the rest of the call. Nothing on its success
// path can panic; its error path goes through pgrx's guard like every other function.
extension_sql!(
    r#"
CREATE FUNCTION snowflake_next() RETURNS bigint
    VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'snowflake_next';
"#,
    name = "snowflake_next"
);

#[no_mangle]
pub extern "C" fn pg_finfo_snowflake_next() -> &'static pg_sys::Pg_finfo_record {
    static VERSION_1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &VERSION_1
}

/// A new id: time-ordered, unique across the backends of this server and, with distinct
/// `snowflake.node_id`s, across servers. Each process has its own generator, so parallel
/// workers may call it too.
///
/// # Safety
/// Called by PostgreSQL's function manager.
#[no_mangle]
pub unsafe extern "C-unwind" fn snowflake_next(_fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    match backend::next_id() {
        Ok(id) => pg_sys::Datum::from(id),
        // SAFETY: the guard turns the report into a PostgreSQL ERROR, which longjmps out of
        // this frame; nothing here needs dropping.
        Err(error) => unsafe { pg_sys::panic::pgrx_extern_c_guard(move || raise(error)) },
    }
}

/// The smallest id of `ts`'s millisecond: `id >= snowflake_floor(a) AND id <
/// snowflake_floor(b)` selects the ids minted in `[a, b)`. Stable, not immutable: it
/// depends on `snowflake.epoch`.
#[pg_extern(stable, strict, parallel_safe)]
fn snowflake_floor(ts: TimestampWithTimeZone) -> i64 {
    let epoch = or_raise(settings::fixed()).epoch;
    layout::floor(or_raise(epoch.ms_of(ts.into())))
}

/// The id of `uid` at `ts`: the same inputs give the same id, for idempotent upserts.
#[pg_extern(stable, strict, parallel_safe)]
fn snowflake_at(ts: TimestampWithTimeZone, uid: i64) -> i64 {
    let epoch = or_raise(settings::fixed()).epoch;
    or_raise(layout::with_uid(or_raise(epoch.ms_of(ts.into())), uid))
}

/// The parts of an id minted by `snowflake_next()`, as one row.
#[pg_extern(stable, strict, parallel_safe)]
fn snowflake_parse(
    id: i64,
    fcinfo: pg_sys::FunctionCallInfo,
) -> pgrx::composite_type!('static, "snowflake_parts") {
    let fixed = or_raise(settings::fixed());
    let parts = or_raise(fixed.layout.decompose(id));
    // Found through the call's return type rather than by name, so it works whatever
    // schema the extension lives in and whatever the search_path.
    // SAFETY: PostgreSQL passes a valid fcinfo with its flinfo.
    let parts_type = unsafe { pg_sys::get_fn_expr_rettype((*fcinfo).flinfo) };
    let ts = TimestampWithTimeZone::try_from(fixed.epoch.pg_micros_of(parts.ms))
        .unwrap_or_else(|e| pgrx::error!("snowflake id {id} has no valid time: {e}"));
    let mut row = PgHeapTuple::new_composite_type_by_oid(parts_type)
        .unwrap_or_else(|e| pgrx::error!("snowflake_parse must return snowflake_parts: {e}"));
    let fields: [(&str, Option<i32>); 4] = [
        ("node_id", Some(parts.node_id as i32)),
        ("backend_slot", Some(parts.backend_slot as i32)),
        ("worker_id", Some(parts.worker_id as i32)),
        ("sequence", Some(parts.sequence as i32)),
    ];
    row.set_by_name("ts", ts)
        .unwrap_or_else(|e| pgrx::error!("{e}"));
    for (name, value) in fields {
        row.set_by_name(name, value)
            .unwrap_or_else(|e| pgrx::error!("{e}"));
    }
    row
}

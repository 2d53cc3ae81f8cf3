//! The SQL functions: thin wrappers that read the settings, call the pure modules and turn
//! their errors into PostgreSQL errors.

use crate::error::Error;
use crate::raise::{or_raise, raise};
use crate::{backend, settings};
use pgrx::pg_sys;
use pgrx::prelude::*;
use snowflake_core::clock::unix_now_ms;
use snowflake_core::layout::{Layout, LayoutError, Parts};
use snowflake_core::report::{Report, Reported, SqlState};
use snowflake_core::text_form::{self, Form};
use snowflake_core::time::{Epoch, TimeError};
use snowflake_core::{server, spec};

/// A call the SQL functions refuse themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// `snowflake_next(gene)` with a NULL gene.
    NullGene,
    /// `snowflake_parse` was declared with a row type other than `snowflake_parts`.
    PartsType(String),
}

impl Reported for CallError {
    fn report(&self) -> Report {
        match self {
            CallError::NullGene => Report::new(
                SqlState::NullValueNotAllowed,
                "the gene of snowflake_next(gene) cannot be NULL",
            ),
            CallError::PartsType(reason) => Report::new(
                SqlState::DatatypeMismatch,
                format!("snowflake_parse must return snowflake_parts: {reason}"),
            ),
        }
    }
}

// `snowflake_next()` is the one hot function, so it is a bare version-1 C function rather
// than a `#[pg_extern]`: pgrx's generic wrapper (a memory-context switch and an unwinding
// guard on every call) cost about as much as the rest of the call. Nothing on its success
// path can panic; its error path goes through pgrx's guard like every other function.
// Declared in sql/src/next.sql.
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
    id_or_raise(backend::next_id())
}

// `snowflake_next(gene)`, the same way: not strict, so a NULL gene is an error rather
// than a NULL id.
#[no_mangle]
pub extern "C" fn pg_finfo_snowflake_next_gene() -> &'static pg_sys::Pg_finfo_record {
    pg_finfo_snowflake_next()
}

/// A new id whose gene field (the lowest bits) copies the low bits of `gene`, a related
/// key: `snowflake_next(k) % 2^g = k & (2^g - 1)`, so both find the same shard.
///
/// # Safety
/// Called by PostgreSQL's function manager with one bigint argument.
#[no_mangle]
pub unsafe extern "C-unwind" fn snowflake_next_gene(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // Read straight from the call: pgrx's accessor checks the pointer and the argument
    // count on every call, which PostgreSQL's declaration of the function already fixes.
    // SAFETY: PostgreSQL passes a valid fcinfo with the one argument the SQL declares.
    let key = unsafe { *std::ptr::addr_of!((*fcinfo).args).cast::<pg_sys::NullableDatum>() };
    if key.isnull {
        return id_or_raise(Err(CallError::NullGene.into()));
    }
    id_or_raise(backend::next_id_with_gene(key.value.value() as i64))
}

#[inline]
fn id_or_raise(result: Result<i64, Error>) -> pg_sys::Datum {
    match result {
        Ok(id) => pg_sys::Datum::from(id),
        // SAFETY: the guard turns the report into a PostgreSQL ERROR, which longjmps out of
        // this frame; nothing here needs dropping.
        Err(error) => unsafe { pg_sys::panic::pgrx_extern_c_guard(move || raise(error)) },
    }
}

/// The smallest id of the tick (millisecond, by default) of `ts`: `id >= snowflake_floor(a)
/// AND id < snowflake_floor(b)` selects the ids minted in `[a, b)`. Stable, not immutable:
/// it depends on `snowflake.epoch` and the layout.
#[pg_extern(stable, strict, parallel_safe)]
fn snowflake_floor(ts: TimestampWithTimeZone) -> i64 {
    let (layout, epoch) = server_layout();
    layout.floor(or_raise(epoch.ticks_of(ts.into(), &layout)))
}

/// The id of `uid` at `ts`, the uid filling every bit below the time: the same inputs give
/// the same id, for idempotent upserts.
#[pg_extern(stable, strict, parallel_safe)]
fn snowflake_at(ts: TimestampWithTimeZone, uid: i64) -> i64 {
    let (layout, epoch) = server_layout();
    or_raise(layout.with_uid(or_raise(epoch.ticks_of(ts.into(), &layout)), uid))
}

/// The parts of an id minted by `snowflake_next()`, as one row.
#[pg_extern(stable, strict, parallel_safe)]
fn snowflake_parse(
    id: i64,
    fcinfo: pg_sys::FunctionCallInfo,
) -> pgrx::composite_type!('static, "snowflake_parts") {
    let fixed = or_raise(settings::fixed());
    let reordered = or_raise(settings::reordered_tick(&fixed));
    let parts = or_raise(server::parts_of(&fixed.layout, reordered, id));
    parts_row(id, parts, &fixed.layout, fixed.epoch, fcinfo)
}

/// The parts of an id of another layout: a preset (`discord`, `sonyflake`, ...) or a spec,
/// which may end with its epoch: `time:41, node:5, slot:5, sequence:12, epoch:2015-01-01`.
#[pg_extern(stable, strict, parallel_safe, name = "snowflake_parse")]
fn snowflake_parse_as(
    id: i64,
    layout: &str,
    fcinfo: pg_sys::FunctionCallInfo,
) -> pgrx::composite_type!('static, "snowflake_parts") {
    let (layout, epoch) = or_raise(layout_of(layout));
    parts_row(id, or_raise(layout.decompose(id)), &layout, epoch, fcinfo)
}

/// The id of the given parts: the exact inverse of `snowflake_parse`. The layout is the
/// server's unless given; NULL parts give NULL.
#[pg_extern(stable, parallel_safe)]
fn snowflake_compose(
    ts: Option<TimestampWithTimeZone>,
    node_id: Option<i32>,
    backend_slot: Option<i32>,
    sequence: Option<i32>,
    gene: default!(Option<i32>, 0),
    layout: default!(Option<&str>, "NULL"),
) -> Option<i64> {
    let (layout, epoch) = match layout {
        Some(text) => or_raise(layout_of(text)),
        None => server_layout(),
    };
    let parts = Parts {
        ticks: or_raise(epoch.ticks_of(ts?.into(), &layout)),
        node_id: node_id?.into(),
        backend_slot: backend_slot?.into(),
        worker_id: 0,
        sequence: sequence?.into(),
        gene: gene?.into(),
    };
    Some(or_raise(layout.compose(&parts)))
}

/// The server's layout, as a spec that `snowflake_parse(id, layout)` reads.
#[pg_extern(stable, strict, parallel_safe)]
fn snowflake_layout() -> String {
    server_layout().0.to_string()
}

fn server_layout() -> (Layout, Epoch) {
    let fixed = or_raise(settings::fixed());
    (fixed.layout, fixed.epoch)
}

/// A layout given to a function, with its own epoch or else the server's.
fn layout_of(text: &str) -> Result<(Layout, Epoch), Error> {
    let spec = spec::parse(text)?;
    let epoch = match spec.epoch {
        Some(epoch) => {
            Epoch::parse(&epoch, unix_now_ms()).map_err(|_| LayoutError::InvalidLayout {
                value: text.into(),
                reason: format!(
                    "the epoch \"{epoch}\" is not an ISO 8601 time from 1970 on, in the past"
                ),
            })?
        }
        None => settings::fixed()?.epoch,
    };
    Ok((spec.layout, epoch))
}

/// The row of `parts`, the parts of `id`.
fn parts_row(
    id: i64,
    parts: Parts,
    layout: &Layout,
    epoch: Epoch,
    fcinfo: pg_sys::FunctionCallInfo,
) -> PgHeapTuple<'static, pgrx::AllocatedByRust> {
    let ts = epoch
        .pg_micros_of(parts.ticks, layout.unit())
        .and_then(|micros| TimestampWithTimeZone::try_from(micros).ok())
        .unwrap_or_else(|| raise(TimeError::TimeOfIdOutOfRange(id)));
    // Found through the call's return type rather than by name, so it works whatever
    // schema the extension lives in and whatever the search_path.
    // SAFETY: PostgreSQL passes a valid fcinfo with its flinfo.
    let parts_type = unsafe { pg_sys::get_fn_expr_rettype((*fcinfo).flinfo) };
    let mut row = PgHeapTuple::new_composite_type_by_oid(parts_type)
        .unwrap_or_else(|e| raise(CallError::PartsType(e.to_string())));
    // Every field but the time has at most 31 bits; the worker id (node and slot side by
    // side) can have more, and is NULL then.
    let fields = [
        ("node_id", i32::try_from(parts.node_id).ok()),
        ("backend_slot", i32::try_from(parts.backend_slot).ok()),
        ("worker_id", i32::try_from(parts.worker_id).ok()),
        ("sequence", i32::try_from(parts.sequence).ok()),
        ("gene", i32::try_from(parts.gene).ok()),
    ];
    row.set_by_name("ts", ts)
        .unwrap_or_else(|e| raise(CallError::PartsType(e.to_string())));
    for (name, value) in fields {
        match row.set_by_name(name, value) {
            // A database still on 0.1.0's objects (before ALTER EXTENSION snowflake_pg
            // UPDATE) has no gene column, and its layout no gene bits.
            Err(pgrx::datum::TryFromDatumError::NoSuchAttributeName(_)) if name == "gene" => {}
            result => result.unwrap_or_else(|e| raise(CallError::PartsType(e.to_string()))),
        }
    }
    row
}

/// The id as fixed-width text: Crockford base32 (13 characters, the default) or base62
/// (11). Under COLLATE "C" the texts sort as the ids do. Immutable: no setting changes it.
#[pg_extern(immutable, strict, parallel_safe)]
fn snowflake_encode(id: i64, form: default!(&str, "'base32'")) -> String {
    or_raise(text_form::encode(id, or_raise(Form::named(form))))
}

/// The id that `snowflake_encode` wrote as `encoded`; base32 reads either case.
#[pg_extern(immutable, strict, parallel_safe)]
fn snowflake_decode(encoded: &str, form: default!(&str, "'base32'")) -> i64 {
    or_raise(text_form::decode(encoded, or_raise(Form::named(form))))
}

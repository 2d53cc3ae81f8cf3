//! The `snowflake.*` settings: their registration, and the validated values the rest of
//! the extension reads.
//!
//! `snowflake.layout`, `snowflake.node_bits` and `snowflake.epoch` decide what every id
//! means, so they may only change with a server restart. PostgreSQL lets a library define
//! such settings only while it is being preloaded; without preload they keep their
//! defaults, and if the configuration sets them anyway every call says so instead of
//! silently ignoring it.

use crate::error::Error;
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::{pg_guard, pg_sys, PostgresGucEnum};
use snowflake_core::clock::unix_now_ms;
use snowflake_core::layout::{Layout, LayoutError, NodeBitsFrom};
use snowflake_core::report::{Report, Reported, SqlState};
use snowflake_core::server::{server_layout, Fixed, DEFAULT_NODE_BITS};
use snowflake_core::time::{self, Epoch};
use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::OnceLock;

const NODE_ID_NAME: &CStr = c"snowflake.node_id";
const NODE_BITS_NAME: &CStr = c"snowflake.node_bits";
const EPOCH_NAME: &CStr = c"snowflake.epoch";
const LAYOUT_NAME: &CStr = c"snowflake.layout";
const MAX_LEAD_NAME: &CStr = c"snowflake.max_lead_ms";
const NODE_SOURCE_NAME: &CStr = c"snowflake.node_source";
const REORDERED_AT_NAME: &CStr = c"snowflake.reordered_at";

const DEFAULT_EPOCH: &CStr = c"2020-01-01 00:00:00+00";
/// A second: absorbs a leap second stepped back, and is the longest a backend that ran
/// ahead in a burst waits at exit.
const DEFAULT_MAX_LEAD_MS: i32 = 1000;
const MAX_MAX_LEAD_MS: i32 = 60_000;

static NODE_ID: GucSetting<i32> = GucSetting::<i32>::new(0);
static NODE_BITS: GucSetting<i32> = GucSetting::<i32>::new(DEFAULT_NODE_BITS as i32);
static EPOCH: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(DEFAULT_EPOCH));
/// Empty: the default layout, with `snowflake.node_bits` node bits.
static LAYOUT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c""));
static MAX_LEAD_MS: GucSetting<i32> = GucSetting::<i32>::new(DEFAULT_MAX_LEAD_MS);
static NODE_SOURCE: GucSetting<NodeSource> = GucSetting::<NodeSource>::new(NodeSource::Setting);
/// Empty: every id is in the layout's order (a server that never ran 0.3.0 or earlier).
static REORDERED_AT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c""));

/// Where a server's node id comes from.
#[derive(Clone, Copy, PartialEq, Eq, PostgresGucEnum)]
pub enum NodeSource {
    /// `snowflake.node_id`.
    #[name = c"setting"]
    Setting,
    /// The node's Citus group id: the coordinator's is 0, each worker's its own.
    #[name = c"citus"]
    Citus,
}

/// What `node_choice` gives when the node id is the Citus group id; never a node id (the
/// setting holds an `i32`).
pub const FROM_CITUS: i64 = i64::MIN + 1;
/// What `node_choice` gives when `snowflake.node_id` was given a value PostgreSQL could not
/// read (`unreadable_node_id`).
pub const NODE_ID_UNREADABLE: i64 = i64::MIN + 2;

/// What `snowflake.node_id` holds in place of a configured value PostgreSQL could not read:
/// its default in such a process, so that PostgreSQL's fallback to the default lands here
/// rather than on node 0. Refused like any node id out of range when SET.
const UNREADABLE_STAND_IN: i32 = i32::MIN;
const UNREADABLE_STAND_IN_TEXT: &CStr = c"-2147483648";

/// The configured `snowflake.node_id` that PostgreSQL could not read, if any.
static UNREADABLE_NODE_ID: OnceLock<String> = OnceLock::new();

/// `node_choice`, kept up to date by the assign hooks of `snowflake.node_id` and
/// `snowflake.node_source`, so that a call reads one value.
static NODE_CHOICE: AtomicI64 = AtomicI64::new(0);

/// True while the settings are being defined: PostgreSQL then applies the configured values
/// again, and refusing one would only make it warn and fall back to the default. The check
/// hooks let every value pass then; `register` checks them itself.
static DEFINING: AtomicBool = AtomicBool::new(false);

/// A restart-only setting in the configuration of a server that did not preload the library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeedsPreload {
    name: &'static str,
    value: String,
}

impl Reported for NeedsPreload {
    fn report(&self) -> Report {
        let NeedsPreload { name, value } = self;
        Report::new(
            SqlState::InvalidParameterValue,
            format!("{name} = \"{value}\" is set, but snowflake_pg is not in shared_preload_libraries"),
        )
        .hint(format!("{name} only takes effect at server start: add snowflake_pg to shared_preload_libraries and restart, or remove the setting."))
    }
}

/// Set when the configuration gives a restart-only setting but the library was not preloaded.
static NEEDS_PRELOAD: OnceLock<NeedsPreload> = OnceLock::new();

/// Whether the configuration sets `snowflake.node_bits`, which must then agree with
/// `snowflake.layout`: its default alone cannot tell.
static NODE_BITS_GIVEN: AtomicBool = AtomicBool::new(false);

/// Registers the settings; called once per process from `_PG_init`.
pub fn register() {
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries.
    let preloading = unsafe { pg_sys::process_shared_preload_libraries_in_progress };
    let restart_only = || {
        if preloading {
            GucContext::Postmaster
        } else {
            GucContext::Internal
        }
    };

    NODE_BITS_GIVEN.store(configured(NODE_BITS_NAME).is_some(), Ordering::Relaxed);
    DEFINING.store(true, Ordering::Relaxed);
    if preloading || not_configured(LAYOUT_NAME) {
        // SAFETY: the check hook is guarded and only reads the proposed value.
        unsafe {
            GucRegistry::define_string_guc_with_hooks(
            LAYOUT_NAME,
            c"The bit layout of ids: a preset (default, js53) or fields with their widths, such as 'time:41, node:2, slot:8, sequence:12'.",
            c"Empty means the default layout with snowflake.node_bits node bits. Changing it changes what every id means: it takes effect at server start, and only with snowflake_pg in shared_preload_libraries.",
            &LAYOUT,
            restart_only(),
            GucFlags::default(),
            Some(check_layout),
            None,
            None,
        )
        };
    }
    if preloading || not_configured(NODE_BITS_NAME) {
        // SAFETY: as above.
        unsafe {
            GucRegistry::define_int_guc_with_hooks(
            NODE_BITS_NAME,
            c"How many of the 10 worker bits of an id name the node; the rest number the backend.",
            c"Changing it changes what every id means: it takes effect at server start, and only with snowflake_pg in shared_preload_libraries.",
            &NODE_BITS,
            // The range is checked when the settings are loaded, not by PostgreSQL: at
            // server start it would only warn about a value out of its range and keep the
            // default, which changes what every id means. Checked there, a preloading
            // server refuses to start and says why.
            i32::MIN,
            i32::MAX,
            restart_only(),
            GucFlags::default(),
            Some(check_node_bits),
            None,
            None,
        )
        };
    }
    if preloading || not_configured(EPOCH_NAME) {
        // SAFETY: as above.
        unsafe {
            GucRegistry::define_string_guc_with_hooks(
            EPOCH_NAME,
            c"The time that ids count milliseconds from.",
            c"Changing it on a live system misparses old ids and can mint duplicates: it takes effect at server start, and only with snowflake_pg in shared_preload_libraries.",
            &EPOCH,
            restart_only(),
            GucFlags::default(),
            Some(check_epoch),
            None,
            None,
        )
        };
    }
    let unreadable_now = stand_in_for_unreadable_node_id();
    // SAFETY: the check hook is guarded and only reads settings; the assign hook only
    // stores a value.
    unsafe {
        GucRegistry::define_int_guc_with_hooks(
            NODE_ID_NAME,
            c"This server's node id: it must differ on every server that mints ids for the same tables.",
            c"Goes from 0 to 2^(node bits of the layout) - 1.",
            &NODE_ID,
            // Every integer is held, and checked against the layout when a backend settles
            // its node id: PostgreSQL would only warn about a value out of this range and
            // mint as node 0.
            i32::MIN,
            i32::MAX,
            GucContext::Suset,
            GucFlags::default(),
            Some(check_node_id),
            Some(assign_node_id),
            None,
        );
    }
    if unreadable_now {
        // PostgreSQL set the unreadable value aside and kept the configured default or
        // the default: the session's SET stands, as the stand-in.
        // SAFETY: sets a setting just defined, as a SET would.
        unsafe {
            pg_sys::set_config_option(
                NODE_ID_NAME.as_ptr(),
                UNREADABLE_STAND_IN_TEXT.as_ptr(),
                pg_sys::GucContext::PGC_SUSET,
                pg_sys::GucSource::PGC_S_SESSION,
                pg_sys::GucAction::GUC_ACTION_SET,
                true,
                0,
                false,
            );
        }
    }
    // SAFETY: the assign hook is guarded and only stores a value.
    unsafe {
        GucRegistry::define_enum_guc_with_hooks(
            NODE_SOURCE_NAME,
            c"Where this server's node id comes from: snowflake.node_id (setting) or the Citus group id of the node (citus).",
            c"With citus, every node of a Citus cluster mints with its own group id and needs no snowflake.node_id.",
            &NODE_SOURCE,
            GucContext::Suset,
            GucFlags::default(),
            None,
            Some(assign_node_source),
            None,
        );
    }
    GucRegistry::define_int_guc(
        MAX_LEAD_NAME,
        c"How far ahead of the clock a backend may mint ids, in ms.",
        c"Bounds the ids borrowed from later milliseconds in a burst, the clock step back that is absorbed, and the wait of a backend at exit.",
        &MAX_LEAD_MS,
        0,
        MAX_MAX_LEAD_MS,
        GucContext::Sighup,
        GucFlags::UNIT_MS,
    );
    // Not restart-only: a stock server, which cannot have restart-only settings, needs
    // it as much as a preloading one. Checked where it is read (`reordered_tick`).
    GucRegistry::define_string_guc(
        REORDERED_AT_NAME,
        c"On a server upgraded from snowflake_pg 0.3.0 or earlier: when it restarted into 0.4.0's field order.",
        c"Ids of earlier ticks parse in 0.3.0's order (the sequence below the node and slot); none is minted before it. Empty: every id is in the layout's order.",
        &REORDERED_AT,
        GucContext::Sighup,
        GucFlags::default(),
    );
    DEFINING.store(false, Ordering::Relaxed);

    if preloading {
        // A server whose ids would all be refused should not start: say why now.
        if let Err(error) = load_fixed() {
            crate::raise::raise(error);
        }
    }
}

/// Finds a configured `snowflake.node_id` that PostgreSQL cannot read as an integer (from
/// the configuration file, ALTER SYSTEM, ALTER ROLE or DATABASE, PGOPTIONS, or a SET before
/// the library was loaded): PostgreSQL would warn and mint as node 0. Remembers it, and
/// makes the stand-in the setting's default, which the fallback then lands on. Returns
/// whether a SET made the session's current value unreadable (it differs from the value
/// RESET returns to): the caller then sets the stand-in over whatever PostgreSQL kept,
/// once the setting is defined. Only then: set at the session's level in the postmaster,
/// the stand-in would outrank the configuration file, and a fixed file and a reload would
/// not take effect.
fn stand_in_for_unreadable_node_id() -> bool {
    let current = configured(NODE_ID_NAME);
    let reset = configured_reset(NODE_ID_NAME);
    let unreadable = |value: &Option<String>| value.clone().filter(|text| !reads_as_int(text));
    // A placeholder made by a SET alone has no reset value, which PostgreSQL 18 shows as an
    // empty one: an empty value configured is caught as the current value instead.
    let reset_unreadable = unreadable(&reset).filter(|text| !text.is_empty());
    let Some(value) = unreadable(&current).or(reset_unreadable) else {
        return false;
    };
    let _ = UNREADABLE_NODE_ID.set(value);
    // SAFETY: the setting is not defined yet: its storage is read only as its default.
    unsafe { *NODE_ID.as_ptr() = UNREADABLE_STAND_IN };
    unreadable(&current).is_some() && current != reset
}

/// Whether PostgreSQL reads `value` as an integer setting (its own parser: hexadecimal,
/// octal and rounded fractions included).
fn reads_as_int(value: &str) -> bool {
    let Ok(text) = CString::new(value) else {
        return false;
    };
    let mut result = 0;
    // SAFETY: parses a NUL-terminated string into a local; no hint is asked for.
    unsafe { pg_sys::parse_int(text.as_ptr(), &mut result, 0, std::ptr::null_mut()) }
}

/// The configured `snowflake.node_id` that PostgreSQL could not read, if any.
pub fn unreadable_node_id() -> Option<&'static str> {
    UNREADABLE_NODE_ID.get().map(String::as_str)
}

/// Refuses a bad `snowflake.layout` when it is set (by ALTER SYSTEM, or in the file read at
/// a reload), with the message the server would give at its next start. Whether it agrees
/// with `snowflake.node_bits` is checked at start only: both may change before it.
#[pg_guard]
unsafe extern "C-unwind" fn check_layout(
    new_value: *mut *mut c_char,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes the proposed value, a NUL-terminated string or NULL.
    let text = unsafe { text_at(*new_value) };
    check_restart_only(server_layout(&text, None).map(drop))
}

/// As `check_layout`, for `snowflake.node_bits`.
#[pg_guard]
unsafe extern "C-unwind" fn check_node_bits(
    new_value: *mut i32,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes the proposed value.
    let node_bits = unsafe { *new_value };
    check_restart_only(Layout::from_node_bits(node_bits.into()).map(drop))
}

/// As `check_layout`, for `snowflake.epoch`.
#[pg_guard]
unsafe extern "C-unwind" fn check_epoch(
    new_value: *mut *mut c_char,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: as in `check_layout`.
    let text = unsafe { text_at(*new_value) };
    check_restart_only(Epoch::parse(&text, unix_now_ms()).map(drop))
}

/// The text of a string setting's value; NULL is empty.
///
/// # Safety
/// `value` is NULL or a NUL-terminated string.
unsafe fn text_at(value: *const c_char) -> String {
    if value.is_null() {
        return String::new();
    }
    // SAFETY: the caller's promise.
    unsafe { CStr::from_ptr(value) }
        .to_string_lossy()
        .into_owned()
}

/// A check hook's answer for a restart-only setting: while the settings are defined every
/// value passes (`register` refuses a bad one itself, so the server will not start); after
/// that a bad value is refused with its error's message, detail and hint.
fn check_restart_only(checked: Result<(), impl Reported>) -> bool {
    match checked {
        Ok(()) => true,
        Err(_) if DEFINING.load(Ordering::Relaxed) => true,
        Err(error) => {
            refuse_in_check_hook(error.report());
            false
        }
    }
}

/// Hands PostgreSQL the text of `error` for its report of a refused setting.
fn refuse_in_check_hook(report: Report) {
    let copy = |text: String| {
        let text = CString::new(text).unwrap_or_default();
        // SAFETY: copies the text into PostgreSQL's memory, where the report reads it.
        unsafe { pg_sys::pstrdup(text.as_ptr()) }
    };
    // SAFETY: PostgreSQL's documented way for a check hook to word its refusal.
    unsafe {
        pg_sys::GUC_check_errmsg_string = copy(report.message);
        if let Some(detail) = report.detail {
            pg_sys::GUC_check_errdetail_string = copy(detail);
        }
        if let Some(hint) = report.hint {
            pg_sys::GUC_check_errhint_string = copy(hint);
        }
    }
}

/// Refuses a node id that does not fit the node bits when it is SET in a session, so the
/// mistake shows at once. Values from the configuration pass: refused there, PostgreSQL
/// would fall back to node 0 with only a warning in the log, while accepted, every
/// `snowflake_next()` fails with the allowed range until the value is fixed. So does a
/// value SET before the library was loaded, which PostgreSQL applies again while the
/// setting is being defined, for the same reason.
#[pg_guard]
unsafe extern "C-unwind" fn check_node_id(
    new_value: *mut i32,
    _extra: *mut *mut std::ffi::c_void,
    source: pg_sys::GucSource::Type,
) -> bool {
    if source < pg_sys::GucSource::PGC_S_INTERACTIVE || DEFINING.load(Ordering::Relaxed) {
        return true;
    }
    let Ok(fixed) = fixed() else { return true };
    // SAFETY: PostgreSQL passes the proposed value.
    match fixed.check_node_id(unsafe { *new_value } as i64) {
        Ok(()) => true,
        Err(error) => {
            let detail =
                CString::new(error.report().detail.unwrap_or_default()).unwrap_or_default();
            // SAFETY: PostgreSQL reads this palloc'd string when it reports the refusal.
            unsafe { pg_sys::GUC_check_errdetail_string = pg_sys::pstrdup(detail.as_ptr()) };
            false
        }
    }
}

// PostgreSQL calls an assign hook before it stores the new value: each hook takes its own
// setting's new value and the other's current one.

#[pg_guard]
unsafe extern "C-unwind" fn assign_node_id(new_value: i32, _extra: *mut std::ffi::c_void) {
    // SAFETY: PostgreSQL writes the settings only in this thread, between calls.
    let source = unsafe { *NODE_SOURCE.as_ptr() };
    NODE_CHOICE.store(choice_of(source, new_value), Ordering::Relaxed);
}

#[pg_guard]
unsafe extern "C-unwind" fn assign_node_source(new_value: i32, _extra: *mut std::ffi::c_void) {
    // SAFETY: as above.
    let node_id = unsafe { *NODE_ID.as_ptr() };
    NODE_CHOICE.store(choice_of(new_value, node_id), Ordering::Relaxed);
}

fn choice_of(source: i32, node_id: i32) -> i64 {
    if source == NodeSource::Citus as i32 {
        FROM_CITUS
    } else if node_id == UNREADABLE_STAND_IN && UNREADABLE_NODE_ID.get().is_some() {
        NODE_ID_UNREADABLE
    } else {
        node_id.into()
    }
}

/// Whether the configuration leaves a restart-only setting alone. When it does not (and
/// the library was not preloaded), the setting stays an undefined placeholder and every
/// call reports it.
fn not_configured(name: &'static CStr) -> bool {
    let Some(value) = configured(name) else {
        return true;
    };
    let name = name.to_str().unwrap_or_default();
    let _ = NEEDS_PRELOAD.set(NeedsPreload { name, value });
    false
}

/// The value a setting not yet defined returns to at RESET (from the configuration file,
/// ALTER SYSTEM, ALTER ROLE or DATABASE, or PGOPTIONS), if any.
fn configured_reset(name: &CStr) -> Option<String> {
    configured(name)?;
    // SAFETY: the placeholder exists (above); its reset value is NULL or a string.
    let value = unsafe { pg_sys::GetConfigOptionResetString(name.as_ptr()) };
    // SAFETY: as `text_at` asks.
    (!value.is_null()).then(|| unsafe { text_at(value) })
}

/// The value the configuration (or a SET) gives a setting not yet defined: PostgreSQL
/// keeps it in a placeholder until the library defines the setting.
fn configured(name: &CStr) -> Option<String> {
    // SAFETY: looks up a setting by name; missing_ok means NULL when there is none.
    let value = unsafe { pg_sys::GetConfigOption(name.as_ptr(), true, false) };
    // SAFETY: a non-NULL result is the placeholder's NUL-terminated value, as `text_at`
    // asks.
    (!value.is_null()).then(|| unsafe { text_at(value) })
}

thread_local! {
    static FIXED: Cell<Option<Fixed>> = const { Cell::new(None) };
}

/// The restart-only settings, validated once per process.
pub fn fixed() -> Result<Fixed, Error> {
    if let Some(fixed) = FIXED.get() {
        return Ok(fixed);
    }
    let fixed = load_fixed()?;
    FIXED.set(Some(fixed));
    Ok(fixed)
}

fn load_fixed() -> Result<Fixed, Error> {
    if let Some(error) = NEEDS_PRELOAD.get() {
        return Err(error.clone().into());
    }
    let (layout, node_bits_from) = load_layout()?;
    Ok(Fixed {
        layout,
        epoch: Epoch::parse(&text_of(&EPOCH), unix_now_ms())?,
        node_bits_from,
    })
}

fn load_layout() -> Result<(Layout, NodeBitsFrom), LayoutError> {
    let node_bits_given = NODE_BITS_GIVEN.load(Ordering::Relaxed);
    server_layout(
        &text_of(&LAYOUT),
        node_bits_given.then(|| NODE_BITS.get().into()),
    )
}

fn text_of(setting: &GucSetting<Option<CString>>) -> String {
    setting
        .get()
        .map(|text| text.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The tick of `snowflake.reordered_at` (`time::reordered_tick`), read when a backend
/// starts minting and by `snowflake_parse`: it may change at a reload.
pub fn reordered_tick(fixed: &Fixed) -> Result<Option<i64>, Error> {
    Ok(time::reordered_tick(
        &text_of(&REORDERED_AT),
        fixed.epoch,
        fixed.layout.unit(),
        unix_now_ms(),
    )?)
}

/// What decides this server's node id, read on every call: `snowflake.node_id`, or
/// `FROM_CITUS`. A change of either makes the backend settle its node id again.
pub fn node_choice() -> i64 {
    NODE_CHOICE.load(Ordering::Relaxed)
}

/// Read on every call too, straight from its storage: `GucSetting::get` checks the calling
/// thread each time, and backends have one thread.
pub fn max_lead_ms() -> i64 {
    // SAFETY: PostgreSQL writes the setting only between calls, in this same thread.
    unsafe { *MAX_LEAD_MS.as_ptr() as i64 }
}

/// Runs `f` with PostgreSQL's setting `name` at `value`, as a function's `SET` clause does:
/// the value before comes back after it, or when an ERROR aborts the (sub)transaction.
/// Allowed in a parallel worker too (`GUC_ACTION_SAVE`).
pub fn with_setting<T>(name: &CStr, value: &CStr, f: impl FnOnce() -> T) -> T {
    // SAFETY: opens a GUC nesting level and saves the setting in it, as PostgreSQL does
    // around a function's SET clause.
    let level = unsafe {
        let level = pg_sys::NewGUCNestLevel();
        pg_sys::set_config_option(
            name.as_ptr(),
            value.as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_SAVE,
            true,
            0,
            false,
        );
        level
    };
    let result = f();
    // SAFETY: closes the level opened above, restoring the value before.
    unsafe { pg_sys::AtEOXact_GUC(true, level) };
    result
}

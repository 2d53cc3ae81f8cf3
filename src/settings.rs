//! The `snowflake.*` settings: their registration, and the validated values the rest of
//! the extension reads.
//!
//! `snowflake.layout`, `snowflake.node_bits` and `snowflake.epoch` decide what every id
//! means, so they may only change with a server restart. PostgreSQL lets a library define
//! such settings only while it is being preloaded; without preload they keep their
//! defaults, and if the configuration sets them anyway every call says so instead of
//! silently ignoring it.

use crate::clock::{unix_now_ms, SystemClock};
use crate::error::Error;
use crate::layout::{Field, Layout, MAX_SLOT_BITS};
use crate::spec;
use crate::time::Epoch;
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::{pg_guard, pg_sys, PostgresGucEnum};
use std::cell::Cell;
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::OnceLock;

const NODE_ID_NAME: &CStr = c"snowflake.node_id";
const NODE_BITS_NAME: &CStr = c"snowflake.node_bits";
const EPOCH_NAME: &CStr = c"snowflake.epoch";
const LAYOUT_NAME: &CStr = c"snowflake.layout";
const MAX_LEAD_NAME: &CStr = c"snowflake.max_lead_ms";
const NODE_SOURCE_NAME: &CStr = c"snowflake.node_source";

/// Two node bits leave 8 for the backend slot: 256 slots, enough for a stock server
/// (max_connections = 100 plus background processes), and 4 nodes.
const DEFAULT_NODE_BITS: i32 = 2;
const DEFAULT_EPOCH: &CStr = c"2020-01-01 00:00:00+00";
/// A second: absorbs a leap second stepped back, and is the longest a backend that ran
/// ahead in a burst waits at exit.
const DEFAULT_MAX_LEAD_MS: i32 = 1000;
const MAX_MAX_LEAD_MS: i32 = 60_000;

static NODE_ID: GucSetting<i32> = GucSetting::<i32>::new(0);
static NODE_BITS: GucSetting<i32> = GucSetting::<i32>::new(DEFAULT_NODE_BITS);
static EPOCH: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(DEFAULT_EPOCH));
/// Empty: the default layout, with `snowflake.node_bits` node bits.
static LAYOUT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c""));
static MAX_LEAD_MS: GucSetting<i32> = GucSetting::<i32>::new(DEFAULT_MAX_LEAD_MS);
static NODE_SOURCE: GucSetting<NodeSource> = GucSetting::<NodeSource>::new(NodeSource::Setting);

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

/// What `node_choice` gives when the node id is the Citus group id; never a node id.
pub const FROM_CITUS: i64 = -1;

/// `node_choice`, kept up to date by the assign hooks of `snowflake.node_id` and
/// `snowflake.node_source`, so that a call reads one value.
static NODE_CHOICE: AtomicI64 = AtomicI64::new(0);

/// True while `snowflake.node_id` is being defined: see `check_node_id`.
static DEFINING_NODE_ID: AtomicBool = AtomicBool::new(false);

/// Set when the configuration gives a restart-only setting but the library was not preloaded.
static NEEDS_PRELOAD: OnceLock<Error> = OnceLock::new();

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
    if preloading || not_configured(LAYOUT_NAME) {
        GucRegistry::define_string_guc(
            LAYOUT_NAME,
            c"The bit layout of ids: a preset (default, js53) or fields with their widths, such as 'time:41, node:2, slot:8, sequence:12'.",
            c"Empty means the default layout with snowflake.node_bits node bits. Changing it changes what every id means: it takes effect at server start, and only with snowflake_pg in shared_preload_libraries.",
            &LAYOUT,
            restart_only(),
            GucFlags::default(),
        );
    }
    if preloading || not_configured(NODE_BITS_NAME) {
        GucRegistry::define_int_guc(
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
        );
    }
    if preloading || not_configured(EPOCH_NAME) {
        GucRegistry::define_string_guc(
            EPOCH_NAME,
            c"The time that ids count milliseconds from.",
            c"Changing it on a live system misparses old ids and can mint duplicates: it takes effect at server start, and only with snowflake_pg in shared_preload_libraries.",
            &EPOCH,
            restart_only(),
            GucFlags::default(),
        );
    }
    DEFINING_NODE_ID.store(true, Ordering::Relaxed);
    // SAFETY: the check hook is guarded and only reads settings.
    unsafe {
        GucRegistry::define_int_guc_with_hooks(
            NODE_ID_NAME,
            c"This server's node id: it must differ on every server that mints ids for the same tables.",
            c"Goes from 0 to 2^(node bits of the layout) - 1.",
            &NODE_ID,
            0,
            i32::MAX,
            GucContext::Suset,
            GucFlags::default(),
            Some(check_node_id),
            Some(assign_node_id),
            None,
        );
    }
    DEFINING_NODE_ID.store(false, Ordering::Relaxed);
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

    if preloading {
        // A server whose ids would all be refused should not start: say why now.
        if let Err(error) = load_fixed() {
            crate::raise::raise(error);
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
    if source < pg_sys::GucSource::PGC_S_INTERACTIVE || DEFINING_NODE_ID.load(Ordering::Relaxed) {
        return true;
    }
    let Ok(fixed) = fixed() else { return true };
    // SAFETY: PostgreSQL passes the proposed value.
    match fixed.layout.check_node_id(unsafe { *new_value } as i64) {
        Ok(()) => true,
        Err(error) => {
            let detail = CString::new(error.detail().unwrap_or_default()).unwrap_or_default();
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
    let _ = NEEDS_PRELOAD.set(Error::NeedsPreload { name, value });
    false
}

/// The value the configuration (or a SET) gives a setting not yet defined: PostgreSQL
/// keeps it in a placeholder until the library defines the setting.
fn configured(name: &CStr) -> Option<String> {
    // SAFETY: looks up a setting by name; missing_ok means NULL when there is none.
    let value = unsafe { pg_sys::GetConfigOption(name.as_ptr(), true, false) };
    // SAFETY: a non-NULL result is the placeholder's NUL-terminated value.
    (!value.is_null()).then(|| {
        unsafe { CStr::from_ptr(value) }
            .to_string_lossy()
            .into_owned()
    })
}

/// The settings fixed for the server's lifetime.
#[derive(Debug, Clone, Copy)]
pub struct Fixed {
    pub layout: Layout,
    pub epoch: Epoch,
}

impl Fixed {
    /// The wall clock in ticks of the layout since the epoch.
    pub fn clock(&self) -> SystemClock {
        SystemClock {
            epoch_unix_ms: self.epoch.unix_ms(),
            unit: self.layout.unit(),
        }
    }

    /// The tick that a time in ms since 1970 falls in.
    pub fn tick_of_unix_ms(&self, unix_ms: i64) -> i64 {
        self.layout
            .unit()
            .ticks_of_ms(unix_ms - self.epoch.unix_ms())
    }

    /// The last ms since 1970 of tick `tick`.
    pub fn unix_ms_of_tick_end(&self, tick: i64) -> i64 {
        (tick + 1) * self.layout.unit().ms() - 1 + self.epoch.unix_ms()
    }
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
        return Err(error.clone());
    }
    Ok(Fixed {
        layout: load_layout()?,
        epoch: Epoch::parse(&text_of(&EPOCH), unix_now_ms())?,
    })
}

fn load_layout() -> Result<Layout, Error> {
    let text = text_of(&LAYOUT);
    let node_bits = NODE_BITS.get().into();
    if text.trim().is_empty() {
        return Layout::from_node_bits(node_bits);
    }
    let spec = spec::parse(&text)?;
    let refuse = |reason: &str| {
        Err(Error::InvalidLayout {
            value: text.clone(),
            reason: reason.into(),
        })
    };
    if spec.epoch.is_some() {
        return refuse("the server's ids count from snowflake.epoch; leave the epoch out");
    }
    if spec.layout.bits(Field::Slot) > MAX_SLOT_BITS {
        return refuse("a server's layout has at most 12 slot bits (4096 backend slots)");
    }
    let layout_node_bits = spec.layout.bits(Field::Node);
    if NODE_BITS_GIVEN.load(Ordering::Relaxed) && node_bits != i64::from(layout_node_bits) {
        return Err(Error::LayoutDisagreesWithNodeBits {
            layout: text,
            layout_node_bits,
            node_bits,
        });
    }
    Ok(spec.layout)
}

fn text_of(setting: &GucSetting<Option<CString>>) -> String {
    setting
        .get()
        .map(|text| text.to_string_lossy().into_owned())
        .unwrap_or_default()
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

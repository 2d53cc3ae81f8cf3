//! The generator of this backend process: made at its first `snowflake_next()`, owned by
//! the process alone (no lock), and waited out at exit before the slot is given back. Its
//! node id is settled there too (resolved, checked, claimed) and again whenever what
//! decides it changes.

use crate::claims::{self, Claimed};
use crate::error::Error;
use crate::{hwm, node, settings, shmem, status};
use pgrx::pg_sys;
use pgrx::prelude::*;
use snowflake_core::claim::Key;
use snowflake_core::clock::SystemClock;
use snowflake_core::generator::{Clock, ClockError, Generator};
use snowflake_core::layout::{LayoutError, Minter};
use snowflake_core::report::{Report, Reported, SqlState};
use snowflake_core::server::Fixed;
use snowflake_core::slot_marks;
use snowflake_core::time::format_unix_ms;
use std::cell::{Cell, UnsafeCell};
use std::ffi::c_int;
use std::sync::atomic::{AtomicI64, Ordering};

/// Why this process cannot mint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendError {
    /// A hot standby shares its primary's node id.
    InRecovery,
    /// The process has no backend slot (not a regular backend).
    NoBackendSlot,
}

impl Reported for BackendError {
    fn report(&self) -> Report {
        match self {
            BackendError::InRecovery => Report::new(
                SqlState::ReadOnlySqlTransaction,
                "cannot mint snowflake ids on a server in recovery",
            )
            .hint("A standby shares its primary's snowflake.node_id: mint ids on the primary."),
            BackendError::NoBackendSlot => Report::new(
                SqlState::ObjectNotInPrerequisiteState,
                "this process has no backend slot to number its ids",
            ),
        }
    }
}

#[derive(Clone, Copy)]
struct Backend {
    generator: Generator,
    clock: SystemClock,
    fixed: Fixed,
    /// The layout's shifts with this backend's node and slot bits in place.
    minter: Minter,
    /// Past this tick, the server's high-water mark must move ahead first (`hwm`).
    renew_after: &'static AtomicI64,
    slot: i64,
}

/// This process's generator. A plain static rather than a thread-local, which in a loaded
/// library costs a `__tls_get_addr` call per access; updated in place, with no borrow flag
/// that could panic on the hot path. A reference into it lives only while pure Rust runs
/// (the generator, the clock): everything that may run SQL, process an interrupt or reach
/// a callback of this library (starting, settling the node id, renewing the high-water
/// mark) runs with no reference held, and the callbacks touch only `SETTLED_CHOICE`, or
/// read a copy at exit.
struct ProcessLocal(UnsafeCell<Option<Backend>>);

// SAFETY: a backend runs SQL on its one thread only, so the cell is never shared.
unsafe impl Sync for ProcessLocal {}

static BACKEND: ProcessLocal = ProcessLocal(UnsafeCell::new(None));

/// What decided the node id the generator's minter was made with
/// (`settings::node_choice`, which may change at any time); `UNSETTLED` before the
/// generator exists and when the claim must be made again. Apart from the generator, so
/// that the transaction callbacks that unsettle it take no reference into it. Only this
/// process's thread reads and writes it: the atomic is for a safe static, not for sharing.
static SETTLED_CHOICE: AtomicI64 = AtomicI64::new(UNSETTLED);

/// A node choice no setting gives: the next call starts the generator or settles the node
/// id again.
const UNSETTLED: i64 = i64::MIN;

/// The next id of this backend. Called straight from the function manager, unguarded:
/// the steady path cannot panic, and the first call, which calls into PostgreSQL, runs
/// under pgrx's guard so any error there becomes a PostgreSQL ERROR.
#[inline]
pub fn next_id() -> Result<i64, Error> {
    let (ticks, sequence, minter) = next(false)?;
    Ok(minter.id(ticks, sequence))
}

/// The next id of this backend, carrying the low bits of `key` in its gene field.
#[inline]
pub fn next_id_with_gene(key: i64) -> Result<i64, Error> {
    let (ticks, sequence, minter) = next(true)?;
    Ok(minter.id_with_gene(ticks, sequence, key))
}

/// The next `(tick, sequence)` pair and the minter to make it an id, the generator started
/// or the node id settled again first if needed, within the server's high-water mark.
#[inline(always)]
fn next(needs_gene: bool) -> Result<(i64, u32, Minter), Error> {
    let choice = settings::node_choice();
    loop {
        if choice == SETTLED_CHOICE.load(Ordering::Relaxed) {
            // SAFETY: settled means started (see `SETTLED_CHOICE`); one thread, and the
            // reference is dead before anything but pure Rust runs (see `ProcessLocal`).
            if let Some(backend) = unsafe { (*BACKEND.0.get()).as_mut() } {
                if needs_gene && !backend.minter.has_gene() {
                    return Err(LayoutError::NoGeneBits.into());
                }
                let (tick, sequence) = backend
                    .generator
                    .next(&backend.clock, settings::max_lead_ms())
                    .map_err(|error| backend.told(error))?;
                let minter = backend.minter;
                if tick > backend.renew_after.load(Ordering::Relaxed) {
                    let fixed = backend.fixed;
                    hwm::renew(tick, &fixed)?;
                }
                return Ok((tick, sequence, minter));
            }
        }
        // SAFETY: at the boundary with PostgreSQL's C code, holding nothing to drop.
        unsafe { pg_sys::panic::pgrx_extern_c_guard(move || prepare(choice)) }?;
    }
}

/// Makes the generator if this process has none, else settles its node id again for
/// `choice`. Runs SQL (the claim), so no reference into `BACKEND` is held meanwhile.
#[cold]
#[inline(never)]
fn prepare(choice: i64) -> Result<(), Error> {
    // SAFETY: one thread; a copy, no reference kept.
    match unsafe { *BACKEND.0.get() } {
        None => {
            let backend = Backend::start(choice)?;
            // SAFETY: one thread, and no reference into the cell is alive.
            unsafe { *BACKEND.0.get() = Some(backend) };
        }
        Some(backend) => {
            let node_id = settle(choice, &backend.fixed)?;
            let worker_bits = backend.fixed.layout.worker_bits(node_id, backend.slot);
            // SAFETY: as above; the settling, which ran SQL, is over.
            if let Some(backend) = unsafe { (*BACKEND.0.get()).as_mut() } {
                backend.minter = backend.minter.with_worker_bits(worker_bits);
            }
        }
    }
    SETTLED_CHOICE.store(choice, Ordering::Relaxed);
    Ok(())
}

impl Backend {
    fn start(choice: i64) -> Result<Backend, Error> {
        // A standby is a copy of its primary, node id included: ids minted there could
        // repeat the primary's. Checked once, at start: a standby backend stays one.
        // SAFETY: a plain query of shared state.
        if unsafe { pg_sys::RecoveryInProgress() } {
            return Err(BackendError::InRecovery.into());
        }
        let fixed = settings::fixed()?;
        let process = process_number()?;
        let shared = shmem::shared();
        if shared.is_none() {
            // SAFETY: set by the postmaster before any backend runs SQL.
            let processes = unsafe { pg_sys::MaxBackends } as i64;
            fixed.check_slots(processes.max(process + 1))?;
        }
        let node_id = settle(choice, &fixed)?;
        // With preload, a free minting slot, taken last: nothing below can fail, and the
        // slot is given back at exit (`give_back_slot`). Without, the process number.
        let (slot, mark) = match shared {
            Some(shared) => {
                let slots = fixed.layout.slot_count();
                let (slot, mark) = shared
                    .slot_marks
                    .take(slots, process)
                    .ok_or_else(|| fixed.slots_full(shared.slot_marks.held()))?;
                (slot, Some(mark))
            }
            None => (process, None),
        };
        let clock = fixed.clock();
        // Read the clock only now that this process holds its slot: its first id then
        // falls after every id of the slot's previous holder, which waited at exit. With
        // preload, also after the last tick that holder recorded, whatever the clock did.
        // On a server upgraded from 0.3.0, also after every tick minted in 0.3.0's order.
        let reordered = settings::reordered_tick(&fixed)?;
        let (start, wait) = slot_marks::start_of(
            clock.now(),
            mark.max(reordered.map(|tick| tick - 1)),
            clock.unit.ticks_of_ms(settings::max_lead_ms()),
            clock.unit.ticks_of_ms(hwm::lead_waited_out_ms()),
        );
        if wait > 0 {
            clock.sleep(wait);
        }
        // SAFETY: registers a plain function; runs before the slot is released at exit.
        unsafe { pg_sys::before_shmem_exit(Some(give_back_slot), pg_sys::Datum::from(0)) };
        let layout = fixed.layout;
        Ok(Backend {
            generator: Generator::after(start, &layout).counting_in(status::stats_of(slot)),
            clock,
            fixed,
            minter: layout.minter(layout.worker_bits(node_id, slot)),
            renew_after: hwm::renew_after(),
            slot,
        })
    }

    /// The error, with the time of this backend's last id when it is about the clock.
    #[cold]
    fn told(&self, error: ClockError) -> ClockError {
        match error {
            ClockError::Behind {
                behind_ms,
                max_lead_ms,
                last: None,
            } => ClockError::Behind {
                behind_ms,
                max_lead_ms,
                last: Some(format_unix_ms(
                    self.clock.unix_ms_of_tick_end(self.generator.last()),
                )),
            },
            other => other,
        }
    }
}

/// The node id for `node_choice`, resolved, checked against the layout and claimed. A claim
/// holds for good only once committed: one this transaction wrote, or found while it had
/// written one before, is watched until the transaction ends; one it could not write is
/// made in a later transaction.
fn settle(node_choice: i64, fixed: &Fixed) -> Result<i64, Error> {
    let node_id = node::resolve(node_choice, fixed)?;
    match claims::claim(node_id, fixed)? {
        Claimed::Written(key) => watch(Watch::Claim(key)),
        // Found with nothing watched: no claim of this transaction, so a committed one.
        Claimed::Found(key) if WATCH.get().is_none() => claims::remember(key),
        Claimed::Found(_) | Claimed::NotYet => watch(Watch::Recheck),
        Claimed::Remembered | Claimed::NoRegistry => {}
    }
    Ok(node_id)
}

/// What the end of the current transaction decides about the node id.
#[derive(Clone, Copy)]
enum Watch {
    /// The claim it wrote: remembered if it commits, made again if not.
    Claim(Key),
    /// The claim is not known to be committed: the next transaction settles again.
    Recheck,
}

thread_local! {
    static WATCH: Cell<Option<Watch>> = const { Cell::new(None) };
    static CALLBACKS_REGISTERED: Cell<bool> = const { Cell::new(false) };
}

fn watch(what: Watch) {
    WATCH.set(Some(what));
    if !CALLBACKS_REGISTERED.replace(true) {
        // SAFETY: registers plain functions, called at transaction and subtransaction ends.
        unsafe {
            pg_sys::RegisterXactCallback(Some(on_xact_end), std::ptr::null_mut());
            pg_sys::RegisterSubXactCallback(Some(on_subxact_end), std::ptr::null_mut());
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn on_xact_end(
    event: pg_sys::XactEvent::Type,
    _arg: *mut std::ffi::c_void,
) {
    use pg_sys::XactEvent::*;
    let Some(what) = WATCH.get() else {
        return;
    };
    match (event, what) {
        (XACT_EVENT_COMMIT | XACT_EVENT_PARALLEL_COMMIT, Watch::Claim(key)) => {
            claims::remember(key)
        }
        // Prepared, its fate is unknown here: settled again too.
        (
            XACT_EVENT_COMMIT
            | XACT_EVENT_PARALLEL_COMMIT
            | XACT_EVENT_ABORT
            | XACT_EVENT_PARALLEL_ABORT
            | XACT_EVENT_PREPARE,
            _,
        ) => unsettle(),
        _ => return,
    }
    WATCH.set(None);
}

/// A subtransaction rolled back may have taken the claim with it: settled again now, and
/// not remembered at commit unless written again.
#[pg_guard]
unsafe extern "C-unwind" fn on_subxact_end(
    event: pg_sys::SubXactEvent::Type,
    _mine: pg_sys::SubTransactionId,
    _parent: pg_sys::SubTransactionId,
    _arg: *mut std::ffi::c_void,
) {
    if event == pg_sys::SubXactEvent::SUBXACT_EVENT_ABORT_SUB
        && matches!(WATCH.get(), Some(Watch::Claim(_)))
    {
        unsettle();
        WATCH.set(Some(Watch::Recheck));
    }
}

fn unsettle() {
    SETTLED_CHOICE.store(UNSETTLED, Ordering::Relaxed);
}

/// The backend's number among the live processes of the server, from 0: PostgreSQL never
/// gives the same one to two live processes, unlike the PID modulo anything. Without
/// preload it is the backend's slot; with preload, where it looks first for a free one.
fn process_number() -> Result<i64, Error> {
    // SAFETY: set once when the backend starts, read-only afterwards.
    #[cfg(any(feature = "pg15", feature = "pg16"))]
    let slot = unsafe { pg_sys::MyBackendId } as i64 - 1;
    // SAFETY: as above. (From 17 on, 19 included, the slot is MyProcNumber.)
    #[cfg(not(any(feature = "pg15", feature = "pg16")))]
    let slot = unsafe { pg_sys::MyProcNumber } as i64;
    if slot < 0 {
        return Err(BackendError::NoBackendSlot.into());
    }
    Ok(slot)
}

/// Gives the slot back at exit, so that its next holder starts after the last tick this
/// backend used. With preload, by recording that tick in the slot's mark, which the next
/// holder reads: no wait, so a backend that ran ahead of the clock does not hold its slot
/// at exit, and a storm of reconnections after a start does not run the server out of
/// connections. Without, by sleeping until the clock reaches that tick before PostgreSQL
/// frees the process number: nothing to wait for unless a burst ran ahead.
#[pg_guard]
unsafe extern "C-unwind" fn give_back_slot(_code: c_int, _arg: pg_sys::Datum) {
    // SAFETY: runs at exit, reading a copy: no reference into the cell is alive then.
    if let Some(backend) = unsafe { *BACKEND.0.get() } {
        if let Some(shared) = shmem::shared() {
            shared
                .slot_marks
                .give_back(backend.slot, backend.generator.last());
            return;
        }
        let clock = backend.clock;
        let wait = backend
            .generator
            .exit_wait(clock.now(), clock.unit, settings::max_lead_ms());
        if wait > 0 {
            clock.sleep(wait);
        }
    }
}

//! The generator of this backend process: made at its first `snowflake_next()`, owned by
//! the process alone (no lock), and waited out at exit before the slot is given back. Its
//! node id is settled there too (resolved, checked, claimed) and again whenever what
//! decides it changes.

use crate::claims::{self, Claimed};
use crate::clock::SystemClock;
use crate::error::Error;
use crate::generator::{Clock, Generator};
use crate::layout::Minter;
use crate::settings::{self, Fixed};
use crate::time::format_unix_ms;
use crate::{hwm, node, slot_marks, status};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::cell::{Cell, UnsafeCell};
use std::ffi::c_int;
use std::sync::atomic::{AtomicI64, Ordering};

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
    /// What decided the node id `minter` was made with (`settings::node_choice`), which
    /// may change at any time; `UNSETTLED` when the claim must be made again.
    node_choice: i64,
}

/// A node choice no setting gives: the next call settles the node id again.
const UNSETTLED: i64 = i64::MIN;

/// This process's generator. A plain static rather than a thread-local, which in a loaded
/// library costs a `__tls_get_addr` call per access; updated in place, with no borrow flag
/// that could panic on the hot path.
struct ProcessLocal(UnsafeCell<Option<Backend>>);

// SAFETY: a backend runs SQL on its one thread only, so the cell is never shared.
unsafe impl Sync for ProcessLocal {}

static BACKEND: ProcessLocal = ProcessLocal(UnsafeCell::new(None));

/// The next id of this backend. Called straight from the function manager, unguarded:
/// the steady path cannot panic, and the first call, which calls into PostgreSQL, runs
/// under pgrx's guard so any error there becomes a PostgreSQL ERROR.
#[inline]
pub fn next_id() -> Result<i64, Error> {
    let backend = this_backend()?;
    let (ticks, sequence) = backend.next()?;
    Ok(backend.minter.id(ticks, sequence))
}

/// The next id of this backend, carrying the low bits of `key` in its gene field.
#[inline]
pub fn next_id_with_gene(key: i64) -> Result<i64, Error> {
    let backend = this_backend()?;
    if !backend.minter.has_gene() {
        return Err(Error::NoGeneBits);
    }
    let (ticks, sequence) = backend.next()?;
    Ok(backend.minter.id_with_gene(ticks, sequence, key))
}

#[inline(always)]
fn this_backend() -> Result<&'static mut Backend, Error> {
    // SAFETY: one thread, and nothing that holds the reference calls back into SQL, so it
    // is the only one while it lives.
    let state = unsafe { &mut *BACKEND.0.get() };
    Ok(match state {
        Some(backend) => backend,
        // SAFETY: we are at the boundary with PostgreSQL's C code, holding nothing to drop.
        None => state.insert(unsafe { pg_sys::panic::pgrx_extern_c_guard(Backend::start) }?),
    })
}

impl Backend {
    fn start() -> Result<Backend, Error> {
        // A standby is a copy of its primary, node id included: ids minted there could
        // repeat the primary's. Checked once, at start: a standby backend stays one.
        // SAFETY: a plain query of shared state.
        if unsafe { pg_sys::RecoveryInProgress() } {
            return Err(Error::InRecovery);
        }
        let fixed = settings::fixed()?;
        let layout = fixed.layout;
        let slot = backend_slot()?;
        // SAFETY: set by the postmaster before any backend runs SQL.
        let slots = unsafe { pg_sys::MaxBackends } as i64;
        layout.check_slots(slots.max(slot + 1))?;
        let node_choice = settings::node_choice();
        let node_id = settle(node_choice, &fixed)?;
        let clock = fixed.clock();
        // Read the clock only now that this process holds its slot: its first id then
        // falls after every id of the slot's previous holder, which waited at exit. With
        // preload, also after the last tick that holder recorded, whatever the clock did.
        let now = clock.now();
        let start = slot_marks::claim(slot).map_or(now, |mark| mark.max(now));
        // After a crash restart the marks start at the last reservation, which can lie a
        // little past the lead bound: wait that out rather than refuse. Further ahead, the
        // clock was set back, and the first call says so.
        let lead = clock.unit.ticks_of_ms(settings::max_lead_ms());
        let past_lead = start - now - lead;
        if past_lead > 0 && past_lead <= clock.unit.ticks_of_ms(hwm::RESERVE_MS) {
            clock.sleep(past_lead);
        }
        // SAFETY: registers a plain function; runs before the slot is released at exit.
        unsafe { pg_sys::before_shmem_exit(Some(wait_out_lead), pg_sys::Datum::from(0)) };
        Ok(Backend {
            generator: Generator::after(start, &layout).counting_in(status::stats_of(slot)),
            clock,
            fixed,
            minter: layout.minter(layout.worker_bits(node_id, slot)),
            renew_after: hwm::renew_after(),
            slot,
            node_choice,
        })
    }

    /// The next `(tick, sequence)` pair, the node id settled again first if what decides it
    /// changed (or its claim must be made again), within the server's high-water mark.
    #[inline(always)]
    fn next(&mut self) -> Result<(i64, u32), Error> {
        let node_choice = settings::node_choice();
        if node_choice != self.node_choice {
            self.settle_again(node_choice)?;
        }
        let pair = self
            .generator
            .next(&self.clock, settings::max_lead_ms())
            .map_err(|error| self.told(error))?;
        if pair.0 > self.renew_after.load(Ordering::Relaxed) {
            hwm::renew(pair.0, &self.fixed)?;
        }
        Ok(pair)
    }

    #[cold]
    fn settle_again(&mut self, node_choice: i64) -> Result<(), Error> {
        let fixed = self.fixed;
        // SAFETY: we are at the boundary with PostgreSQL's C code, holding nothing to drop.
        let node_id =
            unsafe { pg_sys::panic::pgrx_extern_c_guard(|| settle(node_choice, &fixed)) }?;
        self.node_choice = node_choice;
        self.minter = self
            .minter
            .with_worker_bits(self.fixed.layout.worker_bits(node_id, self.slot));
        Ok(())
    }

    /// The error, with the time of this backend's last id when it is about the clock.
    #[cold]
    fn told(&self, error: Error) -> Error {
        match error {
            Error::ClockBehind {
                behind_ms,
                max_lead_ms,
                last: None,
            } => Error::ClockBehind {
                behind_ms,
                max_lead_ms,
                last: Some(format_unix_ms(
                    self.fixed.unix_ms_of_tick_end(self.generator.last()),
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
    let node_id = node::resolve(node_choice, &fixed.layout)?;
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
    Claim(claims::Key),
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
    // SAFETY: runs at a transaction's end, outside any call of `next_id`.
    if let Some(backend) = unsafe { &mut *BACKEND.0.get() } {
        backend.node_choice = UNSETTLED;
    }
}

/// The backend's number among the live processes of the server, from 0: PostgreSQL never
/// gives the same one to two live processes, unlike the PID modulo anything.
fn backend_slot() -> Result<i64, Error> {
    // SAFETY: set once when the backend starts, read-only afterwards.
    #[cfg(any(feature = "pg15", feature = "pg16"))]
    let slot = unsafe { pg_sys::MyBackendId } as i64 - 1;
    // SAFETY: as above.
    #[cfg(any(feature = "pg17", feature = "pg18"))]
    let slot = unsafe { pg_sys::MyProcNumber } as i64;
    if slot < 0 {
        return Err(Error::NoBackendSlot);
    }
    Ok(slot)
}

/// Makes the next process to get the slot start after the last tick this backend used.
/// With preload, by recording it in the slot's mark, which the next holder reads: no wait,
/// so a backend that ran ahead of the clock does not hold its slot at exit, and a storm of
/// reconnections after a start does not run the server out of connections. Without, by
/// sleeping until the clock reaches that tick: nothing to wait for unless a burst ran ahead.
#[pg_guard]
unsafe extern "C-unwind" fn wait_out_lead(_code: c_int, _arg: pg_sys::Datum) {
    // SAFETY: runs at exit, outside any call of `next_id`.
    if let Some(backend) = unsafe { *BACKEND.0.get() } {
        if slot_marks::record(backend.slot, backend.generator.last()) {
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

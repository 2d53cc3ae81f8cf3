//! With `shared_preload_libraries`: the high-water mark in WAL, so that every physical
//! standby holds its primary's reservations and a promoted standby mints above every id
//! its old primary may have handed out, row or no row.
//!
//! Each renewal of the reservation (`hwm::renew`) is logged as a record of this library's
//! own resource manager and flushed, on the primary and on its synchronous standbys if it
//! has any, before the reservation is published: nothing on the plain path of a call.
//! Replaying a record, on a standby (cascading ones too) or in crash recovery, raises the
//! reservation, the slot marks and the mark's file (`hwm::replayed`); when recovery ends
//! in a promotion, they go `PROMOTION_MARGIN_MS` further (`hwm::promoted`). A standby that
//! does not preload the library stops at the first such record with PostgreSQL's own
//! error, "resource manager with ID 173 not registered", whose hint names the fix:
//! nothing is replayed past the mark, so nothing is lost.

use crate::hwm;
use crate::raise::raise;
use crate::settings;
use pgrx::{pg_guard, pg_sys};
use snowflake_core::report::{Report, Reported, SqlState};
use snowflake_core::time::format_unix_ms;
use snowflake_core::wal_record;
use std::ffi::{c_char, CStr, CString};

/// This library's resource manager id, in the range PostgreSQL leaves to extensions (128
/// to 255; 128 is for experiments). Another library that registers the same id stops the
/// server at start: "failed to register custom resource manager ... with ID 173", with a
/// detail naming the library that has it.
pub const RMGR_ID: pg_sys::RmgrId = 173;
const RMGR_NAME: &CStr = c"snowflake_pg";
/// The one kind of record: a reservation, in the high bits PostgreSQL leaves to the
/// resource manager.
const RESERVATION: u8 = 0x00;

/// A record of this resource manager that does not hold a reservation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableRecord {
    pub reason: String,
}

impl Reported for UnreadableRecord {
    fn report(&self) -> Report {
        Report::new(
            SqlState::DataCorrupted,
            format!(
                "could not replay a snowflake_pg WAL record: {}",
                self.reason
            ),
        )
        .hint("The record was written by a library registered with the same resource manager id, or the WAL is damaged.")
    }
}

/// Registers the resource manager; call from `_PG_init` while preloading, after shared
/// memory is requested: every process that replays a record then has the segment.
pub fn register() {
    let mut rmgr = pg_sys::RmgrData {
        rm_name: RMGR_NAME.as_ptr(),
        rm_redo: Some(redo),
        rm_desc: Some(describe),
        rm_identify: Some(identify),
        rm_startup: None,
        rm_cleanup: Some(end_of_recovery),
        rm_mask: None,
        rm_decode: None,
    };
    // A raw pointer: PostgreSQL 15 declares it mutable, later versions constant.
    let rmgr = std::ptr::addr_of_mut!(rmgr);
    // SAFETY: PostgreSQL copies the struct; the name and the functions are static.
    unsafe { pg_sys::RegisterCustomRmgr(RMGR_ID, rmgr) };
}

/// Logs the reservation up to `unix_ms` and waits until it is flushed here and, if the
/// server has synchronous standbys, on them, as a commit with `synchronous_commit = on`
/// waits: whatever this session's own setting, since the reservation covers the ids of
/// every session.
pub fn log_reservation(unix_ms: i64) {
    let data = wal_record::encode(unix_ms);
    // SAFETY: one record of one piece of data, which XLogInsert copies; called only where
    // minting is allowed, so never during recovery.
    let lsn = unsafe {
        pg_sys::XLogBeginInsert();
        pg_sys::XLogRegisterData(data.as_ptr() as _, wal_record::SIZE as _);
        pg_sys::XLogInsert(RMGR_ID, RESERVATION)
    };
    // SAFETY: flushes the WAL up to a record just inserted.
    unsafe { pg_sys::XLogFlush(lsn) };
    settings::with_setting(c"synchronous_commit", c"on", || {
        // SAFETY: waits as a commit does (and returns on a cancel, with a WARNING).
        unsafe { pg_sys::SyncRepWaitForLSN(lsn, false) }
    });
}

/// The reservation a record holds.
///
/// # Safety
/// `record` is a decoded record of this resource manager, as PostgreSQL passes it.
unsafe fn reservation_in(record: *const pg_sys::XLogReaderState) -> Result<i64, String> {
    // SAFETY: as the caller promises.
    let decoded = unsafe { &*(*record).record };
    let kind = decoded.header.xl_info & !(pg_sys::XLR_INFO_MASK as u8);
    if kind != RESERVATION {
        return Err(format!("unknown record kind {kind:#04x}"));
    }
    let data = match decoded.main_data_len {
        0 => &[][..],
        // SAFETY: PostgreSQL's decoded data, of the length it gives.
        len => unsafe { std::slice::from_raw_parts(decoded.main_data as *const u8, len as usize) },
    };
    wal_record::decode(data)
}

#[pg_guard]
unsafe extern "C-unwind" fn redo(record: *mut pg_sys::XLogReaderState) {
    // SAFETY: PostgreSQL replays a record of this resource manager.
    match unsafe { reservation_in(record) } {
        Ok(unix_ms) => hwm::replayed(unix_ms),
        Err(reason) => raise(UnreadableRecord { reason }),
    }
}

/// What pg_walinspect and a replay's error context say of a record.
#[pg_guard]
unsafe extern "C-unwind" fn describe(
    buf: pg_sys::StringInfo,
    record: *mut pg_sys::XLogReaderState,
) {
    // SAFETY: PostgreSQL describes a record of this resource manager.
    let text = match unsafe { reservation_in(record) } {
        Ok(unix_ms) => format!("reserved up to {}", format_unix_ms(unix_ms)),
        Err(reason) => format!("unreadable: {reason}"),
    };
    let text = CString::new(text).unwrap_or_default();
    // SAFETY: appends a NUL-terminated string to PostgreSQL's buffer.
    unsafe { pg_sys::appendStringInfoString(buf, text.as_ptr()) };
}

#[pg_guard]
unsafe extern "C-unwind" fn identify(info: u8) -> *const c_char {
    if info & !(pg_sys::XLR_INFO_MASK as u8) == RESERVATION {
        c"RESERVATION".as_ptr()
    } else {
        std::ptr::null()
    }
}

/// At the end of recovery, in the startup process: a recovery that ends in a promotion
/// (a standby, or a recovery to a target) adds the margin for what it may not have
/// received; crash recovery replayed every renewal its server flushed, and adds none.
#[pg_guard]
unsafe extern "C-unwind" fn end_of_recovery() {
    // SAFETY: set in this process from the signal files before recovery began.
    if unsafe { pg_sys::ArchiveRecoveryRequested } {
        hwm::promoted();
    }
}

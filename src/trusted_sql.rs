//! Running the extension's own SQL safely on a caller's behalf: whoever calls
//! `snowflake_next()` chooses the search_path, and may have put functions and operators of
//! their own in it that shadow `pg_catalog`'s. So every query of the extension names what it
//! uses in full and runs under `search_path = pg_catalog, pg_temp`, and the one that runs
//! with the extension owner's rights runs as a security-restricted operation, as
//! PostgreSQL runs maintenance as a table's owner.

use crate::settings;
use pgrx::pg_sys;
use snowflake_core::report::{Report, Reported, SqlState};

/// A catalog query of the extension failed in a way PostgreSQL did not report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogRead {
    pub what: &'static str,
    pub reason: String,
}

impl Reported for CatalogRead {
    fn report(&self) -> Report {
        Report::new(
            SqlState::ObjectNotInPrerequisiteState,
            format!("snowflake_pg could not read {}: {}", self.what, self.reason),
        )
    }
}

/// Runs `f` with `search_path` set to `pg_catalog, pg_temp`, as a function's `SET` clause
/// does; the caller's search_path comes back after it, or when an ERROR aborts the
/// (sub)transaction.
pub fn with_fixed_search_path<T>(f: impl FnOnce() -> T) -> T {
    settings::with_setting(c"search_path", c"pg_catalog, pg_temp", f)
}

/// Runs `f` as `owner`, in a security-restricted operation (no SET ROLE, no temporary
/// objects, nothing that outlives the call), under the fixed search_path. An ERROR inside
/// is fine: aborting the transaction restores the user and the search_path.
pub fn as_owner<T>(owner: pg_sys::Oid, f: impl FnOnce() -> T) -> T {
    let (mut saved_user, mut saved_context) = (pg_sys::Oid::INVALID, 0);
    // SAFETY: reads and sets this backend's current user, as PostgreSQL's own code does.
    unsafe {
        pg_sys::GetUserIdAndSecContext(&mut saved_user, &mut saved_context);
        pg_sys::SetUserIdAndSecContext(
            owner,
            saved_context
                | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32
                | pg_sys::SECURITY_RESTRICTED_OPERATION as i32,
        );
    }
    let result = with_fixed_search_path(f);
    // SAFETY: as above.
    unsafe { pg_sys::SetUserIdAndSecContext(saved_user, saved_context) };
    result
}

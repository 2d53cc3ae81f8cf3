//! Errors into PostgreSQL: each error's SQLSTATE, and the `ereport(ERROR)` that raises it.

use crate::error::Error;
use pgrx::{PgLogLevel, PgSqlErrorCode};

/// Raises `error` as a PostgreSQL ERROR with its SQLSTATE, detail and hint.
pub fn raise(error: Error) -> ! {
    let mut report =
        pgrx::pg_sys::panic::ErrorReport::new(sqlstate(&error), error.message(), "snowflake_pg");
    if let Some(detail) = error.detail() {
        report = report.set_detail(detail);
    }
    if let Some(hint) = error.hint() {
        report = report.set_hint(hint);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("an ERROR report does not return")
}

/// The value, or the error raised.
pub fn or_raise<T>(result: Result<T, Error>) -> T {
    result.unwrap_or_else(|error| raise(error))
}

fn sqlstate(error: &Error) -> PgSqlErrorCode {
    use PgSqlErrorCode::*;
    match error {
        Error::InfiniteTime
        | Error::TimeBeforeEpoch { .. }
        | Error::TimePastRange { .. }
        | Error::TimeOfIdOutOfRange(_) => ERRCODE_DATETIME_FIELD_OVERFLOW,
        Error::NegativeId(_)
        | Error::TextFormOutOfRange { .. }
        | Error::IdTooWide { .. }
        | Error::UidOutOfRange { .. }
        | Error::FieldOutOfRange { .. } => ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
        Error::NodeIdOutOfRange { .. }
        | Error::GroupIdOutOfRange { .. }
        | Error::NodeBitsOutOfRange(_)
        | Error::InvalidLayout { .. }
        | Error::LayoutDisagreesWithNodeBits { .. }
        | Error::InvalidEpoch { .. }
        | Error::EpochInFuture { .. }
        | Error::UnknownTextForm(_)
        | Error::NeedsPreload { .. }
        | Error::NodeIdUnreadable { .. } => ERRCODE_INVALID_PARAMETER_VALUE,
        Error::RenewalStalled { .. } => ERRCODE_LOCK_NOT_AVAILABLE,
        Error::CatalogRead { .. } => ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        Error::PartsType(_) => ERRCODE_DATATYPE_MISMATCH,
        Error::EpochOutOfRange => ERRCODE_DATETIME_FIELD_OVERFLOW,
        Error::NullGene => ERRCODE_NULL_VALUE_NOT_ALLOWED,
        Error::TextFormLength { .. } | Error::TextFormCharacter { .. } => {
            ERRCODE_INVALID_TEXT_REPRESENTATION
        }
        Error::SlotsDoNotFit { .. } => ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
        Error::InRecovery => ERRCODE_READ_ONLY_SQL_TRANSACTION,
        Error::MarkFileUnreadable { .. } => ERRCODE_DATA_CORRUPTED,
        Error::MarkFileUnwritable { .. } => ERRCODE_IO_ERROR,
        Error::NoGeneBits
        | Error::NoBackendSlot
        | Error::ClockBeforeEpoch
        | Error::ClockBehind { .. }
        | Error::TimeRangeExhausted
        | Error::NoCitus
        | Error::NotInCitusCluster
        | Error::NodeClaimed(_)
        | Error::ClaimDisagrees(_) => ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
    }
}

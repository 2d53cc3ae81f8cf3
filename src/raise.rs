//! Errors into PostgreSQL: the `ereport(ERROR)` of any error's report, with PostgreSQL's
//! code for its SQLSTATE.

use crate::error::Error;
use pgrx::{PgLogLevel, PgSqlErrorCode};
use snowflake_core::report::SqlState;

/// Raises `error` (any module's) as a PostgreSQL ERROR with its SQLSTATE, detail and hint.
pub fn raise(error: impl Into<Error>) -> ! {
    let report = error.into().report();
    let mut ereport = pgrx::pg_sys::panic::ErrorReport::new(
        code_of(report.sqlstate),
        report.message,
        "snowflake_pg",
    );
    if let Some(detail) = report.detail {
        ereport = ereport.set_detail(detail);
    }
    if let Some(hint) = report.hint {
        ereport = ereport.set_hint(hint);
    }
    ereport.report(PgLogLevel::ERROR);
    unreachable!("an ERROR report does not return")
}

/// The value, or the error raised.
pub fn or_raise<T, E: Into<Error>>(result: Result<T, E>) -> T {
    result.unwrap_or_else(|error| raise(error))
}

fn code_of(sqlstate: SqlState) -> PgSqlErrorCode {
    use PgSqlErrorCode::*;
    match sqlstate {
        SqlState::DatetimeFieldOverflow => ERRCODE_DATETIME_FIELD_OVERFLOW,
        SqlState::NumericValueOutOfRange => ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
        SqlState::InvalidParameterValue => ERRCODE_INVALID_PARAMETER_VALUE,
        SqlState::InvalidTextRepresentation => ERRCODE_INVALID_TEXT_REPRESENTATION,
        SqlState::NullValueNotAllowed => ERRCODE_NULL_VALUE_NOT_ALLOWED,
        SqlState::DatatypeMismatch => ERRCODE_DATATYPE_MISMATCH,
        SqlState::TooManyConnections => ERRCODE_TOO_MANY_CONNECTIONS,
        SqlState::ConfigurationLimitExceeded => ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
        SqlState::ObjectNotInPrerequisiteState => ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        SqlState::ReadOnlySqlTransaction => ERRCODE_READ_ONLY_SQL_TRANSACTION,
        SqlState::LockNotAvailable => ERRCODE_LOCK_NOT_AVAILABLE,
        SqlState::DataCorrupted => ERRCODE_DATA_CORRUPTED,
        SqlState::IoError => ERRCODE_IO_ERROR,
    }
}

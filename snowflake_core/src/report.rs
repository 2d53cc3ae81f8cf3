//! What an error tells the user: one `Report` per error, made by one `match` in the
//! error's own module. The extension turns a report into a PostgreSQL ERROR; the SQLSTATE
//! is named here by its class so this crate needs nothing of PostgreSQL.

/// The SQLSTATEs the extension raises, by PostgreSQL's names (`ERRCODE_...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlState {
    /// 22008
    DatetimeFieldOverflow,
    /// 22003
    NumericValueOutOfRange,
    /// 22023
    InvalidParameterValue,
    /// 22P02
    InvalidTextRepresentation,
    /// 22004
    NullValueNotAllowed,
    /// 42804
    DatatypeMismatch,
    /// 53300
    TooManyConnections,
    /// 53400
    ConfigurationLimitExceeded,
    /// 55000
    ObjectNotInPrerequisiteState,
    /// 25006
    ReadOnlySqlTransaction,
    /// 55P03
    LockNotAvailable,
    /// XX001
    DataCorrupted,
    /// 58030
    IoError,
}

/// An error as a psql user sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub sqlstate: SqlState,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl Report {
    pub fn new(sqlstate: SqlState, message: impl Into<String>) -> Report {
        Report {
            sqlstate,
            message: message.into(),
            detail: None,
            hint: None,
        }
    }

    pub fn detail(self, detail: impl Into<String>) -> Report {
        Report {
            detail: Some(detail.into()),
            ..self
        }
    }

    pub fn hint(self, hint: impl Into<String>) -> Report {
        Report {
            hint: Some(hint.into()),
            ..self
        }
    }
}

/// An error that can tell the user what went wrong.
pub trait Reported {
    fn report(&self) -> Report;
}

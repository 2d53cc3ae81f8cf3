//! The error of any call of the extension, whichever module's it is: boxed behind the
//! `Reported` trait, so that a function may return any module's error with `?` and this
//! module needs to know none of them. Each error's text and SQLSTATE live in its own
//! module's `Reported` impl (`snowflake_core::report`); `raise.rs` raises them. Boxed, an
//! error is one pointer: every `Result` of the hot path stays two words.

use snowflake_core::report::{Report, Reported};

pub struct Error(Box<dyn Reported>);

impl<E: Reported + 'static> From<E> for Error {
    fn from(error: E) -> Error {
        Error(Box::new(error))
    }
}

impl Error {
    pub fn report(&self) -> Report {
        self.0.report()
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.report().fmt(f)
    }
}

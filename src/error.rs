//! Every way a call of the extension can fail: each module's own error, in one enum so a
//! function may return any of them with `?`. Each error's text and SQLSTATE live in its own
//! module's `Reported` impl (`snowflake_core::report`); `raise.rs` raises them.

use crate::backend::BackendError;
use crate::node::NodeError;
use crate::settings::NeedsPreload;
use crate::sql::CallError;
use crate::trusted_sql::CatalogRead;
use snowflake_core::claim::ClaimError;
use snowflake_core::generator::ClockError;
use snowflake_core::layout::LayoutError;
use snowflake_core::report::{Report, Reported};
use snowflake_core::reservation::ReservationError;
use snowflake_core::slot_marks::SlotsFull;
use snowflake_core::text_form::TextFormError;
use snowflake_core::time::TimeError;

/// Declares `Error` with one variant per module error, its `From`s and its report.
macro_rules! errors {
    ($($variant:ident($error:ty),)*) => {
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Error {
            $($variant($error),)*
        }

        $(impl From<$error> for Error {
            fn from(error: $error) -> Error {
                Error::$variant(error)
            }
        })*

        impl Reported for Error {
            fn report(&self) -> Report {
                match self {
                    $(Error::$variant(error) => error.report(),)*
                }
            }
        }
    };
}

errors! {
    Layout(LayoutError),
    Time(TimeError),
    TextForm(TextFormError),
    Clock(ClockError),
    Reservation(ReservationError),
    Slots(SlotsFull),
    Claim(ClaimError),
    Node(NodeError),
    Settings(NeedsPreload),
    Backend(BackendError),
    Call(CallError),
    Catalog(CatalogRead),
}

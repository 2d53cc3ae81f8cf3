//! Every way a call can fail, with the text a psql user sees.
//!
//! Kept free of PostgreSQL so the pure modules can return these and the unit tests can
//! check them; `raise.rs` gives each its SQLSTATE and reports it.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// `infinity` or `-infinity` given where a time is needed.
    InfiniteTime,
    /// A time before `snowflake.epoch`.
    TimeBeforeEpoch {
        time: String,
        epoch: String,
    },
    /// A time past the last millisecond the 41 time bits can hold.
    TimePastRange {
        time: String,
        last: String,
    },
    /// Ids are never negative: the sign bit is always 0.
    NegativeId(i64),
    UidOutOfRange(i64),
    /// `snowflake.node_bits` outside 0 to 10.
    NodeBitsOutOfRange(i64),
    NodeIdOutOfRange {
        node_id: i64,
        node_bits: u32,
    },
    /// The server can have more live backends than the slot bits can number.
    SlotsDoNotFit {
        slots: i64,
        node_bits: u32,
    },
    /// A hot standby shares its primary's node id.
    InRecovery,
    /// The process has no backend slot (not a regular backend).
    NoBackendSlot,
    /// The system clock reads a time before `snowflake.epoch`.
    ClockBeforeEpoch,
    /// The clock stepped back further than the lead bound absorbs.
    ClockBehind {
        behind_ms: i64,
        max_lead_ms: i64,
    },
    /// The 41-bit time range of the epoch is used up.
    TimeRangeExhausted,
    InvalidEpoch {
        value: String,
    },
    EpochInFuture {
        value: String,
    },
    /// A restart-only setting is in the configuration but the library was not preloaded.
    NeedsPreload {
        name: &'static str,
        value: String,
    },
}

impl Error {
    pub fn message(&self) -> String {
        match self {
            Error::InfiniteTime => "snowflake ids cannot hold an infinite timestamp".into(),
            Error::TimeBeforeEpoch { time, epoch } => {
                format!("timestamp {time} is before snowflake.epoch ({epoch})")
            }
            Error::TimePastRange { time, last } => {
                format!("timestamp {time} is past the last time snowflake ids can hold ({last})")
            }
            Error::NegativeId(id) => format!("snowflake id {id} is negative"),
            Error::UidOutOfRange(uid) => format!("uid {uid} is out of range"),
            Error::NodeBitsOutOfRange(node_bits) => {
                format!("snowflake.node_bits = {node_bits} is out of range")
            }
            Error::NodeIdOutOfRange { node_id, node_bits } => format!(
                "snowflake.node_id = {node_id} does not fit in snowflake.node_bits = {node_bits}"
            ),
            Error::SlotsDoNotFit { slots, node_bits } => format!(
                "this server has {slots} backend slots, more than the {} that snowflake.node_bits = {node_bits} leaves room for",
                crate::layout::slot_capacity(*node_bits)
            ),
            Error::InRecovery => "cannot mint snowflake ids on a server in recovery".into(),
            Error::NoBackendSlot => "this process has no backend slot to number its ids".into(),
            Error::ClockBeforeEpoch => {
                "the system clock reads a time before snowflake.epoch".into()
            }
            Error::ClockBehind { behind_ms, .. } => format!(
                "the system clock is {behind_ms} ms behind the last snowflake id of this backend slot"
            ),
            Error::TimeRangeExhausted => {
                "the 41-bit time range of snowflake.epoch is used up".into()
            }
            Error::InvalidEpoch { value } => {
                format!("invalid value for snowflake.epoch: \"{value}\"")
            }
            Error::EpochInFuture { value } => {
                format!("snowflake.epoch \"{value}\" is in the future")
            }
            Error::NeedsPreload { name, value } => format!(
                "{name} = \"{value}\" is set, but snowflake_pg is not in shared_preload_libraries"
            ),
        }
    }

    pub fn detail(&self) -> Option<String> {
        match self {
            Error::NegativeId(_) => {
                Some("Snowflake ids are 0 or greater: their sign bit is always 0.".into())
            }
            Error::UidOutOfRange(_) => Some(format!(
                "The uid fills the 22 low bits of the id: it must be between 0 and {}.",
                crate::layout::MAX_UID
            )),
            Error::NodeBitsOutOfRange(_) => Some(format!(
                "It goes from 0 to {}: how many of the worker bits name the node rather than the backend slot.",
                crate::layout::WORKER_BITS
            )),
            Error::NodeIdOutOfRange { node_bits, .. } => Some(format!(
                "With snowflake.node_bits = {node_bits}, node ids go from 0 to {}.",
                (1i64 << node_bits) - 1
            )),
            Error::ClockBehind { max_lead_ms, .. } => Some(format!(
                "A step back of up to snowflake.max_lead_ms ({max_lead_ms} ms) is absorbed; this one is larger."
            )),
            Error::InvalidEpoch { .. } => Some(
                "Write a time from 1970 on as an ISO 8601 date or time, such as '2020-01-01' or '2020-01-01 00:00:00+00'.".into(),
            ),
            _ => None,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            Error::NodeIdOutOfRange { .. } => Some(
                "Set snowflake.node_id to a value in range in postgresql.conf, or raise snowflake.node_bits (needs a restart).".into(),
            ),
            Error::SlotsDoNotFit { .. } => Some(
                "Lower snowflake.node_bits (needs a restart) so more worker bits number the backends, or lower max_connections.".into(),
            ),
            Error::ClockBehind { .. } => Some(
                "Retry once the clock has caught up, or raise snowflake.max_lead_ms.".into(),
            ),
            Error::ClockBeforeEpoch | Error::TimeRangeExhausted => {
                Some("Check the system clock and snowflake.epoch.".into())
            }
            Error::EpochInFuture { .. } => {
                Some("snowflake.epoch must be a time in the past.".into())
            }
            Error::InRecovery => Some(
                "A standby shares its primary's snowflake.node_id: mint ids on the primary.".into(),
            ),
            Error::NeedsPreload { name, .. } => Some(format!(
                "{name} only takes effect at server start: add snowflake_pg to shared_preload_libraries and restart, or remove the setting."
            )),
            _ => None,
        }
    }
}

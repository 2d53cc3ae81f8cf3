//! Every way a call can fail, with the text a psql user sees.
//!
//! Kept free of PostgreSQL so the pure modules can return these and the unit tests can
//! check them; `raise.rs` gives each its SQLSTATE and reports it.

use crate::text_form::{self, Form};

/// Which setting gave the server's layout its node bits: messages name the one to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeBitsFrom {
    /// `snowflake.node_bits`, with no `snowflake.layout`.
    NodeBits,
    /// `snowflake.layout`, or a layout given to a function.
    Layout,
}

/// A row of `snowflake_nodes`: a node id claimed by a server, as messages tell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub node_id: i64,
    pub system_identifier: i64,
    pub server: String,
    pub layout: String,
    pub epoch: String,
    pub claimed_at: String,
}

/// A claim standing in the way of this server's, and what this server mints with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimConflict {
    pub claim: Claim,
    pub own_system_identifier: i64,
    pub own_layout: String,
    pub own_epoch: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// `infinity` or `-infinity` given where a time is needed.
    InfiniteTime,
    /// A time before `snowflake.epoch`.
    TimeBeforeEpoch {
        time: String,
        epoch: String,
    },
    /// A time past the last tick the time field can hold.
    TimePastRange {
        time: String,
        last: String,
    },
    /// Ids are never negative: the sign bit is always 0.
    NegativeId(i64),
    /// An id whose time lies past what a timestamptz can hold.
    TimeOfIdOutOfRange(i64),
    /// An id with bits set above those of its layout (a 53-bit one).
    IdTooWide {
        id: i64,
        bits: u32,
    },
    /// The uid of `snowflake_at` fills the `bits` below the time.
    UidOutOfRange {
        uid: i64,
        bits: u32,
    },
    /// A part given to `snowflake_compose` that does not fit its field.
    FieldOutOfRange {
        field: &'static str,
        value: i64,
        max: i64,
    },
    /// Text given to `snowflake_decode` that is not as long as its form's ids.
    TextFormLength {
        form: Form,
        text: String,
        length: usize,
    },
    /// A character outside the form's digits, at its position (from 1) in the text.
    TextFormCharacter {
        form: Form,
        text: String,
        character: char,
        position: usize,
    },
    /// Text that writes a number past the largest id, `i64::MAX`.
    TextFormOutOfRange {
        form: Form,
        text: String,
    },
    /// A text form other than base32 and base62.
    UnknownTextForm(String),
    /// `snowflake.node_bits` outside 0 to 10.
    NodeBitsOutOfRange(i64),
    NodeIdOutOfRange {
        node_id: i64,
        node_bits: u32,
        from: NodeBitsFrom,
    },
    /// The server can have more live backends than the slot bits can number.
    SlotsDoNotFit {
        slots: i64,
        node_bits: u32,
        slot_bits: u32,
        from: NodeBitsFrom,
    },
    InvalidLayout {
        value: String,
        reason: String,
    },
    /// `snowflake.node_bits` and `snowflake.layout` both set, to different node bits.
    LayoutDisagreesWithNodeBits {
        layout: String,
        layout_node_bits: u32,
        node_bits: i64,
    },
    /// `snowflake_next(gene)` on a layout without gene bits.
    NoGeneBits,
    /// `snowflake_next(gene)` with a NULL gene.
    NullGene,
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
        /// The time of the last id, when the caller knows the epoch to tell it.
        last: Option<String>,
    },
    /// The high-water mark's file exists but does not hold a mark.
    MarkFileUnreadable {
        path: String,
        reason: String,
    },
    /// The high-water mark could not be moved ahead: no id may be minted past it.
    MarkFileUnwritable {
        path: String,
        reason: String,
    },
    /// The time field of the layout is full.
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
    /// `snowflake.node_source = citus` in a database without Citus.
    NoCitus,
    /// A Citus node not yet in a cluster: it reads group 0, which is the coordinator's.
    NotInCitusCluster,
    /// This node's Citus group id does not fit the layout's node bits.
    GroupIdOutOfRange {
        group_id: i64,
        node_bits: u32,
    },
    /// Another server holds the node id in `snowflake_nodes`. Boxed, like the next, to
    /// keep every `Result` of the hot path small.
    NodeClaimed(Box<ClaimConflict>),
    /// A server of the same id space mints with another layout or epoch.
    ClaimDisagrees(Box<ClaimConflict>),
    /// `snowflake.node_id` was given a value PostgreSQL could not hold in the setting (not
    /// an integer), before the library defined it: PostgreSQL would have fallen back to 0.
    NodeIdUnreadable {
        value: String,
    },
    /// The process renewing the high-water mark did not finish within the bound: a minting
    /// call waited for it that long.
    RenewalStalled {
        waited_ms: i64,
    },
    /// A catalog query of the extension failed in a way PostgreSQL did not report.
    CatalogRead {
        what: &'static str,
        reason: String,
    },
    /// `snowflake_parse` was declared with a row type other than `snowflake_parts`.
    PartsType(String),
    /// The epoch lies where a timestamptz cannot show it.
    EpochOutOfRange,
}

/// A character as a message shows it: quoted, or by its code point if it does not print.
fn shown(character: char) -> String {
    if character.is_control() {
        format!("U+{:04X}", u32::from(character))
    } else {
        format!("\"{character}\"")
    }
}

/// How to write a layout, for the detail of every layout error.
const LAYOUT_SYNTAX: &str = "Name the fields from the high end down, each with its width in bits, such as 'time:41, node:2, slot:8, sequence:12' (time first, with an optional unit 1ms, 10ms or 1s: 'time:37/10ms'; gene last), or a preset: default, js53, twitter, discord, instagram, sonyflake.";

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
            Error::TimeOfIdOutOfRange(id) => {
                format!("snowflake id {id} holds a time past the last one a timestamptz can hold")
            }
            Error::IdTooWide { id, bits } => {
                format!("snowflake id {id} does not fit in the {bits} bits of its layout")
            }
            Error::UidOutOfRange { uid, .. } => format!("uid {uid} is out of range"),
            Error::FieldOutOfRange { field, value, max } if *max == 0 => {
                format!("{field} {value} does not fit: the layout has no {field} bits")
            }
            Error::FieldOutOfRange { field, value, max } => {
                format!("{field} {value} does not fit the layout: it goes from 0 to {max}")
            }
            Error::TextFormLength { form, text, length } => format!(
                "invalid {} snowflake id \"{text}\": it has {length} characters, not {}",
                form.name(),
                form.width()
            ),
            Error::TextFormCharacter {
                form,
                text,
                character,
                position,
            } => format!(
                "invalid {} snowflake id \"{text}\": {} at position {position} is not a {} digit",
                form.name(),
                shown(*character),
                form.name()
            ),
            Error::TextFormOutOfRange { form, text } => {
                format!("{} snowflake id \"{text}\" is out of range", form.name())
            }
            Error::UnknownTextForm(name) => format!("unknown text form \"{name}\""),
            Error::NodeBitsOutOfRange(node_bits) => {
                format!("snowflake.node_bits = {node_bits} is out of range")
            }
            Error::NodeIdOutOfRange {
                node_id,
                node_bits,
                from: NodeBitsFrom::NodeBits,
            } => format!(
                "snowflake.node_id = {node_id} does not fit in snowflake.node_bits = {node_bits}"
            ),
            Error::NodeIdOutOfRange {
                node_id, node_bits, ..
            } => format!(
                "snowflake.node_id = {node_id} does not fit in the {node_bits} node bits of snowflake.layout"
            ),
            Error::SlotsDoNotFit {
                slots,
                node_bits,
                slot_bits,
                from: NodeBitsFrom::NodeBits,
            } => format!(
                "this server has {slots} backend slots, more than the {} that snowflake.node_bits = {node_bits} leaves room for",
                1i64 << slot_bits
            ),
            Error::SlotsDoNotFit {
                slots, slot_bits, ..
            } => format!(
                "this server has {slots} backend slots, more than the {} that the {slot_bits} slot bits of snowflake.layout number",
                1i64 << slot_bits
            ),
            Error::InvalidLayout { value, reason } => {
                format!("invalid layout \"{value}\": {reason}")
            }
            Error::LayoutDisagreesWithNodeBits {
                layout,
                layout_node_bits,
                node_bits,
            } => format!(
                "snowflake.node_bits = {node_bits} disagrees with snowflake.layout = '{layout}', which has {layout_node_bits} node bits"
            ),
            Error::NoGeneBits => "this server's layout has no gene bits".into(),
            Error::NullGene => "the gene of snowflake_next(gene) cannot be NULL".into(),
            Error::InRecovery => "cannot mint snowflake ids on a server in recovery".into(),
            Error::NoBackendSlot => "this process has no backend slot to number its ids".into(),
            Error::ClockBeforeEpoch => {
                "the system clock reads a time before snowflake.epoch".into()
            }
            Error::ClockBehind {
                behind_ms,
                last: Some(last),
                ..
            } => format!(
                "the system clock is {behind_ms} ms behind the last snowflake id of this backend slot ({last})"
            ),
            Error::ClockBehind { behind_ms, .. } => format!(
                "the system clock is {behind_ms} ms behind the last snowflake id of this backend slot"
            ),
            Error::MarkFileUnreadable { path, reason } => format!(
                "could not read the snowflake_pg high-water mark from \"{path}\": {reason}"
            ),
            Error::MarkFileUnwritable { path, reason } => format!(
                "could not move the snowflake_pg high-water mark ahead in \"{path}\": {reason}"
            ),
            Error::TimeRangeExhausted => {
                "the time field of the layout is full: the time range from snowflake.epoch is used up".into()
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
            Error::NoCitus => {
                "snowflake.node_source is citus, but Citus is not installed in this database".into()
            }
            Error::NotInCitusCluster => {
                "this node is not in a Citus cluster yet: it reads group id 0, the coordinator's, and knows no other node".into()
            }
            Error::GroupIdOutOfRange {
                group_id,
                node_bits,
            } => format!(
                "this node's Citus group id {group_id} does not fit in the {node_bits} node bits of the layout"
            ),
            Error::NodeClaimed(conflict) => format!(
                "node id {} is claimed by another server",
                conflict.claim.node_id
            ),
            Error::ClaimDisagrees(conflict) => format!(
                "this server's layout or epoch differs from that of node {}",
                conflict.claim.node_id
            ),
            Error::NodeIdUnreadable { value } => {
                format!("snowflake.node_id = \"{value}\" is not a node id")
            }
            Error::RenewalStalled { waited_ms } => format!(
                "the snowflake_pg high-water mark was not moved ahead within {waited_ms} ms"
            ),
            Error::CatalogRead { what, reason } => {
                format!("snowflake_pg could not read {what}: {reason}")
            }
            Error::PartsType(reason) => {
                format!("snowflake_parse must return snowflake_parts: {reason}")
            }
            Error::EpochOutOfRange => "the epoch is out of range".into(),
        }
    }

    pub fn detail(&self) -> Option<String> {
        match self {
            Error::NodeIdUnreadable { .. } => Some(
                "It is not an integer. PostgreSQL would have set aside the value and minted as node 0, which another server may hold, so no id is minted until the value is fixed.".into(),
            ),
            Error::NegativeId(_) => {
                Some("Snowflake ids are 0 or greater: their sign bit is always 0.".into())
            }
            Error::IdTooWide { bits, .. } => Some(format!(
                "Ids of this layout go from 0 to 2^{bits} - 1 = {}.",
                (1i64 << bits) - 1
            )),
            Error::UidOutOfRange { bits, .. } => Some(format!(
                "The uid fills the {bits} low bits of the id: it must be between 0 and {}.",
                (1i64 << bits) - 1
            )),
            Error::TextFormLength { form, .. } | Error::TextFormCharacter { form, .. } => {
                Some(form.syntax())
            }
            Error::TextFormOutOfRange { form, .. } => Some(format!(
                "The largest {} snowflake id is {}: {}.",
                form.name(),
                text_form::largest(*form),
                i64::MAX
            )),
            Error::UnknownTextForm(_) => Some(
                "The text forms are base32 (Crockford's, 13 characters) and base62 (11 characters).".into(),
            ),
            Error::NodeBitsOutOfRange(_) => Some(format!(
                "It goes from 0 to {}: how many of the worker bits name the node rather than the backend slot.",
                crate::layout::WORKER_BITS
            )),
            Error::NodeIdOutOfRange {
                node_bits,
                from: NodeBitsFrom::NodeBits,
                ..
            } => Some(format!(
                "With snowflake.node_bits = {node_bits}, node ids go from 0 to {}.",
                (1i64 << node_bits) - 1
            )),
            Error::NodeIdOutOfRange { node_bits, .. } => Some(format!(
                "With {node_bits} node bits, node ids go from 0 to {}.",
                (1i64 << node_bits) - 1
            )),
            Error::InvalidLayout { .. } => Some(LAYOUT_SYNTAX.into()),
            Error::ClockBehind { max_lead_ms, .. } => Some(format!(
                "A step back of up to snowflake.max_lead_ms ({max_lead_ms} ms) is absorbed; this one is larger. With shared_preload_libraries the last id may be from before a restart: no id is minted below it."
            )),
            Error::MarkFileUnwritable { .. } => Some(
                "No id is minted past the high-water mark until it can be written: ids would otherwise repeat after a restart.".into(),
            ),
            Error::InvalidEpoch { .. } => Some(
                "Write a time from 1970 on as an ISO 8601 date or time, such as '2020-01-01' or '2020-01-01 00:00:00+00'.".into(),
            ),
            Error::GroupIdOutOfRange { node_bits, .. } => Some(format!(
                "With {node_bits} node bits, node ids go from 0 to {}.",
                (1i64 << node_bits) - 1
            )),
            Error::NodeClaimed(conflict) => Some(format!(
                "Server \"{}\" (system identifier {}) claimed it in snowflake_nodes at {}. This server's system identifier is {}.",
                conflict.claim.server,
                conflict.claim.system_identifier,
                conflict.claim.claimed_at,
                conflict.own_system_identifier
            )),
            Error::ClaimDisagrees(conflict) => Some(format!(
                "Server \"{}\" (system identifier {}) mints with layout '{}' and epoch {}; this server with layout '{}' and epoch {}.",
                conflict.claim.server,
                conflict.claim.system_identifier,
                conflict.claim.layout,
                conflict.claim.epoch,
                conflict.own_layout,
                conflict.own_epoch
            )),
            _ => None,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            Error::NodeIdOutOfRange {
                from: NodeBitsFrom::NodeBits,
                ..
            } => Some(
                "Set snowflake.node_id to a value in range in postgresql.conf, or raise snowflake.node_bits (needs a restart).".into(),
            ),
            Error::NodeIdOutOfRange { .. } => Some(
                "Set snowflake.node_id to a value in range in postgresql.conf, or give snowflake.layout more node bits (needs a restart).".into(),
            ),
            Error::SlotsDoNotFit {
                from: NodeBitsFrom::NodeBits,
                ..
            } => Some(
                "Lower snowflake.node_bits (needs a restart) so more worker bits number the backends, or lower max_connections.".into(),
            ),
            Error::SlotsDoNotFit { .. } => Some(
                "Give snowflake.layout more slot bits (needs a restart), or lower max_connections.".into(),
            ),
            Error::LayoutDisagreesWithNodeBits { .. } => Some(
                "Remove snowflake.node_bits from the configuration: snowflake.layout says how many node bits there are.".into(),
            ),
            Error::NoGeneBits => Some(
                "Give snowflake.layout a gene field, such as 'time:41, node:2, slot:8, sequence:8, gene:4' (needs a restart), or call snowflake_next() without a gene.".into(),
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
            Error::MarkFileUnreadable { .. } => Some(
                "The file holds the time of the last id minted. Restore it, or remove it and start the server once the clock is past that time.".into(),
            ),
            Error::MarkFileUnwritable { .. } => Some(
                "Make room on the file system of the data directory, or make the directory writable again.".into(),
            ),
            Error::NeedsPreload { name, .. } => Some(format!(
                "{name} only takes effect at server start: add snowflake_pg to shared_preload_libraries and restart, or remove the setting."
            )),
            Error::NoCitus => Some(
                "Create the citus extension in this database, or set snowflake.node_source = setting and give each server its snowflake.node_id.".into(),
            ),
            Error::NotInCitusCluster => Some(
                "Add it to the cluster with citus_add_node() on the coordinator (on the coordinator itself, call citus_set_coordinator_host()), or set snowflake.node_source = setting and give it a snowflake.node_id.".into(),
            ),
            Error::GroupIdOutOfRange { .. } => Some(
                "Give snowflake.layout more node bits (needs a restart), or set snowflake.node_source = setting and give this server a snowflake.node_id in range.".into(),
            ),
            Error::NodeClaimed(conflict) => Some(format!(
                "Give this server a node id no other server holds (snowflake.node_id). If that server is retired for good, free its claim with SELECT snowflake_release_node({}).",
                conflict.claim.node_id
            )),
            Error::ClaimDisagrees(_) => Some(
                "Every server sharing an id space must mint with the same snowflake.layout and snowflake.epoch.".into(),
            ),
            Error::NodeIdUnreadable { .. } => Some(
                "Set snowflake.node_id to an integer node id in range, in postgresql.conf or wherever the value came from (ALTER SYSTEM, ALTER ROLE or DATABASE ... SET, PGOPTIONS, a SET before snowflake_pg was loaded).".into(),
            ),
            Error::RenewalStalled { .. } => Some(
                "The process writing the mark file is stuck, most likely in fsync of the data directory's file system: look at that file system. No id is minted past the mark until it is written.".into(),
            ),
            _ => None,
        }
    }
}

//! The bit layout of an id: which fields it has, how wide each is, in what order.
//!
//! Below the sign bit an id has 63 bits, or 53 for ids that a JavaScript number holds
//! exactly (the bits above stay 0). `time` comes first, counting ticks of its unit since
//! the epoch, so ids sort by time and the floor of a tick is `tick << time shift`. Then
//! `node`, `slot` and `sequence` in the layout's order, and `gene` last when present. A
//! field a layout leaves out has no bits, and its value is 0. `spec.rs` reads layouts
//! from text; the default one is `time:41, sequence:12, node:2, slot:8`.

use crate::report::{Report, Reported, SqlState};

/// Which setting gave the server's layout its node bits: messages name the one to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeBitsFrom {
    /// `snowflake.node_bits`, with no `snowflake.layout`.
    NodeBits,
    /// `snowflake.layout`, or a layout given to a function.
    Layout,
}

/// A layout that cannot be, or an id or part that does not fit one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
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
    /// Ids are never negative: the sign bit is always 0.
    NegativeId(i64),
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
}

/// How to write a layout, for the detail of every layout error.
const LAYOUT_SYNTAX: &str = "Name the fields from the high end down, each with its width in bits, such as 'time:41, sequence:12, node:2, slot:8' (time first, with an optional unit 1ms, 10ms or 1s: 'time:37/10ms'; gene last), or a preset: default, worker-first, js53, twitter, discord, instagram, sonyflake.";

/// The range of node ids `node_bits` give, for details.
fn node_id_range(node_bits: u32) -> i64 {
    (1i64 << node_bits) - 1
}

impl Reported for LayoutError {
    fn report(&self) -> Report {
        use SqlState::*;
        match self {
            LayoutError::NodeBitsOutOfRange(node_bits) => Report::new(
                InvalidParameterValue,
                format!("snowflake.node_bits = {node_bits} is out of range"),
            )
            .detail(format!(
                "It goes from 0 to {WORKER_BITS}: how many of the worker bits name the node rather than the backend slot."
            )),
            LayoutError::NodeIdOutOfRange {
                node_id,
                node_bits,
                from: NodeBitsFrom::NodeBits,
            } => Report::new(
                InvalidParameterValue,
                format!("snowflake.node_id = {node_id} does not fit in snowflake.node_bits = {node_bits}"),
            )
            .detail(format!(
                "With snowflake.node_bits = {node_bits}, node ids go from 0 to {}.",
                node_id_range(*node_bits)
            ))
            .hint("Set snowflake.node_id to a value in range in postgresql.conf, or raise snowflake.node_bits (needs a restart)."),
            LayoutError::NodeIdOutOfRange {
                node_id,
                node_bits,
                from: NodeBitsFrom::Layout,
            } => Report::new(
                InvalidParameterValue,
                format!("snowflake.node_id = {node_id} does not fit in the {node_bits} node bits of snowflake.layout"),
            )
            .detail(format!(
                "With {node_bits} node bits, node ids go from 0 to {}.",
                node_id_range(*node_bits)
            ))
            .hint("Set snowflake.node_id to a value in range in postgresql.conf, or give snowflake.layout more node bits (needs a restart)."),
            LayoutError::SlotsDoNotFit {
                slots,
                node_bits,
                slot_bits,
                from: NodeBitsFrom::NodeBits,
            } => Report::new(
                ConfigurationLimitExceeded,
                format!(
                    "this server has {slots} backend slots, more than the {} that snowflake.node_bits = {node_bits} leaves room for",
                    1i64 << slot_bits
                ),
            )
            .hint("Lower snowflake.node_bits (needs a restart) so more worker bits number the backends, or lower max_connections."),
            LayoutError::SlotsDoNotFit {
                slots,
                slot_bits,
                from: NodeBitsFrom::Layout,
                ..
            } => Report::new(
                ConfigurationLimitExceeded,
                format!(
                    "this server has {slots} backend slots, more than the {} that the {slot_bits} slot bits of snowflake.layout number",
                    1i64 << slot_bits
                ),
            )
            .hint("Give snowflake.layout more slot bits (needs a restart), or lower max_connections."),
            LayoutError::InvalidLayout { value, reason } => Report::new(
                InvalidParameterValue,
                format!("invalid layout \"{value}\": {reason}"),
            )
            .detail(LAYOUT_SYNTAX),
            LayoutError::LayoutDisagreesWithNodeBits {
                layout,
                layout_node_bits,
                node_bits,
            } => Report::new(
                InvalidParameterValue,
                format!("snowflake.node_bits = {node_bits} disagrees with snowflake.layout = '{layout}', which has {layout_node_bits} node bits"),
            )
            .hint("Remove snowflake.node_bits from the configuration: snowflake.layout says how many node bits there are."),
            LayoutError::NoGeneBits => Report::new(
                ObjectNotInPrerequisiteState,
                "this server's layout has no gene bits",
            )
            .hint("Give snowflake.layout a gene field, such as 'time:41, sequence:8, node:2, slot:8, gene:4' (needs a restart), or call snowflake_next() without a gene."),
            LayoutError::NegativeId(id) => Report::new(
                NumericValueOutOfRange,
                format!("snowflake id {id} is negative"),
            )
            .detail("Snowflake ids are 0 or greater: their sign bit is always 0."),
            LayoutError::IdTooWide { id, bits } => Report::new(
                NumericValueOutOfRange,
                format!("snowflake id {id} does not fit in the {bits} bits of its layout"),
            )
            .detail(format!(
                "Ids of this layout go from 0 to 2^{bits} - 1 = {}.",
                (1i64 << bits) - 1
            )),
            LayoutError::UidOutOfRange { uid, bits } => Report::new(
                NumericValueOutOfRange,
                format!("uid {uid} is out of range"),
            )
            .detail(format!(
                "The uid fills the {bits} low bits of the id: it must be between 0 and {}.",
                (1i64 << bits) - 1
            )),
            LayoutError::FieldOutOfRange { field, value, max: 0 } => Report::new(
                NumericValueOutOfRange,
                format!("{field} {value} does not fit: the layout has no {field} bits"),
            ),
            LayoutError::FieldOutOfRange { field, value, max } => Report::new(
                NumericValueOutOfRange,
                format!("{field} {value} does not fit the layout: it goes from 0 to {max}"),
            ),
        }
    }
}

/// The node and slot bits of a layout made from `snowflake.node_bits`.
pub const WORKER_BITS: u32 = 10;
/// The widest a non-time field can be: its value must fit an `integer` column.
pub const MAX_FIELD_BITS: u32 = 31;
/// The most slot bits a server's own layout may have: one slot mark per slot it numbers.
pub const MAX_SLOT_BITS: u32 = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Time,
    Node,
    Slot,
    Sequence,
    Gene,
}

impl Field {
    pub const ALL: [Field; 5] = [
        Field::Time,
        Field::Node,
        Field::Slot,
        Field::Sequence,
        Field::Gene,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Field::Time => "time",
            Field::Node => "node",
            Field::Slot => "slot",
            Field::Sequence => "sequence",
            Field::Gene => "gene",
        }
    }
}

/// What one tick of the time field lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ms,
    TenMs,
    Second,
}

impl Unit {
    pub fn ms(self) -> i64 {
        match self {
            Unit::Ms => 1,
            Unit::TenMs => 10,
            Unit::Second => 1000,
        }
    }

    /// The tick that `ms` falls in, rounding toward the past. Each arm divides by a
    /// constant, which compiles to a multiplication: this runs on every call.
    #[inline]
    pub fn ticks_of_ms(self, ms: i64) -> i64 {
        match self {
            Unit::Ms => ms,
            Unit::TenMs => ms.div_euclid(10),
            Unit::Second => ms.div_euclid(1000),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Unit::Ms => "1ms",
            Unit::TenMs => "10ms",
            Unit::Second => "1s",
        }
    }
}

/// Where a field sits: `width` bits starting at bit `shift`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Slice {
    width: u32,
    shift: u32,
}

impl Slice {
    fn max(self) -> i64 {
        i64::MAX >> (63 - self.width)
    }

    fn get(self, id: i64) -> i64 {
        id >> self.shift & self.max()
    }
}

/// The values of an id's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Parts {
    /// Ticks since the epoch.
    pub ticks: i64,
    pub node_id: i64,
    pub backend_slot: i64,
    /// `node_id` followed by `backend_slot`: the generator's identity in the cluster.
    pub worker_id: i64,
    pub sequence: i64,
    pub gene: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The fields present, from the high end down; `order[..len]`.
    order: [Field; 5],
    len: usize,
    unit: Unit,
    /// 63 or 53: the bits below the sign bit that ids may use.
    total_bits: u32,
    /// Indexed by `Field as usize`.
    slices: [Slice; 5],
}

impl Layout {
    /// A layout of `(field, width)` pairs from the high end down. The caller (`spec.rs`)
    /// has checked the order, the widths and their sum.
    pub fn new(fields: &[(Field, u32)], unit: Unit) -> Layout {
        let total_bits = fields.iter().map(|&(_, width)| width).sum();
        let mut layout = Layout {
            order: [Field::Time; 5],
            len: fields.len(),
            unit,
            total_bits,
            slices: [Slice::default(); 5],
        };
        let mut shift = total_bits;
        for (i, &(field, width)) in fields.iter().enumerate() {
            shift -= width;
            layout.order[i] = field;
            layout.slices[field as usize] = Slice { width, shift };
        }
        layout
    }

    /// `time:41, sequence:12, node:N, slot:10-N`: the layout of `snowflake.node_bits = N`.
    pub fn from_node_bits(node_bits: i64) -> Result<Layout, LayoutError> {
        match u32::try_from(node_bits) {
            Ok(node_bits) if node_bits <= WORKER_BITS => Ok(Layout::new(
                &[
                    (Field::Time, 41),
                    (Field::Sequence, 12),
                    (Field::Node, node_bits),
                    (Field::Slot, WORKER_BITS - node_bits),
                ],
                Unit::Ms,
            )),
            _ => Err(LayoutError::NodeBitsOutOfRange(node_bits)),
        }
    }

    fn slice(&self, field: Field) -> Slice {
        self.slices[field as usize]
    }

    /// Whether the sequence sits right below the time, above the node and slot: then a
    /// generator's sequence follows the clock inside the tick (`generator.rs`), and the ids
    /// of every backend sort by their minting time below the tick, as a B-tree's rightmost
    /// page wants them. With the node and slot above it, each backend's ids of one tick
    /// are a block of their own, and the sequence restarts at 0 each tick.
    pub fn sequence_follows_clock(&self) -> bool {
        self.len > 1 && self.order[1] == Field::Sequence && self.bits(Field::Sequence) > 0
    }

    /// The same fields in 0.3.0's order, the sequence below the node and slot (above the
    /// gene): the order in which a server upgraded from 0.3.0 minted its ids of the default
    /// layouts, which `snowflake.reordered_at` parses them in. Other layouts stay as they are.
    pub fn worker_first(&self) -> Layout {
        if !self.sequence_follows_clock() {
            return *self;
        }
        let fields: Vec<(Field, u32)> = self.order[..self.len]
            .iter()
            .filter(|&&field| field != Field::Sequence && field != Field::Gene)
            .chain([&Field::Sequence])
            .chain(self.order[..self.len].iter().filter(|&&f| f == Field::Gene))
            .map(|&field| (field, self.bits(field)))
            .collect();
        Layout::new(&fields, self.unit)
    }

    pub fn bits(&self, field: Field) -> u32 {
        self.slice(field).width
    }

    pub fn unit(&self) -> Unit {
        self.unit
    }

    #[cfg(test)]
    pub fn total_bits(&self) -> u32 {
        self.total_bits
    }

    pub fn max_ticks(&self) -> i64 {
        self.slice(Field::Time).max()
    }

    pub fn max_sequence(&self) -> u32 {
        self.slice(Field::Sequence).max() as u32
    }

    /// The largest uid of `snowflake_at`, which fills every bit below the time.
    pub fn max_uid(&self) -> i64 {
        (1 << self.slice(Field::Time).shift) - 1
    }

    /// Whether `node_id` fits the node bits.
    pub fn fits_node_id(&self, node_id: i64) -> bool {
        (0..=self.slice(Field::Node).max()).contains(&node_id)
    }

    /// How many backend slots the slot bits number.
    pub fn slot_count(&self) -> i64 {
        1 << self.bits(Field::Slot)
    }

    /// The node and slot bits of an id, ready to be or-ed in. Callers have checked both
    /// to fit (`server::Fixed::check_node_id` and `check_slots`).
    pub fn worker_bits(&self, node_id: i64, slot: i64) -> i64 {
        debug_assert!(self.fits_node_id(node_id));
        debug_assert!((0..=self.slice(Field::Slot).max()).contains(&slot));
        node_id << self.slice(Field::Node).shift | slot << self.slice(Field::Slot).shift
    }

    /// Where `snowflake_next()` puts its parts; see `Minter`.
    pub fn minter(&self, worker_bits: i64) -> Minter {
        Minter {
            time_shift: self.slice(Field::Time).shift,
            sequence_shift: self.slice(Field::Sequence).shift,
            worker_bits,
            gene_mask: self.slice(Field::Gene).max(),
        }
    }

    /// The id of `parts`, each checked to fit its field; `worker_id` is not read.
    pub fn compose(&self, parts: &Parts) -> Result<i64, LayoutError> {
        let values = [
            (Field::Time, parts.ticks),
            (Field::Node, parts.node_id),
            (Field::Slot, parts.backend_slot),
            (Field::Sequence, parts.sequence),
            (Field::Gene, parts.gene),
        ];
        let mut id = 0;
        for (field, value) in values {
            let slice = self.slice(field);
            if !(0..=slice.max()).contains(&value) {
                return Err(LayoutError::FieldOutOfRange {
                    field: field.name(),
                    value,
                    max: slice.max(),
                });
            }
            id |= value << slice.shift;
        }
        Ok(id)
    }

    pub fn decompose(&self, id: i64) -> Result<Parts, LayoutError> {
        if id < 0 {
            return Err(LayoutError::NegativeId(id));
        }
        if id >> self.total_bits != 0 {
            return Err(LayoutError::IdTooWide {
                id,
                bits: self.total_bits,
            });
        }
        let node_id = self.slice(Field::Node).get(id);
        let backend_slot = self.slice(Field::Slot).get(id);
        Ok(Parts {
            ticks: self.slice(Field::Time).get(id),
            node_id,
            backend_slot,
            worker_id: node_id << self.bits(Field::Slot) | backend_slot,
            sequence: self.slice(Field::Sequence).get(id),
            gene: self.slice(Field::Gene).get(id),
        })
    }

    /// The smallest id of tick `ticks` (in range, from `Epoch::ticks_of`).
    pub fn floor(&self, ticks: i64) -> i64 {
        ticks << self.slice(Field::Time).shift
    }

    /// The id of `snowflake_at`: the uid fills every bit below the time.
    pub fn with_uid(&self, ticks: i64, uid: i64) -> Result<i64, LayoutError> {
        if !(0..=self.max_uid()).contains(&uid) {
            return Err(LayoutError::UidOutOfRange {
                uid,
                bits: self.slice(Field::Time).shift,
            });
        }
        Ok(self.floor(ticks) | uid)
    }
}

/// The spec of a layout, as `spec::parse` reads it: `time:41, node:2, slot:8, sequence:12`.
impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, &field) in self.order[..self.len].iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            write!(f, "{separator}{}:{}", field.name(), self.bits(field))?;
            if field == Field::Time && self.unit != Unit::Ms {
                write!(f, "/{}", self.unit.name())?;
            }
        }
        Ok(())
    }
}

/// What a backend needs to assemble its ids, with the shifts of its layout and its own
/// node and slot bits worked out once: the hot path is two shifts and three ors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Minter {
    time_shift: u32,
    sequence_shift: u32,
    worker_bits: i64,
    /// 0 when the layout has no gene bits.
    gene_mask: i64,
}

impl Minter {
    /// The id of `(ticks, sequence)`, which the generator keeps within their fields.
    #[inline]
    pub fn id(&self, ticks: i64, sequence: u32) -> i64 {
        ticks << self.time_shift | self.worker_bits | (sequence as i64) << self.sequence_shift
    }

    /// The id of `(ticks, sequence)` carrying the low bits of `key` in its gene field, on
    /// a layout that `has_gene`.
    #[inline]
    pub fn id_with_gene(&self, ticks: i64, sequence: u32, key: i64) -> i64 {
        self.id(ticks, sequence) | key & self.gene_mask
    }

    pub fn has_gene(&self) -> bool {
        self.gene_mask != 0
    }

    /// The same layout, minting as another node: `snowflake.node_id` may change at any time.
    pub fn with_worker_bits(self, worker_bits: i64) -> Minter {
        Minter {
            worker_bits,
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec;
    use crate::test_rng::Rng;

    fn default_layout() -> Layout {
        Layout::from_node_bits(2).unwrap()
    }

    #[test]
    fn the_default_layout_numbers_256_slots_on_4_nodes() {
        let layout = default_layout();
        assert_eq!(layout.to_string(), "time:41, sequence:12, node:2, slot:8");
        assert!(layout.sequence_follows_clock());
        assert!(layout.fits_node_id(3));
        assert!(!layout.fits_node_id(4));
        assert!(!layout.fits_node_id(-1));
        assert_eq!(layout.slot_count(), 256);
        assert_eq!(layout.max_uid(), 4_194_303);
        assert_eq!(layout.max_ticks(), (1 << 41) - 1);
        assert_eq!(layout.max_sequence(), 4095);
    }

    #[test]
    fn the_extremes_of_every_field_compose_and_decompose() {
        let layout = default_layout();
        let minter = layout.minter(layout.worker_bits(3, 255));
        let id = minter.id(layout.max_ticks(), 4095);
        assert_eq!(id, i64::MAX);
        let parts = layout.decompose(id).unwrap();
        assert_eq!(
            parts,
            Parts {
                ticks: layout.max_ticks(),
                node_id: 3,
                backend_slot: 255,
                worker_id: 1023,
                sequence: 4095,
                gene: 0,
            }
        );
        assert_eq!(layout.compose(&parts), Ok(id));
        assert_eq!(layout.minter(0).id(0, 0), 0);
        assert_eq!(layout.decompose(-1), Err(LayoutError::NegativeId(-1)));
        assert_eq!(
            layout.decompose(i64::MIN),
            Err(LayoutError::NegativeId(i64::MIN))
        );
    }

    #[test]
    fn node_bits_zero_and_ten_leave_all_worker_bits_to_one_side() {
        let all_slots = Layout::from_node_bits(0).unwrap();
        assert_eq!(all_slots.worker_bits(0, 1023), 1023);
        assert_eq!(all_slots.decompose(1023).unwrap().backend_slot, 1023);
        let all_nodes = Layout::from_node_bits(10).unwrap();
        assert_eq!(all_nodes.worker_bits(1023, 0), 1023);
        assert_eq!(all_nodes.decompose(1023).unwrap().node_id, 1023);
        assert_eq!(all_nodes.slot_count(), 1);
    }

    #[test]
    fn the_sequence_follows_the_clock_only_right_below_the_time() {
        for (text, follows) in [
            ("default", true),
            ("js53", true),
            ("sonyflake", true),
            ("worker-first", false),
            ("twitter", false),
            ("instagram", false),
            ("time:41, node:2, sequence:12, slot:8", false),
            ("time:53, sequence:0, node:2, slot:8", false),
            ("time:63", false),
        ] {
            let layout = spec::parse(text).unwrap().layout;
            assert_eq!(layout.sequence_follows_clock(), follows, "{text}");
        }
    }

    #[test]
    fn worker_first_moves_the_sequence_below_the_node_and_slot_and_above_the_gene() {
        let worker_first =
            |text: &str| spec::parse(text).unwrap().layout.worker_first().to_string();
        assert_eq!(
            worker_first("default"),
            "time:41, node:2, slot:8, sequence:12"
        );
        assert_eq!(
            worker_first("js53"),
            "time:37/10ms, node:2, slot:8, sequence:6"
        );
        assert_eq!(
            worker_first("time:41, sequence:8, node:2, slot:8, gene:4"),
            "time:41, node:2, slot:8, sequence:8, gene:4"
        );
        assert_eq!(
            worker_first("worker-first"),
            "time:41, node:2, slot:8, sequence:12"
        );
        assert_eq!(worker_first("instagram"), "time:40, node:13, sequence:10");
        // Both orders share the time field: floors and times of ids agree.
        let layout = default_layout();
        let parts = Parts {
            ticks: 77,
            node_id: 2,
            backend_slot: 200,
            worker_id: 2 << 8 | 200,
            sequence: 4000,
            gene: 0,
        };
        let old = layout.worker_first();
        let old_id = old.compose(&parts).unwrap();
        assert_eq!(old.decompose(old_id), Ok(parts));
        assert_eq!(layout.decompose(old_id).unwrap().ticks, 77);
        assert_eq!(layout.floor(77), old.floor(77));
    }

    #[test]
    fn node_bits_outside_zero_to_ten_are_refused() {
        for node_bits in [-1, 11, i32::MIN as i64, i32::MAX as i64] {
            assert_eq!(
                Layout::from_node_bits(node_bits),
                Err(LayoutError::NodeBitsOutOfRange(node_bits))
            );
        }
    }

    #[test]
    fn a_value_that_does_not_fit_its_field_is_refused_never_wrapped() {
        let layout = default_layout();
        let fits = Parts {
            ticks: 1,
            node_id: 3,
            backend_slot: 255,
            sequence: 4095,
            ..Parts::default()
        };
        assert!(layout.compose(&fits).is_ok());
        for (parts, field, value, max) in [
            (Parts { node_id: 4, ..fits }, "node", 4, 3),
            (
                Parts {
                    backend_slot: 256,
                    ..fits
                },
                "slot",
                256,
                255,
            ),
            (
                Parts {
                    sequence: -1,
                    ..fits
                },
                "sequence",
                -1,
                4095,
            ),
            (Parts { gene: 1, ..fits }, "gene", 1, 0),
            (
                Parts {
                    ticks: 1 << 41,
                    ..fits
                },
                "time",
                1 << 41,
                (1 << 41) - 1,
            ),
        ] {
            assert_eq!(
                layout.compose(&parts),
                Err(LayoutError::FieldOutOfRange { field, value, max })
            );
        }
    }

    #[test]
    fn a_53_bit_layout_refuses_ids_past_its_bits() {
        let js53 = spec::parse("js53").unwrap().layout;
        assert_eq!(js53.total_bits(), 53);
        let last = js53
            .minter(js53.worker_bits(3, 255))
            .id(js53.max_ticks(), 63);
        assert_eq!(last, (1 << 53) - 1);
        assert_eq!(js53.decompose(last).unwrap().ticks, js53.max_ticks());
        assert_eq!(
            js53.decompose(1 << 53),
            Err(LayoutError::IdTooWide {
                id: 1 << 53,
                bits: 53
            })
        );
    }

    #[test]
    fn the_gene_takes_the_low_bits_of_any_key_negatives_included() {
        let layout = spec::parse("time:41, node:2, slot:8, sequence:8, gene:4")
            .unwrap()
            .layout;
        let minter = layout.minter(layout.worker_bits(1, 7));
        for key in [
            0,
            1,
            15,
            16,
            1820,
            5_177_331,
            -1,
            -16,
            -17,
            i64::MIN,
            i64::MAX,
        ] {
            let id = minter.id_with_gene(1000, 255, key);
            assert_eq!(id.rem_euclid(16), key & 15, "{key}");
            let parts = layout.decompose(id).unwrap();
            assert_eq!(
                (parts.ticks, parts.node_id, parts.backend_slot),
                (1000, 1, 7)
            );
            assert_eq!((parts.sequence, parts.gene), (255, key & 15));
        }
        assert!(minter.has_gene());
        assert!(!default_layout().minter(0).has_gene());
    }

    /// Random valid layouts: every field at random widths adding up to 63 or 53.
    fn random_layout(rng: &mut Rng) -> Layout {
        loop {
            let total = if rng.below(4) == 0 { 53 } else { 63 };
            let mut fields = vec![];
            let mut left = total;
            for field in [Field::Node, Field::Slot, Field::Sequence, Field::Gene] {
                if rng.below(3) > 0 {
                    let width = rng.below(u64::from(MAX_FIELD_BITS.min(left - 1)) + 1) as u32;
                    fields.push((field, width));
                    left -= width;
                }
            }
            if left < 1 {
                continue;
            }
            // Any order of node, slot and sequence, gene last.
            let gene = fields
                .iter()
                .position(|&(f, _)| f == Field::Gene)
                .map(|i| fields.remove(i));
            for i in (1..fields.len()).rev() {
                fields.swap(i, rng.below(i as u64 + 1) as usize);
            }
            fields.insert(0, (Field::Time, left));
            fields.extend(gene);
            let unit = [Unit::Ms, Unit::TenMs, Unit::Second][rng.below(3) as usize];
            return Layout::new(&fields, unit);
        }
    }

    fn random_parts(rng: &mut Rng, layout: &Layout) -> Parts {
        let mut value = |field: Field| rng.below(layout.slice(field).max() as u64 + 1) as i64;
        let node_id = value(Field::Node);
        let backend_slot = value(Field::Slot);
        Parts {
            ticks: value(Field::Time),
            node_id,
            backend_slot,
            worker_id: node_id << layout.bits(Field::Slot) | backend_slot,
            sequence: value(Field::Sequence),
            gene: value(Field::Gene),
        }
    }

    #[test]
    fn property_decompose_inverts_compose_on_random_layouts() {
        let mut rng = Rng::new(1);
        for _ in 0..100_000 {
            let layout = random_layout(&mut rng);
            let parts = random_parts(&mut rng, &layout);
            let id = layout.compose(&parts).unwrap();
            assert!(id >= 0 && id >> layout.total_bits() == 0, "{layout}");
            assert_eq!(layout.decompose(id), Ok(parts), "{layout}");
            assert_eq!(
                spec::parse(&layout.to_string()).unwrap().layout.to_string(),
                layout.to_string()
            );
        }
    }

    #[test]
    fn property_the_minter_agrees_with_compose_on_random_layouts() {
        let mut rng = Rng::new(2);
        for _ in 0..100_000 {
            let layout = random_layout(&mut rng);
            let parts = random_parts(&mut rng, &layout);
            let minter = layout.minter(layout.worker_bits(parts.node_id, parts.backend_slot));
            let sequence = parts.sequence as u32;
            let expected = layout.compose(&parts).unwrap();
            if minter.has_gene() {
                let key = rng.next_u64() as i64;
                let with_key = Parts {
                    gene: key & layout.slice(Field::Gene).max(),
                    ..parts
                };
                let id = minter.id_with_gene(parts.ticks, sequence, key);
                assert_eq!(id, layout.compose(&with_key).unwrap(), "{layout}");
            } else {
                assert_eq!(minter.id(parts.ticks, sequence), expected, "{layout}");
            }
        }
    }

    #[test]
    fn property_ids_order_by_time_first_and_floors_bound_their_tick() {
        let mut rng = Rng::new(3);
        for _ in 0..100_000 {
            let layout = random_layout(&mut rng);
            let parts = random_parts(&mut rng, &layout);
            if parts.ticks == layout.max_ticks() {
                continue;
            }
            let id = layout.compose(&parts).unwrap();
            assert!(layout.floor(parts.ticks) <= id && id < layout.floor(parts.ticks + 1));
            assert_eq!(
                layout.with_uid(parts.ticks, id - layout.floor(parts.ticks)),
                Ok(id)
            );
        }
    }

    #[test]
    fn uid_fills_the_bits_below_the_time_and_nothing_more() {
        let layout = default_layout();
        assert_eq!(layout.with_uid(5, 0), Ok(5 << 22));
        assert_eq!(layout.with_uid(5, 4_194_303), Ok((6 << 22) - 1));
        assert_eq!(
            layout.with_uid(5, 4_194_304),
            Err(LayoutError::UidOutOfRange {
                uid: 4_194_304,
                bits: 22
            })
        );
        assert!(layout.with_uid(5, -1).is_err());
        assert_eq!(layout.with_uid(layout.max_ticks(), 4_194_303), Ok(i64::MAX));
    }
}

//! The bit layout of an id: `0 | 41 bits ms | 10 bits worker | 12 bits sequence`.
//!
//! The worker id is `node_id << slot_bits | backend_slot`, where `node_bits` of the 10
//! worker bits name the server and the rest number the backend within it. The time is
//! always the top bits, so ids sort by time and the floor of a millisecond is `ms << 22`.

use crate::error::Error;

pub const TIME_BITS: u32 = 41;
pub const WORKER_BITS: u32 = 10;
pub const SEQUENCE_BITS: u32 = 12;
/// The bits below the time: worker and sequence, or the uid of `snowflake_at`.
pub const LOW_BITS: u32 = WORKER_BITS + SEQUENCE_BITS;

pub const MAX_MS: i64 = (1 << TIME_BITS) - 1;
pub const MAX_SEQUENCE: u32 = (1 << SEQUENCE_BITS) - 1;
pub const MAX_UID: i64 = (1 << LOW_BITS) - 1;

/// How many backend slots the worker bits can number when `node_bits` of them name the node.
pub fn slot_capacity(node_bits: u32) -> i64 {
    1 << (WORKER_BITS - node_bits)
}

/// The parts of an id as minted by `snowflake_next()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    /// Milliseconds since the epoch.
    pub ms: i64,
    pub node_id: i64,
    pub backend_slot: i64,
    pub worker_id: i64,
    pub sequence: i64,
}

/// How the 10 worker bits split between node and backend slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    node_bits: u32,
}

impl Layout {
    /// The layout for a value of `snowflake.node_bits`, which goes from 0 to `WORKER_BITS`.
    pub fn new(node_bits: i64) -> Result<Layout, Error> {
        match u32::try_from(node_bits) {
            Ok(node_bits) if node_bits <= WORKER_BITS => Ok(Layout { node_bits }),
            _ => Err(Error::NodeBitsOutOfRange(node_bits)),
        }
    }

    #[cfg(test)]
    pub fn node_bits(self) -> u32 {
        self.node_bits
    }

    fn slot_bits(self) -> u32 {
        WORKER_BITS - self.node_bits
    }

    pub fn check_node_id(self, node_id: i64) -> Result<(), Error> {
        if (0..1 << self.node_bits).contains(&node_id) {
            Ok(())
        } else {
            Err(Error::NodeIdOutOfRange {
                node_id,
                node_bits: self.node_bits,
            })
        }
    }

    /// Fails unless every one of the server's `slots` backend slots fits the slot bits, so a
    /// misfit shows on the first call of any backend rather than under load.
    pub fn check_slots(self, slots: i64) -> Result<(), Error> {
        if slots <= slot_capacity(self.node_bits) {
            Ok(())
        } else {
            Err(Error::SlotsDoNotFit {
                slots,
                node_bits: self.node_bits,
            })
        }
    }

    /// Callers have checked both parts with `check_node_id` and `check_slots`.
    pub fn worker_id(self, node_id: i64, slot: i64) -> i64 {
        debug_assert!(self.check_node_id(node_id).is_ok());
        debug_assert!((0..slot_capacity(self.node_bits)).contains(&slot));
        node_id << self.slot_bits() | slot
    }

    pub fn decompose(self, id: i64) -> Result<Parts, Error> {
        if id < 0 {
            return Err(Error::NegativeId(id));
        }
        let worker_id = id >> SEQUENCE_BITS & ((1 << WORKER_BITS) - 1);
        Ok(Parts {
            ms: id >> LOW_BITS,
            node_id: worker_id >> self.slot_bits(),
            backend_slot: worker_id & ((1 << self.slot_bits()) - 1),
            worker_id,
            sequence: id & MAX_SEQUENCE as i64,
        })
    }
}

/// The id of `(ms, worker, sequence)`; callers keep each part within its bits.
pub fn compose(ms: i64, worker_id: i64, sequence: u32) -> i64 {
    debug_assert!((0..=MAX_MS).contains(&ms));
    debug_assert!((0..1 << WORKER_BITS).contains(&worker_id));
    debug_assert!(sequence <= MAX_SEQUENCE);
    ms << LOW_BITS | worker_id << SEQUENCE_BITS | sequence as i64
}

/// The smallest id of millisecond `ms` (in range, from `time::snowflake_ms`).
pub fn floor(ms: i64) -> i64 {
    ms << LOW_BITS
}

/// The id of `snowflake_at`: the uid fills the 22 low bits.
pub fn with_uid(ms: i64, uid: i64) -> Result<i64, Error> {
    if !(0..=MAX_UID).contains(&uid) {
        return Err(Error::UidOutOfRange(uid));
    }
    Ok(floor(ms) | uid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    #[test]
    fn default_layout_numbers_256_slots_on_4_nodes() {
        let layout = Layout::new(2).unwrap();
        assert_eq!(slot_capacity(2), 256);
        assert!(layout.check_node_id(3).is_ok());
        assert_eq!(
            layout.check_node_id(4),
            Err(Error::NodeIdOutOfRange {
                node_id: 4,
                node_bits: 2
            })
        );
        assert!(layout.check_node_id(-1).is_err());
        assert!(layout.check_slots(256).is_ok());
        assert_eq!(
            layout.check_slots(257),
            Err(Error::SlotsDoNotFit {
                slots: 257,
                node_bits: 2
            })
        );
    }

    #[test]
    fn the_extremes_of_every_field_compose_and_decompose() {
        let layout = Layout::new(2).unwrap();
        let id = compose(MAX_MS, layout.worker_id(3, 255), MAX_SEQUENCE);
        assert_eq!(id, i64::MAX);
        let parts = layout.decompose(id).unwrap();
        assert_eq!(
            parts,
            Parts {
                ms: MAX_MS,
                node_id: 3,
                backend_slot: 255,
                worker_id: 1023,
                sequence: 4095
            }
        );
        assert_eq!(compose(0, 0, 0), 0);
        assert_eq!(layout.decompose(0).unwrap().ms, 0);
        assert_eq!(layout.decompose(-1), Err(Error::NegativeId(-1)));
        assert_eq!(layout.decompose(i64::MIN), Err(Error::NegativeId(i64::MIN)));
    }

    #[test]
    fn node_bits_zero_and_ten_leave_all_bits_to_one_side() {
        let all_slots = Layout::new(0).unwrap();
        assert_eq!(all_slots.worker_id(0, 1023), 1023);
        assert_eq!(all_slots.decompose(1023 << 12).unwrap().backend_slot, 1023);
        let all_nodes = Layout::new(10).unwrap();
        assert_eq!(all_nodes.worker_id(1023, 0), 1023);
        assert_eq!(all_nodes.decompose(1023 << 12).unwrap().node_id, 1023);
        assert!(all_nodes.check_slots(1).is_ok());
        assert!(all_nodes.check_slots(2).is_err());
    }

    #[test]
    fn node_bits_outside_zero_to_ten_are_refused() {
        for node_bits in [-1, 11, i32::MIN as i64, i32::MAX as i64] {
            assert_eq!(
                Layout::new(node_bits),
                Err(Error::NodeBitsOutOfRange(node_bits))
            );
        }
    }

    #[test]
    fn property_decompose_inverts_compose_for_every_layout() {
        let mut rng = Rng::new(1);
        for _ in 0..100_000 {
            let layout = Layout::new(rng.below(WORKER_BITS as u64 + 1) as i64).unwrap();
            let ms = rng.below(MAX_MS as u64 + 1) as i64;
            let node_id = rng.below(1 << layout.node_bits()) as i64;
            let slot = rng.below(slot_capacity(layout.node_bits()) as u64) as i64;
            let sequence = rng.below(MAX_SEQUENCE as u64 + 1) as u32;
            let id = compose(ms, layout.worker_id(node_id, slot), sequence);
            assert!(id >= 0);
            let parts = layout.decompose(id).unwrap();
            assert_eq!(
                (parts.ms, parts.node_id, parts.backend_slot),
                (ms, node_id, slot)
            );
            assert_eq!(parts.sequence, sequence as i64);
            assert_eq!(parts.worker_id, layout.worker_id(node_id, slot));
        }
    }

    #[test]
    fn property_ids_order_by_time_first_and_floors_bound_their_millisecond() {
        let mut rng = Rng::new(2);
        let layout = Layout::new(2).unwrap();
        for _ in 0..100_000 {
            let ms = rng.below(MAX_MS as u64) as i64;
            let worker = layout.worker_id(rng.below(4) as i64, rng.below(256) as i64);
            let id = compose(ms, worker, rng.below(4096) as u32);
            assert!(floor(ms) <= id && id < floor(ms + 1));
            let later = compose(ms + 1, 0, 0);
            assert!(id < later);
        }
    }

    #[test]
    fn uid_fills_the_22_low_bits_and_nothing_more() {
        assert_eq!(with_uid(5, 0), Ok(5 << 22));
        assert_eq!(with_uid(5, MAX_UID), Ok((6 << 22) - 1));
        assert_eq!(
            with_uid(5, MAX_UID + 1),
            Err(Error::UidOutOfRange(MAX_UID + 1))
        );
        assert_eq!(with_uid(5, -1), Err(Error::UidOutOfRange(-1)));
        assert_eq!(with_uid(MAX_MS, MAX_UID), Ok(i64::MAX));
    }
}

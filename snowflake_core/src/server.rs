//! What a server mints with for its whole life: its layout (from `snowflake.layout`, or
//! `snowflake.node_bits` alone) and epoch, the rules that make the layout from the settings'
//! text, and the checks of a node id and of the server's backend slots against it.

use crate::clock::SystemClock;
use crate::layout::{Field, Layout, LayoutError, NodeBitsFrom, Parts, MAX_SLOT_BITS};
use crate::slot_marks::SlotsFull;
use crate::spec;
use crate::time::Epoch;

/// Two node bits leave 8 for the backend slot: 256 slots, enough for a stock server
/// (max_connections = 100 plus background processes), and 4 nodes.
pub const DEFAULT_NODE_BITS: i64 = 2;

/// The settings fixed for the server's lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed {
    pub layout: Layout,
    pub epoch: Epoch,
    /// Which setting gave the node bits, for messages.
    pub node_bits_from: NodeBitsFrom,
}

impl Fixed {
    /// The wall clock in ticks of the layout since the epoch.
    pub fn clock(&self) -> SystemClock {
        SystemClock {
            epoch_unix_ms: self.epoch.unix_ms(),
            unit: self.layout.unit(),
        }
    }

    pub fn check_node_id(&self, node_id: i64) -> Result<(), LayoutError> {
        if self.layout.fits_node_id(node_id) {
            Ok(())
        } else {
            Err(LayoutError::NodeIdOutOfRange {
                node_id,
                node_bits: self.layout.bits(Field::Node),
                from: self.node_bits_from,
            })
        }
    }

    /// The error of a full slot table, `held` slots held.
    pub fn slots_full(&self, held: i64) -> SlotsFull {
        SlotsFull {
            slots: self.layout.slot_count(),
            held,
            node_bits: self.layout.bits(Field::Node),
            slot_bits: self.layout.bits(Field::Slot),
            from: self.node_bits_from,
        }
    }

    /// Without preload, where a backend's slot is its process number: fails unless every
    /// one of the server's `slots` process numbers fits the slot bits, so a misfit shows on
    /// the first call of any backend rather than under load.
    pub fn check_slots(&self, slots: i64) -> Result<(), LayoutError> {
        if slots <= self.layout.slot_count() {
            Ok(())
        } else {
            Err(LayoutError::SlotsDoNotFit {
                slots,
                node_bits: self.layout.bits(Field::Node),
                slot_bits: self.layout.bits(Field::Slot),
                from: self.node_bits_from,
            })
        }
    }
}

/// The parts of an id of a server whose layout is `layout`: on a server upgraded from
/// 0.3.0, the ids of ticks before `reordered_tick` (`time::reordered_tick`) were minted in
/// the worker-first order of the same fields. Both orders share the time field, so the
/// tick tells which order an id has.
pub fn parts_of(
    layout: &Layout,
    reordered_tick: Option<i64>,
    id: i64,
) -> Result<Parts, LayoutError> {
    let parts = layout.decompose(id)?;
    match reordered_tick {
        Some(tick) if parts.ticks < tick => layout.worker_first().decompose(id),
        _ => Ok(parts),
    }
}

/// The server's layout from the text of `snowflake.layout` and, when the configuration
/// gives it, `snowflake.node_bits`. An empty layout is the default one with those node bits
/// (or the default's two); any other must be a layout with no epoch of its own, at most
/// `MAX_SLOT_BITS` slot bits (one slot mark each) and, when node bits are given too, as
/// many node bits.
pub fn server_layout(
    text: &str,
    node_bits: Option<i64>,
) -> Result<(Layout, NodeBitsFrom), LayoutError> {
    if text.trim().is_empty() {
        let layout = Layout::from_node_bits(node_bits.unwrap_or(DEFAULT_NODE_BITS))?;
        return Ok((layout, NodeBitsFrom::NodeBits));
    }
    let spec = spec::parse(text)?;
    let refuse = |reason: &str| {
        Err(LayoutError::InvalidLayout {
            value: text.into(),
            reason: reason.into(),
        })
    };
    if spec.epoch.is_some() {
        return refuse("the server's ids count from snowflake.epoch; leave the epoch out");
    }
    if spec.layout.bits(Field::Slot) > MAX_SLOT_BITS {
        return refuse("a server's layout has at most 12 slot bits (4096 backend slots)");
    }
    let layout_node_bits = spec.layout.bits(Field::Node);
    match node_bits {
        Some(node_bits) if node_bits != i64::from(layout_node_bits) => {
            Err(LayoutError::LayoutDisagreesWithNodeBits {
                layout: text.into(),
                layout_node_bits,
                node_bits,
            })
        }
        _ => Ok((spec.layout, NodeBitsFrom::Layout)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Reported;

    fn fixed(text: &str, node_bits: Option<i64>) -> Fixed {
        let (layout, node_bits_from) = server_layout(text, node_bits).unwrap();
        Fixed {
            layout,
            epoch: Epoch::parse("2020-01-01", i64::MAX).unwrap(),
            node_bits_from,
        }
    }

    fn reason(text: &str) -> String {
        match server_layout(text, None) {
            Err(LayoutError::InvalidLayout { reason, .. }) => reason,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn an_empty_layout_is_the_default_with_the_node_bits_given() {
        let (layout, from) = server_layout(" ", None).unwrap();
        assert_eq!(layout.to_string(), "time:41, sequence:12, node:2, slot:8");
        assert_eq!(from, NodeBitsFrom::NodeBits);
        let (layout, _) = server_layout("", Some(5)).unwrap();
        assert_eq!(layout.to_string(), "time:41, sequence:12, node:5, slot:5");
        assert_eq!(
            server_layout("", Some(11)),
            Err(LayoutError::NodeBitsOutOfRange(11))
        );
    }

    #[test]
    fn a_server_layout_has_no_epoch_and_at_most_12_slot_bits() {
        assert!(reason("twitter").contains("leave the epoch out"));
        assert!(reason("time:41, slot:13, sequence:9").contains("at most 12 slot bits"));
        let (layout, from) = server_layout("js53", None).unwrap();
        assert_eq!(from, NodeBitsFrom::Layout);
        assert_eq!(layout, spec::parse("js53").unwrap().layout);
    }

    #[test]
    fn node_bits_given_beside_a_layout_must_agree_with_it() {
        assert!(server_layout("time:41, node:4, slot:6, sequence:12", Some(4)).is_ok());
        assert_eq!(
            server_layout("time:41, node:4, slot:6, sequence:12", Some(2)),
            Err(LayoutError::LayoutDisagreesWithNodeBits {
                layout: "time:41, node:4, slot:6, sequence:12".into(),
                layout_node_bits: 4,
                node_bits: 2,
            })
        );
    }

    #[test]
    fn equal_layouts_compare_equal_whichever_setting_gave_them() {
        let from_node_bits = fixed("", Some(2)).layout;
        let from_text = fixed("time:41, sequence:12, node:2, slot:8", None).layout;
        assert_eq!(from_node_bits, from_text);
    }

    #[test]
    fn node_ids_and_slots_are_checked_naming_the_setting_that_gave_the_bits() {
        let by_node_bits = fixed("", None);
        assert!(by_node_bits.check_node_id(3).is_ok());
        assert!(by_node_bits.check_node_id(-1).is_err());
        let error = by_node_bits.check_node_id(4).unwrap_err();
        assert_eq!(
            error.report().message,
            "snowflake.node_id = 4 does not fit in snowflake.node_bits = 2"
        );
        assert!(by_node_bits.check_slots(256).is_ok());
        assert_eq!(
            by_node_bits.check_slots(257).unwrap_err().report().message,
            "this server has 257 backend slots, more than the 256 that snowflake.node_bits = 2 leaves room for"
        );
        let by_layout = fixed("time:41, node:4, slot:6, sequence:12", None);
        assert_eq!(
            by_layout.check_node_id(16).unwrap_err().report().message,
            "snowflake.node_id = 16 does not fit in the 4 node bits of snowflake.layout"
        );
        assert_eq!(
            by_layout.check_slots(65).unwrap_err().report().message,
            "this server has 65 backend slots, more than the 64 that the 6 slot bits of snowflake.layout number"
        );
    }

    #[test]
    fn ids_before_the_reordering_parse_in_the_worker_first_order() {
        let layout = fixed("", None).layout;
        let parts = |ticks, sequence| Parts {
            ticks,
            node_id: 1,
            backend_slot: 17,
            worker_id: 1 << 8 | 17,
            sequence,
            gene: 0,
        };
        let old_id = layout.worker_first().compose(&parts(99, 5)).unwrap();
        let new_id = layout.compose(&parts(100, 5)).unwrap();
        assert!(old_id < new_id);
        assert_eq!(parts_of(&layout, Some(100), old_id), Ok(parts(99, 5)));
        assert_eq!(parts_of(&layout, Some(100), new_id), Ok(parts(100, 5)));
        assert_eq!(parts_of(&layout, None, new_id), Ok(parts(100, 5)));
        // Without the setting, an old id keeps its time but not its other parts.
        let misread = parts_of(&layout, None, old_id).unwrap();
        assert_eq!(misread.ticks, 99);
        assert_ne!(misread, parts(99, 5));
        assert!(parts_of(&layout, Some(100), -1).is_err());
    }

    #[test]
    fn the_clock_maps_ms_to_ticks_and_back_to_the_last_ms_of_a_tick() {
        let ten_ms = fixed("time:37/10ms, node:2, slot:8, sequence:16", None).clock();
        let epoch_ms = ten_ms.epoch_unix_ms;
        assert_eq!(ten_ms.tick_of_unix_ms(epoch_ms + 25), 2);
        assert_eq!(ten_ms.unix_ms_of_tick_end(2), epoch_ms + 29);
        assert_eq!(ten_ms.tick_of_unix_ms(epoch_ms - 1), -1);
    }
}

//! Minting slots and their hand-over. An id's slot bits tell apart the backends of a
//! server minting at once. With preload the extension keeps this table in shared memory
//! and a backend takes a free slot at its first id and gives it back at exit, so the
//! layout needs as many slots as backends mint at once, not one per process the server
//! could have. Each slot's mark is the last tick its last holder used, so the next
//! holder starts after it even if the wall clock stepped back in between, and an exiting
//! backend need not wait for the clock to pass its last id. Every mark starts where the
//! server life starts (after every id of the previous life).
//!
//! Taken once per backend and given back once at its exit: never on the hot path, and no
//! lock (one atomic per slot).

use crate::layout::{NodeBitsFrom, MAX_SLOT_BITS};
use crate::report::{Report, Reported, SqlState};
use std::sync::atomic::{AtomicI64, Ordering};

/// What a slot's mark holds while a backend holding the slot mints: not yet recorded.
const CLAIMED: i64 = i64::MAX;

/// Every minting slot is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotsFull {
    pub slots: i64,
    pub held: i64,
    pub node_bits: u32,
    pub slot_bits: u32,
    pub from: NodeBitsFrom,
}

impl Reported for SlotsFull {
    fn report(&self) -> Report {
        let SlotsFull {
            slots,
            held,
            node_bits,
            slot_bits,
            from,
        } = self;
        let (of_what, more_slots) = match from {
            NodeBitsFrom::NodeBits => (
                format!("that snowflake.node_bits = {node_bits} leaves room for"),
                "lower snowflake.node_bits (needs a restart) for more slots",
            ),
            NodeBitsFrom::Layout => (
                format!("of the {slot_bits} slot bits of snowflake.layout"),
                "give snowflake.layout more slot bits (needs a restart)",
            ),
        };
        Report::new(
            SqlState::TooManyConnections,
            format!("no minting slot is free: all {slots} slots {of_what} are held"),
        )
        .detail(format!(
            "A backend holds a minting slot from its first id until it exits; {held} of {slots} are held now."
        ))
        .hint(format!(
            "Mint from fewer backends at once (through a pooler, or by closing idle sessions that minted), or {more_slots}."
        ))
    }
}

/// One mark per slot a server's layout can number, in ticks since the snowflake epoch,
/// and how many are held.
pub struct SlotMarks {
    marks: [AtomicI64; 1 << MAX_SLOT_BITS],
    held: AtomicI64,
    most_held: AtomicI64,
}

impl SlotMarks {
    pub fn starting_at(start: i64) -> SlotMarks {
        SlotMarks {
            marks: std::array::from_fn(|_| AtomicI64::new(start)),
            held: AtomicI64::new(0),
            most_held: AtomicI64::new(0),
        }
    }

    /// Takes a free slot among the first `slots` (at most `1 << MAX_SLOT_BITS`), looking
    /// first at `hint` (the process number, so a process keeps its number when it can),
    /// and gives it with the last tick of its earlier holders; `None` when all are held.
    pub fn take(&self, slots: i64, hint: i64) -> Option<(i64, i64)> {
        let slots = slots.clamp(1, 1 << MAX_SLOT_BITS);
        (0..slots).find_map(|i| {
            let slot = (hint.rem_euclid(slots) + i) % slots;
            let mark = &self.marks[slot as usize];
            let last = mark.load(Ordering::Acquire);
            if last == CLAIMED {
                return None;
            }
            mark.compare_exchange(last, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
                .ok()?;
            let held = self.held.fetch_add(1, Ordering::Relaxed) + 1;
            self.most_held.fetch_max(held, Ordering::Relaxed);
            Some((slot, last))
        })
    }

    /// Gives the slot back with the last tick this holder used. The holder started after
    /// the mark it took, so its last tick is at least that.
    pub fn give_back(&self, slot: i64, last: i64) {
        self.marks[slot as usize].store(last, Ordering::Release);
        self.held.fetch_sub(1, Ordering::Relaxed);
    }

    /// Raises the mark of every slot no backend holds to `floor` at least: the next holder
    /// of any slot starts after it. Runs during recovery, where no backend mints.
    pub fn raise_to(&self, floor: i64) {
        for mark in &self.marks {
            let _ = mark.fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| {
                (last != CLAIMED && last < floor).then_some(floor)
            });
        }
    }

    /// How many slots live backends hold.
    pub fn held(&self) -> i64 {
        self.held.load(Ordering::Relaxed)
    }

    /// The most slots held at once since the table was made.
    pub fn most_held(&self) -> i64 {
        self.most_held.load(Ordering::Relaxed)
    }

    /// The latest tick of every slot, unless some slot is still held: by a backend killed
    /// before it could give it back, or one still running.
    pub fn last_if_all_recorded(&self) -> Option<i64> {
        let mut marks = self.marks.iter().map(|mark| mark.load(Ordering::Acquire));
        marks.try_fold(i64::MIN, |latest, mark| {
            (mark != CLAIMED).then_some(latest.max(mark))
        })
    }
}

/// Where a new generator starts, and how many ticks its backend first sleeps: after the
/// clock's tick `now` and after the slot's mark, if kept. After a crash restart the marks
/// start at the last reservation, which can lie a little past the lead bound, and after a
/// promotion a margin further: a start up to `reserve_ticks` past it is waited out rather
/// than refused. Further ahead, the clock was set back, and the first call says so.
pub fn start_of(now: i64, mark: Option<i64>, lead_ticks: i64, reserve_ticks: i64) -> (i64, i64) {
    let start = mark.map_or(now, |mark| mark.max(now));
    let past_lead = start - now - lead_ticks;
    let wait = if past_lead > 0 && past_lead <= reserve_ticks {
        past_lead
    } else {
        0
    };
    (start, wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_taken_from_its_last_holder_and_given_back_at_exit() {
        let marks = SlotMarks::starting_at(1_000);
        assert_eq!(marks.take(256, 7), Some((7, 1_000)));
        assert_eq!(marks.held(), 1);
        assert_eq!(marks.last_if_all_recorded(), None, "slot 7 is held");
        marks.give_back(7, 1_500);
        assert_eq!(marks.held(), 0);
        assert_eq!(marks.take(256, 7), Some((7, 1_500)));
        marks.give_back(7, 1_600);
        assert_eq!(marks.last_if_all_recorded(), Some(1_600));
        assert_eq!(marks.most_held(), 1);
    }

    #[test]
    fn raising_the_marks_moves_every_free_slot_and_never_frees_a_held_one() {
        let marks = SlotMarks::starting_at(1_000);
        assert_eq!(marks.take(4, 1), Some((1, 1_000)));
        marks.raise_to(5_000);
        marks.raise_to(3_000);
        assert_eq!(marks.take(4, 1), Some((2, 5_000)), "slot 1 still held");
        assert_eq!(marks.take(4, 0), Some((0, 5_000)));
        marks.give_back(2, 5_100);
        assert_eq!(marks.take(4, 2), Some((2, 5_100)));
    }

    #[test]
    fn a_process_number_past_the_slots_takes_the_next_free_one() {
        let marks = SlotMarks::starting_at(0);
        assert_eq!(marks.take(4, 402), Some((2, 0)));
        assert_eq!(marks.take(4, 402), Some((3, 0)));
        assert_eq!(marks.take(4, 402), Some((0, 0)));
        assert_eq!(marks.take(4, 6), Some((1, 0)));
        assert_eq!(marks.take(4, 6), None, "all four held");
        assert_eq!((marks.held(), marks.most_held()), (4, 4));
        marks.give_back(3, 42);
        assert_eq!(
            marks.take(4, 0),
            Some((3, 42)),
            "the one given back, with its mark"
        );
        for slot in 0..4 {
            marks.give_back(slot, 50);
        }
        assert_eq!((marks.held(), marks.most_held()), (0, 4));
    }

    #[test]
    fn a_layout_without_slot_bits_has_one_slot() {
        let marks = SlotMarks::starting_at(9);
        assert_eq!(marks.take(1, 300), Some((0, 9)));
        assert_eq!(marks.take(1, 301), None);
    }

    #[test]
    fn concurrent_takers_never_share_a_slot() {
        let marks = SlotMarks::starting_at(0);
        let taken: Vec<i64> = std::thread::scope(|scope| {
            let takers: Vec<_> = (0..8)
                .map(|thread| {
                    let marks = &marks;
                    scope.spawn(move || {
                        (0..40)
                            .filter_map(|i| marks.take(256, thread * 40 + i))
                            .map(|(slot, _)| slot)
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            takers.into_iter().flat_map(|t| t.join().unwrap()).collect()
        });
        let mut distinct = taken.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(taken.len(), 256, "320 attempts on 256 slots");
        assert_eq!(distinct.len(), 256, "no slot taken twice");
        assert_eq!(marks.held(), 256);
    }

    #[test]
    fn the_full_table_says_how_many_slots_there_are_and_how_to_get_more() {
        let full = SlotsFull {
            slots: 256,
            held: 256,
            node_bits: 2,
            slot_bits: 8,
            from: NodeBitsFrom::NodeBits,
        };
        let report = full.report();
        assert_eq!(report.sqlstate, SqlState::TooManyConnections);
        assert_eq!(
            report.message,
            "no minting slot is free: all 256 slots that snowflake.node_bits = 2 leaves room for are held"
        );
        assert!(report.detail.unwrap().contains("256 of 256 are held now"));
        assert!(report.hint.unwrap().contains("lower snowflake.node_bits"));
    }

    #[test]
    fn a_new_holder_starts_after_the_clock_and_after_the_mark() {
        assert_eq!(start_of(2_000, None, 1_000, 1_000), (2_000, 0));
        assert_eq!(start_of(2_000, Some(1_500), 1_000, 1_000), (2_000, 0));
        // The last holder ran ahead within the lead bound: no wait, the generator borrows.
        assert_eq!(start_of(2_000, Some(2_800), 1_000, 1_000), (2_800, 0));
        // After a crash, the marks start at the reservation: past the lead, waited out.
        assert_eq!(start_of(2_000, Some(3_700), 1_000, 1_000), (3_700, 700));
        // Further ahead the clock stepped back: no wait, the first call refuses.
        assert_eq!(start_of(2_000, Some(9_000), 1_000, 1_000), (9_000, 0));
    }
}

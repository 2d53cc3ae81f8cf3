//! The hand-over of backend slots: the last tick each slot used, so that the slot's next
//! holder starts after it even if the wall clock stepped back in between, and an exiting
//! backend need not wait for the clock to pass its last id. The extension keeps the marks
//! in shared memory with preload; every mark starts where the server life starts (after
//! every id of the previous life).
//!
//! Read once when a backend makes its generator and written once at its exit: never on
//! the hot path, and no lock (one atomic per slot).

use crate::layout::MAX_SLOT_BITS;
use std::sync::atomic::{AtomicI64, Ordering};

/// What a slot's mark holds while a backend holding the slot mints: not yet recorded.
const CLAIMED: i64 = i64::MAX;

/// One mark per slot a server's layout can number, in ticks since the snowflake epoch.
pub struct SlotMarks([AtomicI64; 1 << MAX_SLOT_BITS]);

impl SlotMarks {
    pub fn starting_at(start: i64) -> SlotMarks {
        SlotMarks(std::array::from_fn(|_| AtomicI64::new(start)))
    }

    /// Claims the slot's mark for a backend and gives the last tick of its earlier
    /// holders. The slot was checked to fit the layout's slot bits, at most `MAX_SLOT_BITS`.
    pub fn claim(&self, slot: i64) -> i64 {
        self.0[slot as usize].swap(CLAIMED, Ordering::AcqRel)
    }

    /// Records the last tick this holder of the slot used, before it gives the slot back.
    /// The holder started after the mark it claimed, so its last tick is at least that.
    pub fn record(&self, slot: i64, last: i64) {
        self.0[slot as usize].store(last, Ordering::Release);
    }

    /// How many slots a live backend holds for its generator.
    pub fn held(&self) -> usize {
        self.0
            .iter()
            .filter(|mark| mark.load(Ordering::Relaxed) == CLAIMED)
            .count()
    }

    /// The latest tick of every slot, unless some slot is still claimed: by a backend
    /// killed before it could record its last tick, or one still running.
    pub fn last_if_all_recorded(&self) -> Option<i64> {
        let mut marks = self.0.iter().map(|mark| mark.load(Ordering::Acquire));
        marks.try_fold(i64::MIN, |latest, mark| {
            (mark != CLAIMED).then_some(latest.max(mark))
        })
    }
}

/// Where a new generator starts, and how many ticks its backend first sleeps: after the
/// clock's tick `now` and after the slot's mark, if kept. After a crash restart the marks
/// start at the last reservation, which can lie a little past the lead bound: a start up
/// to `reserve_ticks` past it is waited out rather than refused. Further ahead, the clock
/// was set back, and the first call says so.
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
    fn a_slot_is_claimed_from_its_last_holder_and_recorded_at_exit() {
        let marks = SlotMarks::starting_at(1_000);
        assert_eq!(marks.claim(7), 1_000);
        assert_eq!(marks.held(), 1);
        assert_eq!(marks.last_if_all_recorded(), None, "slot 7 is held");
        marks.record(7, 1_500);
        assert_eq!(marks.held(), 0);
        assert_eq!(marks.claim(7), 1_500);
        marks.record(7, 1_600);
        assert_eq!(marks.last_if_all_recorded(), Some(1_600));
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

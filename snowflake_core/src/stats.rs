//! What a generator met besides the plain path: clock steps back it absorbed or refused,
//! waits for a spent tick, and how far ahead of the clock it ran. Kept per backend slot,
//! in shared memory with preload (summed by `snowflake_status`), and touched only on those
//! rare paths, never on the plain one.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Stats {
    steps_back_absorbed: AtomicU64,
    steps_back_refused: AtomicU64,
    spent_tick_waits: AtomicU64,
    furthest_lead_ticks: AtomicI64,
}

/// Counters that nothing reads, for generators whose counts are not kept.
pub static UNKEPT: Stats = Stats::new();

impl Stats {
    pub const fn new() -> Stats {
        Stats {
            steps_back_absorbed: AtomicU64::new(0),
            steps_back_refused: AtomicU64::new(0),
            spent_tick_waits: AtomicU64::new(0),
            furthest_lead_ticks: AtomicI64::new(0),
        }
    }

    pub fn step_back_absorbed(&self) {
        self.steps_back_absorbed.fetch_add(1, Ordering::Relaxed);
    }

    pub fn step_back_refused(&self) {
        self.steps_back_refused.fetch_add(1, Ordering::Relaxed);
    }

    pub fn spent_tick_waited(&self) {
        self.spent_tick_waits.fetch_add(1, Ordering::Relaxed);
    }

    pub fn ran_ahead(&self, ticks: i64) {
        self.furthest_lead_ticks.fetch_max(ticks, Ordering::Relaxed);
    }

    /// A snapshot, for reports.
    pub fn read(&self) -> Totals {
        Totals {
            steps_back_absorbed: self.steps_back_absorbed.load(Ordering::Relaxed),
            steps_back_refused: self.steps_back_refused.load(Ordering::Relaxed),
            spent_tick_waits: self.spent_tick_waits.load(Ordering::Relaxed),
            furthest_lead_ticks: self.furthest_lead_ticks.load(Ordering::Relaxed),
        }
    }
}

/// Counts read from one or more `Stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub steps_back_absorbed: u64,
    pub steps_back_refused: u64,
    pub spent_tick_waits: u64,
    pub furthest_lead_ticks: i64,
}

impl Totals {
    /// The totals of both: counts added, the furthest lead the larger.
    pub fn plus(self, other: Totals) -> Totals {
        Totals {
            steps_back_absorbed: self.steps_back_absorbed + other.steps_back_absorbed,
            steps_back_refused: self.steps_back_refused + other.steps_back_refused,
            spent_tick_waits: self.spent_tick_waits + other.spent_tick_waits,
            furthest_lead_ticks: self.furthest_lead_ticks.max(other.furthest_lead_ticks),
        }
    }
}

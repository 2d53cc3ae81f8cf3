//! A clock for the tests: it moves only when told to, or when slept on.

use crate::generator::{Clock, Reading};
use crate::layout::Unit;
use std::cell::Cell;

pub struct FakeClock {
    now: Cell<i64>,
    /// Nanoseconds into the tick; a sleep starts the tick over.
    nanos: Cell<u32>,
    pub slept: Cell<i64>,
    unit: Unit,
}

impl FakeClock {
    pub fn at(ms: i64) -> FakeClock {
        FakeClock::ticking(ms, Unit::Ms)
    }
    pub fn ticking(now: i64, unit: Unit) -> FakeClock {
        FakeClock {
            now: Cell::new(now),
            nanos: Cell::new(0),
            slept: Cell::new(0),
            unit,
        }
    }
    pub fn set(&self, ms: i64) {
        self.now.set(ms);
    }
    pub fn advance(&self, ms: i64) {
        self.now.set(self.now.get() + ms);
    }
    pub fn set_nanos(&self, nanos: u32) {
        self.nanos.set(nanos);
    }
}

impl Clock for FakeClock {
    fn read(&self) -> Reading {
        Reading {
            tick: self.now.get(),
            nanos: self.nanos.get(),
        }
    }
    fn sleep(&self, ticks: i64) {
        assert!(ticks > 0, "sleeps must make progress");
        self.slept.set(self.slept.get() + ticks);
        self.advance(ticks);
        self.nanos.set(0);
    }
    fn unit(&self) -> Unit {
        self.unit
    }
}

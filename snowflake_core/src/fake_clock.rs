//! A clock for the tests: it moves only when told to, or when slept on.

use crate::generator::Clock;
use crate::layout::Unit;
use std::cell::Cell;

pub struct FakeClock {
    now: Cell<i64>,
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
}

impl Clock for FakeClock {
    fn now(&self) -> i64 {
        self.now.get()
    }
    fn sleep(&self, ticks: i64) {
        assert!(ticks > 0, "sleeps must make progress");
        self.slept.set(self.slept.get() + ticks);
        self.advance(ticks);
    }
    fn unit(&self) -> Unit {
        self.unit
    }
}

//! snowflake_core: the id logic of snowflake_pg, free of PostgreSQL, tested with a fake
//! clock and a seeded random generator (`cargo test -p snowflake_core`).
//!
//! - `layout` (the bits of an id, and their errors) and `spec` (layouts from text, and the
//!   presets); `server` (the layout and epoch a server mints with, from its settings);
//! - `time` (the epoch, and timestamps in and out of ids); `clock` (the system clock in
//!   ticks);
//! - `epoch_end` (when the time field runs out, and the warning years before);
//! - `generator` (one backend's state machine) and `stats` (what it met besides the plain
//!   path);
//! - `slot_marks` (the hand-over of backend slots), `reservation` (the high-water mark's
//!   renewal), `mark_file` (the mark on disk) and `wal_record` (the mark in WAL);
//! - `claim` (what the rows of `snowflake_nodes` mean for a server);
//! - `text_form` (ids as fixed-width text);
//! - `report` (what an error tells the user: each module's error enum gives its SQLSTATE,
//!   message, detail and hint from one `match`).
//!
//! The extension crate (the repository's root) is the PostgreSQL glue; its `lib.rs` maps it.

pub mod claim;
pub mod clock;
pub mod epoch_end;
pub mod generator;
pub mod layout;
pub mod mark_file;
pub mod report;
pub mod reservation;
pub mod server;
pub mod slot_marks;
pub mod spec;
pub mod stats;
pub mod text_form;
pub mod time;
pub mod wal_record;

#[cfg(test)]
mod fake_clock;
#[cfg(test)]
mod test_rng;

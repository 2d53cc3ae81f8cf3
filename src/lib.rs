//! snowflake_pg: 64-bit, time-ordered ids minted inside PostgreSQL, unique across every
//! backend of a server and across the servers of a cluster, with no lock on the hot path.
//!
//! Pure logic, testable without a server: `layout` (the bits), `spec` (layouts from
//! text, and the presets), `time` (epoch and
//! timestamps), `generator` (the per-backend state machine), `error`, `mark_file` (the
//! high-water mark on disk), `text_form` (ids as fixed-width text). PostgreSQL glue:
//! `clock`, `raise` (errors into PostgreSQL), `settings`, `backend` (the generator of this
//! process), `node` (the node id), `claims` (`snowflake_nodes`), `trusted_sql` (the
//! library's own SQL under a fixed search_path, and as the extension's owner), `slot_marks`
//! and `hwm` (shared memory, with preload), `status` and `stats` (the status view and its
//! counters) and `sql` (the functions).

mod backend;
mod claims;
mod clock;
mod error;
mod generator;
mod hwm;
mod layout;
mod mark_file;
mod node;
mod raise;
mod settings;
mod slot_marks;
mod spec;
mod sql;
mod stats;
mod status;
#[cfg(test)]
mod test_rng;
mod text_form;
mod time;
mod trusted_sql;

#[cfg(any(test, feature = "pg_test"))]
mod pg_tests;

::pgrx::pg_module_magic!(name, version);

pgrx::extension_sql_file!("../sql/comments.sql", finalize);
pgrx::extension_sql_file!("../sql/convert.sql", name = "convert");
pgrx::extension_sql_file!("../sql/partitions.sql", name = "partitions");

#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    settings::register();
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries.
    if unsafe { pgrx::pg_sys::process_shared_preload_libraries_in_progress } {
        hwm::request();
        slot_marks::request(hwm::life_start);
        claims::request();
        status::request();
    }
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}

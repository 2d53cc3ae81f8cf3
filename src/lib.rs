//! snowflake_pg: 64-bit, time-ordered ids minted inside PostgreSQL, unique across every
//! backend of a server and across the servers of a cluster, with no lock on the hot path.
//!
//! The map of both crates. The id logic is the crate `snowflake_core` (in the directory of
//! that name), which knows nothing of PostgreSQL and is tested with a fake clock
//! (`cargo test -p snowflake_core`): `layout` and `spec` (the bits of an id, layouts from
//! text), `server` (the layout and epoch a server mints with, from its settings), `time`
//! and `clock` (epochs, timestamps, the system clock in ticks), `generator` and `stats`
//! (one backend's state machine and what it met), `slot_marks`, `reservation` and
//! `mark_file` (the hand-over of backend slots and the high-water mark), `claim` (what the
//! rows of `snowflake_nodes` mean), `text_form` (ids as text) and `report` (each error's
//! SQLSTATE and text, from one `match` in the error's own module).
//!
//! This crate is the PostgreSQL glue:
//! - `sql` (the SQL functions), `status` (the `snowflake_status` view) and `operations`
//!   (the warning that the epoch ends, the figures of the mark's renewals);
//! - `settings` (the `snowflake.*` settings), `backend` (this process's generator, its slot
//!   and its node id), `node` (the node id from a setting or Citus), `claims` (the
//!   `snowflake_nodes` registry);
//! - `shmem` (the one shared-memory segment, with preload), `hwm` (the high-water mark's
//!   file and renewal) and `wal` (the mark in WAL, for standbys and promotion);
//! - `trusted_sql` (the library's own SQL under a fixed search_path, and as the extension's
//!   owner), `error` (any module's error, boxed, for `?`) and `raise` (errors into
//!   PostgreSQL).
//!
//! Hand-written SQL lives in `sql/src/`, loaded below; only `#[pg_extern]` functions are
//! declared in Rust. (`sql/` holds the upgrade scripts, where pgrx installs them from, and
//! `sql/releases/` the frozen install scripts of earlier releases.)

mod backend;
mod claims;
mod error;
mod hwm;
mod node;
mod operations;
mod raise;
mod settings;
mod shmem;
mod sql;
mod status;
mod trusted_sql;
mod wal;

#[cfg(any(test, feature = "pg_test"))]
mod pg_tests;

::pgrx::pg_module_magic!(name, version);

pgrx::extension_sql_file!("../sql/src/parts.sql", name = "snowflake_parts", bootstrap);
pgrx::extension_sql_file!("../sql/src/next.sql", name = "snowflake_next");
pgrx::extension_sql_file!("../sql/src/nodes.sql", name = "snowflake_nodes");
pgrx::extension_sql_file!(
    "../sql/src/status.sql",
    name = "snowflake_status",
    requires = ["snowflake_nodes", status::snowflake_server_status]
);
pgrx::extension_sql_file!("../sql/src/convert.sql", name = "convert");
pgrx::extension_sql_file!("../sql/src/partitions.sql", name = "partitions");
pgrx::extension_sql_file!("../sql/src/comments.sql", finalize);

#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    settings::register();
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries.
    if unsafe { pgrx::pg_sys::process_shared_preload_libraries_in_progress } {
        shmem::request(shmem::Origins {
            life_start: hwm::life_start,
            epoch_warned_on: operations::warned_at_start,
        });
        wal::register();
        hwm::record_at_clean_stop();
        // Start, for a preloaded server: once, in the postmaster, into the server log.
        operations::warn_at_start();
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

//! Node claims: the table `snowflake_nodes` says which server mints with which node id,
//! so two servers given the same node id (or another layout or epoch) are refused instead
//! of minting duplicates. A backend claims its node id when it settles it (its first call,
//! and after the node id changes), never on the hot path. With preload, a claim seen
//! committed is remembered in shared memory for the server's life, so later backends skip
//! the table.
//!
//! The table is per database; what makes the check span servers is the table reaching
//! them: a Citus reference table, a table published both ways by logical replication, or
//! a foreign table on one registry server (docs/scale-out.md).

use crate::error::Error;
use crate::shmem;
use crate::trusted_sql::{self, CatalogRead};
use pgrx::pg_sys;
use pgrx::prelude::*;
use snowflake_core::claim::{self, Claim, Key, OwnServer, Standing};
use snowflake_core::server::Fixed;
use snowflake_core::time::format_unix_ms;

/// What claiming found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claimed {
    /// The node id is this server's: committed, unless this transaction wrote it earlier.
    Found(Key),
    /// Remembered as this server's for the server life.
    Remembered,
    /// This call wrote the claim: it holds only if the transaction commits.
    Written(Key),
    /// No claim could be made in this transaction (read-only, or a parallel plan, which
    /// checks nothing either): claim it in a later one.
    NotYet,
    /// The database's snowflake_pg predates claims (until `ALTER EXTENSION ... UPDATE`).
    NoRegistry,
}

/// Claims `node_id` for this server in this database's `snowflake_nodes`, or says which
/// server holds it or mints differently. Runs SQL: call only where an ERROR may be raised.
pub fn claim(node_id: i64, fixed: &Fixed) -> Result<Claimed, Error> {
    // A parallel plan's leader and workers may not start commands, which the claims
    // function does: the node id is claimed and checked in a later transaction.
    // SAFETY: a plain read of process state.
    if unsafe { pg_sys::IsInParallelMode() } {
        return Ok(Claimed::NotYet);
    }
    let Some(Registry {
        schema,
        function: registry,
        owner,
    }) = find_registry()?
    else {
        return Ok(Claimed::NoRegistry);
    };
    let key = Key {
        // SAFETY: set when the backend connects, read-only afterwards.
        database: unsafe { pg_sys::MyDatabaseId }.to_u32(),
        registry,
        node_id,
    };
    if is_remembered(key) {
        return Ok(Claimed::Remembered);
    }
    // SAFETY: a plain read of process state.
    let may_write = unsafe { !pg_sys::XactReadOnly };
    // SAFETY: reads the control file's copy in shared memory.
    let own_system_identifier = unsafe { pg_sys::GetSystemIdentifier() } as i64;
    let own_layout = fixed.layout.to_string();
    let own_epoch = format_unix_ms(fixed.epoch.unix_ms());
    // The extension's own function, in its schema, with the exact types of its arguments:
    // no other function can be chosen, whoever may create functions in that schema.
    let query = format!("SELECT * FROM {schema}.snowflake_claim_node($1, $2, $3, $4, $5)");
    let rows = trusted_sql::as_owner(owner, || {
        Spi::connect(|client| {
            let args = [
                (node_id as i32).into(),
                own_system_identifier.into(),
                own_layout.as_str().into(),
                own_epoch.as_str().into(),
                may_write.into(),
            ];
            let table = client.select(query.as_str(), None, &args)?;
            table
                .map(|row| {
                    let claim = Claim {
                        node_id: row.get::<i32>(1)?.unwrap_or_default().into(),
                        system_identifier: row.get::<i64>(2)?.unwrap_or_default(),
                        server: row.get::<String>(3)?.unwrap_or_default(),
                        layout: row.get::<String>(4)?.unwrap_or_default(),
                        epoch: row.get::<String>(5)?.unwrap_or_default(),
                        claimed_at: row.get::<String>(6)?.unwrap_or_default(),
                    };
                    Ok((claim, row.get::<bool>(7)?.unwrap_or_default()))
                })
                .collect::<Result<Vec<_>, pgrx::spi::Error>>()
        })
    })
    .map_err(|error| CatalogRead {
        what: "snowflake_nodes",
        reason: error.to_string(),
    })?;

    let own = OwnServer {
        system_identifier: own_system_identifier,
        layout: own_layout,
        epoch: own_epoch,
    };
    Ok(match claim::classify(rows, node_id, own)? {
        Standing::Unclaimed => Claimed::NotYet,
        Standing::Written => Claimed::Written(key),
        Standing::Found => Claimed::Found(key),
    })
}

/// Remembers a claim now committed, for the rest of the server life (with preload).
pub fn remember(key: Key) {
    if let Some(claims) = shmem::claims() {
        claims.exclusive().0.remember(key);
    }
}

fn is_remembered(key: Key) -> bool {
    shmem::claims().is_some_and(|claims| claims.share().0.contains(key))
}

/// Where this database's snowflake_pg keeps its claims.
struct Registry {
    /// The extension's schema, quoted for SQL.
    schema: String,
    /// The claims function, which a remembered claim names.
    function: u32,
    /// The extension's owner, who may write the claims.
    owner: pg_sys::Oid,
}

/// This database's claims function, found by its membership in the extension (not by
/// name), with every name and operator of the lookup qualified; none when the extension
/// predates claims (before `ALTER EXTENSION snowflake_pg UPDATE`).
fn find_registry() -> Result<Option<Registry>, CatalogRead> {
    const FIND: &str = "
        SELECT pg_catalog.quote_ident(n.nspname), p.oid::pg_catalog.int8, e.extowner
        FROM pg_catalog.pg_extension e
        JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
        JOIN pg_catalog.pg_depend d
          ON d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
         AND d.refobjid OPERATOR(pg_catalog.=) e.oid
         AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
         AND d.deptype OPERATOR(pg_catalog.=) 'e'
        JOIN pg_catalog.pg_proc p
          ON p.oid OPERATOR(pg_catalog.=) d.objid
         AND p.pronamespace OPERATOR(pg_catalog.=) e.extnamespace
         AND p.proname OPERATOR(pg_catalog.=) 'snowflake_claim_node'
         AND p.proargtypes OPERATOR(pg_catalog.=) '23 20 25 25 16'::pg_catalog.oidvector
        WHERE e.extname OPERATOR(pg_catalog.=) 'snowflake_pg'";
    trusted_sql::with_fixed_search_path(|| {
        Spi::connect(|client| {
            let row = client.select(FIND, Some(1), &[])?.first();
            if row.is_empty() {
                return Ok(None);
            }
            let (schema, function, owner) = row.get_three::<String, i64, pg_sys::Oid>()?;
            Ok(schema
                .zip(function)
                .zip(owner)
                .map(|((schema, function), owner)| Registry {
                    schema,
                    function: function as u32,
                    owner,
                }))
        })
    })
    .map_err(|error: pgrx::spi::Error| CatalogRead {
        what: "snowflake_nodes",
        reason: error.to_string(),
    })
}

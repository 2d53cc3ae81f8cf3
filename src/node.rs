//! The node id a backend mints with: from `snowflake.node_id`, or, with
//! `snowflake.node_source = citus`, the Citus group id of this node, so every node of a
//! Citus cluster has its own without a setting per node.

use crate::error::Error;
use crate::settings::{self, FROM_CITUS, NODE_ID_UNREADABLE};
use crate::trusted_sql::{self, CatalogRead};
use pgrx::prelude::*;
use snowflake_core::layout::Field;
use snowflake_core::report::{Report, Reported, SqlState};
use snowflake_core::server::Fixed;

/// A node id that cannot be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeError {
    /// `snowflake.node_source = citus` in a database without Citus.
    NoCitus,
    /// A Citus node not yet in a cluster: it reads group 0, which is the coordinator's.
    NotInCitusCluster,
    /// This node's Citus group id does not fit the layout's node bits.
    GroupIdOutOfRange { group_id: i64, node_bits: u32 },
    /// `snowflake.node_id` was given a value PostgreSQL could not hold in the setting (not
    /// an integer), before the library defined it: PostgreSQL would have fallen back to 0.
    NodeIdUnreadable { value: String },
}

impl Reported for NodeError {
    fn report(&self) -> Report {
        use SqlState::*;
        match self {
            NodeError::NoCitus => Report::new(
                ObjectNotInPrerequisiteState,
                "snowflake.node_source is citus, but Citus is not installed in this database",
            )
            .hint("Create the citus extension in this database, or set snowflake.node_source = setting and give each server its snowflake.node_id."),
            NodeError::NotInCitusCluster => Report::new(
                ObjectNotInPrerequisiteState,
                "this node is not in a Citus cluster yet: it reads group id 0, the coordinator's, and knows no other node",
            )
            .hint("Add it to the cluster with citus_add_node() on the coordinator (on the coordinator itself, call citus_set_coordinator_host()), or set snowflake.node_source = setting and give it a snowflake.node_id."),
            NodeError::GroupIdOutOfRange { group_id, node_bits } => Report::new(
                InvalidParameterValue,
                format!("this node's Citus group id {group_id} does not fit in the {node_bits} node bits of the layout"),
            )
            .detail(format!(
                "With {node_bits} node bits, node ids go from 0 to {}.",
                (1i64 << node_bits) - 1
            ))
            .hint("Give snowflake.layout more node bits (needs a restart), or set snowflake.node_source = setting and give this server a snowflake.node_id in range."),
            NodeError::NodeIdUnreadable { value } => Report::new(
                InvalidParameterValue,
                format!("snowflake.node_id = \"{value}\" is not a node id"),
            )
            .detail("It is not an integer. PostgreSQL would have set aside the value and minted as node 0, which another server may hold, so no id is minted until the value is fixed.")
            .hint("Set snowflake.node_id to an integer node id in range, in postgresql.conf or wherever the value came from (ALTER SYSTEM, ALTER ROLE or DATABASE ... SET, PGOPTIONS, a SET before snowflake_pg was loaded)."),
        }
    }
}

/// The node id for `choice` (`settings::node_choice`), checked against the layout. Runs SQL
/// for Citus: call only where an ERROR may be raised.
pub fn resolve(choice: i64, fixed: &Fixed) -> Result<i64, Error> {
    match choice {
        FROM_CITUS => {}
        NODE_ID_UNREADABLE => {
            return Err(NodeError::NodeIdUnreadable {
                value: settings::unreadable_node_id().unwrap_or_default().into(),
            }
            .into())
        }
        node_id => {
            fixed.check_node_id(node_id)?;
            return Ok(node_id);
        }
    }
    let group_id = citus_group_id()?;
    let node_bits = fixed.layout.bits(Field::Node);
    if !fixed.layout.fits_node_id(group_id) {
        return Err(NodeError::GroupIdOutOfRange {
            group_id,
            node_bits,
        }
        .into());
    }
    Ok(group_id)
}

/// This node's group id: 0 on the coordinator, each worker its own. A node not yet in a
/// cluster also reads group 0, the coordinator's, and knows no node: it is refused until
/// the coordinator's `citus_add_node` gives it its group. Only a coordinator gives group
/// ids, so another group is a member's; a group 0 that knows other nodes is a coordinator.
fn citus_group_id() -> Result<i64, Error> {
    const GROUP: &str = "
        SELECT l.groupid::pg_catalog.int8,
               l.groupid OPERATOR(pg_catalog.<>) 0
                   OR EXISTS (SELECT FROM pg_catalog.pg_dist_node)
        FROM pg_catalog.pg_extension e, pg_catalog.pg_dist_local_group l
        WHERE e.extname OPERATOR(pg_catalog.=) 'citus'";
    const HAS_CITUS: &str =
        "SELECT pg_catalog.to_regclass('pg_catalog.pg_dist_local_group') IS NOT NULL";
    let group = trusted_sql::with_fixed_search_path(|| {
        Spi::connect(|client| {
            if client
                .select(HAS_CITUS, None, &[])?
                .first()
                .get_one::<bool>()?
                != Some(true)
            {
                return Ok(None);
            }
            let group = client.select(GROUP, Some(1), &[])?.first();
            if group.is_empty() {
                return Ok(None);
            }
            group.get_two::<i64, bool>().map(Some)
        })
    })
    .map_err(|error: pgrx::spi::Error| CatalogRead {
        what: "the Citus group id",
        reason: error.to_string(),
    })?;
    match group {
        None => Err(NodeError::NoCitus.into()),
        Some((Some(group_id), Some(true))) => Ok(group_id),
        Some(_) => Err(NodeError::NotInCitusCluster.into()),
    }
}

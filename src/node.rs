//! The node id a backend mints with: from `snowflake.node_id`, or, with
//! `snowflake.node_source = citus`, the Citus group id of this node, so every node of a
//! Citus cluster has its own without a setting per node.

use crate::error::Error;
use crate::layout::{Field, Layout};
use crate::settings::{self, FROM_CITUS, NODE_ID_UNREADABLE};
use crate::trusted_sql;
use pgrx::prelude::*;

/// The node id for `choice` (`settings::node_choice`), checked against the layout. Runs SQL
/// for Citus: call only where an ERROR may be raised.
pub fn resolve(choice: i64, layout: &Layout) -> Result<i64, Error> {
    match choice {
        FROM_CITUS => {}
        NODE_ID_UNREADABLE => {
            return Err(Error::NodeIdUnreadable {
                value: settings::unreadable_node_id().unwrap_or_default().into(),
            })
        }
        node_id => {
            layout.check_node_id(node_id)?;
            return Ok(node_id);
        }
    }
    let group_id = citus_group_id()?;
    let node_bits = layout.bits(Field::Node);
    if group_id >= 1 << node_bits {
        return Err(Error::GroupIdOutOfRange {
            group_id,
            node_bits,
        });
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
    .map_err(|error: pgrx::spi::Error| Error::CatalogRead {
        what: "the Citus group id",
        reason: error.to_string(),
    })?;
    match group {
        None => Err(Error::NoCitus),
        Some((Some(group_id), Some(true))) => Ok(group_id),
        Some(_) => Err(Error::NotInCitusCluster),
    }
}

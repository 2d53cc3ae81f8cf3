//! Node claims, the pure half: what the rows of `snowflake_nodes` that concern this server
//! mean for it, and the claims a server remembers as committed. The extension reads the
//! rows (`claims.rs` of the extension) and acts on the answer.

use crate::report::{Report, Reported, SqlState};

/// A row of `snowflake_nodes`: a node id claimed by a server, as messages tell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub node_id: i64,
    pub system_identifier: i64,
    pub server: String,
    pub layout: String,
    pub epoch: String,
    pub claimed_at: String,
}

/// What this server mints with, as its claims row would say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnServer {
    pub system_identifier: i64,
    pub layout: String,
    pub epoch: String,
}

/// A claim standing in the way of this server's, and what this server mints with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimConflict {
    pub claim: Claim,
    pub own: OwnServer,
}

/// Another server stands in the way. Boxed, to keep every `Result` of the hot path small.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimError {
    /// Another server holds the node id.
    NodeClaimed(Box<ClaimConflict>),
    /// A server of the same id space mints with another layout or epoch.
    ClaimDisagrees(Box<ClaimConflict>),
}

impl Reported for ClaimError {
    fn report(&self) -> Report {
        let report = |message: String| Report::new(SqlState::ObjectNotInPrerequisiteState, message);
        match self {
            ClaimError::NodeClaimed(conflict) => {
                let ClaimConflict { claim, own } = &**conflict;
                report(format!("node id {} is claimed by another server", claim.node_id))
                    .detail(format!(
                        "Server \"{}\" (system identifier {}) claimed it in snowflake_nodes at {}. This server's system identifier is {}.",
                        claim.server, claim.system_identifier, claim.claimed_at, own.system_identifier
                    ))
                    .hint(format!(
                        "Give this server a node id no other server holds (snowflake.node_id). If that server is retired for good, free its claim with SELECT snowflake_release_node({}).",
                        claim.node_id
                    ))
            }
            ClaimError::ClaimDisagrees(conflict) => {
                let ClaimConflict { claim, own } = &**conflict;
                report(format!(
                    "this server's layout or epoch differs from that of node {}",
                    claim.node_id
                ))
                .detail(format!(
                    "Server \"{}\" (system identifier {}) mints with layout '{}' and epoch {}; this server with layout '{}' and epoch {}.",
                    claim.server, claim.system_identifier, claim.layout, claim.epoch, own.layout, own.epoch
                ))
                .hint("Every server sharing an id space must mint with the same snowflake.layout and snowflake.epoch.")
            }
        }
    }
}

/// Where the claim of this server's node id stands, when no other server is in the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// No row holds the node id: none could be written in this transaction.
    Unclaimed,
    /// This call wrote the row: it holds only if the transaction commits.
    Written,
    /// A row of this server holds it (committed, unless this transaction wrote it earlier).
    Found,
}

/// Reads the rows the claims function gave for `node_id`: the row holding it and the first
/// row of another server with another layout or epoch, each with whether this call wrote
/// it. Another server's row for the node id, or any row about another node id (the function
/// returns those only when layout or epoch differ), stands in the way.
pub fn classify(
    rows: Vec<(Claim, bool)>,
    node_id: i64,
    own: OwnServer,
) -> Result<Standing, ClaimError> {
    let mut standing = Standing::Unclaimed;
    for (claim, written) in rows {
        let disagrees = claim.node_id != node_id;
        if disagrees || claim.system_identifier != own.system_identifier {
            let conflict = Box::new(ClaimConflict { claim, own });
            return Err(if disagrees {
                ClaimError::ClaimDisagrees(conflict)
            } else {
                ClaimError::NodeClaimed(conflict)
            });
        }
        standing = if written {
            Standing::Written
        } else {
            Standing::Found
        };
    }
    Ok(standing)
}

/// A claim as remembered: the database, the claims function (so a dropped and recreated
/// extension is claimed again) and the node id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Key {
    pub database: u32,
    pub registry: u32,
    pub node_id: i64,
}

/// Claims seen committed during a server life: a fixed array, to live in shared memory.
#[derive(Debug, Clone, Copy)]
pub struct Remembered {
    keys: [Key; 64],
    len: usize,
}

impl Default for Remembered {
    fn default() -> Self {
        Remembered {
            keys: [Key::default(); 64],
            len: 0,
        }
    }
}

impl Remembered {
    /// Remembers `key`. When full, later backends claim again, which is only slower.
    pub fn remember(&mut self, key: Key) {
        if self.len < self.keys.len() && !self.contains(key) {
            self.keys[self.len] = key;
            self.len += 1;
        }
    }

    pub fn contains(&self, key: Key) -> bool {
        self.keys[..self.len].contains(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN_ID: i64 = 7_000_000_000_000_000_001;

    fn own() -> OwnServer {
        OwnServer {
            system_identifier: OWN_ID,
            layout: "time:41, node:2, slot:8, sequence:12".into(),
            epoch: "2020-01-01 00:00:00+00".into(),
        }
    }

    fn row(node_id: i64, system_identifier: i64, layout: &str) -> Claim {
        Claim {
            node_id,
            system_identifier,
            server: format!("server {system_identifier}"),
            layout: layout.into(),
            epoch: "2020-01-01 00:00:00+00".into(),
            claimed_at: "2026-01-01 00:00:00+00".into(),
        }
    }

    #[test]
    fn this_servers_row_is_written_found_or_missing() {
        let layout = own().layout;
        assert_eq!(classify(vec![], 1, own()), Ok(Standing::Unclaimed));
        let written = vec![(row(1, OWN_ID, &layout), true)];
        assert_eq!(classify(written, 1, own()), Ok(Standing::Written));
        let found = vec![(row(1, OWN_ID, &layout), false)];
        assert_eq!(classify(found, 1, own()), Ok(Standing::Found));
    }

    #[test]
    fn another_servers_row_for_the_node_id_is_a_claim_in_the_way() {
        let layout = own().layout;
        let Err(ClaimError::NodeClaimed(conflict)) =
            classify(vec![(row(1, 42, &layout), false)], 1, own())
        else {
            panic!("another server's claim of node 1 was not refused");
        };
        assert_eq!(conflict.claim.system_identifier, 42);
        let report = ClaimError::NodeClaimed(conflict).report();
        assert_eq!(report.message, "node id 1 is claimed by another server");
        assert!(report.hint.unwrap().contains("snowflake_release_node(1)"));
    }

    #[test]
    fn a_row_of_another_node_id_means_another_layout_or_epoch() {
        let rows = vec![
            (row(1, OWN_ID, &own().layout), true),
            (row(2, 42, "js53"), false),
        ];
        let Err(error @ ClaimError::ClaimDisagrees(_)) = classify(rows, 1, own()) else {
            panic!("a server minting with another layout was not refused");
        };
        let report = error.report();
        assert_eq!(report.sqlstate, SqlState::ObjectNotInPrerequisiteState);
        assert_eq!(
            report.message,
            "this server's layout or epoch differs from that of node 2"
        );
        assert!(report.detail.unwrap().contains("layout 'js53'"));
    }

    #[test]
    fn remembered_claims_are_kept_once_and_up_to_the_capacity() {
        let mut remembered = Remembered::default();
        let key = |node_id| Key {
            database: 5,
            registry: 16384,
            node_id,
        };
        assert!(!remembered.contains(key(0)));
        remembered.remember(key(0));
        remembered.remember(key(0));
        assert!(remembered.contains(key(0)));
        assert_eq!(remembered.len, 1);
        for node_id in 1..100 {
            remembered.remember(key(node_id));
        }
        assert_eq!(remembered.len, 64);
        assert!(remembered.contains(key(63)));
        assert!(!remembered.contains(key(64)));
    }
}

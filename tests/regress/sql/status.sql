-- snowflake_status: one row about the server. Without preload (as here) the counters are
-- this session's, and the server-wide ones (backends minting, high-water mark and its
-- renewals) are NULL;
-- the slots are the layout's, each backend's slot being its process number.
-- Claims of the tests before this one are not of interest here.
TRUNCATE snowflake_nodes;
\x on
SELECT node_id, node_source, system_identifier = (SELECT system_identifier FROM pg_control_system()) AS own_system,
       layout, epoch, preloaded, slots, backends_minting, most_backends_minting, high_water_mark,
       furthest_lead_ms, clock_steps_absorbed, clock_steps_refused, spent_tick_waits,
       epoch_ends, high_water_mark_renewed, high_water_mark_renewals_failed, node_claimed,
       node_claimed_by_other
FROM snowflake_status;
\x off
-- The default layout's 41 bits of ms from 2020 end in 2089 (the first ms past the last id's);
-- the share used is the time since the epoch over the field's length.
SELECT epoch_ends = '2089-09-06 15:47:35.552+00' AS ends_after_last_id,
       abs(epoch_used - extract(epoch FROM clock_timestamp() - epoch)
                        / extract(epoch FROM epoch_ends - epoch)) < 1e-6 AS used_share,
       epoch_used > 0 AND epoch_used < 1 AS partly_used
FROM snowflake_status;
-- A first id claims the server's node id, 0 (the lead it ran: the test lead).
SELECT snowflake_next() > 0 AS minted;
-- The node id follows snowflake.node_id; a node id not yet claimed shows so.
SET snowflake.node_id = 2;
SELECT node_id, node_claimed FROM snowflake_status;
SELECT snowflake_next() > 0 AS minted;
SELECT node_id, node_claimed FROM snowflake_status;
-- Node id 3 claimed in this database by another server (another system identifier, as a
-- shared registry or a restored dump brings about): this server's mints are refused.
INSERT INTO snowflake_nodes (node_id, system_identifier, server, layout, epoch)
SELECT 3, system_identifier + 1, 'another server', layout, epoch FROM snowflake_status;
SET snowflake.node_id = 3;
SELECT node_id, node_claimed, node_claimed_by_other FROM snowflake_status;
RESET snowflake.node_id;
SELECT node_id, node_claimed, node_claimed_by_other FROM snowflake_status;
DELETE FROM snowflake_nodes WHERE node_id = 3;
-- Any user may read it.
CREATE ROLE snowflake_status_reader;
SET ROLE snowflake_status_reader;
SELECT node_id IS NOT NULL AS readable FROM snowflake_status;
RESET ROLE;
DROP ROLE snowflake_status_reader;

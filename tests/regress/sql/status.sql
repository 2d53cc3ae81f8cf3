-- snowflake_status: one row about the server. Without preload (as here) the counters are
-- this session's, and the server-wide ones (backends minting, high-water mark) are NULL;
-- the slots are the layout's, each backend's slot being its process number.
-- Claims of the tests before this one are not of interest here.
TRUNCATE snowflake_nodes;
\x on
SELECT node_id, node_source, system_identifier = (SELECT system_identifier FROM pg_control_system()) AS own_system,
       layout, epoch, preloaded, slots, backends_minting, most_backends_minting, high_water_mark,
       furthest_lead_ms, clock_steps_absorbed, clock_steps_refused, spent_tick_waits
FROM snowflake_status;
\x off
-- Minting runs ahead of the clock (a generator's first id falls after the tick it was
-- made in, and a burst borrows ticks), within snowflake.max_lead_ms.
SELECT count(DISTINCT snowflake_next()) AS minted FROM generate_series(1, 50000);
SELECT furthest_lead_ms > 0 AS ran_ahead,
       furthest_lead_ms <= (SELECT setting::int FROM pg_settings
                            WHERE name = 'snowflake.max_lead_ms') AS within_bound
FROM snowflake_status;
-- The node id follows snowflake.node_id; a node id not yet claimed shows so.
SET snowflake.node_id = 2;
SELECT node_id, node_claimed FROM snowflake_status;
SELECT snowflake_next() > 0 AS minted;
SELECT node_id, node_claimed FROM snowflake_status;
RESET snowflake.node_id;
-- Any user may read it.
CREATE ROLE snowflake_status_reader;
SET ROLE snowflake_status_reader;
SELECT node_id IS NOT NULL AS readable FROM snowflake_status;
RESET ROLE;
DROP ROLE snowflake_status_reader;

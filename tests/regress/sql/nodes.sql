-- Node claims: the first id a server mints in a database claims its node id in
-- snowflake_nodes; another server's claim on it, or another layout or epoch, refuses.
-- The tests before this one claimed node ids in this database: start afresh.
TRUNCATE snowflake_nodes;
SELECT snowflake_next() > 0 AS minted;
SELECT node_id, system_identifier = (SELECT system_identifier FROM pg_control_system()) AS ours,
       layout, epoch, claimed_at <= now() AS claimed_before_now
FROM snowflake_nodes ORDER BY node_id;

-- Another server (system identifier 42) holds node 1. The detail names it and this
-- server's own system identifier, which differs from run to run: shown tersely here.
INSERT INTO snowflake_nodes VALUES (1, 42, 'east-1', snowflake_layout(),
        (SELECT epoch FROM snowflake_nodes WHERE node_id = 0), '2026-01-01 00:00+00');
SET snowflake.node_id = 1;
\set VERBOSITY terse
SELECT snowflake_next();
\set VERBOSITY default
SELECT count(*) AS claims_of_node_1 FROM snowflake_nodes WHERE node_id = 1;
RESET snowflake.node_id;

-- A server minting with another layout refuses every other server's claim.
INSERT INTO snowflake_nodes VALUES (3, 43, 'west-3', 'time:41, node:5, slot:5, sequence:12',
        (SELECT epoch FROM snowflake_nodes WHERE node_id = 0), '2026-01-01 00:00+00');
SET snowflake.node_id = 2;
SELECT snowflake_next();
-- Retired for good: its claim is freed, and node 2 can be claimed.
SELECT snowflake_release_node(3) AS freed, snowflake_release_node(3) AS freed_again;
SELECT snowflake_next() > 0 AS minted;
SELECT node_id FROM snowflake_nodes WHERE system_identifier <> 42 ORDER BY node_id;
RESET snowflake.node_id;

-- A read-only transaction checks the claims but cannot write one.
SET snowflake.node_id = 3;
BEGIN READ ONLY;
SELECT snowflake_next() > 0 AS minted;
COMMIT;
SELECT count(*) AS claims_of_node_3 FROM snowflake_nodes WHERE node_id = 3;
RESET snowflake.node_id;

-- A claim rolled back is made again by the next call.
SET snowflake.node_id = 3;
BEGIN;
SELECT snowflake_next() > 0 AS minted;
ROLLBACK;
SELECT count(*) AS claims_of_node_3 FROM snowflake_nodes WHERE node_id = 3;
SELECT snowflake_next() > 0 AS minted;
SELECT count(*) AS claims_of_node_3 FROM snowflake_nodes WHERE node_id = 3;
RESET snowflake.node_id;

-- Any user may mint, and so claim; only the owner writes the table directly.
CREATE ROLE snowflake_regress_app;
SET ROLE snowflake_regress_app;
SELECT count(*) >= 1 AS readable FROM snowflake_nodes;
SELECT snowflake_release_node(1);
SELECT * FROM snowflake_claim_node(1, 42, 'x', '2020-01-01', true);
RESET ROLE;
DROP ROLE snowflake_regress_app;

-- Node ids from Citus need Citus.
SET snowflake.node_source = citus;
SELECT snowflake_next();
SET snowflake.node_source = banana;
RESET snowflake.node_source;
SELECT snowflake_release_node(1) AS freed;

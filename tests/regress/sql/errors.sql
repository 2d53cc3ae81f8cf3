-- Every bad input gets a clear error: what is wrong and what is allowed.
\set VERBOSITY default
SET timezone = 'UTC';
SET datestyle = 'ISO';

SELECT snowflake_parse(-1);
SELECT snowflake_parse(-9223372036854775808);
SELECT snowflake_at(now(), 4194304);
SELECT snowflake_at(now(), -1);
SELECT snowflake_floor('infinity');
SELECT snowflake_at('-infinity', 0);
SELECT snowflake_floor('2019-12-31 23:59:59.999+00');
SELECT snowflake_floor('2089-09-06 15:47:35.551+00');
SELECT snowflake_floor('2089-09-06 15:47:35.552+00');

-- The node id must fit the node bits (2 by default: nodes 0 to 3).
SET snowflake.node_id = 3;
SELECT (snowflake_parse(snowflake_next())).node_id;
SET snowflake.node_id = 4;
SELECT (snowflake_parse(snowflake_next())).node_id;
SET snowflake.node_id = 1024;
RESET snowflake.node_id;
-- In a new session the library is not loaded yet: the value is kept, and every call
-- refuses it, rather than falling back to node 0 with a warning.
\c
SET snowflake.node_id = 4;
SELECT snowflake_next();
RESET snowflake.node_id;
SELECT (snowflake_parse(snowflake_next())).node_id;
\set VERBOSITY default
SET timezone = 'UTC';
SET datestyle = 'ISO';

-- Only a superuser or the configuration may set the node id; restart-only settings
-- cannot be changed at all in a session.
CREATE ROLE snowflake_regress_user;
SET ROLE snowflake_regress_user;
SET snowflake.node_id = 1;
RESET ROLE;
DROP ROLE snowflake_regress_user;
SET snowflake.node_bits = 3;
SET snowflake.epoch = '2024-01-01';
SET snowflake.max_lead_ms = 10;

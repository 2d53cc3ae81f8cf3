\pset footer off
SET datestyle = 'ISO';
SET timezone = 'UTC';
CREATE EXTENSION snowflake_pg;

-- 1. The column default: every backend mints its own ids, no lock shared.
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text);
INSERT INTO orders (item) SELECT 'item ' || n FROM generate_series(1, 5) n;
SELECT id, item FROM orders ORDER BY id;

-- 2. Ad-hoc parsing in psql: one row with named columns.
SELECT * FROM snowflake_parse((SELECT max(id) FROM orders));
SELECT id, (snowflake_parse(id)).ts, (snowflake_parse(id)).sequence FROM orders ORDER BY id;

-- 3. A time range on the primary key, no created_at column needed.
SELECT count(*) AS minted_in_the_last_hour FROM orders
 WHERE id >= snowflake_floor(now() - interval '1 hour') AND id < snowflake_floor(now() + interval '1 minute');
EXPLAIN (COSTS OFF) SELECT * FROM orders
 WHERE id >= snowflake_floor('2026-11-01') AND id < snowflake_floor('2026-12-01');

-- 4. Idempotent ingestion: the same sample time and sensor give the same id, so a
--    re-sent reading updates its row instead of adding one.
CREATE TABLE readings (id bigint PRIMARY KEY, value float8);
INSERT INTO readings VALUES (snowflake_at('2026-11-22 10:00:00.250+00', 17), 20.5)
    ON CONFLICT (id) DO UPDATE SET value = excluded.value;
INSERT INTO readings VALUES (snowflake_at('2026-11-22 10:00:00.250+00', 17), 20.7)
    ON CONFLICT (id) DO UPDATE SET value = excluded.value;
SELECT id, value, id - snowflake_floor((snowflake_parse(id)).ts) AS sensor, (snowflake_parse(id)).ts FROM readings;

-- 5. Layouts: this server's, and ids of other systems taken apart.
SELECT snowflake_layout();
SELECT * FROM snowflake_parse(175928847299117063, 'discord');
SELECT snowflake_compose('2026-11-22 10:00:00+00', 1, 42, 7, 0, 'js53') AS js53_id;

-- 6. Ids as text that sorts as they do, and back.
SELECT id, snowflake_encode(id) AS base32, snowflake_encode(id, 'base62') AS base62,
       snowflake_decode(snowflake_encode(id)) = id AS round_trip
  FROM orders ORDER BY id LIMIT 3;

-- 7. The node id this server claimed, and its state.
SELECT node_id, server, layout FROM snowflake_nodes;
\x on
SELECT * FROM snowflake_status;
\x off

-- Two million ids in one statement, all distinct.
SELECT count(DISTINCT snowflake_next()) AS distinct_ids FROM generate_series(1, 2000000);

-- Bad input gets a clear error.
\set ON_ERROR_STOP 0
SELECT snowflake_parse(-1);
SELECT snowflake_at(now(), 4194304);
SELECT snowflake_floor('2019-06-01');

-- A time range on the primary key: no created_at column needed, and the index is used.
SET timezone = 'UTC';
SET datestyle = 'ISO';
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text);
INSERT INTO orders (id, item)
SELECT snowflake_at(t, 1), 'item ' || n
  FROM generate_series(1, 10000) n,
       LATERAL (SELECT '2026-11-01 00:00:00+00'::timestamptz + n * interval '1 minute') AS at(t);
INSERT INTO orders (item) VALUES ('minted now');
ANALYZE orders;

EXPLAIN (COSTS OFF)
SELECT * FROM orders
 WHERE id >= snowflake_floor('2026-11-02') AND id < snowflake_floor('2026-11-03');

-- [floor(a), floor(b)) holds exactly the ids of [a, b): 1440 minutes of 2026-11-02.
SELECT count(*), min((snowflake_parse(id)).ts), max((snowflake_parse(id)).ts)
  FROM orders
 WHERE id >= snowflake_floor('2026-11-02') AND id < snowflake_floor('2026-11-03');

-- The id minted now sorts after every id of the first week of November 2026.
SELECT item FROM orders ORDER BY id DESC LIMIT 1;

-- A prepared statement with the bounds as parameters, as an application sends it.
PREPARE day(timestamptz, timestamptz) AS
  SELECT count(*) FROM orders WHERE id >= snowflake_floor($1) AND id < snowflake_floor($2);
EXECUTE day('2026-11-03', '2026-11-04');
EXPLAIN (COSTS OFF) EXECUTE day('2026-11-03', '2026-11-04');
DROP TABLE orders;

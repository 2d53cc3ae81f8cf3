-- The pure functions' answers for 3,000 fixed pseudo-random inputs and the edges of their
-- ranges, each function's answers folded into one digest. The expected digests were made
-- on amd64; the packages' tests run this file on arm64 too, so the same inputs give the
-- same ids and parts on both architectures. A digest that differs names its function; the
-- failing inputs are then found by running the query without the digest.
SET timezone = 'UTC';
SET datestyle = 'ISO';
SET extra_float_digits = 0;

-- The inputs: ids over all non-negative bigints, times over the whole 41-bit range of the
-- default layout (to the microsecond), uids over the 22 low bits; md5 makes them, so that
-- they are the same on every server. Then the edges of each range.
CREATE TEMP TABLE inputs AS
SELECT i,
       ('x' || substr(md5('id' || i), 1, 16))::bit(64)::bigint & 9223372036854775807 AS id,
       timestamptz '2020-01-01 00:00:00+00'
         + (('x' || substr(md5('ts' || i), 1, 16))::bit(64)::bigint & 2199023255551) * interval '1 millisecond'
         + (('x' || substr(md5('us' || i), 1, 4))::bit(16)::int % 1000) * interval '1 microsecond' AS ts,
       ('x' || substr(md5('uid' || i), 1, 8))::bit(32)::bigint & 4194303 AS uid,
       ('x' || substr(md5('node' || i), 1, 8))::bit(32)::int & 3 AS node_id,
       ('x' || substr(md5('slot' || i), 1, 8))::bit(32)::int & 255 AS slot,
       ('x' || substr(md5('seq' || i), 1, 8))::bit(32)::int & 4095 AS sequence
  FROM generate_series(1, 3000) i
UNION ALL
SELECT 3000 + i, id, ts, uid, node_id, slot, sequence
  FROM (VALUES (1, 0::bigint, timestamptz '2020-01-01 00:00:00+00', 0::bigint, 0, 0, 0),
               (2, 1, '2020-01-01 00:00:00.000999+00', 1, 0, 0, 1),
               (3, 4194303, '2020-01-01 00:00:00.001+00', 4194303, 3, 255, 4095),
               (4, 4194304, '2089-09-06 15:47:35.551+00', 4194302, 3, 255, 4095),
               (5, 9223372036854775807, '2089-09-06 15:47:35.551999+00', 2, 1, 1, 1)) AS e (i, id, ts, uid, node_id, slot, sequence);

SELECT 'snowflake_floor' AS function, count(*) AS answers,
       md5(string_agg(snowflake_floor(ts)::text, ',' ORDER BY i)) AS digest FROM inputs
UNION ALL
SELECT 'snowflake_at', count(*), md5(string_agg(snowflake_at(ts, uid)::text, ',' ORDER BY i)) FROM inputs
UNION ALL
SELECT 'snowflake_parse', count(*), md5(string_agg(snowflake_parse(id)::text, ',' ORDER BY i)) FROM inputs
UNION ALL
SELECT 'snowflake_parse discord', count(*), md5(string_agg(snowflake_parse(id, 'discord')::text, ',' ORDER BY i)) FROM inputs
UNION ALL
SELECT 'snowflake_compose', count(*),
       md5(string_agg(snowflake_compose(ts, node_id, slot, sequence)::text, ',' ORDER BY i)) FROM inputs
UNION ALL
SELECT 'snowflake_encode', count(*),
       md5(string_agg(snowflake_encode(id) || ' ' || snowflake_encode(id, 'base62'), ',' ORDER BY i)) FROM inputs
UNION ALL
SELECT 'snowflake_decode', count(*),
       md5(string_agg(snowflake_decode(snowflake_encode(id)) || ' ' || snowflake_decode(snowflake_encode(id, 'base62'), 'base62'),
                      ',' ORDER BY i)) FROM inputs
UNION ALL
SELECT 'snowflake_bounds', count(*),
       md5(string_agg(b::text, ',' ORDER BY i)) FROM inputs, snowflake_bounds(ts - interval '1 hour', ts) b
 WHERE ts >= '2020-01-01 01:00:00+00';

-- Every id round-trips: composed from its parts, it is itself.
SELECT count(*) AS ids, count(*) FILTER (WHERE snowflake_compose(p.ts, p.node_id, p.backend_slot, p.sequence) = id) AS round_trips
  FROM inputs, snowflake_parse(id) p;

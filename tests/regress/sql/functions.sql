-- What a psql user sees: the four functions, their labels, and their answers.
CREATE EXTENSION snowflake_pg;
SET timezone = 'UTC';
SET datestyle = 'ISO';

SELECT p.proname, pg_get_function_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result,
       p.provolatile AS volatility, p.proparallel AS parallel, p.proisstrict AS strict
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake_pg'
 ORDER BY p.proname, p.pronargs;

SHOW snowflake.node_id;
SHOW snowflake.node_bits;
SHOW snowflake.epoch;
SHOW snowflake.max_lead_ms;

-- The floor of a millisecond is that millisecond since the epoch, shifted past 22 bits.
SELECT snowflake_floor('2020-01-01 00:00:00+00') AS epoch_floor,
       snowflake_floor('2020-01-01 00:00:00.001+00') AS one_ms,
       snowflake_floor('2020-01-01 00:00:00.0019+00') AS truncated,
       snowflake_floor('2026-11-01') AS november;

-- The same time and uid always give the same id, whatever the time zone it is written in.
SELECT snowflake_at('2026-11-01 12:00:00+00', 42) AS at_utc,
       snowflake_at('2026-11-01 13:00:00+01', 42) AS at_cet,
       snowflake_at('2026-11-01 12:00:00+00', 4194303) - snowflake_floor('2026-11-01 12:00:00+00') AS largest_uid;

-- Parsing: one row with named columns, in FROM or per row of a table.
SELECT * FROM snowflake_parse(912413252820926466);
SELECT * FROM snowflake_parse(snowflake_at('2026-11-01 12:34:56.789+00', 0));
SELECT (snowflake_parse(id)).ts, (snowflake_parse(id)).sequence
  FROM (VALUES (snowflake_floor('2026-11-01') + (7 << 10)), (snowflake_floor('2026-11-02') + (4095 << 10))) v(id);

-- A fresh id parses back to now, node 0, and this backend's slot.
SELECT abs(extract(epoch FROM p.ts - clock_timestamp())) < 2 AS about_now,
       p.node_id, p.worker_id = p.backend_slot AS worker_is_slot
  FROM snowflake_parse(snowflake_next()) p;

-- NULL in, NULL out.
SELECT snowflake_floor(NULL) IS NULL AS floor_null,
       snowflake_at(NULL, 1) IS NULL AS at_null_ts,
       snowflake_at(now(), NULL) IS NULL AS at_null_uid,
       snowflake_parse(NULL) IS NULL AS parse_null;

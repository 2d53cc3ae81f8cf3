-- Time partitions on the id: daily range partitions built with snowflake_bounds hold
-- exactly the ids of their UTC day, and a time-range query only scans the days it asks for.
SET timezone = 'UTC';
SET datestyle = 'ISO';
-- The PL/pgSQL line of each refusal is not what a user reads.
\set SHOW_CONTEXT never
CREATE SCHEMA parts;
SET search_path = parts, public;

-- The bounds of a time range are the floors of its two ends.
SELECT lower, upper, lower = snowflake_floor('2026-11-01') AS lower_is_floor,
       upper = snowflake_floor('2026-11-02') AS upper_is_floor
  FROM snowflake_bounds('2026-11-01', '2026-11-02');
-- Instants, whatever the time zone they are written in.
SELECT snowflake_bounds('2026-11-01 00:00-05', '2026-11-02 00:00-05')
     = snowflake_bounds('2026-11-01 05:00+00', '2026-11-02 05:00+00') AS same;
SELECT * FROM snowflake_bounds('2026-11-02', '2026-11-01');
SELECT * FROM snowflake_bounds('2026-11-01', '2026-11-01');
SELECT * FROM snowflake_bounds('2026-11-01', 'infinity');
SELECT * FROM snowflake_bounds(NULL, '2026-11-01');

-- A table partitioned by its id: a day with the bounds in psql variables, then a week
-- from a loop, and a default partition for the ids of any other time.
CREATE TABLE events (id bigint PRIMARY KEY DEFAULT snowflake_next(), body text)
  PARTITION BY RANGE (id);
SELECT * FROM snowflake_bounds('2026-10-31', '2026-11-01') \gset
CREATE TABLE events_20261031 PARTITION OF events FOR VALUES FROM (:lower) TO (:upper);
DO $$
DECLARE
  day date;
  b record;
BEGIN
  FOR day IN SELECT generate_series(date '2026-11-01', date '2026-11-06', interval '1 day') LOOP
    -- The day's midnights in UTC, whatever the session's time zone.
    b := snowflake_bounds(day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
    EXECUTE format('CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%s) TO (%s)',
                   'events_' || to_char(day, 'YYYYMMDD'), b.lower, b.upper);
  END LOOP;
END $$;
CREATE TABLE events_other PARTITION OF events DEFAULT;
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bounds
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'events'::regclass ORDER BY c.relname;

-- Ids at the first and the last instant of each day, with the smallest and the largest
-- uid (the lowest and highest ids of a millisecond), at noon, and one minted now.
INSERT INTO events (id, body)
SELECT snowflake_at(t, u), 'at ' || t || ' uid ' || u
  FROM generate_series(timestamptz '2026-10-30', '2026-11-07', interval '1 day') d,
       LATERAL unnest(ARRAY[d, d + interval '12 hours', d + interval '1 day' - interval '1 millisecond']) t,
       unnest(ARRAY[0, 4194303]) u;
INSERT INTO events (body) VALUES ('minted now');
ANALYZE events;
-- Each id sits in the partition of its UTC day, or in the default one outside the week.
SELECT count(*) AS ids,
       count(*) FILTER (WHERE e.tableoid::regclass::text = coalesce(p.relname, 'events_other')) AS in_their_day
  FROM events e
  LEFT JOIN pg_class p ON p.relname = 'events_' || to_char((snowflake_parse(e.id)).ts, 'YYYYMMDD')
   AND p.relnamespace = 'parts'::regnamespace;
SELECT tableoid::regclass AS partition, count(*), min((snowflake_parse(id)).ts), max((snowflake_parse(id)).ts)
  FROM events GROUP BY 1 HAVING tableoid::regclass::text <> 'events_other' ORDER BY 1;

-- A time range on the id: the planner keeps only the partitions of the days asked for.
-- With the floors in the query, they are computed when the query starts.
EXPLAIN (COSTS OFF)
SELECT * FROM events
 WHERE id >= snowflake_floor('2026-11-02') AND id < snowflake_floor('2026-11-04');
SELECT count(*) FROM events
 WHERE id >= snowflake_floor('2026-11-02') AND id < snowflake_floor('2026-11-04');
-- With the bounds as constants, when the query is planned.
SELECT * FROM snowflake_bounds('2026-11-02', '2026-11-04') \gset
EXPLAIN (COSTS OFF) SELECT * FROM events WHERE id >= :lower AND id < :upper;
-- As an application sends it: a generic plan with the times as parameters.
SET plan_cache_mode = force_generic_plan;
PREPARE range(timestamptz, timestamptz) AS
  SELECT count(*) FROM events WHERE id >= snowflake_floor($1) AND id < snowflake_floor($2);
EXPLAIN (COSTS OFF) EXECUTE range('2026-11-05', '2026-11-06');
EXECUTE range('2026-11-05', '2026-11-06');
RESET plan_cache_mode;

RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA parts CASCADE;

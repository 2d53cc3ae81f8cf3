-- Server-side timing of one statement: the clock is read in the backend right before and
-- after the query, so neither the client round trip nor psql's output is in the figure.
-- Unlike EXPLAIN ANALYZE, nothing is added per row. Parsing and planning the dynamic
-- query is inside the timing, but takes tens of microseconds against hundreds of ms.
CREATE FUNCTION bench_ms(expr text, n bigint) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz;
  counted bigint;
BEGIN
  started := clock_timestamp();
  EXECUTE format('SELECT count(%s) FROM generate_series(1, %s) g', expr, n) INTO counted;
  RETURN extract(epoch FROM clock_timestamp() - started) * 1000;
END $$;

-- The CPU time this backend has used so far, in ms: user and system time from Linux's
-- /proc/self/stat (fields 14 and 15, in ticks of 10 ms), read after the command name.
CREATE FUNCTION backend_cpu_ms() RETURNS float8 LANGUAGE sql AS $$
  SELECT (split_part(s, ' ', 12)::float8 + split_part(s, ' ', 13)::float8) * 10
    FROM (SELECT substr(stat, strpos(stat, ') ') + 2) AS s FROM pg_read_file('/proc/self/stat') stat) f
$$;

-- One statement of any kind (an INSERT, say), timed in the backend as bench_ms() times
-- its loop: the elapsed time, and the CPU time the backend used for it, which other work
-- on the machine lengthens less. Both in ms.
CREATE FUNCTION statement_times(statement text, OUT elapsed_ms float8, OUT cpu_ms float8)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
  cpu float8 := backend_cpu_ms();
BEGIN
  EXECUTE statement;
  elapsed_ms := extract(epoch FROM clock_timestamp() - started) * 1000;
  cpu_ms := backend_cpu_ms() - cpu;
END $$;

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

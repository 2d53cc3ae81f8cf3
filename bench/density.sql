-- Section 7 of the report, from the samples of bench/density.sh: each key default's index
-- after each writer count (sections size/N and density/N, N rows a transaction), and the
-- order of 8 writers' ids (order, order_back, order_rows, order_check).

-- One cell a row, with its ratios to bigserial's cell of the same load and writer count.
CREATE TEMP VIEW density_cells AS
  SELECT split_part(s.section, '/', 2)::int AS n, s.candidate, s.clients AS writers,
      s.value / 1048576 AS mb, d.value AS density, s.value / b.value AS ratio,
      d.value - bd.value AS points,
      array_position(ARRAY['snowflake', 'preloaded', 'sql_edition', 'sql_tick_first', 'bigserial', 'uuid', 'uuidv7'], s.candidate) AS ord,
      CASE s.candidate WHEN 'preloaded' THEN 'snowflake_next(), preloaded' ELSE label(s.candidate) END AS key
    FROM samples s
      JOIN samples d ON d.section = 'density/' || split_part(s.section, '/', 2)
        AND d.candidate = s.candidate AND d.clients = s.clients
      JOIN samples b ON b.section = s.section AND b.candidate = 'bigserial' AND b.clients = s.clients
      JOIN samples bd ON bd.section = d.section AND bd.candidate = 'bigserial' AND bd.clients = s.clients
    WHERE s.section LIKE 'size/%';

\echo
SELECT format(E'7. Density under concurrent writers: pgbench -M prepared, W clients (writers) filling the\n'
    '   emptied table of each key default with its primary key, one run a cell; then the index''s\n'
    '   pg_relation_size in MB (2^20 bytes) and its leaf density (pgstattuple''s\n'
    '   pgstatindex(...).avg_leaf_density, %%); below each table, the size / bigserial''s and the\n'
    '   leaf density - bigserial''s in points, and the targets, met at every writer count or not');

WITH loads (n, what, rows) AS (VALUES
    (1, 'one row a transaction: INSERT INTO t (payload) VALUES (1)', :density_rows),
    (:density_batch, format('%s rows a transaction: INSERT INTO t (payload) SELECT 1 FROM generate_series(1, %s)',
      :density_batch, :density_batch), :density_batch_rows)),
  heads AS (SELECT n, string_agg(format(' %17s', writers || CASE writers WHEN 1 THEN ' writer' ELSE ' writers' END),
      '' ORDER BY writers) AS head
    FROM (SELECT DISTINCT n, writers FROM density_cells) w GROUP BY n),
  worst AS (SELECT n, ord, key,
      (array_agg(ratio ORDER BY ratio DESC, writers))[1] AS ratio,
      (array_agg(writers ORDER BY ratio DESC, writers))[1] AS ratio_writers,
      (array_agg(points ORDER BY points, writers))[1] AS points,
      (array_agg(writers ORDER BY points, writers))[1] AS points_writers
    FROM density_cells WHERE candidate IN ('snowflake', 'preloaded', 'sql_edition', 'sql_tick_first') GROUP BY n, ord, key),
  lines (n, part, ord, line) AS (
    SELECT n, 0, 0, format(E'\n   %s;\n   %s rows a cell (rounded down to whole transactions a writer)', what, rows)
      FROM loads WHERE n IN (SELECT n FROM density_cells)
    UNION ALL
    SELECT n, 1, 0, format('   %-30s', 'size MB, leaf density') || head FROM heads
    UNION ALL
    SELECT n, 2, ord, format('   %-30s', key) || string_agg(format(' %17s',
        format('%s, %s%%', round(mb::numeric, 2), round(density::numeric, 1))), '' ORDER BY writers)
      FROM density_cells GROUP BY n, ord, key
    UNION ALL
    SELECT n, 3, 0, format('   %-30s', 'size ratio, density points') || head FROM heads
    UNION ALL
    SELECT n, 4, ord, format('   %-30s', key) || string_agg(format(' %17s',
        format('%s, %s', round(ratio::numeric, 3), to_char(round(points::numeric, 1), 'FMSG990.0'))), '' ORDER BY writers)
      FROM density_cells WHERE candidate <> 'bigserial' GROUP BY n, ord, key
    UNION ALL
    SELECT n, 5, 0, format('   %-30s %-28s %7s %8s   %s', 'target, every writer count', 'measure', 'worst',
        'writers', 'verdict') FROM heads
    UNION ALL
    SELECT n, 6, ord * 2, format('   %-30s %-28s %7s %8s   %s', key, 'size / bigserial''s',
        round(ratio::numeric, 3), ratio_writers, verdict('density: size / bigserial''s', ratio)) FROM worst
    UNION ALL
    SELECT n, 6, ord * 2 + 1, format('   %-30s %-28s %7s %8s   %s', '', 'leaf density - bigserial''s',
        to_char(round(points::numeric, 1), 'FMSG990.0'), points_writers, verdict('density: leaf points - bigserial''s', points)) FROM worst)
SELECT line FROM lines ORDER BY n, part, ord;

\echo
SELECT format(E'   order: %s writers insert %s rows, one a transaction, into t (id, payload, at timestamptz\n'
    '   DEFAULT clock_timestamp()), so that at is read right after the id (a row''s defaults are\n'
    '   computed in the order of its columns: of 100,000 rows of a table of two clock_timestamp()\n'
    '   defaults, %s had the second before the first); sorted by id, the share of neighbouring rows\n'
    '   whose at goes back by more than 0.1 ms, and the largest step back',
    r.clients, r.value, c.value)
  FROM samples r, samples c WHERE r.section = 'order_rows' AND c.section = 'order_check';
SELECT format('   %-30s %14s %18s   %s', 'key default', 'back > 0.1 ms', 'largest step back', 'target');
SELECT format('   %-30s %13s%% %15s ms   %s',
    label(o.candidate),
    round(o.value::numeric, 3), round(b.value::numeric, 3),
    CASE WHEN o.candidate = 'bigserial' THEN '-' ELSE verdict('order: neighbours back > 0.1 ms, %', o.value) END)
  FROM samples o JOIN samples b ON b.section = 'order_back' AND b.candidate = o.candidate
  WHERE o.section = 'order' ORDER BY o.n;

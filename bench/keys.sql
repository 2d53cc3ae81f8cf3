-- Section 6 of the report, from the samples of bench/keys.sh.
\set crows (:key_rows / (:clients * :tx_rows) * :clients * :tx_rows)
\echo
SELECT format(E'6. Keys: why not uuidv7(), bigserial or gen_random_uuid()? %s rows loaded by one\n'
    '   INSERT INTO t (payload) SELECT 1 FROM generate_series(1, %s) into the emptied table with its\n'
    '   primary key, after a checkpoint; timed in the server (the commit not included): elapsed\n'
    '   time, and the CPU time of the backend (user + system), which other work on the machine\n'
    '   lengthens less; median of %s alternating rounds. Key: pg_column_size(id).',
    :key_rows, :key_rows, :key_rounds);
SELECT format('   %-20s %9s %9s %11s %7s %9s %7s', 'key default', 'key bytes', 'elapsed s', 'rows/s',
  'ratio', 'CPU s', 'ratio');
SELECT format('   %-20s %9s %9s %11s %7s %9s %7s', label(t.candidate), k.median,
    round((t.median / 1000)::numeric, 2), round((:key_rows / (t.median / 1000))::numeric),
    round((t.median / b.median)::numeric, 3), round((c.median / 1000)::numeric, 2),
    round((c.median / cb.median)::numeric, 3))
  FROM medians t JOIN medians k ON k.section = 'key_bytes' AND k.candidate = t.candidate
    JOIN medians b ON b.section = t.section AND b.candidate = 'bigserial'
    JOIN medians c ON c.section = 'key_cpu' AND c.candidate = t.candidate
    JOIN medians cb ON cb.section = c.section AND cb.candidate = 'bigserial'
  WHERE t.section = 'keys' ORDER BY t.ord;
\echo '   (ratio: time / bigserial''s time)'
\echo
SELECT format(E'   sizes after the load (pg_relation_size); B/row: bytes per row; ratio: size / bigserial''s;\n'
    '   concurrent: the index after pgbench, %s clients x %s transactions of %s rows (%s rows)',
    :clients, :key_rows / (:clients * :tx_rows), :tx_rows, :crows);
SELECT format('   %-20s %9s %6s %6s %9s %6s %6s %11s %6s %6s', 'key default', 'table', 'B/row', 'ratio',
  'pk index', 'B/row', 'ratio', 'concurrent', 'B/row', 'ratio');
SELECT format('   %-20s %9s %6s %6s %9s %6s %6s %11s %6s %6s', label(t.candidate),
    pg_size_pretty(t.median::bigint), round((t.median / :key_rows)::numeric, 1), round((t.median / tb.median)::numeric, 3),
    pg_size_pretty(i.median::bigint), round((i.median / :key_rows)::numeric, 1), round((i.median / ib.median)::numeric, 3),
    pg_size_pretty(c.median::bigint), round((c.median / :crows)::numeric, 1), round((c.median / cb.median)::numeric, 3))
  FROM medians t JOIN medians i ON i.section = 'key_index' AND i.candidate = t.candidate
    JOIN medians c ON c.section = 'key_concurrent' AND c.candidate = t.candidate
    JOIN medians tb ON tb.section = t.section AND tb.candidate = 'bigserial'
    JOIN medians ib ON ib.section = i.section AND ib.candidate = 'bigserial'
    JOIN medians cb ON cb.section = c.section AND cb.candidate = 'bigserial'
  WHERE t.section = 'key_table'
  ORDER BY (SELECT ord FROM medians WHERE section = 'keys' AND candidate = t.candidate);

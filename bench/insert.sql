-- Section 2 of the report, from the samples of bench/insert.sh.
\echo
SELECT format(E'2. Insert path: pgbench -M prepared, %s rows per transaction\n'
    '   (INSERT INTO t (payload) SELECT 1 FROM generate_series(1, %s)), %s s per run,\n'
    '   empty table at the start of each run; median of %s alternating rounds',
    :rows_per_tx, :rows_per_tx, :duration, :pgbench_rounds);
SELECT format('   %-20s %8s %10s %12s %14s', 'key default', 'clients', 'median tps', 'rows/s', 'vs bigserial');
SELECT format('   %-20s %8s %10s %12s %14s', label(t.candidate), t.clients, round(t.median::numeric),
    round((t.median * :rows_per_tx)::numeric), round((t.median / b.median)::numeric, 3))
  FROM medians t JOIN medians b USING (section, clients)
  WHERE section = 'insert' AND b.candidate = 'bigserial' ORDER BY t.clients, t.ord;

\echo
SELECT format(E'   primary-key index size: bulk = one INSERT ... SELECT of %s rows in one backend;\n'
    '   concurrent = pgbench, %s clients x %s transactions of %s rows (%s rows)',
    :rows, clients, :rows / (clients * :rows_per_tx), :rows_per_tx,
    :rows / (clients * :rows_per_tx) * clients * :rows_per_tx)
  FROM samples WHERE section = 'concurrent' LIMIT 1;
SELECT format('   %-20s %10s %12s %8s %12s %12s %8s', 'key default', 'bulk', 'bytes', 'ratio',
  'concurrent', 'bytes', 'ratio');
SELECT format('   %-20s %10s %12s %8s %12s %12s %8s', label(b.candidate),
    pg_size_pretty(b.value::bigint), b.value, round((b.value / bb.value)::numeric, 3),
    pg_size_pretty(c.value::bigint), c.value, round((c.value / cb.value)::numeric, 3))
  FROM samples b JOIN samples c USING (candidate)
    JOIN samples bb ON bb.section = 'bulk' AND bb.candidate = 'bigserial'
    JOIN samples cb ON cb.section = 'concurrent' AND cb.candidate = 'bigserial'
  WHERE b.section = 'bulk' AND c.section = 'concurrent' ORDER BY b.n;
\echo '   (ratio: size / bigserial''s size)'

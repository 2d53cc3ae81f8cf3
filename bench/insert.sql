-- Section 2 of the report, from the samples of bench/insert.sh (sections insert/N, N rows
-- per transaction).
\echo
SELECT format(E'2. Insert path: pgbench -M prepared, n rows per transaction: INSERT INTO t (payload) VALUES (1)\n'
    '   for n = 1, INSERT INTO t (payload) SELECT 1 FROM generate_series(1, n) for more; %s s per run,\n'
    '   empty table at the start of each run; median of %s alternating rounds',
    :duration, :pgbench_rounds);
SELECT format('   %-20s %7s %8s %10s %12s %14s', 'key default', 'rows/tx', 'clients', 'median tps',
  'rows/s', 'vs bigserial');
SELECT format('   %-20s %7s %8s %10s %12s %14s', label(t.candidate), n, t.clients, round(t.median::numeric),
    round((t.median * n)::numeric), round((t.median / b.median)::numeric, 3))
  FROM medians t JOIN medians b USING (section, clients),
    LATERAL (SELECT split_part(section, '/', 2)::int AS n) x
  WHERE section LIKE 'insert/%' AND b.candidate = 'bigserial' ORDER BY n, t.clients, t.ord;

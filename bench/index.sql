-- The index sizes of section 2 of the report, from the samples of bench/index.sh.
\echo
SELECT format(E'   primary-key index size: bulk = one INSERT ... SELECT of %s rows in one backend;\n'
    '   concurrent = pgbench, %s clients x %s transactions of %s rows (%s rows)',
    :rows, :clients, :rows / (:clients * :tx_rows), :tx_rows,
    :rows / (:clients * :tx_rows) * :clients * :tx_rows);
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

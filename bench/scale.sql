-- Section 3 of the report, from the samples of bench/scale.sh.
\echo
SELECT format(E'3. Scale: pgbench -M prepared, SELECT count(f) FROM generate_series(1, %s) per transaction,\n'
    '   %s s per run; median of %s alternating rounds; ids/s = tps x %s.\n'
    '   snowflake.max_lead_ms = %s here, so the figures are the CPU''s: at the default %s ms a\n'
    '   backend is held to 4,096 ids per ms (4.1M ids/s) once it is that far ahead (section 4).',
    :scale_batch, :duration, :pgbench_rounds, :scale_batch, :max_lead, :default_lead);
SELECT format('   %-20s %8s %14s %14s %8s   %s', 'function', 'clients', 'ids/s', 'per client', '2 / 1', 'target');
SELECT rtrim(format('   %-20s %8s %14s %14s', m.candidate, m.clients, round((m.median * :scale_batch)::numeric),
    round((m.median * :scale_batch / m.clients)::numeric))
  || CASE WHEN m.clients = 2 THEN format(' %8s   %s', round((m.median / one.median)::numeric, 2),
    verdict(m.candidate || ' 2 / 1', m.median / one.median))
    ELSE '' END)
  FROM medians m JOIN medians one USING (section, candidate)
  WHERE section = 'scale' AND one.clients = 1 ORDER BY m.ord;

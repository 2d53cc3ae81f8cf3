-- Section 4 of the report, from the samples of bench/bursts.sh.
\echo
SELECT format(E'4. Bursts: SELECT ... FROM (SELECT snowflake_next() FROM generate_series(1, %s)) in one backend;\n'
    '   median of %s alternating rounds. The ceiling is 4,096 ids per ms per backend, about\n'
    '   4.1M ids/s: a backend minting faster borrows later milliseconds and runs ahead of the\n'
    '   clock, up to snowflake.max_lead_ms, then sleeps a millisecond at a time. %s ids\n'
    '   span %s ms of the clock. Elapsed: the whole statement, generate_series included.',
    :burst, :burst_rounds, :burst, round(:burst / 4096.0));
SELECT format('   %-22s %10s %12s %24s', 'snowflake.max_lead_ms', 'elapsed ms', 'ids/s', 'last id ahead of clock');
SELECT concat_ws(E'\n',
    CASE WHEN b.median IS NOT NULL THEN format('   %-22s %10s %12s %21s ms', b.candidate || ' ms',
      round(b.median::numeric, 1), round((:burst / b.median * 1000)::numeric), round(l.median::numeric, 1)) END,
    CASE WHEN b.error IS NOT NULL THEN format('   %-22s %s', b.candidate || ' ms', b.error) END)
  FROM medians b LEFT JOIN medians l ON l.section = 'lead' AND l.candidate = b.candidate
  WHERE b.section = 'burst' ORDER BY b.ord;

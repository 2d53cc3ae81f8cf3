-- Section 1 of the report, from the samples of bench/calls.sh.
\echo
SELECT format('1. Call cost: %s calls in one backend, SELECT count(f) FROM generate_series(1, %s) g;', :calls, :calls)
  || format(E'\n   median of %s alternating rounds, timed in the server', :rounds);
SELECT format('   %-24s %10s %9s %13s', 'candidate', 'median ms', 'ns/call', 'net ns/call');
SELECT format('   %-24s %10s %9s %13s',
    CASE c.candidate WHEN 'g' THEN 'loop alone: count(g)' ELSE c.candidate END,
    round(c.median::numeric, 1), round((c.median * 1e6 / :calls)::numeric, 1),
    round(((c.median - loop.median) * 1e6 / :calls)::numeric, 1))
  FROM medians c JOIN medians loop USING (section)
  WHERE section = 'calls' AND loop.candidate = 'g' ORDER BY c.ord;
\echo
\echo '   ratios of median times (loop included)   ratio   target'
SELECT format('   %-40s %6s   %s', measure, round(ratio::numeric, 3), verdict(measure, ratio))
  FROM (SELECT 'snowflake_next() / ' || o.candidate AS measure, s.median / o.median AS ratio, o.ord
    FROM medians s JOIN medians o USING (section)
    WHERE section = 'calls' AND s.candidate = 'snowflake_next()'
      AND o.candidate NOT IN ('g', 'snowflake_next()')) r
  ORDER BY ord;

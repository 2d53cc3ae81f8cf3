-- The report of bench/sql_edition.sh, from its samples.
\echo
SELECT format('1. Call cost: %s calls in one backend, SELECT count(f) FROM generate_series(1, %s) g;', :calls, :calls)
  || format(E'\n   median of %s alternating rounds, timed in the server', :rounds);
SELECT format('   %-30s %10s %9s %13s', 'candidate', 'median ms', 'us/call', 'net us/call');
SELECT format('   %-30s %10s %9s %13s',
    CASE c.candidate WHEN 'g' THEN 'loop alone: count(g)'
                     WHEN 'snowflake.snowflake_next()' THEN 'SQL edition snowflake_next()'
                     WHEN 'public.snowflake_next()' THEN 'native snowflake_next()'
                     WHEN 'plpgsql_floor()' THEN 'empty PL/pgSQL function'
                     ELSE c.candidate END,
    round(c.median::numeric, 1), round((c.median * 1e3 / :calls)::numeric, 3),
    round(((c.median - loop.median) * 1e3 / :calls)::numeric, 3))
  FROM medians c JOIN medians loop USING (section)
  WHERE section = 'calls' AND loop.candidate = 'g' ORDER BY c.ord;
\echo
\echo '   ratios of median times (loop included)             ratio   target'
SELECT format('   %-48s %7s   %s', measure, round(ratio::numeric, 3), verdict(measure, ratio))
  FROM (SELECT 'SQL edition / ' || CASE o.candidate WHEN 'public.snowflake_next()' THEN 'native'
                                                    WHEN 'plpgsql_floor()' THEN 'empty PL/pgSQL function'
                                                    ELSE o.candidate END AS measure,
               s.median / o.median AS ratio, o.ord
    FROM medians s JOIN medians o USING (section)
    WHERE section = 'calls' AND s.candidate = 'snowflake.snowflake_next()'
      AND o.candidate NOT IN ('g', 'snowflake.snowflake_next()')) r
  ORDER BY ord;

\echo
SELECT format(E'2. Single-row inserts: pgbench -M prepared, INSERT INTO t (payload) VALUES (1),\n'
    '   %s s per run, empty table at the start of each run; median of %s alternating rounds',
    :duration, :pgbench_rounds);
SELECT format('   %-30s %8s %10s %14s   %s', 'key default', 'clients', 'median tps', 'vs bigserial', 'target');
SELECT format('   %-30s %8s %10s %14s   %s',
    CASE t.candidate WHEN 'sql_edition' THEN 'SQL edition snowflake_next()'
                     WHEN 'plpgsql_floor' THEN 'nextval + empty PL/pgSQL'
                     WHEN 'plpgsql_nextval' THEN 'PL/pgSQL returning nextval' ELSE t.candidate END,
    t.clients, round(t.median::numeric), round((t.median / b.median)::numeric, 3),
    CASE WHEN t.candidate = 'sql_edition' AND t.clients = 8
         THEN verdict('SQL edition inserts / bigserial, 8 clients', t.median / b.median) ELSE '' END)
  FROM medians t JOIN medians b USING (section, clients)
  WHERE section = 'insert' AND b.candidate = 'bigserial' ORDER BY t.clients, t.ord;

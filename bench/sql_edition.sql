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
                     WHEN 'insta5.next_id()' THEN 'Instagram''s next_id()'
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
                                                    WHEN 'insta5.next_id()' THEN 'next_id()'
                                                    ELSE o.candidate END AS measure,
               s.median / o.median AS ratio, o.ord
    FROM medians s JOIN medians o USING (section)
    WHERE section = 'calls' AND s.candidate = 'snowflake.snowflake_next()'
      AND o.candidate NOT IN ('g', 'snowflake.snowflake_next()')) r
  ORDER BY ord;

-- Sections 2 and 3: single-row inserts, each way of committing; the SQL edition's rate
-- against each generator it replaces, with 8 clients, is what the targets read.
SELECT format(E'\n%s. Single-row inserts, %s: pgbench -M prepared,\n'
    '   INSERT INTO t (payload) VALUES (1), %s s per run, empty table at the start of each\n'
    '   run; median of %s alternating rounds', n, how, :duration, :pgbench_rounds)
    || E'\n' || string_agg(line, E'\n' ORDER BY clients, ord)
  FROM (VALUES ('insert', 2, 'commits that wait for no disk (fsync, full_page_writes, synchronous_commit off)'),
               ('insert_durable', 3, 'durable commits (fsync, full_page_writes, synchronous_commit on)')) s (section, n, how)
  CROSS JOIN LATERAL (
    SELECT 0 AS clients, 0 AS ord,
           format(E'   %-32s %8s %10s %14s', 'key default', 'clients', 'median tps', 'vs bigserial') AS line
    UNION ALL
    SELECT t.clients, t.ord, format('   %-32s %8s %10s %14s',
        CASE t.candidate WHEN 'sql_edition' THEN 'SQL edition snowflake_next()'
                         WHEN 'next_id' THEN 'Instagram''s next_id()'
                         WHEN 'uuid_generate_v7' THEN 'PL/pgSQL uuid_generate_v7()'
                         WHEN 'plpgsql_nextval' THEN 'definer returning nextval()'
                         ELSE t.candidate END,
        t.clients, round(t.median::numeric), round((t.median / b.median)::numeric, 3))
      FROM medians t JOIN medians b USING (section, clients)
     WHERE t.section = s.section AND b.candidate = 'bigserial'
    UNION ALL
    SELECT 1000, o.ord, format('   %-54s %7s   %s', m.measure, round((e.median / o.median)::numeric, 3),
                               verdict(m.measure, e.median / o.median))
      FROM medians e JOIN medians o USING (section, clients)
      JOIN (VALUES ('next_id', 'SQL edition inserts / next_id(), 8 clients'),
                   ('uuid_generate_v7', 'SQL edition inserts / uuid_generate_v7(), 8 clients')) m (candidate, measure)
        ON m.candidate = o.candidate
     WHERE e.section = s.section AND e.candidate = 'sql_edition' AND e.clients = 8) lines
  WHERE EXISTS (SELECT FROM samples WHERE samples.section = s.section)
  GROUP BY n, how ORDER BY n;

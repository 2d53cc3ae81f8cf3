-- Section 5 of the report, from the samples of bench/layouts.sh.
\echo
SELECT format(E'5. Layouts: %s calls in one session, SELECT count(f) FROM generate_series(1, %s) g, on a\n'
    '   server preloading the library with each layout; median of %s alternating rounds;\n'
    '   ratio: median time / the default layout''s snowflake_next() median time; the target of the\n'
    '   no-preload row is on the inverse: the preloaded call, with its high-water mark, over it', :calls, :calls, :rounds);
SELECT format('   %-46s %-22s %10s %7s   %s', 'layout', 'call', 'median ms', 'ratio', 'target');
SELECT format('   %-46s %-22s %10s %7s   %s', split_part(m.candidate, '|', 1), split_part(m.candidate, '|', 2),
    round(m.median::numeric, 1), round((m.median / base.median)::numeric, 3),
    CASE WHEN m.candidate LIKE '%no preload%'
      THEN verdict('preloaded / no preload', base.median / m.median) || ' (inverse)'
      ELSE verdict(CASE WHEN m.candidate LIKE '%(g)' THEN 'gene call / default layout'
        WHEN m.candidate <> base.candidate THEN 'other layout / default layout' END, m.median / base.median) END)
  FROM medians m JOIN medians base USING (section)
  WHERE section = 'layouts' AND base.candidate = 'default|snowflake_next()'
  ORDER BY m.candidate <> base.candidate, m.ord;

-- Minting runs ahead of the clock (a generator's first id falls after the tick it was
-- made in, and a burst borrows ticks), within snowflake.max_lead_ms, as snowflake_status
-- shows this session's furthest lead. It needs a server that mints faster than the
-- layout's 4,096 ids a millisecond, which one under emulation is not: the arm64 package
-- tests, whose servers qemu runs, leave this test out (tests/package.sh).
SELECT count(DISTINCT snowflake_next()) AS minted FROM generate_series(1, 50000);
SELECT furthest_lead_ms > 0 AS ran_ahead,
       furthest_lead_ms <= (SELECT setting::int FROM pg_settings
                            WHERE name = 'snowflake.max_lead_ms') AS within_bound
FROM snowflake_status;

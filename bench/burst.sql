-- One burst of bench/bursts.sh: :burst ids in one statement, in a backend that has
-- loaded the library first. Keeps the elapsed time of the whole statement
-- (generate_series included) and how far the last id's millisecond is ahead of the clock
-- when the statement ends (a backend's ids increase, so the last is the max).
LOAD 'snowflake_pg';
WITH burst AS (SELECT
    extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000 AS elapsed,
    extract(epoch FROM (snowflake_parse(max(id))).ts - clock_timestamp()) * 1000 AS lead
  FROM (SELECT snowflake_next() AS id FROM generate_series(1, :burst)) s)
INSERT INTO samples (section, candidate, round, value)
  SELECT 'burst', :'bound', :round, elapsed FROM burst
  UNION ALL SELECT 'lead', :'bound', :round, lead FROM burst;

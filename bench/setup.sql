-- The bench cluster's objects, made once per run by bench/run.sh: the candidates, the
-- timing function, the samples and the targets.
CREATE EXTENSION snowflake_pg;
CREATE SEQUENCE s;

-- The well-known Instagram recipe in PL/pgSQL: 41 bits of ms since an epoch (here
-- snowflake.epoch's 2020-01-01), 13 bits of shard id, 10 bits of a sequence mod 1024.
CREATE SEQUENCE next_id_seq;
CREATE FUNCTION next_id(OUT result bigint) LANGUAGE plpgsql AS $$
DECLARE
  our_epoch bigint := 1577836800000;
  seq_id bigint;
  now_millis bigint;
  shard_id int := 1;
BEGIN
  SELECT nextval('next_id_seq') % 1024 INTO seq_id;
  SELECT floor(extract(epoch FROM clock_timestamp()) * 1000) INTO now_millis;
  result := (now_millis - our_epoch) << 23;
  result := result | (shard_id << 10);
  result := result | seq_id;
END $$;

\ir bench_ms.sql

-- The insert path: one table per key default, the same payload.
CREATE TABLE t_snowflake (id bigint PRIMARY KEY DEFAULT snowflake_next(), payload int NOT NULL);
CREATE TABLE t_bigserial (id bigserial PRIMARY KEY, payload int NOT NULL);
CREATE TABLE t_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), payload int NOT NULL);
SELECT to_regprocedure('uuidv7()') IS NOT NULL AS has_uuidv7 \gset
\if :has_uuidv7
CREATE TABLE t_uuidv7 (id uuid PRIMARY KEY DEFAULT uuidv7(), payload int NOT NULL);
\endif

-- Every sample of every section (n gives the candidates' order: round 1 runs them in
-- order), and the median of each candidate's samples.
CREATE TABLE samples (n serial, section text, candidate text, clients int, round int,
  value float8, error text);
CREATE VIEW medians AS SELECT section, candidate, clients, min(n) AS ord,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS median, max(error) AS error
  FROM samples GROUP BY section, candidate, clients;

-- The targets, loaded from bench/targets.txt, and the verdict on a measure: "-" where no
-- target applies to this version, "met", the target's note when it has one, or MISSED.
CREATE TABLE targets (version text, measure text, op text, bound text, note text);
CREATE FUNCTION verdict(measure text, value float8) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce((SELECT format('%s %s  %s', t.op, t.bound, CASE
        WHEN (t.op = '<=' AND value <= t.bound::float8) OR (t.op = '>=' AND value >= t.bound::float8)
          THEN 'met'
        WHEN t.note <> '' THEN 'not met: ' || t.note
        ELSE 'MISSED' END)
      FROM (SELECT trim(version) AS version, trim(measure) AS measure, trim(op) AS op,
          trim(bound) AS bound, trim(coalesce(note, '')) AS note FROM targets) t
      WHERE t.measure = verdict.measure
        AND t.version IN ('all', (current_setting('server_version_num')::int / 10000)::text)), '-')
$$;

-- The key default of each insert-path table t_NAME, as the report names it (t_pgedge, pgEdge's
-- snowflake extension, is made by bench/keys.sh where the server has it; the SQL edition's,
-- by bench/density.sh, which names its samples with follow_clock off sql_tick_first).
CREATE FUNCTION label(name text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE name WHEN 'snowflake' THEN 'snowflake_next()' WHEN 'uuid' THEN 'gen_random_uuid()'
    WHEN 'uuidv7' THEN 'uuidv7()' WHEN 'pgedge' THEN 'snowflake.nextval()'
    WHEN 'sql_edition' THEN 'SQL edition snowflake_next()' WHEN 'sql_tick_first' THEN 'the same, follow_clock off' ELSE name END
$$;

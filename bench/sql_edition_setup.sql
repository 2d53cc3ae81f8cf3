-- The SQL edition benchmark's own objects (bench/sql_edition.sh), after bench/setup.sql's.

-- The role that installs the SQL edition, as a managed service's master user: not a
-- superuser, with CREATEROLE for the edition's node claims.
CREATE ROLE master LOGIN CREATEROLE;
GRANT CREATE ON DATABASE postgres TO master;

-- The floor of any call the SQL edition can make: an empty PL/pgSQL function; and of its
-- insert path, a key of a sequence and that function (bigserial plus a PL/pgSQL call).
CREATE FUNCTION plpgsql_floor() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN 0; END $$;
CREATE SEQUENCE floor_seq;
CREATE TABLE t_plpgsql_floor (id bigint PRIMARY KEY DEFAULT nextval('floor_seq') + plpgsql_floor(),
  payload int NOT NULL);

-- The floor of any key a PL/pgSQL function mints: a SECURITY DEFINER PL/pgSQL function that
-- only advances a sequence. Every SQL edition keeps its state in sequences that callers
-- cannot write (so the function that advances them runs as their owner), and PL/pgSQL sets
-- up a function's expressions again in every transaction: with one row per transaction no
-- PL/pgSQL minting function can insert faster than this one.
CREATE SEQUENCE nextval_seq;
CREATE FUNCTION plpgsql_nextval() RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
  RETURN nextval('nextval_seq');
END $$;
CREATE TABLE t_plpgsql_nextval (id bigint PRIMARY KEY DEFAULT plpgsql_nextval(), payload int NOT NULL);

-- Instagram's published recipe in PL/pgSQL, written here, as the issue sets it: 41 bits of
-- ms since an epoch (2020-01-01, the editions' default), 11 bits of shard id (1) and 12
-- bits of one shared sequence modulo 4096.
CREATE SEQUENCE next_id_4096_seq;
CREATE FUNCTION next_id_4096() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  RETURN ((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1577836800000) << 23)
         | (1 << 12) | (nextval('next_id_4096_seq') % 4096);
END $$;

-- The issue's targets for the SQL edition, read by verdict() (bench/setup.sql).
INSERT INTO targets VALUES
  ('all', 'SQL edition / gen_random_uuid()', '<=', '2', ''),
  ('all', 'SQL edition inserts / bigserial, 8 clients', '>=', '0.9', '');

-- call_round(r, n, candidates): round r of the call cost, n calls of each candidate timed
-- by bench_ms(), the candidates from the r-th on and wrapping around (bench/common.sh's
-- rotate), kept in samples.
CREATE FUNCTION call_round(r int, n bigint, candidates text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  k constant int := cardinality(candidates);
  c text;
BEGIN
  RAISE WARNING 'call cost: round % at %', r, clock_timestamp()::time(0);
  FOR i IN 0 .. k - 1 LOOP
    c := candidates[(r - 1 + i) % k + 1];
    INSERT INTO samples (section, candidate, round, value) VALUES ('calls', c, r, bench_ms(c, n));
  END LOOP;
END $$;

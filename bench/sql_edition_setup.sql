-- The SQL edition benchmark's own objects (bench/sql_edition.sh), after bench/setup.sql's.

-- The role that installs the SQL edition, as a managed service's master user: not a
-- superuser, with CREATEROLE for the edition's node claims.
CREATE ROLE master LOGIN CREATEROLE;
GRANT CREATE ON DATABASE postgres TO master;

-- The floor of any call the SQL edition can make: an empty PL/pgSQL function.
CREATE FUNCTION plpgsql_floor() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN 0; END $$;

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
-- Owned, as the SQL edition's code is, by the master user, whose rights each call checks
-- (a superuser's are not checked).
ALTER SEQUENCE nextval_seq OWNER TO master;
ALTER FUNCTION plpgsql_nextval() OWNER TO master;
CREATE TABLE t_plpgsql_nextval (id bigint PRIMARY KEY DEFAULT plpgsql_nextval(), payload int NOT NULL);

-- The PL/pgSQL generators a managed-service user would otherwise install, as published,
-- not tuned. Instagram's next_id() (its engineering blog, 2012): 41 bits of ms since its
-- epoch, 13 bits of shard id, 10 bits of one shared sequence modulo 1024.
CREATE SCHEMA insta5;
CREATE SEQUENCE insta5.table_id_seq;
CREATE FUNCTION insta5.next_id(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('insta5.table_id_seq') % 1024 INTO seq_id;

    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id <<10);
    result := result | (seq_id);
END;
$$ LANGUAGE PLPGSQL;
CREATE TABLE t_next_id (id bigint PRIMARY KEY DEFAULT insta5.next_id(), payload int NOT NULL);

-- The PL/pgSQL uuid_generate_v7() most copied for PostgreSQL before 18: a random v4 uuid
-- with the ms of the clock laid over its first 48 bits and the version bits set to 7.
CREATE FUNCTION uuid_generate_v7() RETURNS uuid AS $$
BEGIN
  RETURN encode(
    set_bit(
      set_bit(
        overlay(uuid_send(gen_random_uuid())
                placing substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                FROM 1 FOR 6
        ),
        52, 1
      ),
      53, 1
    ),
    'hex')::uuid;
END
$$ LANGUAGE plpgsql VOLATILE;
CREATE TABLE t_uuid_generate_v7 (id uuid PRIMARY KEY DEFAULT uuid_generate_v7(), payload int NOT NULL);

-- The issue's targets for the SQL edition, read by verdict() (bench/setup.sql): a call at
-- most twice gen_random_uuid()'s; single-row inserts with 8 clients at least as fast as
-- with either generator above, with commits that wait for no disk and with durable ones.
INSERT INTO targets VALUES
  ('all', 'SQL edition / gen_random_uuid()', '<=', '2', ''),
  ('all', 'SQL edition inserts / next_id(), 8 clients', '>=', '1', ''),
  ('all', 'SQL edition inserts / uuid_generate_v7(), 8 clients', '>=', '1', '');

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

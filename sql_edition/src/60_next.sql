-- snowflake_next(): minting without a lock shared by every call.
--
-- Slots. A session mints under a slot it holds while it lives: a session-level advisory
-- lock (key space 1936617335, 'snow', and the slot number), taken at its first id. The
-- number in the session's setting snowflake_sql.slot is a cache that any role could SET:
-- each call proves it by taking the lock again with pg_try_advisory_lock. That succeeds
-- for the session that holds the lock (a session-level lock is counted, so it stays held;
-- PostgreSQL counts it in the session's own lock table, without touching shared memory),
-- and fails while another session holds it. It also succeeds when no session holds the
-- slot, which only the session itself can have brought about (pg_advisory_unlock_all, or
-- a number it SET): the slot is then its own from that call on, and it goes on from the
-- slot's sequence like any holder.
--
-- State. Each slot has a sequence, advanced only by its holder, whose value is the last
-- (tick, sequence) pair the slot handed out, as tick << sequence_bits | sequence. Sequences
-- ignore ROLLBACK, are WAL-logged before a value is handed out (nextval logs ahead, setval
-- logs each call) and replay on a standby and after a crash: so a slot's ids rise across
-- transactions that roll back, a slot handed over continues where its last holder
-- stopped, in the same millisecond too, and a promoted standby knows what its primary's
-- slots handed out as far as the WAL it received. Each call: nextval; if that pair's tick
-- is behind the clock, setval to the clock's tick. A pair ahead of the clock (a burst that
-- spent its tick, or a clock stepped back) is taken up to max_lead_ms ahead; past that a
-- short wait (10 ms, or one tick of a longer unit) is slept out and a longer one refused.
--
-- Code. snowflake_next() and snowflake_next(gene) are made by snowflake_sql_compile, below,
-- with the settings and the slots' sequences as constants: a call reads no table.
--
-- Start of a server life. After a crash restart or a promotion, the first session to take
-- a slot sets the floor of the life: one tick past the last pair of every slot, and a
-- margin of 1 s (the native's at promotion) for pairs whose WAL a standby did not receive.
-- Every slot starts at or above it, so the new life's ids lie above every id of the last
-- one whose WAL survived, whatever the clock says. The floor sits in an unlogged table, which
-- PostgreSQL empties after a crash and which a promoted standby starts empty.

DO $slots$
BEGIN
  -- 1024 slots, the most the default 10 worker bits number (node_bits 0); the default
  -- layout uses the first 256.
  FOR slot IN 0 .. 1023 LOOP
    IF pg_catalog.to_regclass('@extschema@.snowflake_slot_' || slot) IS NULL THEN
      EXECUTE pg_catalog.format('CREATE SEQUENCE @extschema@.%I AS bigint MINVALUE 0 START 0 NO CYCLE',
                                'snowflake_slot_' || slot);
      -- A dump carries each slot's last pair: a restored database goes on above it.
      PERFORM @extschema@.snowflake_sql_dump_with(('@extschema@.snowflake_slot_' || slot)::pg_catalog.regclass, '');
    END IF;
  END LOOP;
END
$slots$;

CREATE UNLOGGED TABLE IF NOT EXISTS @extschema@.snowflake_life (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    floor bigint NOT NULL
);

-- snowflake_sql_slot_sequence(slot): the sequence of a slot.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_slot_sequence(slot integer) RETURNS regclass
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN ('@extschema@.snowflake_slot_' || slot)::regclass;

-- snowflake_sql_minted(): whether any slot has handed out an id.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_minted() RETURNS boolean
LANGUAGE sql VOLATILE
RETURN EXISTS (SELECT FROM generate_series(0, 1023) slot
                WHERE pg_sequence_last_value(@extschema@.snowflake_sql_slot_sequence(slot)) IS NOT NULL);
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_minted() FROM PUBLIC;

-- The functions of an earlier build that this one replaces (a psql -f or pg_tle update),
-- dropped where they exist (DROP ... IF EXISTS would print a notice at every install).
DO $dropped$
DECLARE
  f text;
BEGIN
  FOREACH f IN ARRAY ARRAY['@extschema@.snowflake_sql_mint(bigint)',
                           '@extschema@.snowflake_sql_take_slot(@extschema@.snowflake_settings)'] LOOP
    IF pg_catalog.to_regprocedure(f) IS NOT NULL THEN
      EXECUTE 'DROP FUNCTION ' || f;
    END IF;
  END LOOP;
END
$dropped$;

-- snowflake_sql_slot_oids(slots): the sequences of the first `slots` slots, as oids.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_slot_oids(slots integer) RETURNS oid[]
LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN (SELECT array_agg(@extschema@.snowflake_sql_slot_sequence(i)::oid ORDER BY i)
          FROM generate_series(0, slots - 1) i);

-- snowflake_sql_template(): the code of snowflake_next() and snowflake_next(gene), which
-- snowflake_sql_compile fills in; its words {LIKE_THIS} are filled in there.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_template() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN $template$
CREATE OR REPLACE FUNCTION @extschema@.{NAME}({ARGS}) RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER AS $body$
-- Made by snowflake_sql_compile (fingerprint {FINGERPRINT}): do not edit.
DECLARE
  cached pg_catalog.text := pg_catalog.current_setting('snowflake_sql.slot', true);
  slot integer := CASE WHEN cached OPERATOR(pg_catalog.~) '^[0-9]{1,4}$' THEN cached::integer END;
  t bigint;
  v bigint;
  vt bigint;
BEGIN
  {GENE_CHECK}
  -- The cached slot, proven ours (see the top of this file). In a read-only transaction
  -- the first call of a session is refused here, with a hint; a later one by nextval.
  IF slot IS NULL OR slot OPERATOR(pg_catalog.>=) {SLOTS}
     OR NOT pg_catalog.pg_try_advisory_lock(1936617335, slot) THEN
    IF pg_catalog.current_setting('transaction_read_only') OPERATOR(pg_catalog.=) 'on' THEN
      PERFORM @extschema@.snowflake_sql_refuse_read_only();
    END IF;
    slot := @extschema@.snowflake_sql_take_slot('{FINGERPRINT}');
    IF slot IS NULL THEN
      -- Made again from the settings in force: the new code makes this call's id, in its
      -- copy under another name, which PL/pgSQL can compile while this old code runs.
      RETURN @extschema@.snowflake_sql_next_made({SELF});
    END IF;
  END IF;
  -- The clock's tick since the epoch, rounded down: date_part's seconds as a float8 (to
  -- within a fraction of a microsecond), the half tick taken off before the rounding cast.
  -- Before the epoch it is negative.
  t := (pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) {TICKS_PER_SECOND}::pg_catalog.float8
        OPERATOR(pg_catalog.-) {EPOCH_TICKS_AND_A_HALF}::pg_catalog.float8)::bigint;
  v := pg_catalog.nextval(('{SEQUENCES}'::pg_catalog.regclass[])[slot]);
  vt := v OPERATOR(pg_catalog.>>) {SEQUENCE_BITS};
  IF vt OPERATOR(pg_catalog.<) t THEN
    IF t OPERATOR(pg_catalog.>) {MAX_TICKS} THEN
      PERFORM @extschema@.snowflake_sql_refuse('time full');
    END IF;
    -- An assignment, not PERFORM: no query of its own.
    v := pg_catalog.setval(('{SEQUENCES}'::pg_catalog.regclass[])[slot], t OPERATOR(pg_catalog.<<) {SEQUENCE_BITS});
    vt := t;
  ELSIF t OPERATOR(pg_catalog.<) 0 OR vt OPERATOR(pg_catalog.>) LEAST(t OPERATOR(pg_catalog.+) {LEAD}, {MAX_TICKS}) THEN
    -- Before the epoch, past the lead bound, or past the time field: refused or waited out.
    PERFORM @extschema@.snowflake_sql_wait(vt, v, t, {EPOCH_MS}, {UNIT_MS}, {LEAD}, {SEQUENCE_BITS}, {MAX_LEAD_MS}, {MAX_TICKS});
  END IF;
  -- The node and slot fields of each slot are one constant of the array. Parenthesized:
  -- PostgreSQL gives the OPERATOR() forms one precedence, left to right.
  RETURN (vt OPERATOR(pg_catalog.<<) {TIME_SHIFT})
         OPERATOR(pg_catalog.|) ('{NODE_AND_SLOT_PARTS}'::pg_catalog.int8[])[slot]
         OPERATOR(pg_catalog.|) {SEQUENCE_PART}
         {GENE_PART};
END
$body$;
$template$;

-- snowflake_sql_fingerprint(settings): what snowflake_next() is made from (see
-- snowflake_sql_compile): the release, the settings that minting reads, and the slots'
-- sequences, whose oids a dump and restore changes, and the code's template. Time zone
-- free: the epoch in ms.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_fingerprint(s @extschema@.snowflake_settings)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
RETURN md5(format('@version@ %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s', md5(@extschema@.snowflake_sql_template()), s.node_id, s.epoch_ms, s.unit_ms,
                  s.max_lead_ms, s.time_bits, s.time_shift, s.node_bits, s.node_shift, s.slot_bits,
                  s.slot_shift, s.sequence_bits, s.sequence_shift, s.gene_bits,
                  @extschema@.snowflake_sql_slot_oids(1 << s.slot_bits)));

-- snowflake_sql_refuse_read_only(): the error of a call in a read-only transaction or on
-- a standby: a slot's sequence cannot be advanced there.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_refuse_read_only() RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF pg_is_in_recovery() THEN
    RAISE EXCEPTION 'cannot mint snowflake ids on a server in recovery'
      USING ERRCODE = 'read_only_sql_transaction',
            HINT = 'A standby shares its primary''s slots and node id: mint ids on the primary.';
  END IF;
  RAISE EXCEPTION 'cannot mint snowflake ids in a read-only transaction'
    USING ERRCODE = 'read_only_sql_transaction',
          DETAIL = 'The SQL edition keeps each slot''s last id in a sequence, which a read-only transaction cannot advance.',
          HINT = 'Mint in a read-write transaction: BEGIN READ WRITE, or SET default_transaction_read_only = off for the session.';
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_refuse_read_only() FROM PUBLIC;

-- snowflake_sql_wait(vt, v, t, ...): the rare case of a call: the clock's tick t is before
-- the epoch, or the pair's tick vt is past the time field or more than the lead bound
-- ahead of the clock. Refuses the first two; waits while the excess is short (10 ms, or
-- one tick of a longer unit), re-reading the clock; refuses a longer one with the native's
-- 55000 error.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_wait(vt bigint, v bigint, t bigint, epoch_ms bigint,
    unit_ms integer, lead bigint, sequence_bits integer, max_lead_ms integer, max_ticks bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  excess bigint;
BEGIN
  IF t < 0 THEN
    PERFORM @extschema@.snowflake_sql_refuse('before epoch');
  END IF;
  IF vt > max_ticks THEN
    PERFORM @extschema@.snowflake_sql_refuse('time full');
  END IF;
  LOOP
    excess := vt - t - lead;
    EXIT WHEN excess <= 0;
    IF excess > greatest(10 / unit_ms, 1) THEN
      RAISE EXCEPTION 'the system clock is % ms behind the last snowflake id of this backend slot',
          (((v - 1) >> sequence_bits) - t) * unit_ms
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = format('A step back of up to max_lead_ms (%s ms) is absorbed; this one is larger. The last id may be from before a restart or a failover: no id is minted below it.', max_lead_ms),
              HINT = 'Retry once the clock has caught up, or raise max_lead_ms with snowflake_configure.';
    END IF;
    PERFORM pg_sleep(excess * unit_ms / 1000.0);
    t := (round(date_part('epoch', clock_timestamp()) * 1000000)::bigint / 1000 - epoch_ms) / unit_ms;
  END LOOP;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_wait(bigint, bigint, bigint, bigint, integer, bigint, integer, integer, bigint) FROM PUBLIC;

-- snowflake_sql_refuse(kind): the rare errors of a call, out of its hot path.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_refuse(kind text) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  CASE kind
    WHEN 'before epoch' THEN
      RAISE EXCEPTION 'the system clock reads a time before snowflake.epoch'
        USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Check the system clock and snowflake.epoch.';
    WHEN 'time full' THEN
      RAISE EXCEPTION 'the time field of the layout is full: the time range from snowflake.epoch is used up'
        USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Check the system clock and snowflake.epoch.';
    WHEN 'null gene' THEN
      RAISE EXCEPTION 'the gene of snowflake_next(gene) cannot be NULL'
        USING ERRCODE = 'null_value_not_allowed';
    WHEN 'no gene bits' THEN
      RAISE EXCEPTION 'this server''s layout has no gene bits'
        USING ERRCODE = 'object_not_in_prerequisite_state',
              HINT = 'Give the layout a gene field, such as ''time:41, node:2, slot:8, sequence:8, gene:4'' (snowflake_configure, before any id is minted), or call snowflake_next() without a gene.';
  END CASE;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_refuse(text) FROM PUBLIC;

-- snowflake_sql_take_slot(fingerprint): a slot for this session, locked; the slot it
-- holds already if a RESET ALL made it forget, else the first free one from a place that
-- depends on the process (so sessions spread over the slots, and a session that gave its
-- slot up, by DISCARD ALL, finds it again if no other session took it meanwhile). Claims
-- the node id, and raises the slot's sequence to the floor of this server life. NULL,
-- with no slot taken, when the calling snowflake_next() was made from other settings
-- than those in force (fingerprint): it is made again, and the caller calls the new one.
-- Run as the installing role.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_take_slot(fingerprint text)
RETURNS integer LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  s @extschema@.snowflake_settings := @extschema@.snowflake_sql_settings();
  slots constant integer := 1 << s.slot_bits;
  slot integer;
  start integer := pg_backend_pid() % slots;
  floor_pair bigint;
  last_pair bigint;
  excess_ms bigint;
  seq regclass;
BEGIN
  IF fingerprint IS DISTINCT FROM @extschema@.snowflake_sql_fingerprint(s) THEN
    PERFORM @extschema@.snowflake_sql_compile(s);
    RETURN NULL;
  END IF;
  PERFORM @extschema@.snowflake_sql_claim(s, true);
  SELECT l.objid::integer INTO slot
    FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.classid = 1936617335 AND l.objsubid = 2 AND l.pid = pg_backend_pid() AND l.granted
     AND l.objid < slots
   ORDER BY l.objid LIMIT 1;
  IF slot IS NULL THEN
    FOR i IN 0 .. slots - 1 LOOP
      IF pg_try_advisory_lock(1936617335, (start + i) % slots) THEN
        slot := (start + i) % slots;
        EXIT;
      END IF;
    END LOOP;
  END IF;
  IF slot IS NULL THEN
    RAISE EXCEPTION 'all % snowflake slots of database "%" are held', slots, current_database()
      USING ERRCODE = 'too_many_connections',
            DETAIL = format('The layout ''%s'' numbers %s slots; each session that mints holds one until it ends.',
                            s.layout, slots),
            HINT = 'Retry when a session has ended, end idle sessions that minted, or give the layout more slot bits before any id is minted.';
  END IF;
  SELECT f.floor INTO floor_pair FROM @extschema@.snowflake_life f;
  IF NOT FOUND THEN
    SELECT max(pg_sequence_last_value(@extschema@.snowflake_sql_slot_sequence(i))) INTO last_pair
      FROM generate_series(0, 1023) i;
    -- One tick past the last pair, and the margin: 1 s, as the native's at promotion.
    floor_pair := CASE WHEN last_pair IS NULL THEN 0
                       ELSE ((last_pair >> s.sequence_bits) + 1 + 1000 / s.unit_ms) << s.sequence_bits END;
    INSERT INTO @extschema@.snowflake_life VALUES (true, floor_pair) ON CONFLICT DO NOTHING;
    SELECT f.floor INTO floor_pair FROM @extschema@.snowflake_life f;
  END IF;
  seq := @extschema@.snowflake_sql_slot_sequence(slot);
  last_pair := pg_sequence_last_value(seq);
  IF last_pair IS NULL OR last_pair < floor_pair THEN
    PERFORM setval(seq, floor_pair, false);
    -- The floor of a new life may lie ahead of the clock by the margin, the old life's
    -- lead and a clock behind the old one's: a new session waits out what passes the
    -- lead bound, up to the margin and one lead bound more (as the native's new backends
    -- do after a promotion); a larger gap is the calls' 55000 error until the clock catches up.
    excess_ms := ((floor_pair >> s.sequence_bits) * s.unit_ms + s.epoch_ms)
                 - (round(date_part('epoch', clock_timestamp()) * 1000000)::bigint / 1000) - s.max_lead_ms;
    IF excess_ms > 0 AND excess_ms <= 1000 + s.max_lead_ms THEN
      PERFORM pg_sleep(excess_ms / 1000.0);
    END IF;
  END IF;
  PERFORM set_config('snowflake_sql.slot', slot::text, false);
  RETURN slot;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_take_slot(text) FROM PUBLIC;

-- snowflake_sql_compile(settings): makes snowflake_next() and snowflake_next(gene) for the
-- settings, with every setting, shift and mask, and the oid of every slot's sequence, a
-- constant of their code, so that a call reads no table and looks no name up. Run when
-- the settings change (snowflake_configure), at install and update, and by the first call
-- of a session that finds its function made from other settings or sequences than those
-- in force (after a dump is restored, say). One maker at a time; none when nothing changed.
--
-- What a call costs, and why it is written so (docs/managed.md, "Speed"): a PL/pgSQL call
-- is the floor; reading the settings table cost about 5 µs a call, and a SET clause
-- (search_path) on the function 2.3 µs on PostgreSQL 15 (the path is computed again on
-- entry and exit). So the made functions have no SET clause: every
-- name in them is qualified (pg_catalog.f(), OPERATOR(pg_catalog.x), pg_catalog types and
-- the edition's schema), and nothing in them is looked up in the caller's search_path, nor
-- in pg_temp (searched only for relations and types, and they name none unqualified).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_compile(s @extschema@.snowflake_settings)
RETURNS void LANGUAGE plpgsql VOLATILE
-- No check of the bodies when they are made: that check compiles them into the session's
-- cache while a call of the old code may be running in a statement (the first call after
-- a restore), and the statement's next call, compiling them again, then warns "trying to
-- insert a function that already exists". The first call compiles them instead.
SET search_path = pg_catalog, pg_temp SET check_function_bodies = off AS $compile$
DECLARE
  fingerprint constant text := @extschema@.snowflake_sql_fingerprint(s);
  template constant text := @extschema@.snowflake_sql_template();
  slots constant integer := 1 << s.slot_bits;
  code text;
  code_plain text;
  code_gene text;
BEGIN
  PERFORM pg_advisory_xact_lock(1936617336, -1);
  IF substring((SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure('@extschema@.snowflake_next()'))
               FROM 'fingerprint ([0-9a-f]{32})') IS NOT DISTINCT FROM fingerprint THEN
    RETURN;
  END IF;
  code := replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
      template, '{FINGERPRINT}', fingerprint),
      '{SLOTS}', slots::text),
      '{SEQUENCES}', format('[0:%s]=%s', slots - 1, @extschema@.snowflake_sql_slot_oids(slots))),
      '{NODE_AND_SLOT_PARTS}', format('[0:%s]=%s', slots - 1,
          (SELECT array_agg((s.node_id::bigint << s.node_shift) | (i::bigint << s.slot_shift) ORDER BY i)
             FROM generate_series(0, slots - 1) i))),
      '{TICKS_PER_SECOND}', (1000 / s.unit_ms)::text),
      '{EPOCH_TICKS_AND_A_HALF}', (s.epoch_ms::numeric / s.unit_ms + 0.5)::text),
      '{EPOCH_MS}', s.epoch_ms::text),
      '{UNIT_MS}', s.unit_ms::text),
      '{SEQUENCE_BITS}', s.sequence_bits::text),
      '{LEAD}', (s.max_lead_ms / s.unit_ms)::text),
      '{MAX_LEAD_MS}', s.max_lead_ms::text),
      '{MAX_TICKS}', (9223372036854775807 >> (63 - s.time_bits))::text),
      '{TIME_SHIFT}', s.time_shift::text);
  -- The sequence field of the pair, shifted into place unless it sits at the low end.
  code := replace(code, '{SEQUENCE_PART}', format(CASE WHEN s.sequence_shift = 0 THEN '(v OPERATOR(pg_catalog.&) %s::bigint)'
      ELSE '((v OPERATOR(pg_catalog.&) %s::bigint) OPERATOR(pg_catalog.<<) %s)' END,
      (1::bigint << s.sequence_bits) - 1, s.sequence_shift));
  -- snowflake_next(): no gene.
  code_plain := replace(replace(replace(replace(code, '{ARGS}', ''), '{SELF}', ''), '{GENE_CHECK}', ''), '{GENE_PART}', '');
  -- snowflake_next(gene): not strict (a NULL gene is an error, not a NULL id); refused by
  -- a layout without gene bits, after the read-only check, as the native does.
  code_gene := replace(replace(replace(replace(code, '{ARGS}', 'gene bigint'), '{SELF}', 'gene'),
      '{GENE_CHECK}',
      'IF gene IS NULL THEN PERFORM @extschema@.snowflake_sql_refuse(''null gene''); END IF;'
      || CASE WHEN s.gene_bits = 0 THEN '
  IF pg_catalog.current_setting(''transaction_read_only'') OPERATOR(pg_catalog.=) ''on'' THEN
    PERFORM @extschema@.snowflake_sql_refuse_read_only();
  END IF;
  PERFORM @extschema@.snowflake_sql_refuse(''no gene bits'');' ELSE '' END),
    '{GENE_PART}',
    format('OPERATOR(pg_catalog.|) (gene OPERATOR(pg_catalog.&) %s::bigint)', (1::bigint << s.gene_bits) - 1));
  -- Each twice: the functions callers call, and the copies that a call made from other
  -- settings hands over to once this has made the new code (internal: not PUBLIC's).
  EXECUTE replace(code_plain, '{NAME}', 'snowflake_sql_next_made');
  EXECUTE replace(code_gene, '{NAME}', 'snowflake_sql_next_made');
  REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_next_made(), @extschema@.snowflake_sql_next_made(bigint) FROM PUBLIC;
  EXECUTE replace(code_plain, '{NAME}', 'snowflake_next');
  EXECUTE replace(code_gene, '{NAME}', 'snowflake_next');
END
$compile$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_compile(@extschema@.snowflake_settings) FROM PUBLIC;

SELECT @extschema@.snowflake_sql_compile(@extschema@.snowflake_sql_settings());

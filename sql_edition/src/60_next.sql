-- snowflake_next(): minting without a lock shared by every call.
--
-- Slots. A session mints under a slot it holds while it lives: a session-level advisory
-- lock (key space 1936617335, 'snow', and the slot number), taken at its first id and held
-- twice, so that each call can prove the slot is still its own by letting one hold go and
-- taking it back, which PostgreSQL does in the session's own lock table without touching
-- shared memory. The number in the session's setting snowflake_sql.slot is a cache that
-- any role could SET: it is believed only once that proof passes.
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
-- Start of a server life. After a crash restart or a promotion, the first session to take
-- a slot sets the floor of the life: one tick past the last pair of every slot. Every slot
-- starts at or above it, so the new life's ids lie above every id of the last one whose
-- WAL survived, whatever the clock says. The floor sits in an unlogged table, which
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

-- snowflake_sql_take_slot(settings): a slot for this session, held twice; the slot it
-- holds already if a RESET ALL made it forget, else the first free one from a place that
-- depends on the process (so sessions spread over the slots). Claims the node id, and
-- raises the slot's sequence to the floor of this server life. Run as the installing role.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_take_slot(s @extschema@.snowflake_settings)
RETURNS integer LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  slots constant integer := 1 << s.slot_bits;
  slot integer;
  start integer := pg_backend_pid() % slots;
  floor_pair bigint;
  last_pair bigint;
  seq regclass;
BEGIN
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
  PERFORM pg_advisory_lock(1936617335, slot);
  SELECT f.floor INTO floor_pair FROM @extschema@.snowflake_life f;
  IF NOT FOUND THEN
    SELECT max(pg_sequence_last_value(@extschema@.snowflake_sql_slot_sequence(i))) INTO last_pair
      FROM generate_series(0, 1023) i;
    floor_pair := CASE WHEN last_pair IS NULL THEN 0
                       ELSE ((last_pair >> s.sequence_bits) + 1) << s.sequence_bits END;
    INSERT INTO @extschema@.snowflake_life VALUES (true, floor_pair) ON CONFLICT DO NOTHING;
  END IF;
  seq := @extschema@.snowflake_sql_slot_sequence(slot);
  last_pair := pg_sequence_last_value(seq);
  IF last_pair IS NULL OR last_pair < floor_pair THEN
    PERFORM setval(seq, floor_pair, false);
  END IF;
  PERFORM set_config('snowflake_sql.slot', slot::text, false);
  RETURN slot;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_take_slot(@extschema@.snowflake_settings) FROM PUBLIC;

-- snowflake_sql_mint(gene): the next id of this session's slot; gene NULL for none.
-- Called by snowflake_next(), as the installing role, under its search_path.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_mint(gene bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  s @extschema@.snowflake_settings;
  cached text := current_setting('snowflake_sql.slot', true);
  slot integer;
  seq regclass;
  t bigint;
  v bigint;
  vt bigint;
  lead bigint;
  excess bigint;
BEGIN
  IF current_setting('transaction_read_only') = 'on' THEN
    IF pg_is_in_recovery() THEN
      RAISE EXCEPTION 'cannot mint snowflake ids on a server in recovery'
        USING ERRCODE = 'read_only_sql_transaction',
              HINT = 'A standby shares its primary''s slots and node id: mint ids on the primary.';
    END IF;
    RAISE EXCEPTION 'cannot mint snowflake ids in a read-only transaction'
      USING ERRCODE = 'read_only_sql_transaction',
            DETAIL = 'The SQL edition keeps each slot''s last id in a sequence, which a read-only transaction cannot advance.',
            HINT = 'Mint in a read-write transaction.';
  END IF;
  SELECT * INTO s FROM @extschema@.snowflake_settings ORDER BY configured DESC LIMIT 1;
  IF gene IS NOT NULL AND s.gene_bits = 0 THEN
    RAISE EXCEPTION 'this server''s layout has no gene bits'
      USING ERRCODE = 'object_not_in_prerequisite_state',
            HINT = 'Give the layout a gene field, such as ''time:41, node:2, slot:8, sequence:8, gene:4'' (snowflake_configure, before any id is minted), or call snowflake_next() without a gene.';
  END IF;
  -- The cached slot, proven ours: letting one of our two holds go succeeds only if we
  -- hold it, and taking it back is then immediate.
  IF cached ~ '^[0-9]{1,4}$' THEN
    slot := cached::integer;
    IF slot >= 1 << s.slot_bits OR NOT pg_advisory_unlock(1936617335, slot) THEN
      slot := NULL;
    ELSIF NOT pg_try_advisory_lock(1936617335, slot) THEN
      slot := NULL; -- we held it once only, and another session took it meanwhile
    END IF;
  END IF;
  IF slot IS NULL THEN
    slot := @extschema@.snowflake_sql_take_slot(s);
  END IF;
  seq := ('@extschema@.snowflake_slot_' || slot)::regclass;
  t := (round(date_part('epoch', clock_timestamp()) * 1000000)::bigint / 1000 - s.epoch_ms);
  IF t < 0 THEN
    RAISE EXCEPTION 'the system clock reads a time before snowflake.epoch'
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Check the system clock and snowflake.epoch.';
  END IF;
  t := t / s.unit_ms;
  v := nextval(seq);
  vt := v >> s.sequence_bits;
  IF vt < t THEN
    v := t << s.sequence_bits;
    PERFORM setval(seq, v);
    vt := t;
  ELSIF vt > t THEN
    lead := s.max_lead_ms / s.unit_ms;
    LOOP
      excess := vt - t - lead;
      EXIT WHEN excess <= 0;
      IF excess > greatest(10 / s.unit_ms, 1) THEN
        RAISE EXCEPTION 'the system clock is % ms behind the last snowflake id of this backend slot',
            (((v - 1) >> s.sequence_bits) - t) * s.unit_ms
          USING ERRCODE = 'object_not_in_prerequisite_state',
                DETAIL = format('A step back of up to max_lead_ms (%s ms) is absorbed; this one is larger. The last id may be from before a restart or a failover: no id is minted below it.', s.max_lead_ms),
                HINT = 'Retry once the clock has caught up, or raise max_lead_ms with snowflake_configure.';
      END IF;
      PERFORM pg_sleep(excess * s.unit_ms / 1000.0);
      t := (round(date_part('epoch', clock_timestamp()) * 1000000)::bigint / 1000 - s.epoch_ms) / s.unit_ms;
    END LOOP;
  END IF;
  IF vt > 9223372036854775807 >> (63 - s.time_bits) THEN
    RAISE EXCEPTION 'the time field of the layout is full: the time range from snowflake.epoch is used up'
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'Check the system clock and snowflake.epoch.';
  END IF;
  -- Parenthesized: PostgreSQL gives <<, | and & one precedence, left to right.
  RETURN (vt << s.time_shift)
       | (s.node_id::bigint << s.node_shift)
       | (slot::bigint << s.slot_shift)
       | ((v & ((1::bigint << s.sequence_bits) - 1)) << s.sequence_shift)
       | coalesce(gene & ((1::bigint << s.gene_bits) - 1), 0);
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_mint(bigint) FROM PUBLIC;

-- snowflake_next(): the column default. Volatile; parallel unsafe, as nextval is.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_next() RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN @extschema@.snowflake_sql_mint(NULL);
END
$$;

-- snowflake_next(gene): an id whose gene field copies the low bits of a related key. Not
-- strict: a NULL gene is an error, not a NULL id.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_next(gene bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF gene IS NULL THEN
    RAISE EXCEPTION 'the gene of snowflake_next(gene) cannot be NULL'
      USING ERRCODE = 'null_value_not_allowed';
  END IF;
  RETURN @extschema@.snowflake_sql_mint(gene);
END
$$;

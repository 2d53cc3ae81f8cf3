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
-- is behind the clock, setval to the clock's pair (below). A pair ahead of the clock (a
-- burst that spent its tick, or a clock stepped back) is taken up to max_lead_ms ahead;
-- past that a short wait (10 ms, or one tick of a longer unit) is slept out and a longer
-- one refused.
--
-- The sequence and the clock. Where the layout puts the sequence right below the time
-- (snowflake_sql_follows_clock, 10_layout.sql; the default layout), the clock is read in
-- units of the sequence, 2^-sequence_bits of a tick, so that the clock's pair is its tick
-- and its fraction of the tick scaled to the sequence, floor(fraction * 2^sequence_bits),
-- as the native's generator (snowflake_core/src/generator.rs) takes it. With follow_clock
-- (the default there), a call whose pair nextval finds more than a window of 32 µs behind
-- the clock takes the clock's pair instead (setval): a slot's first id of a tick, and any
-- later one minted after a pause. Ids of every slot then sort by the time they were
-- minted, to within the window, and concurrent writers reach the primary key's B-tree in
-- key order, leaving its pages as full as bigserial's (docs/managed.md, "The order of
-- ids"). The native's take the clock's pair at every call the clock is ahead; here each
-- setval writes WAL, where nextval writes it once every 32 calls, and costs a call as
-- much as 0.3.0's first id of a millisecond: the window keeps it off the calls of a loop
-- or a batch, a few microseconds apart, which count on by nextval alone. Without
-- follow_clock, only a slot's first id of a tick takes the clock's pair (also when
-- nextval took the tick at sequence 0 after a spent one, or a wait for a spent tick let
-- the clock pass the pair), and its later ids of the tick count on from it: ids of
-- several slots minted in one tick sort by when each slot began minting in it. On other
-- layouts, 0.3.0's rule: a new tick starts the sequence at 0.
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
                           '@extschema@.snowflake_sql_take_slot(@extschema@.snowflake_settings)',
                           '@extschema@.snowflake_sql_refuse(text)',
                           -- Before slot ranges (a slots argument):
                           '@extschema@.snowflake_configure(integer, text, text, integer)',
                           -- Before follow_clock:
                           '@extschema@.snowflake_configure(integer, text, text, integer, text)',
                           '@extschema@.snowflake_sql_settings_row(boolean, integer, text, text, integer)'] LOOP
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

-- snowflake_sql_follow_window_us(): with follow_clock, how far behind the clock, in µs, a
-- slot's next pair may be and still be taken (the top of this file).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_follow_window_us() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 32;

-- snowflake_sql_fill(code, words): code with each word of the pairs (word, text) replaced
-- by its text, in their order: a text may bring words that a later pair fills.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_fill(code text, words text[]) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  FOR i IN 1 .. array_length(words, 1) BY 2 LOOP
    code := replace(code, words[i], words[i + 1]);
  END LOOP;
  RETURN code;
END
$$;

-- snowflake_sql_template(): the code of snowflake_next() and snowflake_next(gene), which
-- snowflake_sql_compile fills in; its words {LIKE_THIS} are filled in there.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_template() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN $template$
CREATE OR REPLACE FUNCTION @extschema@.{NAME}({ARGS}) RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER AS $body$
-- Made by snowflake_sql_compile (fingerprint {FINGERPRINT}): do not edit.
DECLARE
  -- The cached slot (see the top of this file). RESET leaves ''; a word SET by hand in
  -- its place fails its cast, and a number that names no slot is refused below.
  cached pg_catalog.text := pg_catalog.current_setting('snowflake_sql.slot', true);
  slot integer := CASE WHEN cached OPERATOR(pg_catalog.<>) '' THEN cached::integer END;
  t bigint;
  v bigint;{CLOCK_PAIR_DECLARATION}
BEGIN
  {GENE_CHECK}
  -- The cached slot, proven ours. In a read-only transaction the first call of a session
  -- is refused here, with a hint; a later one by nextval.
  IF slot IS NULL OR NOT pg_catalog.pg_try_advisory_lock(1936617335, slot) THEN
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
  -- The common path is these two statements, one test and the id's fields: PostgreSQL
  -- sets up every expression of a PL/pgSQL function again in each transaction, and each
  -- function or operator in it costs about as much as the call's own work
  -- (docs/managed.md, "Speed").
  v := pg_catalog.nextval(('{SEQUENCES}'::pg_catalog.regclass[])[slot]);
  -- The clock since the epoch, {CLOCK_UNIT}, rounded down: date_part's seconds as a float8
  -- (to within a fraction of a microsecond, the clock's own step, which is a few units of
  -- a sequence of 12 bits or more), half a unit taken off before the rounding cast. Before
  -- the epoch it is negative.
  {CLOCK} := {CLOCK_NOW};
  -- The pair's tick is the clock's (LEAST: a clock past the time field never is){BORROWED_TEST_WHY}.
  IF v IS NULL OR (v OPERATOR(pg_catalog.>>) {SEQUENCE_BITS}) OPERATOR(pg_catalog.<>) LEAST({CLOCK_TICK}, {MAX_TICKS}){BORROWED_TEST} THEN
    -- A call that takes the clock's pair, in as few statements as it can be (each costs
    -- the call about as much as its own work): a new tick, or with follow_clock a pair
    -- more than the window behind the clock, the clock well inside the time field. The
    -- rest below. Where the layout follows the clock, the clock is read again in the
    -- statement that sets the sequence and returns the id (the greater of the two reads,
    -- should the clock step back between them): the statements between the first read
    -- and the return take microseconds, and a session paused there by a busy server's
    -- scheduler would return an id older than the ids other sessions minted meanwhile.
    IF v OPERATOR(pg_catalog.<) {JUMP_BELOW} AND {CLOCK_BEFORE_WARNING} THEN
      {JUMP}
    ELSE
      {TICK_OF_CLOCK}
      IF v IS NULL THEN
        PERFORM @extschema@.snowflake_sql_refuse('no such slot', cached);
      ELSIF (v OPERATOR(pg_catalog.>>) {SEQUENCE_BITS}) OPERATOR(pg_catalog.<) t THEN
        -- A new tick: the pair moves to it. In the time field's last five years (WARN_TICKS,
        -- snowflake_sql_compile), or past its end: refused past the end, else the warning
        -- that the end nears, once a day in a session (55_counters.sql).
        IF t OPERATOR(pg_catalog.>) {WARN_TICKS} THEN
          IF t OPERATOR(pg_catalog.>) {MAX_TICKS} THEN
            PERFORM @extschema@.snowflake_sql_refuse('time full');
          END IF;
          PERFORM @extschema@.snowflake_sql_warn_epoch_end();
        END IF;
        -- An assignment, not PERFORM: no query of its own.
        v := pg_catalog.setval(('{SEQUENCES}'::pg_catalog.regclass[])[slot], {PAIR_OF_CLOCK});
      ELSIF t OPERATOR(pg_catalog.<) 0
            OR (v OPERATOR(pg_catalog.>>) {SEQUENCE_BITS}) OPERATOR(pg_catalog.>) LEAST(t OPERATOR(pg_catalog.+) {LEAD}, {MAX_TICKS}) THEN
        -- Before the epoch, past the lead bound, or past the time field: refused or waited out.
        PERFORM @extschema@.snowflake_sql_wait(v OPERATOR(pg_catalog.>>) {SEQUENCE_BITS}, v, t, {EPOCH_MS}, {UNIT_MS}, {LEAD}, {SEQUENCE_BITS}, {MAX_LEAD_MS}, {MAX_TICKS});{AFTER_WAIT}
      {CLOCK_TICK_BRANCH}ELSE
        -- Ahead within the lead bound: counted for the status (55_counters.sql).
        PERFORM @extschema@.snowflake_sql_note_ahead(v, t, {SEQUENCE_BITS}, {UNIT_MS});
      END IF;
      {TICK_OF_PAIR}
    END IF;
  END IF;
  -- The id from the pair v (snowflake_sql_compile writes it); the node and slot fields of
  -- each slot are one constant of the array.
  RETURN {ID};
END
$body$;
$template$;

-- snowflake_sql_fingerprint(settings): what snowflake_next() is made from (see
-- snowflake_sql_compile): the release, the settings that minting reads (the database's
-- range of slots among them), and the slots' sequences, whose oids a dump and restore
-- changes, and the code's template. Time zone free: the epoch in ms.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_fingerprint(s @extschema@.snowflake_settings)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE
RETURN md5(format('@version@ %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s %s', md5(@extschema@.snowflake_sql_template()), s.node_id, s.epoch_ms, s.unit_ms,
                  s.max_lead_ms, s.time_bits, s.time_shift, s.node_bits, s.node_shift, s.slot_bits,
                  s.slot_shift, s.sequence_bits, s.sequence_shift, s.gene_bits, s.first_slot, s.last_slot,
                  s.follow_clock, @extschema@.snowflake_sql_slot_oids(1 << s.slot_bits)));

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
-- 55000 error. Counts each wait and each refusal for the status, and notes a call still
-- ahead of the clock after its wait, as the native's generator does (55_counters.sql).
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
      -- Counted before the error: a sequence keeps the count through the error's rollback.
      PERFORM @extschema@.snowflake_sql_count('@extschema@.snowflake_status_clock_steps_refused');
      RAISE EXCEPTION 'the system clock is % ms behind the last snowflake id of this backend slot',
          (((v - 1) >> sequence_bits) - t) * unit_ms
        USING ERRCODE = 'object_not_in_prerequisite_state',
              DETAIL = format('A step back of up to max_lead_ms (%s ms) is absorbed; this one is larger. The last id may be from before a restart or a failover: no id is minted below it.', max_lead_ms),
              HINT = 'Retry once the clock has caught up, or raise max_lead_ms with snowflake_configure.';
    END IF;
    PERFORM @extschema@.snowflake_sql_count('@extschema@.snowflake_status_spent_tick_waits');
    PERFORM pg_sleep(excess * unit_ms / 1000.0);
    t := (round(date_part('epoch', clock_timestamp()) * 1000000)::bigint / 1000 - epoch_ms) / unit_ms;
  END LOOP;
  IF vt > t THEN
    PERFORM @extschema@.snowflake_sql_note_ahead(v, t, sequence_bits, unit_ms);
  END IF;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_wait(bigint, bigint, bigint, bigint, integer, bigint, integer, integer, bigint) FROM PUBLIC;

-- snowflake_sql_refuse(kind [, setting]): the rare errors of a call, out of its hot path.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_refuse(kind text, setting text DEFAULT NULL) RETURNS void
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
    WHEN 'no such slot' THEN
      RAISE EXCEPTION 'snowflake_sql.slot is "%", which names no slot of this database', setting
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'The setting caches the session''s slot: RESET snowflake_sql.slot, and the next call finds the slot again.';
    WHEN 'null gene' THEN
      RAISE EXCEPTION 'the gene of snowflake_next(gene) cannot be NULL'
        USING ERRCODE = 'null_value_not_allowed';
    WHEN 'no gene bits' THEN
      RAISE EXCEPTION 'this server''s layout has no gene bits'
        USING ERRCODE = 'object_not_in_prerequisite_state',
              HINT = 'Give the layout a gene field, such as ''time:41, sequence:8, node:2, slot:8, gene:4'' (snowflake_configure, before any id is minted), or call snowflake_next() without a gene.';
  END CASE;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_refuse(text, text) FROM PUBLIC;

-- snowflake_sql_take_slot(fingerprint): a slot of the database's range for this session,
-- locked; the slot it holds already if a RESET ALL made it forget, else the first free one
-- from a place that depends on the process (so sessions spread over the slots, and a
-- session that gave its slot up, by DISCARD ALL, finds it again if no other session took
-- it meanwhile). Claims
-- the node id, and raises the slot's sequence to the floor of this server life. NULL,
-- with no slot taken, when the calling snowflake_next() was made from other settings
-- than those in force (fingerprint): it is made again, and the caller calls the new one.
-- Run as the installing role.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_take_slot(fingerprint text)
RETURNS integer LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  s @extschema@.snowflake_settings := @extschema@.snowflake_sql_settings();
  slots constant integer := s.last_slot - s.first_slot + 1;
  slot integer;
  start integer := pg_backend_pid() % slots;
  floor_pair bigint;
  last_pair bigint;
  excess_ms bigint;
  seq regclass;
BEGIN
  -- In a REPEATABLE READ or SERIALIZABLE transaction the settings read above are those of
  -- its snapshot, which may be older than a snowflake_configure committed since. Code made
  -- from them, if the session still runs it, would take a slot and mint under settings no
  -- longer in force (after a move to the layout's order, ids of the worker-first order in
  -- ticks of the new one, which can equal ids of the new order); the code made from the
  -- settings in force would find them other than its own, and hand over to a compile that
  -- reads the code of the same snapshot, without end. Locking the row read fails instead
  -- with PostgreSQL's serialization failure (40001), which clients retry, when a
  -- transaction committed since the snapshot changed it: snowflake_configure changes every
  -- row of the table (50_nodes.sql). READ COMMITTED reads the settings as committed when
  -- the statement above began.
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    PERFORM FROM @extschema@.snowflake_settings x ORDER BY x.configured DESC LIMIT 1 FOR SHARE;
  END IF;
  IF fingerprint IS DISTINCT FROM @extschema@.snowflake_sql_fingerprint(s) THEN
    PERFORM @extschema@.snowflake_sql_compile(s);
    RETURN NULL;
  END IF;
  PERFORM @extschema@.snowflake_sql_claim(s, true);
  SELECT l.objid::integer INTO slot
    FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.classid = 1936617335 AND l.objsubid = 2 AND l.pid = pg_backend_pid() AND l.granted
     AND l.objid BETWEEN s.first_slot AND s.last_slot
   ORDER BY l.objid LIMIT 1;
  IF slot IS NULL THEN
    FOR i IN 0 .. slots - 1 LOOP
      IF pg_try_advisory_lock(1936617335, s.first_slot + (start + i) % slots) THEN
        slot := s.first_slot + (start + i) % slots;
        EXIT;
      END IF;
    END LOOP;
  END IF;
  IF slot IS NULL THEN
    RAISE EXCEPTION 'all % snowflake slots of database "%" are held', slots, current_database()
      USING ERRCODE = 'too_many_connections',
            DETAIL = format('It mints under slots %s-%s of the %s that layout ''%s'' numbers; each session that mints holds one until it ends.',
                            s.first_slot, s.last_slot, 1 << s.slot_bits, s.layout),
            HINT = 'Retry when a session has ended, end idle sessions that minted, or give the database more slots: a wider range (snowflake_configure(slots => ...)), or a layout with more slot bits before any id is minted.';
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
  PERFORM @extschema@.snowflake_sql_note_minting(seq);
  PERFORM set_config('snowflake_sql.slot', slot::text, false);
  RETURN slot;
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_take_slot(text) FROM PUBLIC;

-- snowflake_sql_compile(settings): makes snowflake_next() and snowflake_next(gene) for the
-- settings, with every setting, shift and mask, and the oid of each of the database's slots' sequences, a
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
  -- Whether the sequence follows the clock (the top of this file): then the clock is read
  -- in units of the sequence, 2^sequence_bits of them a tick, and else in ticks. Within
  -- the time field the clock's pair fits a bigint as the id does; a clock so far past it
  -- that the pair passes 2^63 (the time and sequence fields filling 62 or 63 bits) fails
  -- the cast with 22003 rather than 55000, "the time field of the layout is full": no id
  -- either way.
  follows constant boolean := @extschema@.snowflake_sql_follows_clock(s.layout);
  units constant bigint := CASE WHEN follows THEN 1::bigint << s.sequence_bits ELSE 1 END;
  -- The tick before the first in which fewer than five years (WARN_BEFORE_MS of
  -- snowflake_core/src/epoch_end.rs) are left before the time field ends; below 0 for a
  -- time field shorter than that, whose every new tick then asks.
  warn_ticks constant bigint := floor((((9223372036854775807 >> (63 - s.time_bits))::numeric + 1) * s.unit_ms
                                       - @extschema@.snowflake_sql_warn_before_ms() + 1) / s.unit_ms) - 1;
  id text;
  code text;
  code_plain text;
  code_gene text;
BEGIN
  PERFORM pg_advisory_xact_lock(1936617336, -1);
  IF substring((SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure('@extschema@.snowflake_next()'))
               FROM 'fingerprint ([0-9a-f]{32})') IS NOT DISTINCT FROM fingerprint THEN
    RETURN;
  END IF;
  -- The id. With the sequence right below the time, the pair v is the time and sequence
  -- fields side by side: the id is v times 2^sequence_shift, plus the node and slot
  -- fields, two operators. With the sequence field at the low end, as in the worker-first
  -- layout, the pair v is t << sequence_bits plus the sequence: the id is t times
  -- (2^time_shift - 2^sequence_bits), plus v, plus the node and slot fields, three
  -- operators where the fields one by one take four (each costs a call as much as its
  -- own work, above). Else the fields are put in place one by one. Parenthesized:
  -- PostgreSQL gives the OPERATOR() forms one precedence, left to right. {PAIR} is v, or
  -- where the layout follows the clock, in the call that takes the clock's pair, the
  -- setval that returns it (the template's JUMP).
  id := CASE WHEN follows THEN
      format('{PAIR} OPERATOR(pg_catalog.*) %s::bigint OPERATOR(pg_catalog.+) (''%s''::pg_catalog.int8[])[slot]',
             1::bigint << s.sequence_shift, '{NODE_AND_SLOT_PARTS}')
    WHEN s.sequence_shift = 0 THEN
      format('t OPERATOR(pg_catalog.*) %s::bigint OPERATOR(pg_catalog.+) v OPERATOR(pg_catalog.+) (''%s''::pg_catalog.int8[])[slot]',
             (1::bigint << s.time_shift) - (1::bigint << s.sequence_bits), '{NODE_AND_SLOT_PARTS}')
    ELSE
      format('(t OPERATOR(pg_catalog.<<) %s) OPERATOR(pg_catalog.|) (''%s''::pg_catalog.int8[])[slot] OPERATOR(pg_catalog.|) ((v OPERATOR(pg_catalog.&) %s::bigint) OPERATOR(pg_catalog.<<) %s)',
             s.time_shift, '{NODE_AND_SLOT_PARTS}', (1::bigint << s.sequence_bits) - 1, s.sequence_shift)
    END || ' {GENE_PART}';
  code := @extschema@.snowflake_sql_fill(template, ARRAY[
      '{ID}', replace(id, '{PAIR}', 'v'),
      '{JUMP}', CASE WHEN follows THEN 'RETURN ' || replace(id, '{PAIR}',
          'pg_catalog.setval((''{SEQUENCES}''::pg_catalog.regclass[])[slot], GREATEST(c, {CLOCK_NOW}))') || ';'
        ELSE 'v := pg_catalog.setval((''{SEQUENCES}''::pg_catalog.regclass[])[slot], {PAIR_OF_CLOCK});' END]);
  -- The clock, and what the rare paths take of it: its tick t, and the pair a new tick
  -- starts at.
  code := @extschema@.snowflake_sql_fill(code, CASE WHEN follows THEN ARRAY[
        '{CLOCK_PAIR_DECLARATION}', E'\n  c bigint;',
        '{CLOCK_UNIT}', 'in units of the sequence (2^-{SEQUENCE_BITS} of a tick)',
        '{CLOCK}', 'c',
        '{CLOCK_TICK}', '(c OPERATOR(pg_catalog.>>) {SEQUENCE_BITS})',
        '{TICK_OF_CLOCK}', 't := c OPERATOR(pg_catalog.>>) {SEQUENCE_BITS};',
        '{PAIR_OF_CLOCK}', 'c',
        '{CLOCK_BEFORE_WARNING}', 'c OPERATOR(pg_catalog.<) {WARN_PAIR}',
        -- With follow_clock, a pair more than the window behind the clock takes the
        -- clock's pair, as the native's do (they have no window). Without, only a tick's
        -- first: after a tick whose sequence was spent, nextval's pair is the next tick's
        -- at sequence 0, and when that tick is the clock's, its first id takes the clock's
        -- pair too, as a new tick's does.
        '{BORROWED_TEST_WHY}', CASE WHEN s.follow_clock THEN E', and the pair\n  -- not more than the window behind the clock (follow_clock)'
                                    ELSE E', and not\n  -- the first of a tick that nextval took at sequence 0 after a spent one' END,
        '{BORROWED_TEST}', CASE WHEN s.follow_clock THEN ' OR v OPERATOR(pg_catalog.<) (c OPERATOR(pg_catalog.-) {FOLLOW_WINDOW}::bigint)'
                                ELSE ' OR (v OPERATOR(pg_catalog.&) {SEQUENCE_MASK}::bigint) OPERATOR(pg_catalog.=) 0' END,
        '{JUMP_BELOW}', CASE WHEN s.follow_clock THEN '(c OPERATOR(pg_catalog.-) {FOLLOW_WINDOW}::bigint)'
                             ELSE '(c OPERATOR(pg_catalog.&) {TICK_MASK}::bigint)' END,
        -- The pair in the clock's tick and behind the clock where the branch above did
        -- not take the clock's: a tick nextval took at sequence 0 after a spent one, and
        -- with follow_clock a pair more than the window behind, in the time field's last
        -- five years.
        '{CLOCK_TICK_BRANCH}', E'ELSIF (v OPERATOR(pg_catalog.>>) {SEQUENCE_BITS}) OPERATOR(pg_catalog.=) t THEN\n        -- The clock''s tick, the pair behind the clock: the clock''s pair instead.\n        v := pg_catalog.setval((''{SEQUENCES}''::pg_catalog.regclass[])[slot], c);\n      ',
        -- After a wait for a spent tick the clock may have passed the pair (the native
        -- reads it again): the clock's pair then, within the time field.
        '{AFTER_WAIT}', E'\n        c := {CLOCK_NOW};\n        IF v OPERATOR(pg_catalog.<) c AND (c OPERATOR(pg_catalog.>>) {SEQUENCE_BITS}) OPERATOR(pg_catalog.<=) {MAX_TICKS} THEN\n          v := pg_catalog.setval((''{SEQUENCES}''::pg_catalog.regclass[])[slot], c);\n        END IF;',
        -- The id is made of v alone.
        '{TICK_OF_PAIR}', '']
    ELSE ARRAY[
        '{CLOCK_PAIR_DECLARATION}', '',
        '{CLOCK_UNIT}', 'in ticks',
        '{CLOCK}', 't',
        '{CLOCK_TICK}', 't',
        '{TICK_OF_CLOCK}', '',
        '{PAIR_OF_CLOCK}', 't OPERATOR(pg_catalog.<<) {SEQUENCE_BITS}',
        '{CLOCK_BEFORE_WARNING}', 't OPERATOR(pg_catalog.<=) {WARN_TICKS}',
        '{BORROWED_TEST_WHY}', '',
        '{BORROWED_TEST}', '',
        '{JUMP_BELOW}', '(t OPERATOR(pg_catalog.<<) {SEQUENCE_BITS})',
        '{CLOCK_TICK_BRANCH}', '',
        '{AFTER_WAIT}', '',
        '{TICK_OF_PAIR}', E'-- Ahead of the clock (a spent tick, a clock stepped back): the pair''s tick is the id''s.\n      t := v OPERATOR(pg_catalog.>>) {SEQUENCE_BITS};']
    END);
  code := @extschema@.snowflake_sql_fill(code, ARRAY[
      '{CLOCK_NOW}', E'(pg_catalog.date_part(''epoch'', pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.*) {CLOCK_PER_SECOND}::pg_catalog.float8\n        OPERATOR(pg_catalog.-) {EPOCH_CLOCK_AND_A_HALF}::pg_catalog.float8)::bigint',
      '{FINGERPRINT}', fingerprint,
      -- The database's slots only, under their own numbers: a slot outside its range (a
      -- number SET by hand) finds no sequence, which the code refuses.
      '{SEQUENCES}', format('[%s:%s]=%s', s.first_slot, s.last_slot,
          (@extschema@.snowflake_sql_slot_oids(s.last_slot + 1))[s.first_slot + 1:]),
      '{NODE_AND_SLOT_PARTS}', format('[%s:%s]=%s', s.first_slot, s.last_slot,
          (SELECT array_agg((s.node_id::bigint << s.node_shift) | (i::bigint << s.slot_shift) ORDER BY i)
             FROM generate_series(s.first_slot, s.last_slot) i)),
      '{CLOCK_PER_SECOND}', (1000 / s.unit_ms * units)::text,
      '{EPOCH_CLOCK_AND_A_HALF}', (s.epoch_ms::numeric / s.unit_ms * units + 0.5)::text,
      '{EPOCH_MS}', s.epoch_ms::text,
      '{UNIT_MS}', s.unit_ms::text,
      '{SEQUENCE_BITS}', s.sequence_bits::text,
      '{SEQUENCE_MASK}', ((1::bigint << s.sequence_bits) - 1)::text,
      '{TICK_MASK}', (-(1::bigint << s.sequence_bits))::text,
      -- follow_clock's window (the top of this file), in units of the sequence.
      '{FOLLOW_WINDOW}', ((1::bigint << s.sequence_bits) * @extschema@.snowflake_sql_follow_window_us() / (s.unit_ms * 1000))::text,
      '{LEAD}', (s.max_lead_ms / s.unit_ms)::text,
      '{MAX_LEAD_MS}', s.max_lead_ms::text,
      '{MAX_TICKS}', (9223372036854775807 >> (63 - s.time_bits))::text,
      '{WARN_TICKS}', warn_ticks::text,
      -- The first pair of the tick after it, below 2^63: the warning's tick is 5 years
      -- before the end of a time field that fits with the sequence.
      '{WARN_PAIR}', ((warn_ticks + 1) << s.sequence_bits)::text]);
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

-- What the status counts (70_status.sql), and the warning that the epoch ends. The native
-- counts in shared memory, from the server's start; here each figure is a sequence,
-- counted from the install. A sequence ignores ROLLBACK, so a count outlives the
-- transaction that made it, and the error right after it (a refused call). Only the rare
-- paths of a call count (snowflake_next()'s code, 60_next.sql, pays nothing on its common
-- path):
-- - spent_tick_waits, clock_steps_refused: each wait and each refusal of
--   snowflake_sql_wait, a pair too far ahead of the clock;
-- - clock_steps_absorbed, furthest_lead_ms: a call that mints ahead of the clock within
--   the lead bound (snowflake_sql_note_ahead);
-- - most_backends_minting: a session taking a slot (snowflake_sql_note_minting).
-- The sequences belong to the installing role and grant nothing to PUBLIC: a plain role
-- reads them through snowflake_status. A dump carries their values, as it carries the
-- slots' pairs: a psql -f install's sequences are dumped with the database in any case,
-- and an extension's are marked so that both kinds of install restore alike.

DO $counters$
DECLARE
  counter text;
BEGIN
  FOREACH counter IN ARRAY ARRAY['most_backends_minting', 'furthest_lead_ms', 'clock_steps_absorbed',
                                 'clock_steps_refused', 'spent_tick_waits'] LOOP
    IF pg_catalog.to_regclass('@extschema@.snowflake_status_' || counter) IS NULL THEN
      EXECUTE pg_catalog.format('CREATE SEQUENCE @extschema@.%I AS bigint', 'snowflake_status_' || counter);
      PERFORM @extschema@.snowflake_sql_dump_with(('@extschema@.snowflake_status_' || counter)::pg_catalog.regclass, '');
    END IF;
  END LOOP;
END
$counters$;

-- snowflake_sql_counted(counter): a figure of the status, 0 before its first count.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_counted(counter regclass) RETURNS bigint
LANGUAGE sql VOLATILE
RETURN coalesce(pg_sequence_last_value(counter), 0);
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_counted(regclass) FROM PUBLIC;

-- snowflake_sql_count(counter [, at_least]): adds one to a count of the status, or raises
-- a maximum of the status to at_least. By setval, not nextval: nextval writes to WAL 32
-- values ahead, so after a crash restart or on a promoted standby a count would show up
-- to 32 events that never happened; setval writes the value itself. Read and written
-- under a session-level advisory lock (1936617336, -2; key space 1936617336 is the
-- edition's own, -1 is snowflake_sql_compile's), so that concurrent sessions neither lose
-- a count nor lower a maximum. A transaction-level lock would hold every other counting
-- session until this transaction ends (a long INSERT that waits on spent ticks); this one
-- is held for two statements, and let go on an error or a cancel too.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_count(counter regclass, at_least bigint DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  was bigint;
BEGIN
  PERFORM pg_advisory_lock(1936617336, -2);
  BEGIN
    was := @extschema@.snowflake_sql_counted(counter);
    IF at_least IS NULL OR at_least > was THEN
      PERFORM setval(counter, coalesce(at_least, was + 1));
    END IF;
  EXCEPTION WHEN OTHERS OR query_canceled THEN
    PERFORM pg_advisory_unlock(1936617336, -2);
    RAISE;
  END;
  PERFORM pg_advisory_unlock(1936617336, -2);
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_count(regclass, bigint) FROM PUBLIC;

-- snowflake_sql_note_ahead(v, t, sequence_bits, unit_ms): a call mints pair v ahead of the
-- clock's tick t, within the lead bound: a burst that spent a tick's sequence, or a clock
-- stepped back. As the native's note_ahead (snowflake_core/src/generator.rs): a step back
-- absorbed is a call whose clock reads less than the previous call's did, which a burst
-- alone never makes it do; and the furthest lead is the largest pair tick - clock tick.
-- The previous call of the slot minted v - 1, and was this session's (only the holder
-- advances a slot's sequence). Its clock read:
-- - if that call took this path too, the one the session setting snowflake_sql.ahead
--   keeps;
-- - else (v - 1)'s tick: a call on the common path, or one that moved the pair to a new
--   tick, mints in the very tick it read, and keeps nothing, at no cost;
-- - none for the session's first pair (snowflake_sql_note_minting keeps it without a
--   read): a new holder's first call may go on from its predecessor's burst, ahead of the
--   clock, and that is no step back, as a native generator's first call never is.
-- The setting is 'pair read lead': the pair and the clock read of the session's last call
-- on this path, and the furthest lead the session has seen, so that only a lead further
-- than that reads the shared maximum (a burst of a layout with few sequence bits takes
-- this path at nearly every call). It is a GUC: a ROLLBACK of the transaction that set it
-- restores the one before, and a burst that goes on after a ROLLBACK may then count as a
-- step back once. Any role may SET it: that sways only these figures, never an id.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_note_ahead(v bigint, t bigint, sequence_bits integer, unit_ms integer)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  kept constant text[] := string_to_array(current_setting('snowflake_sql.ahead', true), ' ', '');
  lead_ms constant bigint := ((v >> sequence_bits) - t) * unit_ms;
BEGIN
  IF t < (CASE WHEN kept[1] = (v - 1)::text THEN kept[2]::bigint ELSE (v - 1) >> sequence_bits END) THEN
    PERFORM @extschema@.snowflake_sql_count('@extschema@.snowflake_status_clock_steps_absorbed');
  END IF;
  IF lead_ms > coalesce(kept[3]::bigint, 0) THEN
    PERFORM @extschema@.snowflake_sql_count('@extschema@.snowflake_status_furthest_lead_ms', lead_ms);
  END IF;
  PERFORM set_config('snowflake_sql.ahead', format('%s %s %s', v, t, greatest(lead_ms, kept[3]::bigint)), false);
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_note_ahead(bigint, bigint, integer, integer) FROM PUBLIC;

-- snowflake_sql_backends_minting(): the sessions of this database holding a slot, as the
-- native counts its backends.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_backends_minting() RETURNS integer
LANGUAGE sql VOLATILE
RETURN (SELECT count(DISTINCT l.pid)
          FROM pg_locks l
         WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND l.classid = 1936617335 AND l.objsubid = 2 AND l.granted);
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_backends_minting() FROM PUBLIC;

-- snowflake_sql_note_minting(seq): this session has taken a slot, whose sequence is seq
-- (snowflake_sql_take_slot, once a session). The sessions holding a slot only grow in
-- number when one takes a slot, so the most of them at once is the most seen then. The
-- pair before the session's first is kept with no clock read (snowflake_sql_note_ahead).
-- A session's first call also gives the warning that the epoch ends, if due.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_note_minting(seq regclass) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  minting constant integer := @extschema@.snowflake_sql_backends_minting();
  before_first bigint;
BEGIN
  IF minting > @extschema@.snowflake_sql_counted('@extschema@.snowflake_status_most_backends_minting') THEN
    PERFORM @extschema@.snowflake_sql_count('@extschema@.snowflake_status_most_backends_minting', minting);
  END IF;
  -- The next nextval gives last_value + 1, or last_value itself when it is not called yet
  -- (a new sequence, or one set to the floor of a server life).
  EXECUTE format('SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM %s', seq)
    INTO before_first;
  PERFORM set_config('snowflake_sql.ahead', before_first::text, false);
  PERFORM @extschema@.snowflake_sql_warn_epoch_end();
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_note_minting(regclass) FROM PUBLIC;

-- snowflake_sql_warn_before_ms(): five years of 365.25 days, in ms: how long before the end
-- of the time field the warning starts (WARN_BEFORE_MS of snowflake_core/src/epoch_end.rs;
-- the alert SnowflakeEpochEndsWithinFiveYears uses the same span).
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_warn_before_ms() RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 157788000000;

-- snowflake_sql_warn_epoch_end(): the native's warning that the layout's time field runs
-- out (epoch_end.rs and src/operations.rs), while fewer than five years are left: at most
-- once a day (UTC) in a session, whose setting snowflake_sql.epoch_warned keeps the day.
-- Asked by a read of the status, by a session's first call, and by every call that moves
-- its slot to a new tick in the time field's last five years (snowflake_next(), 60_next.sql):
-- a session that mints warns at its first new tick of the day. The native without
-- preload warns on a read of the status only; there is nothing shared here either, and a
-- session that mints hears of it too. A ROLLBACK of the transaction that warned forgets
-- the day (a GUC), and the session's next transaction warns again.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_sql_warn_epoch_end() RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  now_ms constant bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  today constant text := (now_ms / 86400000)::text;
  s @extschema@.snowflake_settings;
  ends_ms numeric;
  days_left bigint;
BEGIN
  IF current_setting('snowflake_sql.epoch_warned', true) IS NOT DISTINCT FROM today THEN
    RETURN;
  END IF;
  s := @extschema@.snowflake_sql_settings();
  -- The first ms past the last tick the time field holds (epoch_ends of the status).
  ends_ms := ((9223372036854775807 >> (63 - s.time_bits))::numeric + 1) * s.unit_ms + s.epoch_ms;
  IF ends_ms - now_ms >= @extschema@.snowflake_sql_warn_before_ms() THEN
    RETURN;
  END IF;
  days_left := floor(greatest(ends_ms - now_ms, 0) / 86400000);
  RAISE WARNING USING ERRCODE = '01000',
    MESSAGE = format('snowflake_sql: the time field of the layout runs out at %s, %s: no id can be minted after it',
                     @extschema@.snowflake_sql_format_ms(ends_ms),
                     CASE WHEN days_left = 0 THEN 'within a day' ELSE format('in %s days', days_left) END),
    DETAIL = format('The layout %s counts its time from the epoch %s.', s.layout,
                    @extschema@.snowflake_sql_format_ms(s.epoch_ms)),
    HINT = 'Plan the move before then: a layout whose time field reaches further (more time bits, or 10ms or 1s ticks) or a later epoch changes what every id means, and new ids must not repeat old ones: see the chapter "The end of the epoch" of docs/operations.md.';
  PERFORM set_config('snowflake_sql.epoch_warned', today, false);
END
$$;
REVOKE ALL ON FUNCTION @extschema@.snowflake_sql_warn_epoch_end() FROM PUBLIC;

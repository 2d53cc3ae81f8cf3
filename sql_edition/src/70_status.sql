-- The status view: the native's columns. The most sessions minting at once, the furthest
-- lead, the clock steps absorbed and refused and the waits for a spent tick are counted
-- as the native counts them, but from the install on rather than from the server's start,
-- and through ROLLBACK (55_counters.sql). high_water_mark_renewed and
-- high_water_mark_renewals_failed are NULL: the SQL edition has no high-water mark to
-- renew. Each slot's last pair is its sequence, which the call that moves it writes to
-- WAL itself, so a write that fails fails that call; the alert
-- SnowflakeHighWaterMarkRenewalFailing cannot apply. When the layout's time field runs
-- out (epoch_ends) and the share used follow from the settings, as in the native; a read
-- gives the warning that it runs out within five years, once a day in a session.

-- Releases before 0.3.0 had fewer columns, and a function's result type cannot be
-- replaced: the view and the function are made again, once.
DO $status$
BEGIN
  IF EXISTS (SELECT FROM pg_catalog.pg_proc p
              WHERE p.proname = 'snowflake_server_status'
                AND p.pronamespace = '@extschema@'::regnamespace
                AND NOT 'epoch_ends' = ANY (p.proargnames)) THEN
    DROP VIEW IF EXISTS @extschema@.snowflake_status;
    DROP FUNCTION @extschema@.snowflake_server_status();
  END IF;
END
$status$;

CREATE OR REPLACE FUNCTION @extschema@.snowflake_server_status() RETURNS TABLE (
    node_id integer,
    node_source text,
    system_identifier bigint,
    layout text,
    epoch timestamptz,
    preloaded boolean,
    slots integer,
    backends_minting integer,
    most_backends_minting integer,
    high_water_mark timestamptz,
    furthest_lead_ms bigint,
    clock_steps_absorbed bigint,
    clock_steps_refused bigint,
    spent_tick_waits bigint,
    epoch_ends timestamptz,
    epoch_used double precision,
    high_water_mark_renewed timestamptz,
    high_water_mark_renewals_failed bigint
)
-- Parallel unsafe, where the native's is safe: a read remembers the day of its warning in
-- a setting of the session (snowflake_sql_warn_epoch_end), which no process may set while
-- a parallel plan runs, in a worker or in its leader.
LANGUAGE plpgsql STRICT VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  s @extschema@.snowflake_settings := @extschema@.snowflake_sql_settings();
  last_pair bigint;
BEGIN
  SELECT max(pg_sequence_last_value(@extschema@.snowflake_sql_slot_sequence(i))) INTO last_pair
    FROM generate_series(0, (1 << s.slot_bits) - 1) i;
  node_id := s.node_id;
  node_source := 'snowflake_settings';
  system_identifier := @extschema@.snowflake_sql_system_identifier();
  layout := s.layout;
  epoch := s.epoch;
  preloaded := false;
  -- The database's: all the layout's, or its range of them (snowflake_configure's slots).
  slots := s.last_slot - s.first_slot + 1;
  backends_minting := @extschema@.snowflake_sql_backends_minting();
  most_backends_minting := @extschema@.snowflake_sql_counted('@extschema@.snowflake_status_most_backends_minting');
  furthest_lead_ms := @extschema@.snowflake_sql_counted('@extschema@.snowflake_status_furthest_lead_ms');
  clock_steps_absorbed := @extschema@.snowflake_sql_counted('@extschema@.snowflake_status_clock_steps_absorbed');
  clock_steps_refused := @extschema@.snowflake_sql_counted('@extschema@.snowflake_status_clock_steps_refused');
  spent_tick_waits := @extschema@.snowflake_sql_counted('@extschema@.snowflake_status_spent_tick_waits');
  high_water_mark := CASE WHEN last_pair IS NOT NULL THEN
    @extschema@.snowflake_sql_ts_of(0, last_pair >> s.sequence_bits, s.unit_ms, s.epoch_ms) END;
  -- The first ms past the last tick the time field holds.
  epoch_ends := timestamptz '1970-01-01 00:00:00+00'
    + ((2::numeric ^ s.time_bits) * s.unit_ms + s.epoch_ms)::bigint * interval '1 millisecond';
  epoch_used := greatest(0, least(1,
    extract(epoch FROM clock_timestamp() - s.epoch) / extract(epoch FROM epoch_ends - s.epoch)));
  PERFORM @extschema@.snowflake_sql_warn_epoch_end();
  RETURN NEXT;
END
$$;

CREATE OR REPLACE VIEW @extschema@.snowflake_status AS
SELECT s.*,
       EXISTS (SELECT FROM @extschema@.snowflake_nodes n
               WHERE n.node_id = s.node_id AND n.system_identifier = s.system_identifier
                 AND n.database = current_database())
           AS node_claimed,
       -- Another server's claim of the node id, or another database's of slots this one
       -- mints under (a copy of its claims): what refuses this database's ids.
       EXISTS (SELECT FROM @extschema@.snowflake_nodes n
               WHERE n.node_id = s.node_id
                 AND NOT (n.system_identifier = s.system_identifier
                          AND n.database = current_database())
                 AND (n.system_identifier <> s.system_identifier
                      OR int4range(n.first_slot, n.last_slot, '[]')
                         && @extschema@.snowflake_sql_claimed_slots(@extschema@.snowflake_sql_settings())))
           AS node_claimed_by_other
FROM @extschema@.snowflake_server_status() s;
GRANT SELECT ON @extschema@.snowflake_status TO PUBLIC;

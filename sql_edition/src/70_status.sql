-- The status view: the native's columns, filled where SQL can know them. NULL stands for
-- what the native counts in shared memory and the SQL edition has nowhere to count
-- (the most sessions minting at once, the furthest lead, the clock steps absorbed or
-- refused, the waits for a spent tick, the renewals of the native's high-water mark).
-- When the layout's time field runs out (epoch_ends) and the share used follow from the
-- settings, as in the native.

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
LANGUAGE plpgsql STRICT VOLATILE PARALLEL SAFE SECURITY DEFINER
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
  slots := 1 << s.slot_bits;
  -- The sessions of this database holding a slot, as the native counts its backends.
  SELECT count(DISTINCT l.pid) INTO backends_minting
    FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.classid = 1936617335 AND l.objsubid = 2 AND l.granted;
  high_water_mark := CASE WHEN last_pair IS NOT NULL THEN
    @extschema@.snowflake_sql_ts_of(0, last_pair >> s.sequence_bits, s.unit_ms, s.epoch_ms) END;
  -- The first ms past the last tick the time field holds.
  epoch_ends := timestamptz '1970-01-01 00:00:00+00'
    + ((2::numeric ^ s.time_bits) * s.unit_ms + s.epoch_ms)::bigint * interval '1 millisecond';
  epoch_used := greatest(0, least(1,
    extract(epoch FROM clock_timestamp() - s.epoch) / extract(epoch FROM epoch_ends - s.epoch)));
  RETURN NEXT;
END
$$;

CREATE OR REPLACE VIEW @extschema@.snowflake_status AS
SELECT s.*,
       EXISTS (SELECT FROM @extschema@.snowflake_nodes n
               WHERE n.node_id = s.node_id AND n.system_identifier = s.system_identifier
                 AND n.database = current_database())
           AS node_claimed,
       EXISTS (SELECT FROM @extschema@.snowflake_nodes n
               WHERE n.node_id = s.node_id
                 AND NOT (n.system_identifier = s.system_identifier
                          AND n.database = current_database()))
           AS node_claimed_by_other
FROM @extschema@.snowflake_server_status() s;
GRANT SELECT ON @extschema@.snowflake_status TO PUBLIC;
